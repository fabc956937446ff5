"""Backgammon site rating with the FIBS formula (RULES §5), replayed match by match: classified
matches (`classification`) through the numba kernel (`kernel`) to the history, the player state,
the pair state and the excluded and rejected matches.

The player state plus the pair state (recent rating-changing matches per pair) is all the replay
keeps, so the matches can come in batches (`FibsReplay.feed`: in replay order, batch after batch,
each classified and replayed on the same player records and pair table), the history of each
batch leaves with it, and both states are read out at each period's end (`FibsReplay.end_period`,
which also cuts the pair table to the saved pair state, so that periods chain exactly like
replays started from the saved states): memory holds the players, the recent pairs and one
batch, whatever the matches (issue 31). `replay_range` feeds frames already in memory the same
way, one batch per period.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from rating_core.kernels.codes import dense_codes, positions_in, read_only
from rating_core.kernels.intrinsics import aligned_empty
from rating_core.schemas import empty
from rating_core.systems.fibs.classification import (
    RANKED_COLUMNS,
    classify,
    excluded_rejected,
    match_players,
)
from rating_core.systems.fibs.kernel import (
    EXP_SLOT,
    MATCHES_SLOT,
    PLAYER_SLOTS,
    HistoryColumns,
    PlayerRecords,
    RankedMatches,
    ReplayRules,
    replay_kernel,
    time_profile,
)
from rating_core.systems.fibs.pairs import (
    EMPTY,
    SENTINEL,
    keep_recent,
    load_pairs,
    pair_times,
    rebuilt,
)
from rating_core.systems.fibs.rules import (
    FIBS_HISTORY_SCHEMA,
    FIBS_PAIR_STATE_SCHEMA,
    FIBS_RULES,
    FIBS_STATE_SCHEMA,
    FibsRules,
)
from rating_core.systems.period_range import check_within


@dataclass(frozen=True)
class FibsReplayResult:
    """What a FIBS replay produces: history, player state, pair state and excluded matches."""

    history: pl.DataFrame  # FIBS_HISTORY_SCHEMA, one row per player per ranked match
    state: pl.DataFrame  # FIBS_STATE_SCHEMA
    pairs: pl.DataFrame  # FIBS_PAIR_STATE_SCHEMA, needed to chain the fair-play window
    excluded: pl.DataFrame  # FIBS_EXCLUDED_SCHEMA, matches that change nothing
    rejected: pl.DataFrame  # FIBS_EXCLUDED_SCHEMA, invalid records for the quarantine


@dataclass(frozen=True)
class ReplayedBatch:
    """What one batch of matches gave: its history rows, excluded and rejected matches."""

    history: pl.DataFrame
    excluded: pl.DataFrame
    rejected: pl.DataFrame
    ranked: int  # the ranked matches replayed


def replay_ids(
    players: pl.Series, state: pl.DataFrame | None, pairs: pl.DataFrame | None
) -> pl.Series:
    """The sorted distinct player ids of a replay from (`state`, `pairs`) whose matches'
    players are among `players` (any order, repeats and nulls allowed): what every batch is
    coded against."""
    state = state if state is not None else empty(FIBS_STATE_SCHEMA)
    pairs = pairs if pairs is not None else empty(FIBS_PAIR_STATE_SCHEMA)
    every = [state["player_id"], pairs["player_a"], pairs["player_b"], players]
    return dense_codes(pl.concat([ids.cast(pl.String) for ids in every]))[1]


def _pair_table(pairs: int, cap: int) -> np.ndarray:
    """An empty pair table with room for `pairs` pairs below half full (at least 1024 slots)."""
    bits = 10
    while (1 << bits) < 2 * (pairs + 1):
        bits += 1
    return np.full((1 << bits, cap + 1), EMPTY, dtype=np.int64)


class FibsReplay:
    """A FIBS replay under way: the records of every player of `ids` and the fair-play pair
    table, started from (`state`, `pairs`), fed batches of matches in replay order ((period,
    ended_at, match_id), batch after batch; within a batch any order), each period closed by
    `end_period`."""

    def __init__(
        self,
        ids: pl.Series,
        state: pl.DataFrame | None = None,
        pairs: pl.DataFrame | None = None,
        rules: FibsRules = FIBS_RULES,
    ) -> None:
        self.ids, self.rules = ids, rules
        self._rules = ReplayRules.of(rules)
        self.window = rules.fair_play_window_us
        n = ids.len()
        # one 32-byte record per player, read through float64 and int64 views
        self.records = aligned_empty((n, PLAYER_SLOTS), np.float64, align=64)
        self.ratings, self.counters = self.records, self.records.view(np.int64)
        self.ratings[:, 0] = rules.start
        self.counters[:, 1:] = 0
        self.present = np.zeros(n, dtype=np.bool_)  # in the state the replay started from
        if state is not None and state.height:
            s = self._codes(state["player_id"])
            self.ratings[s, 0] = state["rating"].to_numpy()
            self.counters[s, EXP_SLOT] = state["experience"].to_numpy()
            self.counters[s, MATCHES_SLOT] = state["matches"].to_numpy()
            self.present[s] = True
        n_p = pairs.height if pairs is not None else 0
        self.table = _pair_table(n_p, rules.fair_play_max)
        self.live = 0  # occupied slots of the pair table
        if pairs is not None and n_p:
            pa, pb = self._codes(pairs["player_a"]), self._codes(pairs["player_b"])
            loaded = pl.DataFrame(
                {
                    "key": np.minimum(pa, pb) * n + np.maximum(pa, pb),
                    "t": pairs["ended_at"].dt.epoch("us").to_numpy(),
                }
            ).sort("key", "t")
            self.live = load_pairs(self.table, loaded["key"].to_numpy(), loaded["t"].to_numpy())
        self._pairs_latest = _latest(pairs)  # the latest time of the pair state last saved
        self._latest = int(SENTINEL)  # the latest ranked match of the period so far

    def _codes(self, players: pl.Series) -> np.ndarray:
        """The codes of a state's players (each must be among the replay's ids)."""
        codes = positions_in(self.ids, players)
        if (codes < 0).any():
            raise AssertionError("a FIBS state's player is missing from the replay's ids")
        return codes

    def feed(self, matches: pl.DataFrame, history: bool = True) -> ReplayedBatch:
        """Classify and replay one batch of matches (every match of it after every match fed
        before in the period): its history (unless `history` is False), excluded and rejected
        matches. Raises ValueError when a ranked match ended before one fed earlier in the
        period (the batches are not in replay order)."""
        c = classify(matches, self.ids)
        rows = c.rows
        n = rows.shape[0]
        t = read_only(c.frame["ended_at"].dt.epoch("us").fill_null(0).to_numpy(), np.int64)
        window = self.window
        # gc: the batch's times never decrease, so a pair stale at a match stays stale
        gc, busiest, latest = time_profile(rows, t, window)
        if n:
            first = int(t[rows[0]])
            if first < self._latest:
                raise ValueError("FIBS matches fed out of replay order (period, ended_at, id)")
            # room for every pair that can be active at once (at most the matches of the
            # busiest window when stale pairs are recycled), so the table rarely needs a rebuild
            room = busiest if gc else min(n, 1 << 16)
            if 2 * (self.live + room + 1) > self.table.shape[0]:
                self.table, self.live = rebuilt(self.table, self.live, first, window, gc, room)
        out = HistoryColumns.allocate(n if history else 0)
        ranked = RankedMatches(rows, c.w_code, c.l_code, c.length, t)
        players = PlayerRecords(self.ratings, self.counters)
        at = 0
        while at >= 0:
            at, self.live = replay_kernel(
                at, ranked, players, self.table, self.live, gc, self._rules, history, out
            )
            if at >= 0:  # a new pair would fill the table past half
                self.table, self.live = rebuilt(self.table, self.live, int(t[rows[at]]), window, gc)
        self._latest = max(self._latest, int(latest))
        hist = (
            _history_frame(c.frame.select(RANKED_COLUMNS)[rows], out, self.rules)
            if history
            else empty(FIBS_HISTORY_SCHEMA)
        )
        excluded, rejected = excluded_rejected(c)
        return ReplayedBatch(hist, excluded, rejected, n)

    def end_period(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(player state, pair state) after the matches fed so far, at a period's end.

        The player state holds every player of the starting state or with a ranked match, by
        player_id; the pair state the rating-changing match times that can still matter for a
        later match (within the window of the latest match so far), by (player_a, player_b,
        ended_at). The pair table is then cut to that pair state, as saving and loading it
        would, so the next period goes on exactly like a replay started from these states."""
        keep = np.flatnonzero(self.present | (self.counters[:, MATCHES_SLOT] > 0))
        kept = self.records[keep]
        state = pl.DataFrame(
            {
                "player_id": self.ids.gather(keep),
                "rating": kept[:, 0],
                "experience": kept.view(np.int64)[:, EXP_SLOT],
                "matches": kept.view(np.int64)[:, MATCHES_SLOT],
            },
            schema=FIBS_STATE_SCHEMA,
        )
        after = max(self._latest, self._pairs_latest) - self.window
        keys, times = pair_times(self.table, after)
        recent = pl.DataFrame({"key": keys, "t": times}).sort("key", "t")
        codes, n = recent["key"].to_numpy(), self.ids.len()
        pairs = pl.DataFrame(
            {
                "player_a": self.ids.gather(codes // n),
                "player_b": self.ids.gather(codes % n),
                "ended_at": recent["t"].cast(pl.Datetime("us")).dt.replace_time_zone("UTC"),
            }
        ).cast(FIBS_PAIR_STATE_SCHEMA)  # ids are sorted: so are the pairs
        self._pairs_latest = int(times.max()) if times.shape[0] else int(SENTINEL)
        keep_recent(self.table, after)
        self._latest = int(SENTINEL)
        return state, pairs


def fibs_replay(
    matches: pl.DataFrame,
    state: pl.DataFrame | None = None,
    pairs: pl.DataFrame | None = None,
    rules: FibsRules = FIBS_RULES,
    history: bool = True,
) -> FibsReplayResult:
    """Replay ranked backgammon matches from a starting (state, pairs), e.g. last period's end."""
    return replay_range(matches, state, pairs, None, rules, history)[0]


def replay_range(
    matches: pl.DataFrame,
    state: pl.DataFrame | None,
    pairs: pl.DataFrame | None,
    periods: list[str] | None,
    rules: FibsRules = FIBS_RULES,
    history: bool = True,
) -> list[FibsReplayResult]:
    """The replay of `matches` (in memory) from (state, pairs), one result per period of
    `periods` (each as if replayed alone from the period before's states), or one result when
    `periods` is None. Each period's matches are one batch of a `FibsReplay`."""
    if periods is None:
        batches = [matches]
    else:
        check_within(matches["period"].cast(pl.String), periods, "a match")
        parts = matches.partition_by("period", as_dict=True, maintain_order=True)
        batches = [parts.get((period,), matches.clear()) for period in periods]
    replay = FibsReplay(replay_ids(match_players(matches), state, pairs), state, pairs, rules)
    results = []
    for batch in batches:
        done = replay.feed(batch, history)
        after, recent = replay.end_period()
        results.append(FibsReplayResult(done.history, after, recent, done.excluded, done.rejected))
    return results


def _latest(pairs: pl.DataFrame | None) -> int:
    """Latest match time (µs since epoch) held in a pair state, or the sentinel."""
    if pairs is None or pairs.height == 0:
        return int(SENTINEL)
    return int(pairs["ended_at"].dt.epoch("us").max())  # type: ignore[arg-type]


def _history_frame(
    ranked: pl.DataFrame, out: HistoryColumns, rules: FibsRules = FIBS_RULES
) -> pl.DataFrame:
    """Two rows per ranked match (winner first) from the kernel's output arrays."""
    n = ranked.height
    if n == 0:
        return empty(FIBS_HISTORY_SCHEMA)
    pos = np.arange(2 * n)
    flat = out.values.reshape(2 * n, 7)
    winner = pl.col("_winner")
    counted = pl.Series("counted", np.repeat(out.counted, 2))
    return (
        ranked[pos // 2]
        .with_columns(
            pl.Series("_winner", pos % 2 == 0),
            counted,
            *(
                pl.Series(name, flat[:, j])
                for j, name in enumerate(
                    ("rating_before", "opponent_rating", "p", "v", "m", "change", "rating_after")
                )
            ),
            pl.Series("experience_before", out.experience.reshape(2 * n)),
        )
        .select(
            "match_id",
            "ended_at",
            "period",
            pl.when(winner)
            .then(pl.col("winner_id"))
            .otherwise(pl.col("loser_id"))
            .alias("player_id"),
            pl.when(winner)
            .then(pl.col("loser_id"))
            .otherwise(pl.col("winner_id"))
            .alias("opponent_id"),
            winner.alias("won"),
            pl.col("length").cast(pl.Int32),
            "rating_before",
            "opponent_rating",
            "p",
            "v",
            "m",
            "experience_before",
            "counted",
            pl.when(pl.col("counted"))
            .then(None)
            .otherwise(pl.lit(rules.fair_play_reason()))
            .alias("reason"),
            "change",
            "rating_after",
        )
    )
