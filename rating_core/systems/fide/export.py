"""FIDE's download files written from our lists, byte for byte as FIDE writes them (DESIGN §7).

A pure function of list frames: `per_list_file` writes one published FIDE list (standard, rapid
or blitz) as FIDE's `standard_rating_list.txt` / `..._xml.xml`, `combined_file` the three lists
of one period as FIDE's `players_list_foa.txt` / `players_list_xml_foa.xml`.

FIDE's TXT (checked against the real lines in shared/external/fide-lists and FIDE's combined
file as described by public parsers of it): ASCII, CRLF after every line (the last too), fixed
width with the trailing spaces kept, every field left-aligned and padded to its column: 136
characters a line per list, 162 in the combined file; a number FIDE does not know is `0` (birth
year, and rating, games and K on a list the player is not on). FIDE's XML: no declaration, root
`playerslist`, one `player` element per player with one child element per field, in FIDE's
order, each on its own line; an unknown value is an empty element (`<birthday></birthday>`).

A list frame has the columns of a published list (publishing.LIST_SCHEMA): player_id, name,
federation, title, w_title, o_title, foa_title, sex, birth_year, rating, games, flag and, for
the K, rated_games and peak_rating (else k). Any column may be missing or null: FIDE's value for
unknown is written (an empty field, `0` for a number). `rank` is not in FIDE's files.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import polars as pl
from anyascii import anyascii

from rating_core.periods import next_period
from rating_core.rounding import round_half_away_expr
from rating_core.systems.fide.formats import COMBINED_COLUMNS, PER_LIST_COLUMNS, Column, txt_header
from rating_core.systems.fide.rules import FideRules, rules_for_period
from rating_core.systems.fide.steps import k_base_exprs

Format = Literal["txt", "xml"]
LIST_KINDS = ("standard", "rapid", "blitz")
"""The three FIDE lists, in the order of the combined file's columns."""

WOMEN_TITLES = ("WGM", "WIM", "WFM", "WCM")
PERSON_FIELDS = ("fideid", "name", "country", "sex", "title", "w_title", "o_title", "foa_title")
"""The fields every FIDE file starts with, in order (TXT columns and XML elements alike)."""
LIST_FIELDS = ("rating", "games", "k")
"""One list's fields; the combined file has them per list (`rapid_rating`, `blitz_k`...)."""
NUMBER_FIELDS = frozenset(
    {f"{prefix}{field}" for prefix in ("", "rapid_", "blitz_") for field in LIST_FIELDS}
    | {"birthday"}
)
"""Fields FIDE's TXT writes as `0` when unknown."""


PER_LIST_XML_FIELDS = tuple(c.field for c in PER_LIST_COLUMNS)
COMBINED_XML_FIELDS = tuple(c.field for c in COMBINED_COLUMNS)
"""The children of each `player` element, in FIDE's order: the TXT's fields in its order."""

LINE_END = "\r\n"


@dataclass(frozen=True)
class FideFile:
    """An exported file: its bytes, how many players it holds and how many were left out."""

    data: bytes
    players: int
    left_out: int


# --- the fields of one list --------------------------------------------------------------------


def _column(frame: pl.DataFrame, name: str, dtype: pl.DataType) -> pl.Expr:
    """`name` cast to `dtype`, or null when the frame has no such column."""
    if name in frame.columns:
        return pl.col(name).cast(dtype)
    return pl.lit(None, dtype=dtype)


def _blank_is_null(expr: pl.Expr) -> pl.Expr:
    """Text trimmed, an empty value null: unknown either way."""
    trimmed = expr.str.strip_chars()
    return pl.when(trimmed != "").then(trimmed)


