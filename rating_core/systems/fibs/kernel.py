"""The FIBS replay's numba kernel (RULES §5): one 32-byte record per player, the ranked matches
replayed in order with the shared formula (`formula`) and the fair-play window's pair table
(`pairs`), the history written per match.

Only arrays and numbers cross into here (no Polars): `replay` codes the matches and builds the
frames around this kernel.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rating_core.kernels.intrinsics import prefetch
from rating_core.systems.fibs.formula import fibs_multiplier, fibs_value, fibs_win_probability
from rating_core.systems.fibs.pairs import EMPTY, SENTINEL, home_slot, latest_in, table_bits

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


@njit(cache=True)
def replay_kernel(
    start: int,
    stop: int,
    rows: np.ndarray,
    w_idx: np.ndarray,
    l_idx: np.ndarray,
    length: np.ndarray,
    t: np.ndarray,
    ratings: np.ndarray,
    counters: np.ndarray,
    table: np.ndarray,
    live: int,
    gc: bool,
    window: int,
    scale: float,
    factor: float,
    m_max: float,
    m_min: float,
    divisor: float,
    n_players: int,
    record: bool,
    out: np.ndarray,
    out_exp: np.ndarray,
    out_counted: np.ndarray,
) -> tuple[int, int]:
    """Replay the ranked matches `rows` (row numbers, in order), updating the records in place.

    `ratings`/`counters` are float64/int64 views of the player records (`PLAYER_SLOTS`).
    The pair table (open addressing on key min·n_players + max) holds per pair the times of its
    last `cap` rating-changing matches, oldest first: a match changes ratings only if the oldest
    ended `window` or more before it (fewer than `cap` in the window), and then it replaces the
    oldest. `gc`: times never decrease along `rows`, so a pair whose latest rating-changing
    match ended `window` or more before the current match is stale (every later match of the
    pair counts exactly as for a new pair): a new pair takes the first stale slot on its probe
    path, so stale pairs are recycled instead of filling the table.
    When `record`, out[r, s, :] = before, opponent, p, v, m, change, after (s 0 winner, 1
    loser). The records of the match `_AHEAD` places later are prefetched.

    Replays rows[start:stop] and returns (at, used): at is -1 at the end, else the position
    of a match whose new pair would fill the table past half; the caller rebuilds it
    (`rebuilt`, which drops stale pairs and grows it if needed) and resumes there. `used`
    counts the occupied slots.
    """
    cap = table.shape[1] - 1
    flat = ratings.reshape(-1)
    pair_flat = table.reshape(-1)
    bits = table_bits(table)
    n = rows.shape[0]
    mask = (1 << bits) - 1
    for r in range(start, stop):
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
