"""FIDE's rating-list download formats, read: the fixed-width TXT and the `playerslist` XML.

Reading (starting lists): `txt_layout` finds the columns from a TXT header line and
`inferred_career` rebuilds what the engine needs (career count, peak) from the K a FIDE file gives.
Writing (`ratings export`) is `rating_core.systems.fide.export`.

The TXT layout is FIDE's `standard_rating_list.txt` (`rapid_...`, `blitz_...` alike): 0-based
columns ID Number 0-14, Name 15-75, Fed 76-79, Sex 80-83, Tit 84-88, WTit 89-93, OTit 94-108,
FOA 109-112, the rating under the list's month (`JUN26`) 113-118, Gms 119-122, K 123-125,
B-day 126-131, Flag from 132. The combined `players_list_foa.txt` has SRtng SGm SK RRtng RGm Rk
BRtng BGm BK from 113 instead, then B-day and Flag. Readers take the columns from the header line
itself, so both variants read alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from rating_core.periods import next_period
from rating_core.systems.fide.rules import FIDE_RULES, FideRules

MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")

# --- layout ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """One column of FIDE's TXT: its header label, its width in characters and its field."""

    label: str
    width: int
    field: str


_PERSON_COLUMNS = (
    Column("ID Number", 15, "fideid"),
    Column("Name", 61, "name"),
    Column("Fed", 4, "country"),
    Column("Sex", 4, "sex"),
    Column("Tit", 5, "title"),
    Column("WTit", 5, "w_title"),
    Column("OTit", 15, "o_title"),
    Column("FOA", 4, "foa_title"),
)
_TAIL_COLUMNS = (Column("B-day", 6, "birthday"), Column("Flag", 4, "flag"))

PER_LIST_COLUMNS = (
    *_PERSON_COLUMNS,
    Column("{month}", 6, "rating"),  # headed by the month the list is in force from (AUG26)
    Column("Gms", 4, "games"),
    Column("K", 3, "k"),
    *_TAIL_COLUMNS,
)
"""`standard_rating_list.txt` (and rapid, blitz): 136 characters a line."""

COMBINED_COLUMNS = (
    *_PERSON_COLUMNS,
    Column("SRtng", 6, "rating"),
    Column("SGm", 4, "games"),
    Column("SK", 3, "k"),
    Column("RRtng", 6, "rapid_rating"),
    Column("RGm", 4, "rapid_games"),
    Column("Rk", 3, "rapid_k"),
    Column("BRtng", 6, "blitz_rating"),
    Column("BGm", 4, "blitz_games"),
    Column("BK", 3, "blitz_k"),
    *_TAIL_COLUMNS,
)
"""`players_list_foa.txt`: 162 characters a line."""


def fide_month_label(period: str) -> str:
    """The header of the rating column of the list published after `period` (2026-05 → JUN26):
    FIDE names a list by the first day it is in force."""
    year, month = next_period(period).split("-")
    return f"{MONTHS[int(month) - 1]}{year[2:]}"


def period_of_month_label(label: str) -> str | None:
    """The period a FIDE month label's list is official after (JUN26 → 2026-05), None if `label`
    is not a month label. Two-digit years are read as 20YY."""
    m = re.fullmatch(r"([A-Za-z]{3})(\d{2})", label)
    if m is None or m[1].upper() not in MONTHS:
        return None
    month = MONTHS.index(m[1].upper()) + 1
    year = 2000 + int(m[2])
    return f"{year - 1:04d}-12" if month == 1 else f"{year:04d}-{month - 1:02d}"


def txt_header(period: str, columns: tuple[Column, ...] = PER_LIST_COLUMNS) -> str:
    """The header line of a TXT file of `columns` (a per-list file by default) for the list after
    `period`: each label padded to its column's width, so the header is as wide as the lines."""
    month = fide_month_label(period)
    return "".join(c.label.format(month=month).ljust(c.width) for c in columns)


# --- reading ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TxtColumn:
    """One column of a TXT file: its header label and the characters it spans."""

    label: str
    start: int
    end: int | None  # None: to the end of the line


def txt_layout(header: str) -> list[TxtColumn]:
    """The columns of a FIDE TXT file from its header line: each label starts its column, which
    runs to the next label (`ID Number` is one label)."""
    starts = [(m.start(), m.group()) for m in re.finditer(r"\S+", header)]
    merged: list[tuple[int, str]] = []
    for start, label in starts:
        if merged and merged[-1][1].lower() == "id" and label.lower() == "number":
            merged[-1] = (merged[-1][0], "ID Number")
        else:
            merged.append((start, label))
    return [
        TxtColumn(label, start, merged[i + 1][0] if i + 1 < len(merged) else None)
        for i, (start, label) in enumerate(merged)
    ]


def inferred_career(first_year: int, rules: FideRules = FIDE_RULES) -> tuple[pl.Expr, pl.Expr]:
    """(rated_games, peak_rating) of a player from a FIDE file that gives K but no career count
    or peak, from the columns rating, k, games (of the last period) and birth_year.

    Decision: K holds as given for the first computed period (whose year is `first_year`), and
    the career count is the fewest the file allows. K 40 of a player who is not a junior (by the
    file's birth year) means fewer than 30 rated games: the player is taken to have max(5, games),
    the fewest a rated player can have (a first rating needs 5 games), at most 29. Any other K
    (20, 10, blank) means 30 completed, and so does a junior's 40, which the age explains (the
    count only matters once the junior K ends): max(30, games). K 10 means a published rating
    once reached 2400: the peak is max(rating, 2400); otherwise the peak is the rating. From the
    second period on, K follows the rules from these counts.
    """
    rating, k, games = pl.col("rating"), pl.col("k"), pl.col("games").fill_null(0)
    junior = (pl.col("birth_year") + rules.junior_age >= first_year).fill_null(False) & (
        rating < rules.junior_below
    )
    if rules.k_junior is None:  # an era without a junior rule: nobody's K is a junior's
        junior = pl.lit(False)
    new = (k == rules.k_new).fill_null(False) & ~junior
    fewest_new = pl.max_horizontal(games, pl.lit(rules.newcomer_min_games)).clip(
        upper_bound=rules.new_games - 1
    )
    completed = pl.max_horizontal(games, pl.lit(rules.new_games))
    rated_games = pl.when(new).then(fewest_new).otherwise(completed).cast(pl.Int32)
    top = (k == rules.k_established_top).fill_null(False)
    peak = (
        pl.when(top)
        .then(pl.max_horizontal(rating, pl.lit(rules.top_peak)))
        .otherwise(rating)
        .cast(pl.Int32)
    )
    return rated_games, peak
