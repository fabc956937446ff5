"""Starting lists as FIDE publishes them: `federation/lists/fide-<kind>@YYYY-MM.txt` (FIDE's
fixed-width TXT, one list or the combined standard/rapid/blitz file) and `.xml` (FIDE's
`playerslist` XML, one list or combined).

Both are read with Polars expressions over the whole file (no per-player Python), into
STARTING_LIST_SCHEMA rows. Unlike a CSV starting list (all or nothing), a FIDE download holds
every player of the world, so a malformed line is quarantined with its line, value and reason
and the other players still land; players with no rating on the list the file name says are not
on it (counted in a note). The K a FIDE file gives becomes a career count and a peak
(`formats.inferred_career`).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from rating_core.ingest.common import IngestResult, UnreadableFileError
from rating_core.ingest.csv_games import LINE, Check, apply_checks, parse_int
from rating_core.periods import next_period
from rating_core.schemas import STARTING_LIST_SCHEMA, conform
from rating_core.systems.fide.formats import (
    fide_month_label,
    inferred_career,
    period_of_month_label,
    txt_layout,
)
from rating_core.systems.fide.rules import rules_for_period
from rating_core.text import format_text

MAX_RATING = 3500

_TXT_PREFIX = {"standard": "s", "rapid": "r", "blitz": "b"}
"""Letter of each list in the combined TXT's columns (SRtng, RGm, BK...)."""
_XML_PREFIX = {"standard": "", "rapid": "rapid_", "blitz": "blitz_"}
"""Prefix of each list's elements in the combined XML (rating, rapid_rating, blitz_k...)."""


def _decoded(path: Path, source_file: str) -> tuple[str, tuple[str, ...]]:
    """The file's text: UTF-8, else Windows-1252 (Latin-1 where a byte is not Windows-1252), as
    TRF and PGN files are read, with a note saying so."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8").removeprefix("\ufeff"), ()
    except UnicodeDecodeError:
        pass
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return text, (f"{source_file}: not UTF-8; read as Windows-1252",)


def _txt_fields(
    text: str, source_file: str, kind: str, period: str
) -> tuple[pl.DataFrame, dict[str, str]]:
    """(the TXT's player lines as String columns fideid, rating, games, k, birthday and `LINE`,
    the header label of each field), the columns found from the header line (`txt_layout`)."""
    lines = text.splitlines()
    header = lines[0] if lines else ""
    if not header.lower().startswith("id number"):
        raise UnreadableFileError(
            f"{source_file}: not FIDE's TXT rating list (its first line must be the header "
            "beginning 'ID Number')"
        )
    columns = {c.label.lower(): c for c in txt_layout(header)}
    letter = _TXT_PREFIX[kind]
    if f"{letter}rtng" in columns:  # the combined list: this list's own three columns
        wanted = {"rating": f"{letter}rtng", "games": f"{letter}gm", "k": f"{letter}k"}
    else:
        months = [c for c in columns.values() if period_of_month_label(c.label)]
        if not months:
            raise UnreadableFileError(
                f"{source_file}: the header has no rating column (a month such as "
                f"{fide_month_label(period)}, or SRtng/RRtng/BRtng)"
            )
        month = months[0].label
        if period_of_month_label(month) != period:
            raise UnreadableFileError(
                f"{source_file}: its rating column is headed {month}, FIDE's list of the first "
                f"of that month, which is official after {period_of_month_label(month)}; name "
                f"the file fide-{kind}@{period_of_month_label(month)}{Path(source_file).suffix}"
            )
        wanted = {"rating": month.lower(), "games": "gms", "k": "k"}
    wanted = {"fideid": "id number", **wanted, "birthday": "b-day"}

    def cut(label: str) -> pl.Expr:
        column = columns.get(label)
        if column is None:
            return pl.lit("")
        length = None if column.end is None else column.end - column.start
        return pl.col("text").str.slice(column.start, length).str.strip_chars()

    frame = pl.DataFrame({"text": lines[1:]}, schema={"text": pl.String}).with_row_index(
        LINE, offset=2
    )
    fields = frame.filter(pl.col("text").str.strip_chars() != "").select(
        pl.col(LINE).cast(pl.Int64), *[cut(label).alias(name) for name, label in wanted.items()]
    )
    labels = {
        name: columns[label].label if label in columns else label for name, label in wanted.items()
    }
    return fields, labels


_ENTITIES = (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&apos;", "'"), ("&#39;", "'"))


def _element(body: pl.Expr, name: str) -> pl.Expr:
    """The text of element `name` in each player's body, unescaped ('' when absent or empty)."""
    value = body.str.extract(rf"<{name}>([^<]*)</{name}>", 1).fill_null("")
    for escaped, raw in _ENTITIES:
        value = value.str.replace_all(escaped, raw, literal=True)
    return value.str.replace_all("&amp;", "&", literal=True).str.strip_chars()


