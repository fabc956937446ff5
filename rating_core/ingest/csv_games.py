"""Readers for platform and federation game CSVs, plus the CSV helpers the other CSV readers share.

Every column is read as text first and validated with Polars expressions, so a bad value sends its
row to the quarantine (DESIGN §4) instead of crashing the reader. A file missing a *required*
column makes every row unusable and raises `UnreadableFileError`; missing optional columns take
their documented defaults.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from rating_core import budget
from rating_core.ingest.common import (
    ID_HASH_SEED,
    IngestResult,
    UnreadableFileError,
    id_hashes,
    repeated_hashes,
)
from rating_core.schemas import (
    KINDS,
    PLAYED_RESULTS,
    QUARANTINE_SCHEMA,
    RATING_LISTS,
    RAW_GAMES_SCHEMA,
    RESULTS,
    SOURCES,
    TERMINATIONS,
    UTC_TIME,
    conform,
    empty,
)
from rating_core.text import format_text

__all__ = [
    "BAD_UTF8",
    "LINE",
    "NUL",
    "OVERFLOW",
    "Check",
    "CsvTable",
    "apply_checks",
    "base_checks",
    "bool_check",
    "duplicate_check",
    "empty_check",
    "extra_json",
    "int_check",
    "nul_check",
    "null_if_empty",
    "parse_bool",
    "parse_int",
    "parse_utc",
    "CsvChunks",
    "federation_game_chunks",
    "keyed_chunks",
    "platform_game_chunks",
    "read_csv_strings",
    "read_federation_games",
    "whole_file",
    "read_game_csv",
    "read_platform_games",
    "require_columns",
    "with_defaults",
]

LINE = "_line"  # 1-based physical line where the row starts (header is line 1)
BAD_UTF8 = "_bad_utf8"  # the row held bytes that are not UTF-8 (decoded with replacement)
OVERFLOW = "_overflow"  # text found beyond the header's last column
NUL = "_nul"  # name of the first column whose cell holds a NUL byte, null when none does
EARLIER = "_earlier"  # line of the row's key in an earlier chunk (`CsvChunks`), else null
_INTERNAL = (LINE, BAD_UTF8, OVERFLOW, NUL)
SCAN_BYTES = 4 << 20
"""Text Polars' CSV scan parses at a time (a few pieces are read ahead): as fast as its
default, and the scan of a 0.8 GB file alone peaks at 0.27 GB with it, 0.47 GB without."""
_INT32_MAX = 2_147_483_647

# --- generic CSV helpers ------------------------------------------------------------------------


@dataclass(frozen=True)
class CsvTable:
    """A CSV file read as text: one String column per header name plus the internal columns."""

    frame: pl.DataFrame
    columns: tuple[str, ...]  # header names, in file order
    source_file: str


def read_csv_strings(path: Path, source_file: str, rows: int | None = None) -> CsvTable:
    """Read a CSV with every value as stripped text, keeping each row's physical line number.

    The file is parsed `rows` rows at a time (`CsvChunks`) and the chunks put together: the
    result never depends on `rows`. Raises `UnreadableFileError` for a missing, empty or non-CSV
    file (a NUL byte in the header row: a binary file), or a duplicated header name. Rows with
    fewer fields than the header read the missing fields as empty (Polars cannot tell them
    apart); rows with more fields are flagged in `_overflow`, and a NUL byte in a cell names that
    cell's column in `_nul`, so one damaged line is quarantined instead of the whole file.
    """
    chunks = CsvChunks(Path(path), source_file, rows)
    tables = list(chunks.tables())
    frame = pl.concat([t.frame for t in tables]) if len(tables) > 1 else tables[0].frame
    return CsvTable(frame=frame, columns=tables[0].columns, source_file=source_file)


_BOM = b"\xef\xbb\xbf"
_BLOCK = 1 << 20
_WHITESPACE = b" \t\n\r\x0b\x0c"


def _check_start(path: Path, source_file: str) -> None:
    """Refuse a file that cannot be opened, holds only whitespace (after a BOM), or has a NUL
    byte in its first line (a binary file), reading a block at a time until the first text and
    the first newline."""
    try:
        with path.open("rb") as stream:
            block = stream.read(_BLOCK)
            if block.startswith(_BOM):
                block = block[3:]
            first_line, text = True, False
            while block:
                if first_line:
                    head = block.split(b"\n", 1)[0]
                    if b"\x00" in head:
                        raise UnreadableFileError(
                            f"{source_file}: not a CSV text file (it contains NUL bytes)"
                        )
                    first_line = len(head) == len(block)
                text = text or bool(block.strip(_WHITESPACE))
                if text and not first_line:
                    return
                block = stream.read(_BLOCK)
    except OSError as exc:
        raise UnreadableFileError(f"{source_file}: cannot be read ({exc.strerror or exc})") from exc
    if not text:
        raise UnreadableFileError(f"{source_file}: the file is empty")


def is_utf8(path: Path) -> bool:
    """Whether the whole file is UTF-8, decoded a block at a time (memory does not grow with it)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with path.open("rb") as stream:
            while block := stream.read(_BLOCK):
                decoder.decode(block)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


