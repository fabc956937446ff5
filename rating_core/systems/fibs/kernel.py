"""The FIBS replay's numba kernel (RULES §5): one 32-byte record per player, the ranked matches
replayed in order with the shared formula (`formula`) and the fair-play window's pair table
(`pairs`), the history written per match.

Only arrays and numbers cross into here (no Polars): `replay` codes the matches and builds the
frames around this kernel.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from rating_core.kernels.intrinsics import prefetch, table_bits
from rating_core.systems.fibs.formula import fibs_multiplier, fibs_value, fibs_win_probability
from rating_core.systems.fibs.pairs import EMPTY, SENTINEL, home_slot, latest_in
from rating_core.systems.fibs.rules import FibsRules

# Each player's state is one 32-byte record (aligned, so within one cache line), `FIBS_RECORD`:
# rating (float64), experience and ranked matches (int64), read by the kernel through float64
# and int64 views of one (players, PLAYER_SLOTS) array at the slots the declared layout gives.
FIBS_RECORD = np.dtype(
    {
        "names": ["rating", "experience", "matches"],
        "formats": [np.float64, np.int64, np.int64],
        "offsets": [0, 8, 16],
        "itemsize": 32,
    }
)
PLAYER_SLOTS = FIBS_RECORD.itemsize // 8  # 8-byte slots per player
EXP_SLOT = dict(FIBS_RECORD.fields or {})["experience"][1] // 8
MATCHES_SLOT = dict(FIBS_RECORD.fields or {})["matches"][1] // 8
_AHEAD = 8  # matches between prefetching a match's records and replaying it


# The kernel's inputs and outputs, as named records of arrays (numba passes a NamedTuple as a
# struct of its fields' types, read by attribute, at no cost per match).


class RankedMatches(NamedTuple):
    """The matches' columns the replay reads, by row, and the rows it replays, in order."""

    rows: np.ndarray  # int64 rows of the ranked matches, in replay order
    w_idx: np.ndarray  # int32 player code of the winner
    l_idx: np.ndarray  # int32 player code of the loser
    length: np.ndarray  # int64 match length (points)
    t: np.ndarray  # int64 end time, microseconds since the epoch


class PlayerRecords(NamedTuple):
    """The player records: float64 and int64 views of one (players, PLAYER_SLOTS) array."""

    ratings: np.ndarray  # the rating at slot 0
    counters: np.ndarray  # experience at EXP_SLOT, ranked matches at MATCHES_SLOT


class ReplayRules(NamedTuple):
    """The rules the replay applies (`FibsRules`), as numbers."""

    window: int  # the fair-play window, microseconds
    scale: float
    factor: float
    m_max: float
    m_min: float
    divisor: float

    @staticmethod
    def of(rules: FibsRules) -> ReplayRules:
        """`rules` as the kernel reads them."""
        return ReplayRules(
            rules.fair_play_window_us,
            rules.scale,
            rules.value_factor,
            rules.multiplier_max,
            rules.multiplier_min,
            rules.experience_divisor,
        )


class HistoryColumns(NamedTuple):
    """The history `replay_kernel` writes, per ranked match in replay order (winner, loser)."""

    values: np.ndarray  # (matches, 2, 7) float64: before, opponent, p, v, m, change, after
    experience: np.ndarray  # (matches, 2) int64 experience before the match
    counted: np.ndarray  # bool: the match changed ratings (the fair-play rule did not stop it)

    @staticmethod
    def allocate(matches: int) -> HistoryColumns:
        """Columns for `matches` matches (NaN and zero until the kernel writes them)."""
        return HistoryColumns(
            np.full((matches, 2, 7), np.nan, dtype=np.float64),
            np.zeros((matches, 2), dtype=np.int64),
            np.zeros(matches, dtype=np.bool_),
        )


