"""Site ratings (RULES §2) replayed game by game: classified games (`classification`) through
the numba kernel (`kernel`) to the per-game history, the end state and the excluded and rejected
games.

The state (rating, game count and last period per player per number) is all the replay keeps,
so the games can come in batches (`SiteReplay.feed`: in replay order, batch after batch, each
classified and replayed on the same player records), the history and excluded games of each
batch leave with it, and the state is read out at each period's end: memory holds the players
and one batch, whatever the games (issue 31). `replay_range` feeds frames already in memory
the same way, one batch per period.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from rating_core.kernels.codes import dense_codes, positions_in
from rating_core.kernels.memory import populate_behind
from rating_core.schemas import empty
from rating_core.systems.period_range import check_within
from rating_core.systems.site.classification import (
    Classified,
    Coding,
    classify,
    excluded_frame,
    rejected_frame,
)
from rating_core.systems.site.kernel import (
    GAMES_SLOT,
    HISTORY_VALUES,
    LAST_SLOT,
    MAX_PERIODS,
    N_NUMBERS,
    HistoryColumns,
    PlayerRecords,
    RatedGames,
    ReplayRules,
    replay_kernel,
    state_rows,
)
from rating_core.systems.site.rules import (
    SITE_HISTORY_SCHEMA,
    SITE_NUMBERS,
    SITE_RULES,
    SITE_STATE_SCHEMA,
    SiteRules,
    empty_site_state,
)


@dataclass(frozen=True)
class SiteReplayResult:
    """What a site replay produces: per-game history, end state, excluded and rejected games."""

    history: pl.DataFrame  # SITE_HISTORY_SCHEMA, one row per human per game per number
    state: pl.DataFrame  # SITE_STATE_SCHEMA, the starting state of the next replay
    excluded: pl.DataFrame  # SITE_EXCLUDED_SCHEMA, games not rated, with the reason
    rejected: pl.DataFrame  # SITE_REJECTED_SCHEMA, contradictory records for the quarantine
    rated_games: int = 0
    notes: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class ReplayedBatch:
    """What one batch of games gave: its history rows, excluded and rejected games."""

    history: pl.DataFrame
    excluded: pl.DataFrame
    rejected: pl.DataFrame
    rated_games: int


def range_coding(
    ids: pl.Series,
    periods: Iterable[str],
    players: pl.DataFrame | None,
    state: pl.DataFrame | None,
) -> Coding:
    """The coding of a replay from `state` over `periods` whose games' players are among `ids`
    (any order, repeats and nulls allowed): the state's players and periods are added."""
    state = state if state is not None else empty_site_state()
    _, distinct = dense_codes(pl.concat([state["player_id"].cast(pl.String), ids.cast(pl.String)]))
    labels = pl.concat(
        [state["last_period"].cast(pl.String), pl.Series(list(periods), dtype=pl.String)]
    )
    labels = labels.drop_nulls().unique().sort()
    if labels.len() > MAX_PERIODS:
        raise ValueError(f"a site replay spans at most {MAX_PERIODS} periods")
    return Coding.of(distinct, labels, players)


class SiteReplay:
    """A site replay under way: the player records of every player of `coding`, started from
    `state`, fed batches of games in replay order ((period, played_at, game_id), batch after
    batch; within a batch any order)."""

    def __init__(
        self,
        coding: Coding,
        annulled: Iterable[str] | pl.Series | None,
        state: pl.DataFrame | None = None,
        rules: SiteRules = SITE_RULES,
    ) -> None:
        self.coding, self.rules = coding, rules
        self.annulled = pl.Series(
            "game_id", list(annulled) if annulled is not None else [], dtype=pl.String
        )
        self.records = PlayerRecords.allocate(coding.ids.len(), rules.start)
        self._rules = ReplayRules.of(rules)
        if state is not None and state.height:
            p = positions_in(coding.ids, state["player_id"])
            n = state["number"].replace_strict(SITE_NUMBERS, list(range(N_NUMBERS))).to_numpy()
            if (p < 0).any():
                raise AssertionError("a site state's player is missing from the replay's coding")
            self.records.ratings[p, n] = state["rating"].to_numpy()
            self.records.games[p, GAMES_SLOT + n] = state["games"].to_numpy()
            self.records.last[p, LAST_SLOT + n] = positions_in(coding.periods, state["last_period"])
            self.records.present[p, n] = True

    def feed(self, games: pl.DataFrame, history: bool = True) -> ReplayedBatch:
        """Classify and replay one batch of platform games (every game of it after every game
        fed before): its history (unless `history` is False), excluded and rejected games."""
        c = classify(games, None, self.annulled, self.rules, coding=self.coding)
        rows = c.rated
        rated = RatedGames(
            w_idx=c.w_code[rows],
            b_idx=c.b_code[rows],
            w_score=c.score[rows],
            cat_num=c.cat[rows],
            w_bot=c.w_bot[rows],
            b_bot=c.b_bot[rows],
            bot_r=c.bot_rating[rows],
            period=c.period[rows].astype(np.int16),
        )
        # history rows per game: two per human side (site Elo and category)
        per_game = 4 - 2 * (rated.w_bot.astype(np.int64) + rated.b_bot.astype(np.int64))
        n_hist = int(per_game.sum()) if history else 0
        out = HistoryColumns.allocate(n_hist)
        # each of the 9 value rows is a stream of its own, met from behind like the other columns
        populating = populate_behind([*out.values, *out[1:]])
        try:
            replay_kernel(rated, self.records, self._rules, n_hist > 0, out)
        finally:  # the history's pages, mapped in from the end while the kernel wrote from the start
            populating.join()
        del rated
        hist = (
            _history_frame(c, np.repeat(rows, per_game), out)
            if n_hist
            else empty(SITE_HISTORY_SCHEMA)
        )
        return ReplayedBatch(hist, excluded_frame(c, self.rules), rejected_frame(c), len(rows))

    def state(self) -> pl.DataFrame:
        """The state after the games fed so far: every number a player holds, ordered by
        player_id, then number in SITE_NUMBERS order."""
        p_idx, n_idx, rating, count, last_of = state_rows(self.records)
        labels = self.coding.periods
        return pl.DataFrame(
            {
                "player_id": self.coding.ids.gather(p_idx),
                "number": pl.Series(SITE_NUMBERS).gather(n_idx),
                "rating": rating,
                "games": count,
                "last_period": labels.append(pl.Series([None], dtype=pl.String))
                .rechunk()
                .gather(np.where(last_of < 0, labels.len(), last_of)),
            },
            schema=SITE_STATE_SCHEMA,
        )