_SCAN_VARIABLE = "POLARS_CSV_CHUNK_SIZE"
# Polars' CSV scan parses `SCAN_BYTES` of text at a time (read when a scan starts) unless the
# environment says otherwise: its read-ahead is a few such pieces, which by default add up to
# hundreds of megabytes whatever the chunks asked for. Set once, when this module is imported
# (before the ingest's threads start), never changed while a scan runs on another thread.
os.environ.setdefault(_SCAN_VARIABLE, str(SCAN_BYTES))


@dataclass
class CsvChunks:
    """A CSV file read `rows` rows at a time (default `budget.CSV_ROWS`, looked up when read;
    Polars' streamed scan cuts the chunks, never inside a quoted field): `tables()` yields each
    chunk as a `CsvTable` whose rows are exactly those the whole file's reading gives, line
    numbers counted from the file's start.

    With a `key` column, `hashes` gathers each chunk's distinct non-empty keys (hashed), to find
    the keys repeated across chunks; a reading given those (`repeated`) fills `_earlier` with the
    line of a key's first record in an earlier chunk, so `duplicate_check` names the line the
    whole file's reading names. Every other row's `_earlier` is null."""

    path: Path
    source_file: str
    rows: int | None = None
    key: str | None = None
    repeated: frozenset[int] = frozenset()
    hashes: list[np.ndarray] = field(default_factory=list, init=False)
    _utf8: bool | None = field(default=None, init=False, repr=False)

    def tables(self) -> Iterator[CsvTable]:
        """Each chunk of the file's rows (at least one, empty for a file of a header alone)."""
        source = self.source_file
        _check_start(self.path, source)
        names = self._header()
        width = len(names)
        positional = [f"c{i}" for i in range(width + 1)]
        scan = pl.scan_csv(
            self.path,
            has_header=False,
            infer_schema=False,
            schema=dict.fromkeys(positional, pl.String),
            missing_columns="insert",
            truncate_ragged_lines=True,
            empty_string_is_null=False,
            encoding="utf8-lossy",
            glob=False,  # a file name is a name: `[red]games.csv` is no pattern
        )
        first = pl.DataFrame(schema={"key": pl.String, "line": pl.Int64})  # repeated keys' lines
        lines, header, yielded = 0, True, False
        batches = iter(scan.collect_batches(chunk_size=self.rows or budget.CSV_ROWS))
        while True:
            try:
                body = next(batches, None)
            except Exception as exc:  # noqa: BLE001 - any parser failure means "not a CSV"
                raise UnreadableFileError(f"{source}: not a readable CSV file ({exc})") from exc
            if body is None:
                if yielded:
                    return
                body = pl.DataFrame(schema=dict.fromkeys(positional, pl.String))
            frame, lines = self._rows(body, names, positional, lines, header=header)
            header = header and not body.height  # the first row read is the header
            frame, first = self._with_earlier(frame, first)
            yielded = True
            yield CsvTable(frame=frame, columns=tuple(names), source_file=source)

    def _header(self) -> list[str]:
        """The header's names, stripped; refused when empty or when a name appears twice."""
        source = self.source_file
        try:
            header = (
                pl.scan_csv(
                    self.path,
                    has_header=False,
                    infer_schema=False,
                    truncate_ragged_lines=True,
                    encoding="utf8-lossy",
                    glob=False,
                )
                .head(1)
                .collect()
            )
        except Exception as exc:  # noqa: BLE001 - any parser failure means "not a CSV"
            raise UnreadableFileError(f"{source}: not a readable CSV file ({exc})") from exc
        names = [("" if v is None else str(v)).strip() for v in header.row(0)]
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise UnreadableFileError(f"{source}: column '{name}' appears twice in the header")
            seen.add(name)
        if not any(names):
            raise UnreadableFileError(f"{source}: the header row is empty")
        return names

    def _rows(
        self,
        body: pl.DataFrame,
        names: list[str],
        positional: list[str],
        lines: int,
        *,
        header: bool,
    ) -> tuple[pl.DataFrame, int]:
        """One chunk's rows with the internal columns, and the physical lines read so far
        (`lines`: before the chunk)."""
        width = len(names)
        newlines = pl.sum_horizontal(
            [pl.col(c).fill_null("").str.count_matches("\n", literal=True) for c in positional]
        )
        line = (
            lines
            + 1
            + pl.int_range(pl.len(), dtype=pl.Int64)
            + newlines.cum_sum().shift(1, fill_value=0)
        )
        all_text = pl.concat_str([pl.col(c).fill_null("") for c in positional])
        nul_column = pl.coalesce(
            [
                pl.when(pl.col(f"c{i}").str.contains("\x00", literal=True)).then(pl.lit(name))
                for i, name in enumerate(names)
            ]
        )
        counted = body.select(pl.len().cast(pl.Int64) + newlines.sum()).item()
        frame = (
            body.with_columns(
                line.cast(pl.Int64).alias(LINE),
                all_text.str.contains("\ufffd", literal=True).alias(BAD_UTF8),
                (pl.col(f"c{width}").fill_null("").str.strip_chars() != "").alias(OVERFLOW),
                nul_column.cast(pl.String).alias(NUL),
                *[pl.col(c).fill_null("").str.strip_chars() for c in positional[:width]],
            )
            .slice(1 if header else 0)
            .filter(pl.concat_str([pl.col(c) for c in positional]).str.strip_chars() != "")
            .select([pl.col(f"c{i}").alias(n) for i, n in enumerate(names)] + list(_INTERNAL))
        )
        if frame.get_column(BAD_UTF8).any() and self._is_utf8():
            frame = frame.with_columns(pl.lit(False).alias(BAD_UTF8))  # a U+FFFD written as such
        return frame, lines + int(counted or 0)

    def _is_utf8(self) -> bool:
        """Whether the file is UTF-8 (asked only when a row holds U+FFFD: a replaced byte, or
        the character itself in a UTF-8 file), found once."""
        if self._utf8 is None:
            self._utf8 = is_utf8(self.path)
        return self._utf8

    def _with_earlier(
        self, frame: pl.DataFrame, first: pl.DataFrame
    ) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The chunk with `_earlier` (see the class), its keys' hashes gathered, and `first`
        grown by the chunk's repeated keys not seen before."""
        none = pl.lit(None, dtype=pl.Int64).alias(EARLIER)
        key = self.key
        if key is None or key not in frame.columns:
            return frame.with_columns(none), first
        present = frame.get_column(key).filter(frame.get_column(key) != "")
        self.hashes.append(np.unique(id_hashes(present)))
        if not self.repeated:
            return frame.with_columns(none), first
        wanted = pl.Series(sorted(self.repeated), dtype=pl.UInt64).implode()
        earlier = pl.col(key).replace_strict(
            first.get_column("key"), first.get_column("line"), default=None, return_dtype=pl.Int64
        )
        frame = frame.with_columns(earlier.alias(EARLIER))
        firsts = (
            frame.filter(
                (pl.col(key) != "")
                & pl.col(key).hash(ID_HASH_SEED).is_in(wanted)
                & pl.col(EARLIER).is_null()
            )
            .group_by(key, maintain_order=True)
            .agg(pl.col(LINE).min())
            .select(pl.col(key).alias("key"), pl.col(LINE).alias("line"))
        )
        return frame, pl.concat([first, firsts]) if firsts.height else first