def _registry(players: pl.DataFrame | None) -> pl.DataFrame:
    """The registry's person fields by player_id (null columns when there is no registry)."""
    columns = {
        "_reg_name": ("name", pl.String()),
        "_reg_federation": ("federation", pl.String()),
        "_reg_sex": ("sex", pl.String()),
        "_reg_title": ("title", pl.String()),
        "_reg_birth_year": ("birth_year", pl.Int32()),
    }
    if players is None or players.is_empty():
        schema = {"player_id": pl.String(), **{k: t for k, (_, t) in columns.items()}}
        return pl.DataFrame(schema=schema)
    return players.select(
        pl.col("player_id").cast(pl.String),
        *[_column(players, name, dtype).alias(alias) for alias, (name, dtype) in columns.items()],
    ).unique("player_id", keep="first", maintain_order=True)


def list_fields(
    listed: pl.DataFrame,
    period: str,
    players: pl.DataFrame | None = None,
    rules: FideRules | None = None,
) -> pl.DataFrame:
    """One row per player of a published FIDE list of `period`: the person fields (`PERSON_FIELDS`,
    `birthday`, `flag`) and the list's `rating`, `games`, `k`, as FIDE means them; null where
    unknown. Values are as they come (not yet ASCII): `ascii_fields` folds them.

    `players` (optional, the registry) fills a person field the list leaves null. Decisions:
    `k` is the K of the list's player in the next period (FIDE's lists show the K in force from
    their date, not the K used in the period just rated): step 4 of the next period's era on the
    list's rating, rated_games and peak_rating (`rules`, that era by default); a frame without
    rated_games gives its own `k`. `w_title` is the list's, else a women's title repeats in it
    (as in FIDE's files); `flag` is FIDE's: `w` for a woman, `i` inactive (from the list's flag,
    `i`, `w` or `wi`).
    """
    text = pl.String()
    frame = listed.select(
        pl.col("player_id").cast(text),
        *[
            _blank_is_null(_column(listed, name, text)).alias(name)
            for name in ("name", "federation", "title", "w_title", "o_title", "foa_title", "sex")
        ],
        _column(listed, "birth_year", pl.Int32()).alias("birth_year"),
        round_half_away_expr(_column(listed, "rating", pl.Float64()))
        .cast(pl.Int32)
        .alias("rating"),
        _column(listed, "games", pl.Int32()).alias("games"),
        _column(listed, "k", pl.Int32()).alias("k"),
        _column(listed, "rated_games", pl.Int32()).alias("rated_games"),
        _column(listed, "peak_rating", pl.Int32()).alias("peak_rating"),
        _column(listed, "flag", text).str.to_lowercase().alias("_flag"),
    ).join(_registry(players), on="player_id", how="left")
    frame = frame.with_columns(
        pl.coalesce("name", _blank_is_null(pl.col("_reg_name"))).alias("name"),
        pl.coalesce("federation", _blank_is_null(pl.col("_reg_federation"))).alias("federation"),
        pl.coalesce("sex", _blank_is_null(pl.col("_reg_sex"))).alias("sex"),
        pl.coalesce("title", _blank_is_null(pl.col("_reg_title"))).alias("title"),
        pl.coalesce("birth_year", "_reg_birth_year").alias("birth_year"),
    )
    if "rated_games" in listed.columns:
        following = next_period(period)
        k_next, _ = k_base_exprs(rules or rules_for_period(following), int(following[:4]))
        frame = frame.with_columns(k_next.alias("k"))
    sex = pl.col("sex").str.to_uppercase().str.slice(0, 1)
    fide_sex = pl.when(sex == "M").then(pl.lit("M")).when(sex.is_in(["F", "W"])).then(pl.lit("F"))
    title = pl.col("title").str.to_uppercase()
    woman = (fide_sex == "F").fill_null(False) | pl.col("_flag").str.contains("w").fill_null(False)
    inactive = pl.col("_flag").str.contains("i").fill_null(False)
    return frame.select(
        pl.col("player_id").alias("fideid"),
        "name",
        pl.col("federation").str.to_uppercase().alias("country"),
        fide_sex.alias("sex"),
        title.alias("title"),
        pl.coalesce(
            pl.col("w_title").str.to_uppercase(), pl.when(title.is_in(WOMEN_TITLES)).then(title)
        ).alias("w_title"),
        pl.col("o_title").str.to_uppercase(),
        pl.col("foa_title").str.to_uppercase(),
        "rating",
        pl.col("games").fill_null(0),
        "k",
        pl.col("birth_year").alias("birthday"),
        pl.concat_str(
            pl.when(woman).then(pl.lit("w")).otherwise(pl.lit("")),
            pl.when(inactive).then(pl.lit("i")).otherwise(pl.lit("")),
        ).alias("flag"),
    )


