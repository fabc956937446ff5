"""Backgammon site rating with the FIBS formula (RULES §5), replayed match by match: classified
matches (`classification`) through the numba kernel (`kernel`) to the history, the player state,
the pair state and the excluded and rejected matches of one period, or of a range of periods.

The player state plus the pair state (recent rating-changing matches per pair) is all a replay
needs, so periods chain exactly like one long replay, and a range of periods replays in one pass
on one pair table, snapshotting both states at each period's end (`replay_range`, behind
`fibs_replay_periods`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from rating_core.kernels.intrinsics import aligned_empty
from rating_core.schemas import empty
from rating_core.systems.fibs.classification import RANKED_COLUMNS, classify, excluded_rejected
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
from rating_core.systems.period_range import check_within, segment_ends, split_by_period


@dataclass(frozen=True)
class FibsReplayResult:
    """What a FIBS replay produces: history, player state, pair state and excluded matches."""

    history: pl.DataFrame  # FIBS_HISTORY_SCHEMA, one row per player per ranked match
    state: pl.DataFrame  # FIBS_STATE_SCHEMA
    pairs: pl.DataFrame  # FIBS_PAIR_STATE_SCHEMA, needed to chain the fair-play window
    excluded: pl.DataFrame  # FIBS_EXCLUDED_SCHEMA, matches that change nothing
    rejected: pl.DataFrame  # FIBS_EXCLUDED_SCHEMA, invalid records for the quarantine


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
    """One replay of `matches` from (state, pairs), cut into one result per period of
    `periods` (each as if replayed alone from the period before's states), or one result when
    `periods` is None.

    Ids are coded and matches classified and ordered once; the kernel replays each period's
    slice of that one order in turn on the same records and pair table, and each period's
    player and pair states are snapshotted from them, so the cost is per match, not per period.
    """
    state = state if state is not None else empty(FIBS_STATE_SCHEMA)
    pairs = pairs if pairs is not None else empty(FIBS_PAIR_STATE_SCHEMA)
    c = classify(matches, state["player_id"], pairs)
    rows, ids = c.rows, c.ids
    n, n_s, n_p, n_players = rows.shape[0], state.height, pairs.height, ids.len()
    if periods is None:
        ends = np.array([n], dtype=np.int64)
    else:
        check_within(c.frame["period"], periods, "a match")
        ends = segment_ends(c.period[rows], c.periods, periods)

    records = aligned_empty((n_players, PLAYER_SLOTS), np.float64, align=64)
    ratings, counters = records, records.view(np.int64)
    ratings[:, 0] = rules.start
    counters[:, 1:] = 0
    present = np.zeros(n_players, dtype=np.bool_)
    if n_s:
        s_codes = c.codes[:n_s]
        ratings[s_codes, 0] = state["rating"].to_numpy()
        counters[s_codes, EXP_SLOT] = state["experience"].to_numpy()
        counters[s_codes, MATCHES_SLOT] = state["matches"].to_numpy()
        present[s_codes] = True

    cap, window = rules.fair_play_max, rules.fair_play_window_us
    t = c.frame["ended_at"].dt.epoch("us").fill_null(0).to_numpy()
    gc, busiest, latest_all = time_profile(rows, t, window)
    # Room for every pair that can be active at once (at most the matches of the busiest
    # window when stale pairs are recycled), so that the table rarely needs a rebuild.
    active = busiest if gc else min(n, 1 << 16)
    bits = 10
    while (1 << bits) < 2 * (n_p + active + 1):
        bits += 1
    table = np.full((1 << bits, cap + 1), EMPTY, dtype=np.int64)
    live = 0
    if n_p:
        pa = c.codes[n_s : n_s + n_p].astype(np.int64)
        pb = c.codes[n_s + n_p : n_s + 2 * n_p].astype(np.int64)
        loaded = pl.DataFrame(
            {
                "key": np.minimum(pa, pb) * n_players + np.maximum(pa, pb),
                "t": pairs["ended_at"].dt.epoch("us").to_numpy(),
            }
        ).sort("key", "t")
        live = load_pairs(table, loaded["key"].to_numpy(), loaded["t"].to_numpy())

    out = HistoryColumns.allocate(n if history else 0)
    ranked = RankedMatches(rows, c.w_code, c.l_code, c.length, t)
    kernel_rules = ReplayRules.of(rules)
    kept: list[np.ndarray] = []  # per period: the players of its state
    snapshots: list[np.ndarray] = []  # per period: their rating, experience and matches
    pair_rows: list[tuple[np.ndarray, np.ndarray]] = []  # per period: (pair key, time)
    pairs_latest = _latest(pairs)  # the latest time in the pair state the period starts from
    start = 0
    for seg, end in enumerate(ends):
        at = start
        while at >= 0:
            at, live = replay_kernel(
                at,
                int(end),
                ranked,
                PlayerRecords(ratings, counters),
                table,
                live,
                gc,
                kernel_rules,
                history,
                out,
            )
            if at >= 0:
                table, live = rebuilt(table, live, int(t[rows[at]]), window, gc)
        keep = np.flatnonzero(present | (counters[:, MATCHES_SLOT] > 0))
        kept.append(keep)
        snapshots.append(records[keep])
        # Pair state: recent rating-changing matches that can still matter for a later match.
        if ends.shape[0] == 1:
            seg_latest = int(latest_all)
        else:
            seg_latest = int(t[rows[start:end]].max()) if end > start else int(SENTINEL)
        latest = max(seg_latest, pairs_latest)
        keys, times = pair_times(table, latest - window)
        pair_rows.append((keys, times))
        pairs_latest = int(times.max()) if times.shape[0] else int(SENTINEL)
        if seg + 1 < ends.shape[0]:
            keep_recent(table, latest - window)
        start = int(end)

    keep_all = np.concatenate(kept)
    records_all = np.concatenate(snapshots)
    states = pl.DataFrame(
        {
            "player_id": ids.gather(keep_all),
            "rating": records_all[:, 0],
            "experience": records_all.view(np.int64)[:, EXP_SLOT],
            "matches": records_all.view(np.int64)[:, MATCHES_SLOT],
        },
        schema=FIBS_STATE_SCHEMA,
    )
    state_ends = np.cumsum([0] + [k.shape[0] for k in kept])
    recent = pl.DataFrame(
        {
            "seg": np.repeat(np.arange(len(pair_rows)), [k.shape[0] for k, _ in pair_rows]),
            "key": np.concatenate([k for k, _ in pair_rows]),
            "t": np.concatenate([x for _, x in pair_rows]),
        }
    ).sort("seg", "key", "t")
    keys = recent["key"].to_numpy()
    all_pairs = pl.DataFrame(
        {
            "player_a": ids.gather(keys // n_players),
            "player_b": ids.gather(keys % n_players),
            "ended_at": recent["t"].cast(pl.Datetime("us")).dt.replace_time_zone("UTC"),
        }
    ).cast(FIBS_PAIR_STATE_SCHEMA)  # ids are sorted: so are the pairs
    pair_ends = np.cumsum([0] + [k.shape[0] for k, _ in pair_rows])

    hist = (
        _history_frame(c.frame.select(RANKED_COLUMNS)[rows], out, rules)
        if history
        else empty(FIBS_HISTORY_SCHEMA)
    )
    excluded, rejected = excluded_rejected(c)
    if periods is None:
        excluded_of, rejected_of = [excluded], [rejected]
    else:
        excluded_of = split_by_period(excluded, periods)
        rejected_of = split_by_period(rejected, periods)
    results = []
    for seg in range(ends.shape[0]):
        lo, hi = (int(ends[seg - 1]) if seg else 0), int(ends[seg])
        results.append(
            FibsReplayResult(
                hist.slice(2 * lo, 2 * (hi - lo))
                if history and hi > lo
                else empty(FIBS_HISTORY_SCHEMA),
                states.slice(state_ends[seg], state_ends[seg + 1] - state_ends[seg]),
                all_pairs.slice(pair_ends[seg], pair_ends[seg + 1] - pair_ends[seg]),
                excluded_of[seg],
                rejected_of[seg],
            )
        )
    return results


def _latest(pairs: pl.DataFrame) -> int:
    """Latest match time (µs since epoch) held in a pair state, or the sentinel."""
    if pairs.height == 0:
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