def require_columns(table: CsvTable, required: Sequence[str]) -> None:
    """Raise `UnreadableFileError` naming the first required column absent from the header."""
    for name in required:
        if name not in table.columns:
            raise UnreadableFileError(f"{table.source_file}: missing required column '{name}'")


def with_defaults(table: CsvTable, optional: Sequence[str]) -> pl.DataFrame:
    """The table's frame with every absent optional column added as empty text."""
    missing = [c for c in optional if c not in table.columns]
    return table.frame.with_columns([pl.lit("").alias(c) for c in missing])


def extra_json(table: CsvTable, known: Sequence[str]) -> pl.Expr:
    """JSON object of the columns not in `known` (provenance), or null when there are none."""
    extras = [c for c in table.columns if c not in set(known) and c]
    if not extras:
        return pl.lit(None, dtype=pl.String)
    return pl.struct([pl.col(c) for c in extras]).struct.json_encode()


_INT_RE = r"^[+-]?[0-9]+(\.0*)?$"  # an integer, or an integral decimal such as 1100.0
TRUE_WORDS = ("true", "yes", "1")
FALSE_WORDS = ("false", "no", "0")


def parse_int(col: str) -> pl.Expr:
    """Integer value of a text column; `1100.0` is 1100 (null when empty or not a whole number).

    Spreadsheets write whole numbers as `1100.0`, so an integral decimal means the integer;
    `1100.5` is not one and stays null (its check quarantines it).
    """
    c = pl.col(col)
    digits = c.str.replace(r"\.0*$", "")
    return pl.when(c.str.contains(_INT_RE)).then(digits.cast(pl.Int64, strict=False))