def _xml_fields(
    text: str, source_file: str, kind: str
) -> tuple[pl.DataFrame, dict[str, str], pl.DataFrame]:
    """(the XML's `player` elements as String columns fideid, rating, games, k, birthday and
    `LINE`, the line each element starts on; the element name of each field; the elements
    never closed, for the quarantine)."""
    if "<playerslist" not in text:
        raise UnreadableFileError(
            f"{source_file}: not FIDE's XML rating list (no <playerslist> root element)"
        )
    prefix = _XML_PREFIX[kind] if f"<{_XML_PREFIX[kind]}rating>" in text else ""
    chunks = (
        pl.DataFrame({"chunk": text.split("<player>")}, schema={"chunk": pl.String})
        .with_columns(pl.col("chunk").str.count_matches("\n").alias("_nl"))
        .with_columns((pl.col("_nl").cum_sum().shift(1, fill_value=0) + 1).alias(LINE))
        .slice(1)  # what comes before the first <player>
    )
    closed = pl.col("chunk").str.contains("</player>", literal=True)
    body = pl.col("chunk").str.split("</player>").list.first()
    players = chunks.filter(closed).select(
        pl.col(LINE).cast(pl.Int64),
        _element(body, "fideid").alias("fideid"),
        _element(body, f"{prefix}rating").alias("rating"),
        _element(body, f"{prefix}games").alias("games"),
        _element(body, f"{prefix}k").alias("k"),
        _element(body, "birthday").alias("birthday"),
    )
    unclosed = chunks.filter(~closed).select(
        pl.lit(source_file).alias("source_file"),
        pl.col(LINE).cast(pl.Int64).alias("line"),
        _element(pl.col("chunk"), "fideid").alias("record"),
        pl.col("chunk").str.slice(0, 80).str.strip_chars().alias("value"),
        pl.lit("a <player> element that is never closed (no </player>)").alias("reason"),
    )
    labels = {
        "fideid": "fideid",
        "rating": f"{prefix}rating",
        "games": f"{prefix}games",
        "k": f"{prefix}k",
        "birthday": "birthday",
    }
    return players, labels, unclosed


def _checks(labels: dict[str, str]) -> list[Check]:
    """The rules of one FIDE player record; `labels` names each field as the file does."""

    def integer(field: str, low: int, high: int | None) -> Check:
        value = parse_int(field)
        bad = value.is_null() | (value < low)
        if high is not None:
            bad = bad | (value > high)
        wanted = f"from {low} to {high}" if high is not None else f"of at least {low}"
        return Check(
            (pl.col(field) != "") & bad.fill_null(True),
            pl.col(field),
            format_text(f"{labels[field]} '{{}}' is not a whole number {wanted}", pl.col(field)),
        )

    fideid = pl.col("fideid")
    first_line = pl.col(LINE).min().over("fideid")
    year = pl.col("birthday")
    return [
        Check(fideid == "", fideid, pl.lit(f"{labels['fideid']} is empty")),
        Check(
            ~fideid.str.contains(r"^[0-9]+$"),
            fideid,
            format_text(f"{labels['fideid']} '{{}}' is not a FIDE number (digits only)", fideid),
        ),
        integer("rating", 0, MAX_RATING),
        integer("games", 0, None),
        integer("k", 0, 100),
        Check(
            (year != "")
            & ~year.is_in(["0", "0000"])
            & ~year.str.contains(r"^[0-9]{4}(-[0-9]{2}-[0-9]{2})?$"),
            year,
            format_text(f"{labels['birthday']} '{{}}' is not a year (YYYY)", year),
        ),
        Check(
            pl.col(LINE) != first_line,
            fideid,
            format_text("player '{}' appears again (first on line {})", fideid, first_line),
        ),
    ]