def combined_fields(
    lists: Mapping[str, pl.DataFrame | None],
    period: str,
    players: pl.DataFrame | None = None,
    rules: Mapping[str, FideRules] | None = None,
) -> pl.DataFrame:
    """One row per player on any of the three lists of `period` (`lists` by kind: standard,
    rapid, blitz; a missing one is empty): the person fields, then each list's rating, games and
    K (`rating`, `rapid_rating`, `blitz_k`...; null for a list the player is not on).

    Decisions: a person field comes from the standard list, else the rapid, else the blitz (they
    agree unless a source changed between runs); the flag is that of the first list the player
    is on in that order, as FIDE's combined file has one flag column.
    """
    per_kind = {
        kind: list_fields(
            frame,
            period,
            players,
            (rules or {}).get(kind) or rules_for_period(next_period(period), kind),  # its own K
        )
        for kind in LIST_KINDS
        if (frame := lists.get(kind)) is not None
    }
    person = [f for f in (*PERSON_FIELDS, "birthday", "flag") if f != "fideid"]
    combined: pl.DataFrame | None = None
    for kind, fields in per_kind.items():
        prefix = "" if kind == "standard" else f"{kind}_"
        part = fields.rename({f: f"{prefix}{f}" for f in LIST_FIELDS}).rename(
            {f: f"{f}_{kind}" for f in person}
        )
        combined = (
            part
            if combined is None
            else combined.join(part, on="fideid", how="full", coalesce=True)
        )
    columns = {c.field: pl.String() for c in COMBINED_COLUMNS}
    if combined is None:
        return pl.DataFrame(schema=columns)
    return combined.select(
        "fideid",
        *[
            pl.coalesce([f"{field}_{kind}" for kind in per_kind]).alias(field)
            if field in person
            else (pl.col(field) if field in combined.columns else pl.lit(None, pl.Int32())).alias(
                field
            )
            for field in COMBINED_XML_FIELDS[1:]
        ],
    )


# --- ASCII, order and ids ----------------------------------------------------------------------


def ascii_fields(frame: pl.DataFrame) -> pl.DataFrame:
    """Every String column folded to ASCII as FIDE's files are: transliterated by `anyascii`
    (Yılmaz → Yilmaz, Иванчук → Ivanchuk), control characters (a tab, a line break) as spaces.
    Only the distinct values that are not ASCII already go through Python."""
    folded = []
    for name, dtype in frame.schema.items():
        if dtype != pl.String:
            continue
        column = frame[name]
        foreign = column.filter(column.str.contains(r"[^\x00-\x7F]")).unique()
        if foreign.len():
            column = column.replace(foreign, [anyascii(value) for value in foreign.to_list()])
        folded.append(column.str.replace_all(r"[\x00-\x1F\x7F]", " ").alias(name))
    return frame.with_columns(folded)


def ordered(frame: pl.DataFrame) -> pl.DataFrame:
    """By name as FIDE's files are (case-insensitive, then the id), after ASCII folding."""
    return frame.sort(pl.col("name").str.to_lowercase(), "fideid", nulls_last=True)