def parse_bool(col: str) -> pl.Expr:
    """`true/false`, `yes/no` or `1/0` (any case) as a Boolean; null for anything else or empty."""
    low = pl.col(col).str.to_lowercase()
    return (
        pl.when(low.is_in(TRUE_WORDS))
        .then(True)
        .when(low.is_in(FALSE_WORDS))
        .then(False)
        .otherwise(None)
    )


_NAIVE_FORMATS = ("%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M", "%Y-%m-%d")
_AWARE_FORMATS = ("%Y-%m-%dT%H:%M:%S%.f%:z", "%Y-%m-%dT%H:%M%:z")


def parse_utc(col: str) -> pl.Expr:
    """ISO 8601 text as a UTC datetime: no zone is read as UTC, a zone is converted to UTC.

    Accepts `T` or a space between date and time, `Z`, `+hh:mm` and `+hhmm`; null when the text is
    not such a date or the date is impossible (2024-02-30).
    """
    s = (
        pl.col(col)
        .str.replace(r"^(\d{4}-\d{2}-\d{2})[ T]", "${1}T")
        .str.replace(r"[Zz]$", "+00:00")
        .str.replace(r"([+-]\d{2})(\d{2})$", "${1}:${2}")
    )
    parsed = [
        s.str.to_datetime(format=f, strict=False, time_unit="us", time_zone="UTC")
        for f in (*_NAIVE_FORMATS, *_AWARE_FORMATS)
    ]
    return pl.coalesce(parsed).cast(UTC_TIME)


@dataclass(frozen=True)
class Check:
    """One quarantine rule: rows where `bad` is true are rejected with `value` and `reason`."""

    bad: pl.Expr
    value: pl.Expr
    reason: pl.Expr


