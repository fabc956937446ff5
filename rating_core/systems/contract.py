"""The one shape every period engine returns, per period (issue 10 item 5).

A system's range function takes the inputs of a range of periods and the state before the first,
computes the periods in order in memory and returns `{period: PeriodOutput}`; the asset factory
(`assets/systems.py`) writes every table of the range once and publishes the list rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import polars as pl

LIST_COLUMN = "list"
"""Column of `PeriodOutput.list_rows` naming the list a row belongs to (`fide-standard`, ...)."""

CLUB_FOLDER = "_club_folder"
"""Column of club list rows: the club folder's real name, recorded as the manifest's
`club_folder` (the list name is made safe from it)."""


RULES_COLUMN = "_rules"
"""Column of list rows naming the rules (era) they were computed by (`FIDE 2025-10`), recorded
as the manifest's `rules`."""


@dataclass(frozen=True)
class PeriodOutput:
    """What one system computed for one period.

    `states` and `explanations` are keyed by lake table (`state/fide-standard`,
    `history/site`, `excluded/site`): `states` are what the next period starts from, read back
    when a later run starts its range after this period; `list_rows` holds the rows of every list
    of the system, with a `list` column; `facts` are small figures for the run's metadata.
    """

    states: dict[str, pl.DataFrame]
    list_rows: pl.DataFrame
    explanations: dict[str, pl.DataFrame]
    facts: dict[str, object] = field(default_factory=dict)


def tag_list(frame: pl.DataFrame, list_name: str) -> pl.DataFrame:
    """`frame` with a `list` column saying which list its rows belong to."""
    return frame.with_columns(pl.lit(list_name, dtype=pl.String).alias(LIST_COLUMN))


def concat_rows(frames: Iterable[pl.DataFrame]) -> pl.DataFrame:
    """The rows of several lists as one frame (an empty frame when there are none)."""
    frames = [f for f in frames if f.height or f.width]
    return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()


def present(frame: pl.DataFrame | None) -> pl.DataFrame | None:
    """`frame`, or None when it has no rows: an empty state and no state start a period alike,
    whether the state comes from memory (the previous period of a range) or from the lake."""
    return frame if frame is not None and frame.height else None
