"""FIDE's rating-list download formats, both ways: the fixed-width TXT and the `playerslist` XML.

Writing (`ratings export`): `fide_export_frame` turns a published FIDE list and the registry into
one text column per FIDE field; `render_fide_txt` and `render_fide_xml` write them out.
Reading (starting lists): `txt_layout` finds the columns from a TXT header line and
`inferred_career` rebuilds what the engine needs (career count, peak) from the K a FIDE file gives.

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
from rating_core.systems.fide.rules import FIDE_RULES, FideRules, rules_for_period
from rating_core.systems.fide.steps import k_base_exprs

MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")

TXT_WIDTHS: tuple[tuple[str, int], ...] = (
    ("ID Number", 15),
    ("Name", 61),
    ("Fed", 4),
    ("Sex", 4),
    ("Tit", 5),
    ("WTit", 5),
    ("OTit", 15),
    ("FOA", 4),
    ("{month}", 6),  # the rating, headed by the month the list is FIDE's list of (JUN26)
    ("Gms", 4),
    ("K", 3),
    ("B-day", 6),
    ("Flag", 0),  # the last column runs to the end of the line
)
"""FIDE's per-list TXT columns: header label and width in characters."""

TXT_FIELDS = (
    "fideid",
    "name",
    "country",
    "sex",
    "title",
    "w_title",
    "o_title",
    "foa_title",
    "rating",
    "games",
    "k",
    "birthday",
    "flag",
)
"""The fields of one player, in TXT column order; they are also the XML `player` elements."""

XML_FIELDS = TXT_FIELDS

WOMEN_TITLES = ("WGM", "WIM", "WFM", "WCM")


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


def txt_header(period: str) -> str:
    """The header line of a per-list TXT file for the list after `period`."""
    label = fide_month_label(period)
    return "".join(name.format(month=label).ljust(width) for name, width in TXT_WIDTHS).rstrip()


# --- writing ---------------------------------------------------------------------------------


def _text(expr: pl.Expr) -> pl.Expr:
    return expr.cast(pl.String).fill_null("")


def fide_export_frame(
    listed: pl.DataFrame,
    players: pl.DataFrame | None,
    period: str,
    rules: FideRules | None = None,
) -> pl.DataFrame:
    """One row per player of a published FIDE list, one String column per field of `TXT_FIELDS`,
    sorted by name as FIDE's files are. `rules`: the era of the next period by default (its K).

    `listed`: the published list (player_id, name, rating, games, rated_games, peak_rating, flag).
    `players`: the registry (PLAYERS_SCHEMA) for federation, sex, title and birth year.
    Decisions: `k` is the K the player's next period starts with (step 4 on the list's rating,
    career count and peak, in the next period's year), as FIDE's lists show the K in force, not
    the K used in the period just rated; the flag is FIDE's (`w` woman, `i` inactive, `wi`);
    `w_title` repeats a women's title; o_title and foa_title are empty (not in the registry).
    """
    registry = (
        players.select(
            "player_id",
            pl.col("name").alias("_reg_name"),
            "federation",
            "sex",
            "title",
            "birth_year",
        ).unique("player_id", keep="first")
        if players is not None and players.height
        else pl.DataFrame(
            schema={
                "player_id": pl.String,
                "_reg_name": pl.String,
                "federation": pl.String,
                "sex": pl.String,
                "title": pl.String,
                "birth_year": pl.Int32,
            }
        )
    )
    name = pl.col("name") if "name" in listed.columns else pl.lit(None, dtype=pl.String)
    base = listed.select(
        pl.col("player_id").cast(pl.String),
        name.cast(pl.String).alias("name"),
        pl.col("rating").cast(pl.Int64).alias("rating"),
        pl.col("games").cast(pl.Int64).alias("games"),
        pl.col("rated_games").cast(pl.Int32).alias("rated_games"),
        pl.col("peak_rating").cast(pl.Int32).alias("peak_rating"),
        pl.col("flag").cast(pl.String).alias("_list_flag"),
    ).join(registry, on="player_id", how="left")
    following = next_period(period)
    k_next, _ = k_base_exprs(rules or rules_for_period(following), int(following[:4]))
    sex = pl.col("sex").str.to_uppercase().str.slice(0, 1)
    fide_sex = pl.when(sex == "M").then(pl.lit("M")).when(sex.is_in(["F", "W"])).then(pl.lit("F"))
    title = pl.col("title").str.to_uppercase()
    return (
        base.with_columns(
            pl.coalesce("name", "_reg_name").alias("name"),
            fide_sex.alias("sex"),
            k_next.alias("k"),
        )
        .sort(pl.col("name").str.to_lowercase(), "player_id", nulls_last=True)
        .select(
            pl.col("player_id").alias("fideid"),
            _text(pl.col("name")).alias("name"),
            _text(pl.col("federation").str.to_uppercase()).alias("country"),
            _text(pl.col("sex")).alias("sex"),
            _text(title).alias("title"),
            _text(pl.when(title.is_in(WOMEN_TITLES)).then(title)).alias("w_title"),
            pl.lit("").alias("o_title"),
            pl.lit("").alias("foa_title"),
            _text(pl.col("rating")).alias("rating"),
            _text(pl.col("games").fill_null(0)).alias("games"),
            _text(pl.col("k")).alias("k"),
            _text(pl.col("birth_year")).alias("birthday"),
            pl.concat_str(
                pl.when(pl.col("sex") == "F").then(pl.lit("w")).otherwise(pl.lit("")),
                pl.when(pl.col("_list_flag") == "i").then(pl.lit("i")).otherwise(pl.lit("")),
            ).alias("flag"),
        )
    )


def numeric_ids(frame: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """(the rows whose `fideid` is a FIDE number, how many were left out): FIDE IDs are numbers
    of at most 14 digits, and a tool importing the file looks players up by them."""
    ok = pl.col("fideid").str.contains(r"^[0-9]{1,14}$")
    kept = frame.filter(ok)
    return kept, frame.height - kept.height


def render_fide_txt(frame: pl.DataFrame, period: str) -> str:
    """FIDE's per-list TXT: the header line, then one fixed-width line per row of `frame`
    (`fide_export_frame`). A value longer than its column is cut one character short of it, so
    columns never run together; trailing spaces are dropped."""
    parts = []
    for field, (_, width) in zip(TXT_FIELDS, TXT_WIDTHS, strict=True):
        col = pl.col(field)
        parts.append(col if width == 0 else col.str.slice(0, width - 1).str.pad_end(width))
    lines = frame.select(pl.concat_str(parts).str.strip_chars_end().alias("line"))["line"]
    return "\n".join([txt_header(period), *lines.to_list()]) + "\n"


_XML_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("'", "&apos;"))


def _xml_escaped(expr: pl.Expr) -> pl.Expr:
    for raw, escaped in _XML_ESCAPES:
        expr = expr.str.replace_all(raw, escaped, literal=True)
    return expr


def render_fide_xml(frame: pl.DataFrame) -> str:
    """FIDE's `playerslist` XML: one `player` element per row, its fields as child elements."""
    body = frame.select(
        pl.concat_str(
            [
                pl.lit("<player>\n"),
                *[
                    pl.concat_str(
                        pl.lit(f"<{field}>"), _xml_escaped(pl.col(field)), pl.lit(f"</{field}>\n")
                    )
                    for field in XML_FIELDS
                ],
                pl.lit("</player>"),
            ]
        ).alias("player")
    )["player"]
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<playerslist>\n'
        + "".join(f"{p}\n" for p in body.to_list())
        + "</playerslist>\n"
    )


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