@njit(cache=True)
def replay_kernel(
    start: int,
    matches: RankedMatches,
    players: PlayerRecords,
    table: np.ndarray,
    live: int,
    gc: bool,
    rules: ReplayRules,
    record: bool,
    history: HistoryColumns,
) -> tuple[int, int]:
    """Replay the ranked matches `rows` (row numbers, in order), updating the records in place.

    The pair table (open addressing on key min·n_players + max) holds per pair the times of its
    last `cap` rating-changing matches, oldest first: a match changes ratings only if the oldest
    ended `window` or more before it (fewer than `cap` in the window), and then it replaces the
    oldest. `gc`: times never decrease along `rows`, so a pair whose latest rating-changing
    match ended `window` or more before the current match is stale (every later match of the
    pair counts exactly as for a new pair): a new pair takes the first stale slot on its probe
    path, so stale pairs are recycled instead of filling the table.
    When `record`, it writes the `history` of the r-th match at r (winner, then loser). The
    records of the match `_AHEAD` places later are prefetched.

    Replays rows[start:] and returns (at, used): at is -1 at the end, else the position
    of a match whose new pair would fill the table past half; the caller rebuilds it
    (`rebuilt`, which drops stale pairs and grows it if needed) and resumes there. `used`
    counts the occupied slots.
    """
    rows, w_idx, l_idx = matches.rows, matches.w_idx, matches.l_idx
    length, t = matches.length, matches.t
    ratings, counters = players.ratings, players.counters
    window, scale, factor = rules.window, rules.scale, rules.factor
    m_max, m_min, divisor = rules.m_max, rules.m_min, rules.divisor
    out, out_exp, out_counted = history.values, history.experience, history.counted
    n_players = ratings.shape[0]
    cap = table.shape[1] - 1
    flat = ratings.reshape(-1)
    pair_flat = table.reshape(-1)
    bits = table_bits(table)
    n = rows.shape[0]
    mask = (1 << bits) - 1
    for r in range(start, n):
        if r + _AHEAD < n:
            a = rows[r + _AHEAD]
            wa, la = w_idx[a], l_idx[a]
            prefetch(flat, wa * PLAYER_SLOTS)
            prefetch(flat, la * PLAYER_SLOTS)
            prefetch(pair_flat, home_slot(min(wa, la) * n_players + max(wa, la), bits) * (cap + 1))
        i = rows[r]
        w = w_idx[i]
        lo = l_idx[i]
        n_pts = float(length[i])
        a_r = ratings[w, 0]
        b_r = ratings[lo, 0]
        exp_w = counters[w, EXP_SLOT]
        exp_l = counters[lo, EXP_SLOT]
        p_w = fibs_win_probability(a_r, b_r, n_pts, scale)
        p_l = fibs_win_probability(b_r, a_r, n_pts, scale)
        v = fibs_value(n_pts, factor)
        m_w = fibs_multiplier(float(exp_w), n_pts, m_max, m_min, divisor)
        m_l = fibs_multiplier(float(exp_l), n_pts, m_max, m_min, divisor)
        key = min(w, lo) * n_players + max(w, lo)
        j = home_slot(key, bits)
        reuse = -1
        while table[j, 0] != key and table[j, 0] != EMPTY:
            if gc and reuse < 0 and t[i] - latest_in(table, j) >= window:
                reuse = j
            j = (j + 1) & mask
        if table[j, 0] == EMPTY:  # a new pair: a stale slot on the way, else this one
            if reuse >= 0:
                j = reuse
            elif 2 * (live + 1) > table.shape[0]:
                return r, live
            else:
                live += 1
            table[j, 0] = key
            table[j, 1:] = SENTINEL
        counted = t[i] - table[j, 1] >= window
        ch_w = 0.0
        ch_l = 0.0
        if counted:
            for q in range(1, cap):
                table[j, q] = table[j, q + 1]
            table[j, cap] = t[i]
            ch_w = v * (1.0 - p_w) * m_w
            ch_l = -v * p_l * m_l
        if record:
            out[r, 0, 0] = a_r
            out[r, 0, 1] = b_r
            out[r, 0, 2] = p_w
            out[r, 0, 3] = v
            out[r, 0, 4] = m_w
            out[r, 0, 5] = ch_w
            out[r, 0, 6] = a_r + ch_w
            out[r, 1, 0] = b_r
            out[r, 1, 1] = a_r
            out[r, 1, 2] = p_l
            out[r, 1, 3] = v
            out[r, 1, 4] = m_l
            out[r, 1, 5] = ch_l
            out[r, 1, 6] = b_r + ch_l
            out_exp[r, 0] = exp_w
            out_exp[r, 1] = exp_l
            out_counted[r] = counted
        ratings[w, 0] = a_r + ch_w
        ratings[lo, 0] = b_r + ch_l
        counters[w, EXP_SLOT] = exp_w + length[i]
        counters[lo, EXP_SLOT] = exp_l + length[i]
        counters[w, MATCHES_SLOT] += 1
        counters[lo, MATCHES_SLOT] += 1
    return -1, live


@njit(cache=True)
def time_profile(rows: np.ndarray, t: np.ndarray, window: int) -> tuple[bool, int, int]:
    """(whether t[rows] never decreases, the most matches within `window` of one another
    along `rows` when it does, the latest time), in one pass."""
    ordered = True
    best = 0
    latest = SENTINEL
    lo = 0
    for r in range(rows.shape[0]):
        now = t[rows[r]]
        latest = max(latest, now)
        if r and now < t[rows[r - 1]]:
            ordered = False
        if ordered:
            while now - t[rows[lo]] >= window:
                lo += 1
            best = max(best, r - lo + 1)
    return ordered, best, latest
