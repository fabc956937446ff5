"""Backgammon site rating with the FIBS formula (RULES §5), replayed match by match.

Ids and periods are coded to integers once (`rating_core.kernels.codes`); the replay, including the
fair-play 24-hour pair window (a hash table of the pairs active within the window, inside the
kernel), is one numba kernel. The player state plus the pair state (recent rating-changing
matches per pair) is all a replay needs, so periods chain exactly like one long replay, and a
range of periods replays in one pass on one table, snapshotting both states at each period's
end (`replay_range`, behind `fibs_replay_periods`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np
import polars as pl
from numba import njit

from rating_core.kernels.codes import dense_codes, replay_order, rows_where_both_zero
from rating_core.kernels.intrinsics import aligned_empty, prefetch
from rating_core.rounding import round_half_away, round_half_away_expr
from rating_core.schemas import PLAYERS_SCHEMA, UTC_TIME, TableSchema, empty
from rating_core.systems.period_range import check_within, segment_ends, split_by_period

_SENTINEL = np.iinfo(np.int64).min // 2  # "no rating-changing match yet" in a pair slot


@dataclass(frozen=True)
class FibsRules:
    """Every constant of the FIBS rating (RULES §5), kept in one place."""

    start: float = 1500.0
    scale: float = 2000.0  # P = 1 - 1 / (10^((A - B) * sqrt(N) / scale) + 1)
    value_factor: float = 4.0  # V = value_factor * sqrt(N)
    multiplier_max: float = 5.0  # m = max(multiplier_min, multiplier_max - (E + N) / divisor)
    multiplier_min: float = 1.0
    experience_divisor: float = 100.0
    provisional_below: int = 50  # experience
    leaderboard_min_experience: int = 20
    fair_play_max: int = 3  # rating-changing matches per pair within the window
    fair_play_window_us: int = 24 * 3600 * 1_000_000  # 24 hours, in microseconds

    @property
    def fair_play_window_hours(self) -> float:
        """The fair-play window in hours."""
        return self.fair_play_window_us / 3_600_000_000

    def fair_play_reason(self) -> str:
        """Why a match kept both ratings unchanged (the history's reason)."""
        return (
            f"fair play: {self.fair_play_max} rating-changing matches between these players "
            f"in the last {self.fair_play_window_hours:g} hours"
        )


FIBS_RULES = FibsRules()

FIBS_STATE_SCHEMA: TableSchema = {
    "player_id": pl.String,
    "rating": pl.Float64,  # unrounded
    "experience": pl.Int64,  # sum of the lengths of all ranked matches
    "matches": pl.Int64,  # ranked matches so far (rating-changing or not)
}

FIBS_PAIR_STATE_SCHEMA: TableSchema = {
    "player_a": pl.String,  # the smaller id of the pair
    "player_b": pl.String,
    "ended_at": UTC_TIME,  # a recent rating-changing match of the pair
}

FIBS_HISTORY_SCHEMA: TableSchema = {
    "match_id": pl.String,
    "ended_at": UTC_TIME,
    "period": pl.String,
    "player_id": pl.String,
    "opponent_id": pl.String,
    "won": pl.Boolean,
    "length": pl.Int32,
    "rating_before": pl.Float64,
    "opponent_rating": pl.Float64,
    "p": pl.Float64,  # own chance to win the match
    "v": pl.Float64,
    "m": pl.Float64,
    "experience_before": pl.Int64,
    "counted": pl.Boolean,  # False: the fair-play rule kept ratings unchanged
    "reason": pl.String,
    "change": pl.Float64,
    "rating_after": pl.Float64,
}

FIBS_EXCLUDED_SCHEMA: TableSchema = {
    "match_id": pl.String,
    "period": pl.String,
    "reason": pl.String,
}

FIBS_LIST_SCHEMA: TableSchema = {
    "list": pl.String,
    "period": pl.String,
    "player_id": pl.String,
    "rating": pl.Float64,  # one decimal, half away from zero
    "rating_exact": pl.Float64,
    "experience": pl.Int64,
    "provisional": pl.Boolean,
    "leaderboard_eligible": pl.Boolean,
    "games": pl.Int64,  # ranked matches in the period
    "total_matches": pl.Int64,
    "change": pl.Float64,
}


class Exclusion(Enum):
    """Why a match changes nothing: its code in the classification kernel (0 is ranked) and
    its reason."""

    NOT_RANKED = 1, "not a ranked match"
    AI = 2, "match against the AI"

    def __init__(self, code: int, text: str) -> None:
        self.code = code
        self._text = text

    def text(self) -> str:
        """The reason as the excluded table shows it."""
        return self._text


X_NOT_RANKED, X_AI = Exclusion.NOT_RANKED.code, Exclusion.AI.code  # constants for numba
R_UNRANKED = Exclusion.NOT_RANKED.text()
R_AI = Exclusion.AI.text()
R_FAIR_PLAY = FIBS_RULES.fair_play_reason()  # under the default rules
REJ_INVALID = "missing player, time, period or length, or a player against themselves"


@dataclass(frozen=True)
class FibsReplayResult:
    """What a FIBS replay produces: history, player state, pair state and excluded matches."""

    history: pl.DataFrame  # FIBS_HISTORY_SCHEMA, one row per player per ranked match
    state: pl.DataFrame  # FIBS_STATE_SCHEMA
    pairs: pl.DataFrame  # FIBS_PAIR_STATE_SCHEMA, needed to chain the fair-play window
    excluded: pl.DataFrame  # FIBS_EXCLUDED_SCHEMA, matches that change nothing
    rejected: pl.DataFrame  # FIBS_EXCLUDED_SCHEMA, invalid records for the quarantine


def empty_fibs_state() -> tuple[pl.DataFrame, pl.DataFrame]:
    """The (player state, pair state) before any match."""
    return empty(FIBS_STATE_SCHEMA), empty(FIBS_PAIR_STATE_SCHEMA)


# --- the formula (single implementation, shared by kernel and calculator) -----------------------


@njit(cache=True)
def fibs_win_probability(rating: float, opponent: float, length: float, scale: float) -> float:
    """P = 1 − 1 / (10^((A − B)·√N / scale) + 1): the chance of `rating` winning an N-point match."""
    return 1.0 - 1.0 / (10.0 ** ((rating - opponent) * np.sqrt(length) / scale) + 1.0)


@njit(cache=True)
def fibs_multiplier(
    experience: float, length: float, m_max: float, m_min: float, divisor: float
) -> float:
    """m = max(m_min, m_max − (E + N) / divisor), the new-player multiplier (E before the match)."""
    return max(m_min, m_max - (experience + length) / divisor)


@njit(cache=True)
def fibs_value(length: float, factor: float) -> float:
    """V = factor·√N, the match value."""
    return factor * np.sqrt(length)


# --- the sequential replay (numba) -------------------------------------------------------------

# Each player's state is one 32-byte record (aligned, so within one cache line), `FIBS_RECORD`:
# rating (float64), experience and ranked matches (int64), read by the kernel through float64
# and int64 views of one (players, _PLAYER_RECORD) array at the slots the declared layout gives.
FIBS_RECORD = np.dtype(
    {
        "names": ["rating", "experience", "matches"],
        "formats": [np.float64, np.int64, np.int64],
        "offsets": [0, 8, 16],
        "itemsize": 32,
    }
)
_PLAYER_RECORD = FIBS_RECORD.itemsize // 8  # 8-byte slots per player
_EXP = dict(FIBS_RECORD.fields or {})["experience"][1] // 8
_MATCHES = dict(FIBS_RECORD.fields or {})["matches"][1] // 8
_EMPTY = -1  # an unused pair-table slot (pair keys are >= 0)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_AHEAD = 8  # matches between prefetching a match's records and replaying it


@njit(cache=True, inline="always")
def _home(key: int, bits: int) -> int:
    """Home slot of a pair key in a table of 2**bits slots (Fibonacci hashing)."""
    home = (np.uint64(key) * _GOLDEN) >> np.uint64(64 - bits)
    return np.int64(home)  # type: ignore[return-value]  # an int64 slot index inside the kernel


@njit(cache=True)
def _table_bits(table: np.ndarray) -> int:
    bits = 0
    while (1 << bits) < table.shape[0]:
        bits += 1
    return bits


@njit(cache=True)
def _find(table: np.ndarray, key: int, bits: int) -> int:
    """The slot holding `key`, or the empty slot where it would go (linear probing)."""
    mask = (1 << bits) - 1
    j = _home(key, bits)
    while table[j, 0] != key and table[j, 0] != _EMPTY:
        j = (j + 1) & mask
    return j


@njit(cache=True, inline="always")
def _latest_in(table: np.ndarray, j: int) -> int:
    """The latest rating-changing match time held in slot j."""
    latest = table[j, 1]
    for q in range(2, table.shape[1]):
        latest = max(latest, table[j, q])
    return latest


@njit(cache=True)
def _delete(table: np.ndarray, j: int, bits: int) -> None:
    """Empty slot j, moving later entries of its probe run back (linear-probing deletion, no
    tombstones: every remaining key stays reachable from its home slot)."""
    mask = (1 << bits) - 1
    k = j
    while True:
        k = (k + 1) & mask
        key = table[k, 0]
        if key == _EMPTY:
            break
        h = _home(key, bits)
        # The entry at k may fill the hole at j unless its home lies cyclically in (j, k].
        if (j < k and (h <= j or h > k)) or (j > k and h <= j and h > k):
            table[j] = table[k]
            j = k
    table[j, 0] = _EMPTY


@njit(cache=True)
def _purge(table: np.ndarray, now: int, window: int) -> int:
    """Delete in place every pair that is stale at `now`; returns the pairs left.

    One pass from an empty slot round the table: a deletion only moves entries of the same
    run back towards the hole, so each entry is checked once it reaches its final slot.
    """
    bits = _table_bits(table)
    mask = (1 << bits) - 1
    e = 0
    while table[e, 0] != _EMPTY:
        e += 1
    live = 0
    i = (e + 1) & mask
    for _ in range(table.shape[0] - 1):
        while table[i, 0] != _EMPTY and now - _latest_in(table, i) >= window:
            _delete(table, i, bits)
        if table[i, 0] != _EMPTY:
            live += 1
        i = (i + 1) & mask
    return live


@njit(cache=True)
def _reinsert(table: np.ndarray, new: np.ndarray) -> None:
    """Copy every entry of `table` into the empty table `new`."""
    bits = _table_bits(new)
    for s in range(table.shape[0]):
        if table[s, 0] != _EMPTY:
            new[_find(new, table[s, 0], bits)] = table[s]


def _rebuilt(
    table: np.ndarray, used: int, now: int, window: int, gc: bool
) -> tuple[np.ndarray, int]:
    """(pair table, pairs in it) with room for new pairs: stale pairs purged in place (with
    `gc`), then, if still over a quarter full, copied into a table twice as large or more
    (numpy-allocated, so backed by huge pages: fewer TLB misses on random probes)."""
    if gc:
        used = _purge(table, now, window)
    size = table.shape[0]
    if 4 * (used + 1) <= size:
        return table, used
    while 4 * (used + 1) > size:
        size *= 2
    new = np.full((size, table.shape[1]), _EMPTY, dtype=np.int64)
    _reinsert(table, new)
    return new, used


@njit(cache=True)
def _load_pairs(table: np.ndarray, keys: np.ndarray, times: np.ndarray) -> int:
    """Insert a saved pair state (keys and times sorted by key then time) into an empty table
    with room for all: each pair keeps its last `cap` times, newest in the last column, no
    match in the slots before. Returns the number of pairs."""
    cap = table.shape[1] - 1
    bits = _table_bits(table)
    live = 0
    i = 0
    while i < keys.shape[0]:
        e = i
        while e < keys.shape[0] and keys[e] == keys[i]:
            e += 1
        j = _find(table, keys[i], bits)
        table[j, 0] = keys[i]
        table[j, 1:] = _SENTINEL
        for q in range(max(i, e - cap), e):
            table[j, cap - (e - q) + 1] = times[q]
        live += 1
        i = e
    return live


@njit(cache=True)
def _fibs_kernel(
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

    `ratings`/`counters` are float64/int64 views of the player records (`_PLAYER_RECORD`).
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
    (`_rebuilt`, which drops stale pairs and grows it if needed) and resumes there. `used`
    counts the occupied slots.
    """
    cap = table.shape[1] - 1
    flat = ratings.reshape(-1)
    pair_flat = table.reshape(-1)
    bits = _table_bits(table)
    n = rows.shape[0]
    mask = (1 << bits) - 1
    for r in range(start, stop):
        if r + _AHEAD < n:
            a = rows[r + _AHEAD]
            wa, la = w_idx[a], l_idx[a]
            prefetch(flat, wa * _PLAYER_RECORD)
            prefetch(flat, la * _PLAYER_RECORD)
            prefetch(pair_flat, _home(min(wa, la) * n_players + max(wa, la), bits) * (cap + 1))
        i = rows[r]
        w = w_idx[i]
        lo = l_idx[i]
        n_pts = float(length[i])
        a_r = ratings[w, 0]
        b_r = ratings[lo, 0]
        exp_w = counters[w, _EXP]
        exp_l = counters[lo, _EXP]
        p_w = fibs_win_probability(a_r, b_r, n_pts, scale)
        p_l = fibs_win_probability(b_r, a_r, n_pts, scale)
        v = fibs_value(n_pts, factor)
        m_w = fibs_multiplier(float(exp_w), n_pts, m_max, m_min, divisor)
        m_l = fibs_multiplier(float(exp_l), n_pts, m_max, m_min, divisor)
        key = min(w, lo) * n_players + max(w, lo)
        j = _home(key, bits)
        reuse = -1
        while table[j, 0] != key and table[j, 0] != _EMPTY:
            if gc and reuse < 0 and t[i] - _latest_in(table, j) >= window:
                reuse = j
            j = (j + 1) & mask
        if table[j, 0] == _EMPTY:  # a new pair: a stale slot on the way, else this one
            if reuse >= 0:
                j = reuse
            elif 2 * (live + 1) > table.shape[0]:
                return r, live
            else:
                live += 1
            table[j, 0] = key
            table[j, 1:] = _SENTINEL
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
        counters[w, _EXP] = exp_w + length[i]
        counters[lo, _EXP] = exp_l + length[i]
        counters[w, _MATCHES] += 1
        counters[lo, _MATCHES] += 1
    return -1, live


@njit(cache=True)
def _pair_rows(table: np.ndarray, after: int) -> tuple[np.ndarray, np.ndarray]:
    """(pair key, time) of every rating-changing match time in the table later than `after`."""
    cap = table.shape[1] - 1
    k = 0
    for s in range(table.shape[0]):
        if table[s, 0] != _EMPTY:
            for q in range(1, cap + 1):
                if table[s, q] > after:
                    k += 1
    keys = np.empty(k, dtype=np.int64)
    times = np.empty(k, dtype=np.int64)
    k = 0
    for s in range(table.shape[0]):
        if table[s, 0] != _EMPTY:
            for q in range(1, cap + 1):
                if table[s, q] > after:
                    keys[k] = table[s, 0]
                    times[k] = table[s, q]
                    k += 1
    return keys, times


@njit(cache=True)
def _keep_recent(table: np.ndarray, after: int) -> None:
    """Reduce every pair to its rating-changing match times later than `after`, oldest first
    and newest in the last column: what saving the pair state (`_pair_rows`) and loading it
    again (`_load_pairs`) does between two periods, so that a range replay goes on exactly as
    one replay per period. A pair left without a time counts as a new pair."""
    cap = table.shape[1] - 1
    kept = np.empty(cap, dtype=np.int64)
    for s in range(table.shape[0]):
        if table[s, 0] == _EMPTY:
            continue
        k = 0
        for q in range(1, cap + 1):
            t = table[s, q]
            if t > after:  # insertion sort: a pair holds at most `cap` (3) times
                at = k
                while at > 0 and kept[at - 1] > t:
                    kept[at] = kept[at - 1]
                    at -= 1
                kept[at] = t
                k += 1
        table[s, 1:] = _SENTINEL
        for q in range(k):
            table[s, cap - k + 1 + q] = kept[q]


@njit(cache=True)
def _classify_matches(
    w_code: np.ndarray,
    l_code: np.ndarray,
    unranked: np.ndarray,
    vs_ai: np.ndarray,
    time_null: np.ndarray,
    period: np.ndarray,
    length: np.ndarray,
    reason: np.ndarray,
    invalid: np.ndarray,
) -> None:
    """reason: the Exclusion code (not ranked first, then against the AI), 0 neither; invalid:
    a missing player, time, period or length, a length below 1, or a player against themselves."""
    has_time_null = time_null.shape[0] > 0
    for i in range(w_code.shape[0]):
        reason[i] = X_NOT_RANKED if unranked[i] else (X_AI if vs_ai[i] else 0)
        w, lo = w_code[i], l_code[i]
        invalid[i] = (
            w < 0
            or lo < 0
            or w == lo
            or (has_time_null and time_null[i])
            or period[i] < 0
            or length[i] < 1
        )


@njit(cache=True)
def _time_profile(rows: np.ndarray, t: np.ndarray, window: int) -> tuple[bool, int, int]:
    """(whether t[rows] never decreases, the most matches within `window` of one another
    along `rows` when it does, the latest time), in one pass."""
    ordered = True
    best = 0
    latest = _SENTINEL
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


_RANKED_COLUMNS = ["match_id", "ended_at", "period", "winner_id", "loser_id", "length"]


@dataclass(frozen=True)
class _Classified:
    """Matches with their reason codes, player codes and the ranked ones in replay order."""

    frame: pl.DataFrame  # the input matches
    ids: pl.Series  # sorted distinct player ids (state, pair state, matches)
    codes: np.ndarray  # codes of [state ids, pair a, pair b, winners, losers]
    w_code: np.ndarray
    l_code: np.ndarray
    reason: np.ndarray  # uint8 Exclusion code, 0 neither
    invalid: np.ndarray  # bool
    length: np.ndarray  # int64, 0 where null
    rows: np.ndarray  # ranked valid matches in replay order (period, ended_at, match_id)
    period: np.ndarray  # int32 code of each match's period in `periods` (-1: null)
    periods: pl.Series  # sorted distinct periods of the matches


def _classify(
    matches: pl.DataFrame,
    state_ids: pl.Series | None = None,
    pairs: pl.DataFrame | None = None,
) -> _Classified:
    """Code every id once (state, pair state, winners, losers), classify and order matches."""
    pairs = pairs if pairs is not None else empty(FIBS_PAIR_STATE_SCHEMA)
    sid = state_ids if state_ids is not None else pl.Series(dtype=pl.String)
    n_m = matches.height
    codes, ids = dense_codes(
        pl.concat(
            [
                sid.cast(pl.String),
                pairs["player_a"].cast(pl.String),
                pairs["player_b"].cast(pl.String),
                matches["winner_id"].cast(pl.String),
                matches["loser_id"].cast(pl.String),
            ]
        )
    )
    w_code = codes[codes.shape[0] - 2 * n_m : codes.shape[0] - n_m]
    l_code = codes[codes.shape[0] - n_m :]
    period, periods = dense_codes(matches["period"].cast(pl.String))
    ended = matches["ended_at"]
    vs_ai = (
        matches["vs_ai"].fill_null(False).to_numpy()
        if "vs_ai" in matches.columns
        else np.zeros(n_m, dtype=np.bool_)
    )
    length = matches["length"].cast(pl.Int64).fill_null(0).to_numpy()
    reason = np.empty(n_m, dtype=np.uint8)
    invalid = np.empty(n_m, dtype=np.bool_)
    _classify_matches(
        w_code,
        l_code,
        matches["ranked"].fill_null(False).not_().to_numpy(),
        vs_ai,
        ended.is_null().to_numpy() if ended.null_count() else np.zeros(0, dtype=np.bool_),
        period,
        length,
        reason,
        invalid,
    )
    rows = rows_where_both_zero(reason, invalid)
    t = ended.to_physical().fill_null(0).to_numpy()
    rows = replay_order(rows, period, t, matches["match_id"])
    return _Classified(
        matches, ids, codes, w_code, l_code, reason, invalid, length, rows, period, periods
    )


def _excluded_rejected(c: _Classified) -> tuple[pl.DataFrame, pl.DataFrame]:
    keys = c.frame.select("match_id", "period")
    ex = np.flatnonzero(c.reason != 0)
    excluded = keys[ex].with_columns(
        pl.Series(c.reason[ex])
        .replace_strict({e.code: e.text() for e in Exclusion}, return_dtype=pl.String)
        .alias("reason")
    )
    rejected = keys[np.flatnonzero((c.reason == 0) & c.invalid)].with_columns(
        pl.lit(REJ_INVALID).alias("reason")
    )
    return excluded, rejected


def classify_matches(matches: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Split matches into (ranked, excluded, rejected); ranked is sorted (period, ended_at, id)."""
    c = _classify(matches)
    return c.frame.select(_RANKED_COLUMNS)[c.rows], *_excluded_rejected(c)


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
    c = _classify(matches, state["player_id"], pairs)
    rows, ids = c.rows, c.ids
    n, n_s, n_p, n_players = rows.shape[0], state.height, pairs.height, ids.len()
    if periods is None:
        ends = np.array([n], dtype=np.int64)
    else:
        check_within(c.frame["period"], periods, "a match")
        ends = segment_ends(c.period[rows], c.periods, periods)

    records = aligned_empty((n_players, _PLAYER_RECORD), np.float64, align=64)
    ratings, counters = records, records.view(np.int64)
    ratings[:, 0] = rules.start
    counters[:, 1:] = 0
    present = np.zeros(n_players, dtype=np.bool_)
    if n_s:
        s_codes = c.codes[:n_s]
        ratings[s_codes, 0] = state["rating"].to_numpy()
        counters[s_codes, _EXP] = state["experience"].to_numpy()
        counters[s_codes, _MATCHES] = state["matches"].to_numpy()
        present[s_codes] = True

    cap, window = rules.fair_play_max, rules.fair_play_window_us
    t = c.frame["ended_at"].dt.epoch("us").fill_null(0).to_numpy()
    gc, busiest, latest_all = _time_profile(rows, t, window)
    # Room for every pair that can be active at once (at most the matches of the busiest
    # window when stale pairs are recycled), so that the table rarely needs a rebuild.
    active = busiest if gc else min(n, 1 << 16)
    bits = 10
    while (1 << bits) < 2 * (n_p + active + 1):
        bits += 1
    table = np.full((1 << bits, cap + 1), _EMPTY, dtype=np.int64)
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
        live = _load_pairs(table, loaded["key"].to_numpy(), loaded["t"].to_numpy())

    n_out = n if history else 0
    out = np.full((n_out, 2, 7), np.nan, dtype=np.float64)
    out_exp = np.zeros((n_out, 2), dtype=np.int64)
    out_counted = np.zeros(n_out, dtype=np.bool_)
    kept: list[np.ndarray] = []  # per period: the players of its state
    snapshots: list[np.ndarray] = []  # per period: their rating, experience and matches
    pair_rows: list[tuple[np.ndarray, np.ndarray]] = []  # per period: (pair key, time)
    pairs_latest = _latest(pairs)  # the latest time in the pair state the period starts from
    start = 0
    for seg, end in enumerate(ends):
        at = start
        while at >= 0:
            at, live = _fibs_kernel(
                at,
                int(end),
                rows,
                c.w_code,
                c.l_code,
                c.length,
                t,
                ratings,
                counters,
                table,
                live,
                gc,
                window,
                rules.scale,
                rules.value_factor,
                rules.multiplier_max,
                rules.multiplier_min,
                rules.experience_divisor,
                n_players,
                history,
                out,
                out_exp,
                out_counted,
            )
            if at >= 0:
                table, live = _rebuilt(table, live, int(t[rows[at]]), window, gc)
        keep = np.flatnonzero(present | (counters[:, _MATCHES] > 0))
        kept.append(keep)
        snapshots.append(records[keep])
        # Pair state: recent rating-changing matches that can still matter for a later match.
        if ends.shape[0] == 1:
            seg_latest = int(latest_all)
        else:
            seg_latest = int(t[rows[start:end]].max()) if end > start else int(_SENTINEL)
        latest = max(seg_latest, pairs_latest)
        keys, times = _pair_rows(table, latest - window)
        pair_rows.append((keys, times))
        pairs_latest = int(times.max()) if times.shape[0] else int(_SENTINEL)
        if seg + 1 < ends.shape[0]:
            _keep_recent(table, latest - window)
        start = int(end)

    keep_all = np.concatenate(kept)
    records_all = np.concatenate(snapshots)
    states = pl.DataFrame(
        {
            "player_id": ids.gather(keep_all),
            "rating": records_all[:, 0],
            "experience": records_all.view(np.int64)[:, _EXP],
            "matches": records_all.view(np.int64)[:, _MATCHES],
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
        _history_frame(c.frame.select(_RANKED_COLUMNS)[rows], out, out_exp, out_counted, rules)
        if history
        else empty(FIBS_HISTORY_SCHEMA)
    )
    excluded, rejected = _excluded_rejected(c)
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
        return int(_SENTINEL)
    return int(pairs["ended_at"].dt.epoch("us").max())  # type: ignore[arg-type]


def _history_frame(
    ranked: pl.DataFrame,
    out: np.ndarray,
    out_exp: np.ndarray,
    out_counted: np.ndarray,
    rules: FibsRules = FIBS_RULES,
) -> pl.DataFrame:
    """Two rows per ranked match (winner first) from the kernel's output arrays."""
    n = ranked.height
    if n == 0:
        return empty(FIBS_HISTORY_SCHEMA)
    pos = np.arange(2 * n)
    flat = out.reshape(2 * n, 7)
    winner = pl.col("_winner")
    counted = pl.Series("counted", np.repeat(out_counted, 2))
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
            pl.Series("experience_before", out_exp.reshape(2 * n)),
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


# --- list and calculator ----------------------------------------------------------------------


def fibs_list(
    state: pl.DataFrame,
    period: str,
    players: pl.DataFrame | None = None,
    previous_state: pl.DataFrame | None = None,
    rules: FibsRules = FIBS_RULES,
) -> pl.DataFrame:
    """The `fibs` list of `period`: every person with a ranked match so far.

    `players` supplies email_verified and display_name for leaderboard eligibility;
    `previous_state` (the state before the period) gives the period's matches and change.
    """
    players = players if players is not None else empty(PLAYERS_SCHEMA)
    reg = players.select(
        pl.col("player_id").cast(pl.String),
        pl.col("email_verified").cast(pl.Boolean).fill_null(False).alias("_verified"),
        pl.col("display_name").cast(pl.String).alias("_name"),
    ).unique("player_id", keep="first", maintain_order=True)
    prev = (previous_state if previous_state is not None else empty(FIBS_STATE_SCHEMA)).select(
        "player_id", pl.col("rating").alias("_prev_rating"), pl.col("matches").alias("_prev")
    )
    named = pl.col("_name").str.strip_chars().fill_null("").str.len_chars() > 0
    return (
        state.filter(pl.col("matches") >= 1)
        .join(reg, on="player_id", how="left")
        .join(prev, on="player_id", how="left")
        .select(
            pl.lit("fibs").alias("list"),
            pl.lit(period, dtype=pl.String).alias("period"),
            "player_id",
            round_half_away_expr(pl.col("rating"), 1).alias("rating"),
            pl.col("rating").alias("rating_exact"),
            "experience",
            (pl.col("experience") < rules.provisional_below).alias("provisional"),
            (
                pl.col("_verified").fill_null(False)
                & named
                & (pl.col("experience") >= rules.leaderboard_min_experience)
            ).alias("leaderboard_eligible"),
            (pl.col("matches") - pl.col("_prev").fill_null(0)).alias("games"),
            pl.col("matches").alias("total_matches"),
            (pl.col("rating") - pl.col("_prev_rating").fill_null(rules.start)).alias("change"),
        )
        .sort(["rating_exact", "player_id"], descending=[True, False])
        .cast(FIBS_LIST_SCHEMA)
    )


def fibs_calculator(
    rating: float,
    opponent: float,
    length: int,
    experience: int,
    rules: FibsRules = FIBS_RULES,
) -> dict[str, float]:
    """The seed's calculator for one match: win chance, multiplier and the change if you win/lose.

    Rounded values (p to 3 decimals, percent and win/loss to 1, m to 2) are for display; the
    `*_exact` keys keep the floats. Uses the same numba functions as the replay.
    """
    if length < 1:
        raise ValueError(f"a match is at least 1 point long, not {length}")
    n = float(length)
    p = fibs_win_probability(float(rating), float(opponent), n, rules.scale)
    v = fibs_value(n, rules.value_factor)
    m = fibs_multiplier(
        float(experience), n, rules.multiplier_max, rules.multiplier_min, rules.experience_divisor
    )
    win = v * (1.0 - p) * m
    loss = -v * p * m
    return {
        "p_win": round_half_away(p, 3),
        "p_win_percent": round_half_away(p * 100.0, 1),
        "value": round_half_away(v, 4),
        "multiplier": round_half_away(m, 2),
        "win": round_half_away(win, 1),
        "loss": round_half_away(loss, 1),
        "p_win_exact": p,
        "value_exact": v,
        "multiplier_exact": m,
        "win_exact": win,
        "loss_exact": loss,
    }


__all__ = [
    "FIBS_RULES",
    "FibsReplayResult",
    "FibsRules",
    "empty_fibs_state",
    "fibs_calculator",
    "fibs_list",
    "fibs_multiplier",
    "fibs_replay",
    "fibs_value",
    "fibs_win_probability",
]
