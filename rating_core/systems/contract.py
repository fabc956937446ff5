"""The one shape every period engine returns, per period (issue 10 item 5).

A system's range function takes the inputs of a range of periods and the state before the first,
computes the periods in order and yields `(period, PeriodOutput)` as each period completes, so
only one period is held at a time; the rows of large per-game tables (a platform's history) go
to a `RowSink` batch by batch while the period is rated. The asset factory (`assets/systems.py`)
stages every table period by period, makes the range's files visible together and publishes the
list rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

import polars as pl

LIST_COLUMN = "list"
"""Column of `PeriodOutput.list_rows` naming the list a row belongs to (`fide-standard`, ...)."""

CLUB_FOLDER = "_club_folder"
"""Column of club list rows: the club folder's real name, recorded as the manifest's
`club_folder` (the list name is made safe from it)."""


WHOLE_NUMBER_LISTS = ("fide-", "ukd-", "club-")
"""Prefixes of the lists that publish whole numbers: their `rating` and `change` are integers
(FIDE §7.1.2; UKD and clubs likewise), though every `list.parquet` stores them as Float64 so that
all lists share one schema (FIBS publishes one decimal)."""

WHOLE_NUMBER_COLUMNS = ("rating", "change", "old", "new")
"""The columns of a list, a diff or a history that hold a published rating or its change."""


def publishes_whole_numbers(list_name: str) -> bool:
    """Whether `list_name`'s ratings and changes are published as whole numbers (`2389`, never
    `2389.0`): FIDE, UKD and club lists."""
    return list_name.startswith(WHOLE_NUMBER_LISTS)


def as_published(frame: pl.DataFrame, list_name: str) -> pl.DataFrame:
    """`frame` (rows of one list, its diff or its history) with its rating columns as the list
    publishes them: Int64 on a whole-number list (`publishes_whole_numbers`), as they are
    otherwise. A value with a fraction on such a list is never cut: the frame is left as it is."""
    if not publishes_whole_numbers(list_name):
        return frame
    cols = [
        c
        for c in WHOLE_NUMBER_COLUMNS
        if c in frame.columns and frame.schema[c] in (pl.Float64, pl.Float32)
    ]
    whole = [c for c in cols if (frame.get_column(c).drop_nulls() % 1 == 0).all()]
    return frame.with_columns(pl.col(whole).cast(pl.Int64)) if whole else frame


RULES_COLUMN = "_rules"
"""Column of list rows naming the rules (era) they were computed by (`FIDE 2025-10`), recorded
as the manifest's `rules`."""


@dataclass(frozen=True)
class PeriodOutput:
    """What one system computed for one period.

    `states` and `explanations` are keyed by lake table (`state/fide-standard`,
    `history/fide-standard`): `states` are what the next period starts from, read back
    when a later run starts its range after this period; `list_rows` holds the rows of every list
    of the system, with a `list` column; `facts` are small figures for the run's metadata;
    `streamed` names the tables whose rows for the period went to the range's `RowSink` instead
    (`history/site`, `excluded/site`).
    """

    states: dict[str, pl.DataFrame]
    list_rows: pl.DataFrame
    explanations: dict[str, pl.DataFrame]
    facts: dict[str, object] = field(default_factory=dict)
    streamed: tuple[str, ...] = ()


RowSink = Callable[[str, str, pl.DataFrame], None]
"""Where a range function sends a batch of rows of a large table: `sink(table, period, rows)`.
A first call with an empty frame declares the table's columns (a period may have no rows)."""

RangeOutputs = Iterator[tuple[str, PeriodOutput]]
"""What a range function yields: each period's output, in order, as it completes."""


class GameSource(Protocol):
    """The games (or matches) of a range as a streamed replay reads them."""

    def players(self) -> pl.Series:
        """Every player id of the games (repeats allowed)."""
        ...

    def batches(self, period: str) -> Iterator[pl.DataFrame]:
        """The games of `period` in replay order, a batch at a time."""
        ...


@dataclass(frozen=True)
class FrameSource:
    """A `GameSource` over a frame in memory (column `period`): each period's games are one
    batch, in the frame's order (the replays order a batch themselves)."""

    frame: pl.DataFrame
    sides: tuple[str, str] = ("white_id", "black_id")

    def players(self) -> pl.Series:
        return pl.concat([self.frame.get_column(c).cast(pl.String) for c in self.sides])

    def batches(self, period: str) -> Iterator[pl.DataFrame]:
        rows = self.frame.filter(pl.col("period") == period)
        if rows.height:
            yield rows


@dataclass
class CollectedRows:
    """A `RowSink` that keeps every batch in memory, per table and period (tests, small runs):
    `frame(table, period)` is what a staged file would hold."""

    batches: dict[tuple[str, str], list[pl.DataFrame]] = field(default_factory=dict)

    def __call__(self, table: str, period: str, rows: pl.DataFrame) -> None:
        self.batches.setdefault((table, period), []).append(rows)

    def frame(self, table: str, period: str) -> pl.DataFrame:
        """Every row sent for `table` in `period`, in order (empty: no rows, or never sent)."""
        parts = self.batches.get((table, period), [])
        return pl.concat(parts, how="vertical_relaxed") if parts else pl.DataFrame()


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
