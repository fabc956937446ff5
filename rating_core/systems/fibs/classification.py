"""Which matches FIBS ranks (RULES §5): every match classified as ranked, excluded (changes
nothing, and why) or rejected (an invalid record for the quarantine) in one numba pass over
integer-coded columns, and the ranked matches put in replay order.

Ids are coded once for the whole replay (state, pair state, winners, losers) with
`rating_core.kernels.codes`, so no string is compared per match.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
from numba import njit

from rating_core.kernels.codes import dense_codes, replay_order, rows_where_both_zero
from rating_core.schemas import empty
from rating_core.systems.fibs.rules import FIBS_PAIR_STATE_SCHEMA, REJ_INVALID, Exclusion

X_NOT_RANKED, X_AI = Exclusion.NOT_RANKED.code, Exclusion.AI.code  # constants for numba


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


RANKED_COLUMNS = ["match_id", "ended_at", "period", "winner_id", "loser_id", "length"]


@dataclass(frozen=True)
class Classified:
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


def classify(
    matches: pl.DataFrame,
    state_ids: pl.Series | None = None,
    pairs: pl.DataFrame | None = None,
) -> Classified:
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
    return Classified(
        matches, ids, codes, w_code, l_code, reason, invalid, length, rows, period, periods
    )


def excluded_rejected(c: Classified) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(excluded, rejected) matches with their reason; an excluded match is never rejected."""
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
    c = classify(matches)
    return c.frame.select(RANKED_COLUMNS)[c.rows], *excluded_rejected(c)