def numeric_ids(frame: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """(the rows whose `fideid` is a FIDE number, how many were left out): FIDE ids are numbers
    of at most 14 digits (the ID column is 15 wide), and a tool importing the file looks players
    up by them."""
    ok = pl.col("fideid").str.contains(r"^[0-9]{1,14}$").fill_null(False)
    kept = frame.filter(ok)
    return kept, frame.height - kept.height


# --- writing -----------------------------------------------------------------------------------


def _cell(field: str, width: int) -> pl.Expr:
    """One field as its TXT column: left-aligned, padded to `width`, `0` for an unknown number.
    A longer value is cut one character short of the width so columns never run together; an
    OTit list is cut after the last whole title that fits."""
    value = pl.col(field).cast(pl.String)
    value = value.fill_null("0") if field in NUMBER_FIELDS else value.fill_null("")
    if field == "o_title":  # FIDE's own file lets a long list overflow into FOA
        fits = value.str.extract(rf"^(.{{0,{width - 1}}})(?:,|$)", 1)
        value = pl.when(value.str.len_chars() < width).then(value).otherwise(fits.fill_null(""))
    return value.str.slice(0, width - 1).str.pad_end(width)


def _lines(frame: pl.DataFrame, line: pl.Expr) -> bytes:
    """`line` of every row, CRLF after each, as bytes (Polars' CSV writer of one unquoted
    column: no Python loop over the rows)."""
    out = io.BytesIO()
    frame.select(line.alias("line")).write_csv(
        out, include_header=False, quote_style="never", line_terminator=LINE_END
    )
    return out.getvalue()


def render_txt(frame: pl.DataFrame, columns: tuple[Column, ...], period: str) -> bytes:
    """FIDE's TXT: the header line, then one fixed-width line per row, CRLF after each."""
    body = _lines(frame, pl.concat_str([_cell(c.field, c.width) for c in columns]))
    return (txt_header(period, columns) + LINE_END).encode("ascii") + body


def _xml_text(expr: pl.Expr) -> pl.Expr:
    """Element text: `&`, `<` and `>` escaped (quotes need no escaping in text), null empty."""
    for raw, escaped in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;")):
        expr = expr.str.replace_all(raw, escaped, literal=True)
    return expr.fill_null("")


def render_xml(frame: pl.DataFrame, fields: tuple[str, ...]) -> bytes:
    """FIDE's XML: `<playerslist>`, one `<player>` per row with one element per field of
    `fields` in that order, each on its own CRLF line; no declaration."""
    players = _lines(
        frame,
        pl.concat_str(
            [
                pl.lit(f"<player>{LINE_END}"),
                *[
                    pl.concat_str(
                        pl.lit(f"<{f}>"),
                        _xml_text(pl.col(f).cast(pl.String)),
                        pl.lit(f"</{f}>{LINE_END}"),
                    )
                    for f in fields
                ],
                pl.lit("</player>"),
            ]
        ),
    )
    return f"<playerslist>{LINE_END}".encode() + players + f"</playerslist>{LINE_END}".encode()


def _file(frame: pl.DataFrame, fmt: Format, columns: tuple[Column, ...], period: str) -> FideFile:
    kept, left_out = numeric_ids(frame)
    kept = ordered(ascii_fields(kept))
    if fmt == "txt":
        data = render_txt(kept, columns, period)
    else:
        data = render_xml(kept, tuple(c.field for c in columns))
    if not data.isascii():  # ascii_fields folds every text: a byte above 127 is a bug here
        raise ValueError("a FIDE file must be ASCII")
    return FideFile(data, kept.height, left_out)


def per_list_file(
    listed: pl.DataFrame,
    period: str,
    fmt: Format,
    players: pl.DataFrame | None = None,
    rules: FideRules | None = None,
) -> FideFile:
    """A published FIDE list of `period` as FIDE's per-list TXT or XML (`list_fields`); players
    whose id is not a FIDE number are left out and counted."""
    return _file(list_fields(listed, period, players, rules), fmt, PER_LIST_COLUMNS, period)


def combined_file(
    lists: Mapping[str, pl.DataFrame | None],
    period: str,
    fmt: Format,
    players: pl.DataFrame | None = None,
    rules: Mapping[str, FideRules] | None = None,
) -> FideFile:
    """The standard, rapid and blitz lists of `period` as FIDE's combined TXT
    (`players_list_foa.txt`) or XML (`players_list_xml_foa.xml`) (`combined_fields`)."""
    return _file(combined_fields(lists, period, players, rules), fmt, COMBINED_COLUMNS, period)