def _lit(text: str) -> pl.Expr:
    """A String literal (keeps reason expressions typed)."""
    return pl.lit(text, dtype=pl.String)


def empty_check(col: str, what: str | None = None) -> Check:
    """Reject rows whose `col` is empty."""
    return Check(pl.col(col) == "", pl.col(col), _lit(f"{what or col} is empty"))


def int_check(col: str, *, low: int | None = None, high: int | None = None) -> Check:
    """Reject a non-empty `col` that is not an integer within [low, high]."""
    value = parse_int(col)
    bad = value.is_null() | (value > _INT32_MAX) | (value < -_INT32_MAX)
    if low is not None:
        bad = bad | (value < low)
    if high is not None:
        bad = bad | (value > high)
    if low is not None and high is not None:
        wanted = f"an integer from {low} to {high}"
    elif low is not None:
        wanted = f"an integer of at least {low}"
    else:
        wanted = "an integer"
    reason = format_text(f"{col} '{{}}' is not {wanted}", pl.col(col))
    return Check((pl.col(col) != "") & bad.fill_null(True), pl.col(col), reason)


def bool_check(col: str) -> Check:
    """Reject a non-empty `col` that is not a boolean word (`parse_bool`)."""
    reason = format_text(f"{col} '{{}}' is not true or false", pl.col(col))
    return Check((pl.col(col) != "") & parse_bool(col).is_null(), pl.col(col), reason)


def duplicate_check(col: str, noun: str) -> Check:
    """Reject the second and later rows carrying the same non-empty `col` value (the first one
    may be in an earlier chunk of the file: `_earlier`)."""
    key = pl.col(col)
    first_line = pl.coalesce(pl.col(EARLIER), pl.col(LINE).min().over(col))
    repeated = (key != "") & (pl.col(LINE) != first_line)
    reason = format_text(f"{noun} '{{}}' appears again (first on line {{}})", key, first_line)
    return Check(repeated, key, reason)


def shown_nul(text: pl.Expr) -> pl.Expr:
    """The text with each NUL byte written `\\0`, so the quarantine's value can be printed."""
    return text.str.replace_all("\x00", "\\0", literal=True)


def nul_check(table: CsvTable) -> Check:
    """Reject a row with a NUL byte in a cell, naming the column (the first one when several)."""
    cells: list[pl.Expr] = [
        pl.when(pl.col(NUL) == name).then(pl.col(name)) for name in table.columns if name
    ]
    cell = pl.coalesce(cells or [pl.lit(None, dtype=pl.String)])
    return Check(
        pl.col(NUL).is_not_null(),
        shown_nul(cell),
        format_text("the line holds a NUL byte (column {})", pl.col(NUL)),
    )


def base_checks(table: CsvTable) -> list[Check]:
    """Checks every CSV row gets first: bad encoding, a NUL byte, then fields beyond the header."""
    return [
        Check(
            pl.col(BAD_UTF8),
            pl.lit(None, dtype=pl.String),
            _lit("the line holds bytes that are not UTF-8"),
        ),
        nul_check(table),
        Check(
            pl.col(OVERFLOW),
            pl.lit(None, dtype=pl.String),
            _lit(f"the row has more fields than the header's {len(table.columns)} columns"),
        ),
    ]


