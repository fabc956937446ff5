"""Site ratings (RULES §2) replayed game by game: classified games (`classification`) through
the numba kernel (`kernel`) to the per-game history, the end state and the excluded and rejected
games of one period, or of a range of periods in one pass.

The state (rating and game count per player per number) is all the replay needs, so a period
can be replayed from the previous period's state, or a range of periods in one pass that
snapshots the state at each period's end (`replay_range`, behind `site_replay_periods`). The
history's columns come from the kernel's arrays in their final row order; its strings are
gathered from the sets of distinct ids and numbers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from rating_core.kernels.memory import populate_behind
from rating_core.schemas import empty
from rating_core.systems.period_range import check_within, segment_ends, split_by_period
from rating_core.systems.site.classification import (
    Classified,
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
    Snapshots,
    held_counts,
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
    """One replay of `games` from `state`, cut into one result per period of `periods` (each
    as if replayed alone from the period before's state), or one result when `periods` is None.

    Ids, periods and rules are coded once and the games replayed in one kernel pass, which
    takes a snapshot of the state at the end of each period (`replay_kernel`).
    """
    state = state if state is not None else empty_site_state()
    c = classify(
        games,
        players,
        annulled,
        rules,
        extra_ids=state["player_id"],
        extra_periods=state["last_period"],
    )
    rows = c.rated
    n = rows.shape[0]
    n_players, labels = c.ids.len(), c.periods
    if labels.len() > MAX_PERIODS:
        raise ValueError(f"a site replay spans at most {MAX_PERIODS} periods")
    if periods is None:
        ends = np.array([n], dtype=np.int64)
    else:
        check_within(c.frame["period"], periods, "a game")
        ends = segment_ends(c.period[rows], labels, periods)

    records = PlayerRecords.allocate(n_players, rules.start)
    if state.height:
        s_p = c.extra_codes
        s_n = state["number"].replace_strict(SITE_NUMBERS, list(range(N_NUMBERS))).to_numpy()
        records.ratings[s_p, s_n] = state["rating"].to_numpy()
        records.games[s_p, GAMES_SLOT + s_n] = state["games"].to_numpy()
        records.last[s_p, LAST_SLOT + s_n] = c.extra_period_codes
        records.present[s_p, s_n] = True

    # the per-game inputs in replay order: the kernels then read them sequentially
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
    hist_ends = np.cumsum(per_game)
    n_hist = int(hist_ends[-1]) if history and n else 0
    out = HistoryColumns.allocate(n_hist)
    snap_ends = ends[:-1]  # the last period's state is the records after the kernel
    held = held_counts(snap_ends, rated, records.present)
    n_snap = int(held.sum())
    snaps = Snapshots.allocate(n_snap)
    # each of the 9 value rows is a stream of its own, met from behind like the other columns
    populating = populate_behind([*out.values, *out[1:], *snaps])
    try:
        written = replay_kernel(
            snap_ends, rated, records, ReplayRules.of(rules), n_hist > 0, out, snaps
        )
    finally:  # the history's pages, mapped in from the end while the kernel wrote from the start
        populating.join()
    del rated  # the games' columns in replay order: the frames below need none of them
    if written != n_snap:
        raise AssertionError(f"site snapshots: {written} rows written, {n_snap} counted")
    final = state_rows(records)
    p_idx, n_idx, rating, count, last_of = (
        np.concatenate([a, b]) for a, b in zip(snaps, final, strict=True)
    )
    offsets = np.concatenate([[0], np.cumsum(held), [n_snap + final[0].shape[0]]])
    states = pl.DataFrame(
        {
            "player_id": c.ids.gather(p_idx),
            "number": pl.Series(SITE_NUMBERS).gather(n_idx),
            "rating": rating,
            "games": count,
            "last_period": labels.append(pl.Series([None], dtype=pl.String))
            .rechunk()
            .gather(np.where(last_of < 0, labels.len(), last_of)),
        },
        schema=SITE_STATE_SCHEMA,
    )  # each snapshot ordered by player_id, then number in SITE_NUMBERS order (ids are sorted)

    hist = _history_frame(c, np.repeat(rows, per_game) if n_hist else rows[:0], out)
    bounds = np.concatenate([[0], ends])  # period k's games are rows[bounds[k]:bounds[k + 1]]
    hist_bounds = np.concatenate([[0], hist_ends])[bounds] if n_hist else np.zeros_like(bounds)
    excluded, rejected = excluded_frame(c, rules), rejected_frame(c)
    if periods is None:
        excluded_of, rejected_of = [excluded], [rejected]
    else:
        excluded_of = split_by_period(excluded, periods)
        rejected_of = split_by_period(rejected, periods)
    results = []
    for seg in range(ends.shape[0]):
        rated_games = int(bounds[seg + 1] - bounds[seg])
        h_lo, h_hi = hist_bounds[seg], hist_bounds[seg + 1]
        results.append(
            SiteReplayResult(
                history=hist.slice(h_lo, h_hi - h_lo)
                if rated_games and history
                else empty(SITE_HISTORY_SCHEMA),
                state=states.slice(offsets[seg], offsets[seg + 1] - offsets[seg]),
                excluded=excluded_of[seg],
                rejected=rejected_of[seg],
                rated_games=rated_games,
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