def site_replay(
    games: pl.DataFrame,
    players: pl.DataFrame | None = None,
    annulled: Iterable[str] | pl.Series | None = None,
    state: pl.DataFrame | None = None,
    rules: SiteRules = SITE_RULES,
    history: bool = True,
) -> SiteReplayResult:
    """Replay platform games from `state` (previous period's end state, or empty at the start).

    Games are applied in (period, played_at, game_id) order; `history=False` skips the
    per-game rows (for very large replays where only the end state is wanted).
    """
    return replay_range(games, players, annulled, state, None, rules, history)[0]


def replay_range(
    games: pl.DataFrame,
    players: pl.DataFrame | None,
    annulled: Iterable[str] | pl.Series | None,
    state: pl.DataFrame | None,
    periods: list[str] | None,
    rules: SiteRules = SITE_RULES,
    history: bool = True,
) -> list[SiteReplayResult]:
    """The replay of `games` (in memory) from `state`, one result per period of `periods` (each
    as if replayed alone from the period before's state), or one result when `periods` is None.
    Each period's games are one batch of a `SiteReplay`."""
    ids = pl.concat([games["white_id"].cast(pl.String), games["black_id"].cast(pl.String)])
    if periods is None:
        labels = games["period"].cast(pl.String).drop_nulls().unique().to_list()
        batches = [games]
    else:
        check_within(games["period"].cast(pl.String), periods, "a game")
        labels = periods
        parts = games.partition_by("period", as_dict=True, maintain_order=True)
        batches = [parts.get((period,), games.clear()) for period in periods]
    replay = SiteReplay(range_coding(ids, labels, players, state), annulled, state, rules)
    results = []
    for batch in batches:
        done = replay.feed(batch, history)
        results.append(
            SiteReplayResult(
                done.history, replay.state(), done.excluded, done.rejected, done.rated_games
            )
        )
    return results


def _history_frame(c: Classified, game_rows: np.ndarray, out: HistoryColumns) -> pl.DataFrame:
    """The history table from the kernel's columns: `game_rows` is each row's game (a row of
    `c.frame`). The numbers are the kernel's arrays, without a copy; the ids and numbers are
    gathered from the small sets of distinct values, not from the games' string columns."""
    if game_rows.shape[0] == 0:
        return empty(SITE_HISTORY_SCHEMA)
    floats = {name: pl.Series(name, v) for name, v in zip(HISTORY_VALUES, out.values, strict=True)}
    if c.score_null.any() and (null_score := c.score_null[game_rows]).any():
        # a rated game without a result (human-bot, no termination) shows no score
        floats["score"] = pl.select(
            pl.when(pl.Series(null_score)).then(None).otherwise(floats["score"]).alias("score")
        ).to_series()
    games, players, opponents = (pl.Series(a) for a in (game_rows, out.player, out.opponent))
    gathered = pl.select(  # one select: the gathers run side by side, not one after another
        pl.lit(c.frame["game_id"]).gather(games).alias("game_id"),
        pl.lit(c.frame["played_at"]).gather(games).alias("played_at"),
        pl.lit(c.periods).gather(pl.Series(c.period[game_rows])).alias("period"),
        pl.lit(c.ids).gather(players).alias("player_id"),
        pl.lit(_NUMBERS).gather(pl.Series(out.number)).alias("number"),
        pl.lit(c.ids).gather(opponents).alias("opponent_id"),
    )
    columns = {
        **{name: gathered.get_column(name) for name in gathered.columns},
        "opponent_is_bot": pl.Series(out.opponent_bot),
        "games_before": pl.Series(out.games),
        **floats,
    }
    return pl.DataFrame([columns[name].alias(name) for name in SITE_HISTORY_SCHEMA])


_NUMBERS = pl.Series("number", SITE_NUMBERS)
