"""Which matches FIBS ranks (RULES §5): every match classified as ranked, excluded (changes
nothing, and why) or rejected (an invalid record for the quarantine) in one numba pass over
integer-coded columns, and the ranked matches put in replay order.

Ids are coded against the replay's sorted distinct player ids (`rating_core.kernels.codes`), so
no string is compared per match: a streamed replay codes every batch against the same ids.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
from numba import njit

from rating_core.kernels.codes import (
    dense_codes,
    positions_in,
    read_only,
    replay_order,
    rows_where_both_zero,
)
from rating_core.systems.fibs.rules import REJ_INVALID, Exclusion

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
FIBS_MATCH_COLUMNS = [*RANKED_COLUMNS, "ranked", "vs_ai"]
"""The columns of a match the FIBS replay reads (what a lake source needs to hand over)."""
MATCH_SIDES = ("winner_id", "loser_id")
"""The columns naming a match's players."""


@dataclass(frozen=True)
class Classified:
    """Matches with their reason codes, player codes and the ranked ones in replay order."""

    frame: pl.DataFrame  # the input matches
    ids: pl.Series  # sorted distinct player ids the players are coded against
    w_code: np.ndarray
    l_code: np.ndarray
    reason: np.ndarray  # uint8 Exclusion code, 0 neither
    invalid: np.ndarray  # bool
    length: np.ndarray  # int64, 0 where null
    rows: np.ndarray  # ranked valid matches in replay order (period, ended_at, match_id)
    period: np.ndarray  # int32 code of each match's period in `periods` (-1: null)
    periods: pl.Series  # sorted distinct periods of the matches


def match_players(matches: pl.DataFrame) -> pl.Series:
    """The player ids of `matches` (winners, then losers; repeats and nulls kept)."""
    return pl.concat([matches.get_column(side).cast(pl.String) for side in MATCH_SIDES])


def classify(matches: pl.DataFrame, ids: pl.Series | None = None) -> Classified:
    """Classify `matches` and put the ranked ones in replay order, their players coded against
    `ids` (sorted, distinct, holding every player of the matches: a streamed replay's, the same
    for every batch), by default the matches' own."""
    n_m = matches.height
    players = match_players(matches)
    if ids is None:
        codes, ids = dense_codes(players)
    else:
        found = positions_in(ids, players)
        if int((found < 0).sum()) != players.null_count():
            raise AssertionError("a match's player is missing from the replay's ids")
        codes = found.astype(np.int32)
    w_code, l_code = codes[:n_m], codes[n_m:]
    period, periods = dense_codes(matches["period"].cast(pl.String))
    ended = matches["ended_at"]
    vs_ai = (
        matches["vs_ai"].fill_null(False).to_numpy()
        if "vs_ai" in matches.columns
        else np.zeros(n_m, dtype=np.bool_)
    )
    # read-only whether Polars hands over its buffer or a copy: one compiled type for the kernels
    length = read_only(matches["length"].cast(pl.Int64).fill_null(0).to_numpy(), np.int64)
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
    return Classified(matches, ids, w_code, l_code, reason, invalid, length, rows, period, periods)


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