def read_fide_list(path: Path, list_name: str, period: str, source_file: str) -> IngestResult:
    """Read FIDE's TXT or XML download `<list>@<period>.txt|.xml` into STARTING_LIST_SCHEMA rows.

    The rating, games and K are those of the list the file name says (`fide-rapid@...` reads the
    rapid columns of a combined file); the ID number is the player id. Raises
    `UnreadableFileError` for a file that is not FIDE's format, or whose rating column is headed
    by a month that does not match the file name.
    """
    if not list_name.startswith("fide-"):
        raise UnreadableFileError(
            f"{source_file}: FIDE's TXT and XML files hold FIDE lists; a {list_name} starting "
            "list must be a CSV"
        )
    kind = list_name.removeprefix("fide-")
    text, notes = _decoded(path, source_file)
    unclosed = None
    if path.suffix.lower() == ".txt":
        fields, labels = _txt_fields(text, source_file, kind, period)
    else:
        fields, labels, unclosed = _xml_fields(text, source_file, kind)
    good, quarantine = apply_checks(fields, _checks(labels), "fideid", source_file)
    if unclosed is not None and unclosed.height:
        quarantine = pl.concat([quarantine, unclosed.cast(quarantine.schema)]).sort("line")
    typed = good.select(
        pl.col("fideid").alias("player_id"),
        parse_int("rating").fill_null(0).alias("rating"),
        parse_int("games").alias("games"),
        parse_int("k").alias("k"),
        pl.col("birthday").str.slice(0, 4).cast(pl.Int32, strict=False).alias("birth_year"),
    ).with_columns(pl.when(pl.col("birth_year") > 0).then(pl.col("birth_year")).alias("birth_year"))
    rated = typed.filter(pl.col("rating") > 0)
    unrated = typed.height - rated.height
    if unrated:
        notes += (
            f"{source_file}: {unrated} player{'s' if unrated > 1 else ''} without a {kind} "
            "rating, not on the list",
        )
    following = next_period(period)  # the K a list gives is the one in force next period
    rated_games, peak = inferred_career(int(following[:4]), rules_for_period(following, kind))
    rows = rated.select(
        pl.lit(list_name).alias("list"),
        pl.lit(period).alias("period"),
        "player_id",
        pl.col("rating").cast(pl.Int32),
        rated_games.alias("rated_games"),
        peak.alias("peak_rating"),
    )
    return IngestResult(
        rows=conform(rows, STARTING_LIST_SCHEMA), quarantine=quarantine, notes=notes
    )


def read_fide_list_lines(path: Path, list_name: str, period: str, source_file: str) -> pl.DataFrame:
    """The rated players of FIDE's TXT or XML download as published: player_id, rating, games and
    K of the list the name says (`ratings reconcile` compares them with ours), after the same
    checks as `read_fide_list` (a malformed line is left out; read_fide_list quarantines it)."""
    kind = list_name.removeprefix("fide-")
    text, _ = _decoded(path, source_file)
    if path.suffix.lower() == ".txt":
        fields, labels = _txt_fields(text, source_file, kind, period)
    else:
        fields, labels, _ = _xml_fields(text, source_file, kind)
    good, _ = apply_checks(fields, _checks(labels), "fideid", source_file)
    return good.select(
        pl.col("fideid").alias("player_id"),
        parse_int("rating").fill_null(0).cast(pl.Int64).alias("rating"),
        parse_int("games").cast(pl.Int64).alias("games"),
        parse_int("k").cast(pl.Int64).alias("k"),
    ).filter(pl.col("rating") > 0)
