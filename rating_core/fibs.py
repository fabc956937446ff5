"""Backgammon site rating with the FIBS formula (RULES §5), replayed match by match.

Filtering and integer coding are Polars; the replay, including the fair-play 24-hour pair
window, is one numba kernel. The player state plus the pair state (recent rating-changing
matches per pair) is all a replay needs, so periods chain exactly like one long replay.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
from numba import njit

from rating_core.codes import dense_codes, key_codes_bucketed, sort_permutation
from rating_core.rounding import round_half_away, round_half_away_expr
from rating_core.schemas import PLAYERS_SCHEMA, UTC_TIME, empty

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


FIBS_RULES = FibsRules()

FIBS_STATE_SCHEMA: dict[str, pl.DataType] = {
    "player_id": pl.String,
    "rating": pl.Float64,  # unrounded
    "experience": pl.Int64,  # sum of the lengths of all ranked matches
    "matches": pl.Int64,  # ranked matches so far (rating-changing or not)
}

FIBS_PAIR_STATE_SCHEMA: dict[str, pl.DataType] = {
    "player_a": pl.String,  # the smaller id of the pair
    "player_b": pl.String,
    "ended_at": UTC_TIME,  # a recent rating-changing match of the pair
}

FIBS_HISTORY_SCHEMA: dict[str, pl.DataType] = {
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

FIBS_EXCLUDED_SCHEMA: dict[str, pl.DataType] = {
    "match_id": pl.String,
    "period": pl.String,
    "reason": pl.String,
}

FIBS_LIST_SCHEMA: dict[str, pl.DataType] = {
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

R_UNRANKED = "not a ranked match"
R_AI = "match against the AI"
R_FAIR_PLAY = "fair play: 3 rating-changing matches between these players in the last 24 hours"
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


@njit(cache=True)
def _fibs_kernel(
    w_idx: np.ndarray,
    l_idx: np.ndarray,
    length: np.ndarray,
    t: np.ndarray,
    pair: np.ndarray,
    ratings: np.ndarray,
    experience: np.ndarray,
    matches: np.ndarray,
    pair_times: np.ndarray,
    pair_pos: np.ndarray,
    window: int,
    scale: float,
    factor: float,
    m_max: float,
    m_min: float,
    divisor: float,
    record: bool,
    out: np.ndarray,
    out_exp: np.ndarray,
    out_counted: np.ndarray,
) -> None:
    """Replay ranked matches in order, updating the arrays in place.

    pair_times[p] is a ring of the pair's last rating-changing match times, pair_pos[p] its
    oldest slot: a match changes ratings only if that oldest one ended 24 h or more before it.
    When `record`, out[i, s, :] = before, opponent, p, v, m, change, after (s 0 winner, 1 loser).
    """
    cap = pair_times.shape[1]
    for i in range(w_idx.shape[0]):
        w = w_idx[i]
        lo = l_idx[i]
        n = float(length[i])
        a = ratings[w]
        b = ratings[lo]
        p_w = fibs_win_probability(a, b, n, scale)
        p_l = fibs_win_probability(b, a, n, scale)
        v = fibs_value(n, factor)
        m_w = fibs_multiplier(float(experience[w]), n, m_max, m_min, divisor)
        m_l = fibs_multiplier(float(experience[lo]), n, m_max, m_min, divisor)
        pr = pair[i]
        pos = pair_pos[pr]
        counted = t[i] - pair_times[pr, pos] >= window
        ch_w = 0.0
        ch_l = 0.0
        if counted:
            pair_times[pr, pos] = t[i]
            pair_pos[pr] = (pos + 1) % cap
            ch_w = v * (1.0 - p_w) * m_w
            ch_l = -v * p_l * m_l
        if record:
            out[i, 0, 0] = a
            out[i, 0, 1] = b
            out[i, 0, 2] = p_w
            out[i, 0, 3] = v
            out[i, 0, 4] = m_w
            out[i, 0, 5] = ch_w
            out[i, 0, 6] = a + ch_w
            out[i, 1, 0] = b
            out[i, 1, 1] = a
            out[i, 1, 2] = p_l
            out[i, 1, 3] = v
            out[i, 1, 4] = m_l
            out[i, 1, 5] = ch_l
            out[i, 1, 6] = b + ch_l
            out_exp[i, 0] = experience[w]
            out_exp[i, 1] = experience[lo]
            out_counted[i] = counted
        ratings[w] = a + ch_w
        ratings[lo] = b + ch_l
        experience[w] += length[i]
        experience[lo] += length[i]
        matches[w] += 1
        matches[lo] += 1


# --- replay -----------------------------------------------------------------------------------


_RANKED_COLUMNS = ["match_id", "ended_at", "period", "winner_id", "loser_id", "length"]


def _classify(matches: pl.DataFrame) -> tuple[pl.DataFrame, np.ndarray]:
    """Matches with `_reason` (excluded) and `_invalid` (rejected), and the row numbers of the
    ranked ones in replay order (period, ended_at, match_id)."""
    vs_ai = pl.col("vs_ai").fill_null(False) if "vs_ai" in matches.columns else pl.lit(False)
    invalid = (
        pl.col("winner_id").is_null()
        | pl.col("loser_id").is_null()
        | (pl.col("winner_id") == pl.col("loser_id"))
        | pl.col("ended_at").is_null()
        | pl.col("period").is_null()
        | pl.col("length").is_null()
        | (pl.col("length") < 1)
    )
    reason = (  # 1 unranked, 2 against the AI, 0 neither (text only for excluded rows)
        pl.when(pl.col("ranked").fill_null(False).not_())
        .then(pl.lit(1, dtype=pl.UInt8))
        .when(vs_ai)
        .then(pl.lit(2, dtype=pl.UInt8))
        .otherwise(pl.lit(0, dtype=pl.UInt8))
    )
    m = matches.with_columns(reason.alias("_reason"), invalid.alias("_invalid"))
    ok = m.select((pl.col("_reason") == 0) & pl.col("_invalid").not_()).to_series()
    rows = np.flatnonzero(ok.to_numpy())
    perm = sort_permutation(m.select("period", "ended_at", "match_id")[rows])
    return m, rows if perm is None else rows[perm]


def _excluded_rejected(m: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    excluded = m.filter(pl.col("_reason") != 0).select(
        "match_id",
        "period",
        pl.col("_reason")
        .replace_strict([1, 2], [R_UNRANKED, R_AI], return_dtype=pl.String)
        .alias("reason"),
    )
    rejected = m.filter((pl.col("_reason") == 0) & pl.col("_invalid")).select(
        "match_id", "period", pl.lit(REJ_INVALID).alias("reason")
    )
    return excluded, rejected


def classify_matches(matches: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Split matches into (ranked, excluded, rejected); ranked is sorted (period, ended_at, id)."""
    m, rows = _classify(matches)
    return m.select(_RANKED_COLUMNS)[rows], *_excluded_rejected(m)