def apply_checks(
    frame: pl.DataFrame, checks: Sequence[Check], record: str, source_file: str
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Split rows into those passing every check and one quarantine row per rejected row.

    A row failing several checks is quarantined once, with the first failing check's reason, so
    the run summary counts records, not problems.
    """
    if not checks:
        return frame, empty(QUARANTINE_SCHEMA)
    reason: pl.Expr = pl.lit(None, dtype=pl.String)
    value: pl.Expr = pl.lit(None, dtype=pl.String)
    for check in reversed(checks):
        hit = check.bad.fill_null(False)
        reason = pl.when(hit).then(check.reason.cast(pl.String)).otherwise(reason)
        value = pl.when(hit).then(check.value.cast(pl.String)).otherwise(value)
    flagged = frame.with_columns(reason.alias("_q_reason"), value.alias("_q_value"))
    good = flagged.filter(pl.col("_q_reason").is_null()).drop("_q_reason", "_q_value")
    bad = flagged.filter(pl.col("_q_reason").is_not_null()).select(
        pl.lit(source_file, dtype=pl.String).alias("source_file"),
        pl.col(LINE).alias("line"),
        pl.when(pl.col(record) != "").then(shown_nul(pl.col(record))).alias("record"),
        pl.col("_q_value").alias("value"),
        pl.col("_q_reason").alias("reason"),
    )
    return good, conform(bad, QUARANTINE_SCHEMA)


def null_if_empty(col: str) -> pl.Expr:
    """The text of `col`, or null when it is empty."""
    return pl.when(pl.col(col) != "").then(pl.col(col))


# --- platform games ------------------------------------------------------------------------------

PLATFORM_REQUIRED = (
    "game_id",
    "played_at",
    "white_id",
    "black_id",
    "result",
    "time_control",
    "rated",
)
PLATFORM_OPTIONAL = (
    "kind",
    "plies",
    "termination",
    "days_per_move",
    "otb_confirmed",
    "white_name",
    "black_name",
    "white_elo",
    "black_elo",
)


def _one_of(col: str, allowed: Sequence[str], *, what: str | None = None) -> Check:
    """Reject rows whose `col` is not one of the allowed values."""
    listed = ", ".join(allowed)
    reason = format_text(f"{what or col} '{{}}' is not one of {listed}", pl.col(col))
    return Check(~pl.col(col).is_in(list(allowed)), pl.col(col), reason)


def _date_check(col: str) -> Check:
    """Reject rows whose `col` is not a real ISO 8601 date or timestamp."""
    reason = format_text(f"{col} '{{}}' is not a valid ISO 8601 date", pl.col(col))
    return Check(parse_utc(col).is_null(), pl.col(col), reason)


def read_platform_games(
    path: Path, source_file: str | None = None, rows: int | None = None
) -> IngestResult:
    """Read a platform game CSV (DESIGN appendix) into RAW_GAMES_SCHEMA rows, format `csv`.

    Required columns: game_id, played_at, white_id, black_id, result, time_control, rated. Absent
    optional columns default to kind `live`, termination `normal`, plies/days_per_move/elos null,
    otb_confirmed null. Time controls are not checked here (the classifier does that). The file
    is read `rows` rows at a time (`platform_game_chunks`); the result never depends on `rows`.
    """
    src = str(path) if source_file is None else source_file
    return whole_file(lambda repeated: platform_game_chunks(path, src, rows, repeated))


def platform_game_chunks(
    path: Path, source_file: str, rows: int | None = None, repeated: Iterable[int] = ()
) -> Iterator[tuple[IngestResult, np.ndarray]]:
    """A platform game CSV a chunk of `rows` rows at a time (`keyed_chunks` by game id)."""
    return keyed_chunks(path, source_file, "game_id", _platform_rows, rows, repeated)


def _platform_rows(table: CsvTable) -> IngestResult:
    """Raw rows and quarantine of a platform CSV's chunk."""
    require_columns(table, PLATFORM_REQUIRED)
    frame = with_defaults(table, PLATFORM_OPTIONAL)
    kind = pl.when(pl.col("kind") == "").then(pl.lit("live")).otherwise(pl.col("kind"))
    term = (
        pl.when(pl.col("termination") == "").then(pl.lit("normal")).otherwise(pl.col("termination"))
    )
    frame = frame.with_columns(kind.alias("kind"), term.alias("termination"))
    checks = [
        empty_check("black_id", "black_id"),
        _one_of("result", PLAYED_RESULTS),
        _date_check("played_at"),
        Check(pl.col("rated") == "", pl.col("rated"), _lit("rated is empty (true or false)")),
        bool_check("rated"),
        bool_check("otb_confirmed"),
        _one_of("kind", KINDS),
        _one_of("termination", TERMINATIONS),
        int_check("plies", low=0),
        int_check("days_per_move", low=0),
    ]
    columns = [
        parse_utc("played_at").alias("played_at"),
        pl.col("black_id"),
        pl.lit(False).alias("black_id_from_name"),
        parse_int("days_per_move").alias("days_per_move"),
        parse_bool("rated").alias("rated"),
        pl.col("kind"),
        parse_bool("otb_confirmed").alias("otb_confirmed"),
        parse_int("plies").alias("plies"),
        pl.col("termination"),
    ]
    return _game_rows(table, frame, PLATFORM_REQUIRED + PLATFORM_OPTIONAL, checks, columns)


def _game_rows(
    table: CsvTable,
    frame: pl.DataFrame,
    known: tuple[str, ...],
    checks: Sequence[Check],
    columns: Sequence[pl.Expr],
) -> IngestResult:
    """What the platform and federation game CSVs share around each one's own `checks` and
    `columns`: the checks of the file, the game id and white_id before them, of the Elos and a
    repeated game id after them (a row takes the first failing check's reason), and the columns
    both readers fill alike; `known`: the columns `extra` leaves out."""
    src = table.source_file
    checks = [
        *base_checks(table),
        empty_check("game_id", "the game id"),
        empty_check("white_id", "white_id"),
        *checks,
        int_check("white_elo", low=0),
        int_check("black_elo", low=0),
        duplicate_check("game_id", "game id"),
    ]
    good, quarantine = apply_checks(frame, checks, "game_id", src)
    rows = good.select(
        pl.col("game_id"),
        pl.lit(src).alias("source_file"),
        pl.col(LINE).alias("source_line"),
        pl.lit("csv").alias("format"),
        pl.col("white_id"),
        null_if_empty("white_name").alias("white_name"),
        null_if_empty("black_name").alias("black_name"),
        pl.lit(False).alias("white_id_from_name"),
        pl.col("result"),
        null_if_empty("time_control").alias("time_control"),
        parse_int("white_elo").alias("white_elo"),
        parse_int("black_elo").alias("black_elo"),
        pl.lit(False).alias("white_is_bot"),
        pl.lit(False).alias("black_is_bot"),
        extra_json(table, known).alias("extra"),
        *columns,
    )
    return IngestResult(rows=conform(rows, RAW_GAMES_SCHEMA), quarantine=quarantine)


# --- federation games ----------------------------------------------------------------------------

FEDERATION_REQUIRED = (
    "game_id",
    "tournament_id",
    "round",
    "played_on",
    "white_id",
    "black_id",
    "result",
)
FEDERATION_OPTIONAL = (
    "rating_list",
    "time_control",
    "white_name",
    "black_name",
    "white_elo",
    "black_elo",
)


def read_federation_games(
    path: Path, source_file: str | None = None, rows: int | None = None
) -> IngestResult:
    """Read a federation game CSV into RAW_GAMES_SCHEMA rows (rated, kind `otb`, format `csv`).

    Results also take forfeits (`+-`, `-+`, `--`) and `bye` (with an empty black_id). An empty or
    absent rating_list is null, for the classifier to derive from an optional time_control column.
    played_on is a date read as 00:00 UTC (a full ISO timestamp is also accepted). The file is
    read `rows` rows at a time, as `platform_game_chunks` reads a platform file.
    """
    src = str(path) if source_file is None else source_file
    return whole_file(lambda repeated: federation_game_chunks(path, src, rows, repeated))


def federation_game_chunks(
    path: Path, source_file: str, rows: int | None = None, repeated: Iterable[int] = ()
) -> Iterator[tuple[IngestResult, np.ndarray]]:
    """A federation game CSV a chunk of `rows` rows at a time (`keyed_chunks` by game id)."""
    return keyed_chunks(path, source_file, "game_id", _federation_rows, rows, repeated)


def _federation_rows(table: CsvTable) -> IngestResult:
    """Raw rows and quarantine of a federation CSV's chunk."""
    require_columns(table, FEDERATION_REQUIRED)
    frame = with_defaults(table, FEDERATION_OPTIONAL)
    is_bye = pl.col("result") == "bye"
    rating_list = pl.col("rating_list").str.to_lowercase()
    checks = [
        _one_of("result", RESULTS),
        Check(
            (pl.col("black_id") == "") & ~is_bye,
            pl.col("black_id"),
            _lit("black_id is empty (only a bye has no opponent)"),
        ),
        Check(
            (pl.col("black_id") != "") & is_bye,
            pl.col("black_id"),
            format_text("a bye has no opponent, but black_id is '{}'", pl.col("black_id")),
        ),
        _date_check("played_on"),
        int_check("round", low=1),
        Check(
            (rating_list != "") & ~rating_list.is_in(RATING_LISTS),
            pl.col("rating_list"),
            format_text(
                "rating_list '{}' is not one of standard, rapid, blitz", pl.col("rating_list")
            ),
        ),
    ]
    columns = [
        null_if_empty("tournament_id").alias("tournament_id"),
        parse_int("round").alias("round"),
        parse_utc("played_on").alias("played_at"),
        null_if_empty("black_id").alias("black_id"),
        pl.when(pl.col("black_id") != "").then(False).alias("black_id_from_name"),
        pl.when(rating_list != "").then(rating_list).alias("rating_list"),
        pl.lit(True).alias("rated"),
        pl.lit("otb").alias("kind"),
        pl.lit("unknown").alias("termination"),
    ]
    return _game_rows(table, frame, FEDERATION_REQUIRED + FEDERATION_OPTIONAL, checks, columns)


Chunks = Iterable[tuple[IngestResult, np.ndarray]]
"""A file's chunks: each one's result and the hashes of its distinct record ids."""


def keyed_chunks(
    path: Path,
    source_file: str,
    key: str,
    convert: Callable[[CsvTable], IngestResult],
    rows: int | None = None,
    repeated: Iterable[int] = (),
) -> Iterator[tuple[IngestResult, np.ndarray]]:
    """A CSV whose `key` column is unique in the file, a chunk of `rows` rows at a time: each
    chunk's rows and quarantine (`convert`, whose `duplicate_check` on `key` sees `_earlier`),
    with the hashes of its distinct keys (`CsvChunks`). The keys `repeated` across chunks must
    be given for the later records of a key to be quarantined as the whole file's reading
    quarantines them (`whole_file` finds them and reads again)."""
    chunks = CsvChunks(Path(path), source_file, rows, key, frozenset(repeated))
    for table in chunks.tables():
        result = convert(table)
        yield result, chunks.hashes[-1] if chunks.hashes else np.empty(0, np.uint64)


def whole_file(read: Callable[[frozenset[int]], Chunks]) -> IngestResult:
    """A file read chunk by chunk (`read(repeated)`), its chunks' results put together. When
    ids repeat across chunks the file is read again with them (`repeated`), so their later
    records are quarantined as a reading of the whole file at once quarantines them (the
    ingest store does the same for a file it streams)."""
    parts = list(read(frozenset()))
    again = repeated_hashes(hashes for _, hashes in parts)
    if again:
        parts = []  # the first reading's rows go before the second one's are made
        parts = list(read(frozenset(again)))
    results = [result for result, _ in parts]
    if len(results) == 1:
        return results[0]
    return IngestResult(
        rows=pl.concat([r.rows for r in results]),
        quarantine=pl.concat([r.quarantine for r in results]),
        notes=tuple(n for r in results for n in r.notes),
    )


def read_game_csv(path: Path, source_file: str, source: str) -> IngestResult:
    """Read a game CSV with the reader of the inbox folder it came from (`source`, DESIGN §2):
    the platform's columns under `platform/`, the federation's under `federation/` and
    `clubs/<club_id>/`. The folder decides, never the file's name (`federation/platform.csv`
    is a federation file)."""
    if source == "platform":
        return read_platform_games(path, source_file)
    if source in ("federation", "club"):
        return read_federation_games(path, source_file)
    raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