def fibs_replay(
    matches: pl.DataFrame,
    state: pl.DataFrame | None = None,
    pairs: pl.DataFrame | None = None,
    rules: FibsRules = FIBS_RULES,
    history: bool = True,
) -> FibsReplayResult:
    """Replay ranked backgammon matches from a starting (state, pairs), e.g. last period's end."""
    state = state if state is not None else empty(FIBS_STATE_SCHEMA)
    pairs = pairs if pairs is not None else empty(FIBS_PAIR_STATE_SCHEMA)
    m, rows = _classify(matches)
    n = rows.shape[0]

    # Every id coded once (hash + one numba pass, see `dense_codes`): ids come out sorted.
    n_s, n_p, n_m = state.height, pairs.height, m.height
    codes, ids = dense_codes(
        pl.concat(
            [
                state["player_id"],
                pairs["player_a"],
                pairs["player_b"],
                m["winner_id"].cast(pl.String),
                m["loser_id"].cast(pl.String),
            ]
        )
    )
    s_codes = codes[:n_s]
    pa = codes[n_s : n_s + n_p].astype(np.int64)
    pb = codes[n_s + n_p : n_s + 2 * n_p].astype(np.int64)
    w = codes[n_s + 2 * n_p : n_s + 2 * n_p + n_m][rows].astype(np.int64)
    lo = codes[n_s + 2 * n_p + n_m :][rows].astype(np.int64)
    n_players = ids.len()
    ratings = np.full(n_players, rules.start, dtype=np.float64)
    experience = np.zeros(n_players, dtype=np.int64)
    played = np.zeros(n_players, dtype=np.int64)
    present = np.zeros(n_players, dtype=np.bool_)
    if state.height:
        ratings[s_codes] = state["rating"].to_numpy()
        experience[s_codes] = state["experience"].to_numpy()
        played[s_codes] = state["matches"].to_numpy()
        present[s_codes] = True

    match_keys = np.minimum(w, lo) * n_players + np.maximum(w, lo)
    pair_keys_in = np.minimum(pa, pb) * n_players + np.maximum(pa, pb)
    all_keys = np.concatenate([match_keys, pair_keys_in])
    inverse, first = key_codes_bucketed(all_keys)
    keys = all_keys[first]
    pair_of_match = inverse[:n].astype(np.int64)
    cap = rules.fair_play_max
    pair_times = np.full((keys.shape[0], cap), _SENTINEL, dtype=np.int64)
    pair_pos = np.zeros(keys.shape[0], dtype=np.int64)
    if pairs.height:
        loaded = (
            pl.DataFrame(
                {
                    "pair": inverse[n:].astype(np.int64),
                    "t": pairs["ended_at"].dt.epoch("us").to_numpy(),
                }
            )
            .sort("pair", "t")
            .with_columns(pl.int_range(pl.len()).reverse().over("pair").alias("_from_end"))
            .filter(pl.col("_from_end") < cap)
            .with_columns(pl.int_range(pl.len()).over("pair").alias("slot"))
        )
        lp, lt, ls = (loaded[c].to_numpy() for c in ("pair", "t", "slot"))
        pair_times[lp, ls] = lt
        counts = loaded.group_by("pair").len()
        pair_pos[counts["pair"].to_numpy()] = counts["len"].to_numpy() % cap

    t = m["ended_at"].dt.epoch("us").fill_null(0).to_numpy()[rows].astype(np.int64)
    length = m["length"].fill_null(0).to_numpy()[rows].astype(np.int64)
    n_out = n if history else 0
    out = np.full((n_out, 2, 7), np.nan, dtype=np.float64)
    out_exp = np.zeros((n_out, 2), dtype=np.int64)
    out_counted = np.zeros(n_out, dtype=np.bool_)
    _fibs_kernel(
        w,
        lo,
        length,
        t,
        pair_of_match,
        ratings,
        experience,
        played,
        pair_times,
        pair_pos,
        rules.fair_play_window_us,
        rules.scale,
        rules.value_factor,
        rules.multiplier_max,
        rules.multiplier_min,
        rules.experience_divisor,
        history,
        out,
        out_exp,
        out_counted,
    )
    present[w] = True
    present[lo] = True
    keep = np.nonzero(present)[0]
    new_state = pl.DataFrame(
        {
            "player_id": ids.gather(keep),
            "rating": ratings[keep],
            "experience": experience[keep],
            "matches": played[keep],
        },
        schema=FIBS_STATE_SCHEMA,
    )

    # Pair state: recent rating-changing matches that can still matter for a later match.
    latest = max(int(t.max()) if n else _SENTINEL, _latest(pairs))
    slot_p, slot_s = np.nonzero(pair_times > latest - rules.fair_play_window_us)
    new_pairs = pl.DataFrame(
        {
            "player_a": ids.gather(keys[slot_p] // n_players),
            "player_b": ids.gather(keys[slot_p] % n_players),
            "ended_at": pl.Series(pair_times[slot_p, slot_s]).cast(pl.Datetime("us")),
        }
    ).with_columns(pl.col("ended_at").dt.replace_time_zone("UTC"))
    new_pairs = new_pairs.cast(FIBS_PAIR_STATE_SCHEMA).sort(  # type: ignore[arg-type]
        "player_a", "player_b", "ended_at"
    )

    hist = (
        _history_frame(m.select(_RANKED_COLUMNS)[rows], out, out_exp, out_counted)
        if history
        else empty(FIBS_HISTORY_SCHEMA)
    )
    return FibsReplayResult(hist, new_state, new_pairs, *_excluded_rejected(m))


def _latest(pairs: pl.DataFrame) -> int:
    """Latest match time (µs since epoch) held in a pair state, or the sentinel."""
    if pairs.height == 0:
        return int(_SENTINEL)
    return int(pairs["ended_at"].dt.epoch("us").max())  # type: ignore[arg-type]


def _history_frame(
    ranked: pl.DataFrame, out: np.ndarray, out_exp: np.ndarray, out_counted: np.ndarray
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
            pl.when(pl.col("counted")).then(None).otherwise(pl.lit(R_FAIR_PLAY)).alias("reason"),
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
        .cast(FIBS_LIST_SCHEMA)  # type: ignore[arg-type]
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
