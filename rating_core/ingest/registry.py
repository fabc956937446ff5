"""Readers for the registry-like CSVs: players, starting lists, moderation and backgammon matches.

They share the CSV helpers of `csv_games`: every value is read as text, validated with Polars
expressions, and a bad row goes to the quarantine while the rows around it still land (DESIGN §4).
Two kinds differ: in `players.csv` a bad *cell* is quarantined and read as empty (the row, and a
bot's declaration, still land), and a starting list is official, so one unreadable row stops the
run instead of silently dropping a rated player.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from rating_core.ingest.common import IngestResult, UnreadableFileError
from rating_core.ingest.csv_games import (
    BAD_UTF8,
    LINE,
    OVERFLOW,
    Check,
    CsvTable,
    apply_checks,
    base_checks,
    bool_check,
    duplicate_check,
    empty_check,
    int_check,
    keyed_chunks,
    null_if_empty,
    parse_bool,
    parse_int,
    parse_utc,
    read_csv_strings,
    require_columns,
    shown_nul,
    whole_file,
    with_defaults,
)
from rating_core.ingest.fide_lists import read_fide_list
from rating_core.schemas import (
    MATCHES_SCHEMA,
    MODERATION_SCHEMA,
    PLAYERS_SCHEMA,
    QUARANTINE_SCHEMA,
    STARTING_LIST_SCHEMA,
    conform,
    empty,
)
from rating_core.text import format_text

__all__ = [
    "R_NO_GAME",
    "STARTING_LISTS",
    "backgammon_chunks",
    "STARTING_LIST_SUFFIXES",
    "parse_starting_list_name",
    "read_backgammon",
    "read_moderation",
    "read_players",
    "read_starting_list",
]

STARTING_LISTS = (
    "fide-standard",
    "fide-rapid",
    "fide-blitz",
    "ukd-standard",
    "ukd-rapid",
    "ukd-blitz",
)
MAX_RATING = 3500
BOOL_PROBLEM = "is not true or false (nor yes/no, 1/0)"


def _source(path: Path, source_file: str | None) -> str:
    """The provenance name: the given source_file, else the path."""
    return str(path) if source_file is None else source_file


# --- players -----------------------------------------------------------------------------------

PLAYERS_OPTIONAL = (
    "name",
    "federation",
    "sex",
    "birth_date",
    "title",
    "fide_id",
    "is_bot",
    "bot_rating",
    "email_verified",
    "display_name",
)


def _birth_year() -> pl.Expr:
    """Year of a `YYYY` or a real `YYYY-MM-DD` birth date; null otherwise."""
    text = pl.col("birth_date")
    full = text.str.to_date(format="%Y-%m-%d", strict=False)
    year_only = pl.when(text.str.contains(r"^[0-9]{4}$")).then(text.cast(pl.Int32, strict=False))
    return pl.when(text.str.len_chars() == 4).then(year_only).otherwise(full.dt.year())


@dataclass(frozen=True)
class CellCheck:
    """One rule for a single `players.csv` cell: where `bad` holds, `problem` says why."""

    column: str
    bad: pl.Expr
    problem: str  # completes "column <c>: '<value>' ..."


def _player_cell_checks(table: CsvTable) -> list[CellCheck]:
    """Every cell rule of `players.csv`: encoding and NUL bytes in any column, then the typed ones."""
    text_columns = [c for c in PLAYERS_OPTIONAL if c in table.columns]
    checks = [
        CellCheck(
            c,
            pl.col(BAD_UTF8) & pl.col(c).str.contains("\ufffd", literal=True),
            "holds bytes that are not UTF-8",
        )
        for c in text_columns
    ]
    checks += [
        CellCheck(c, pl.col(c).str.contains("\x00", literal=True), "holds a NUL byte")
        for c in text_columns
    ]
    checks += [
        CellCheck(
            "birth_date",
            (pl.col("birth_date") != "") & _birth_year().is_null(),
            "is not YYYY or a real YYYY-MM-DD",
        ),
        *[
            CellCheck(c, (pl.col(c) != "") & parse_bool(c).is_null(), BOOL_PROBLEM)
            for c in ("is_bot", "email_verified")
        ],
        CellCheck(
            "bot_rating",
            (pl.col("bot_rating") != "")
            & ~parse_int("bot_rating").is_between(0, MAX_RATING).fill_null(False),
            f"is not a whole number from 0 to {MAX_RATING}",
        ),
    ]
    return checks


def _quarantine_cells(
    frame: pl.DataFrame, checks: list[CellCheck], source_file: str
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(frame with every bad cell emptied, one quarantine row per bad cell naming its column).

    A cell failing several rules is quarantined once, with the first rule's reason; the rest of
    its row is kept, so one bad cell never drops a player (or turns a declared bot into a human).
    """
    hit: dict[str, pl.Expr] = {}
    problem: dict[str, pl.Expr] = {}
    for check in reversed(checks):
        bad = check.bad.fill_null(False)
        hit[check.column] = bad | hit.get(check.column, pl.lit(False))
        problem[check.column] = (
            pl.when(bad).then(pl.lit(check.problem)).otherwise(problem.get(check.column))
        )
    columns = [c for c in PLAYERS_OPTIONAL if c in hit]  # file order of the reasons per line
    flagged = frame.with_columns(
        [hit[c].alias(f"_bad_{c}") for c in columns]
        + [problem[c].alias(f"_why_{c}") for c in columns]
    )
    parts = [
        flagged.filter(pl.col(f"_bad_{c}")).select(
            pl.lit(source_file, dtype=pl.String).alias("source_file"),
            pl.col(LINE).alias("line"),
            pl.col("player_id").alias("record"),
            shown_nul(pl.col(c)).alias("value"),
            format_text(
                "column {}: '{}' {}; read as empty",
                pl.lit(c),
                shown_nul(pl.col(c)),
                pl.col(f"_why_{c}"),
            ).alias("reason"),
            pl.lit(i).alias("_order"),
        )
        for i, c in enumerate(columns)
    ]
    quarantine = (
        pl.concat(parts).sort("line", "_order").drop("_order")
        if parts
        else empty(QUARANTINE_SCHEMA)
    )
    cleaned = flagged.with_columns(
        [
            pl.when(pl.col(f"_bad_{c}")).then(pl.lit("")).otherwise(pl.col(c)).alias(c)
            for c in columns
        ]
    ).drop([f"_bad_{c}" for c in columns] + [f"_why_{c}" for c in columns])
    return cleaned, conform(quarantine, QUARANTINE_SCHEMA)


def read_players(
    path: Path, source_file: str | None = None, rows: int | None = None
) -> IngestResult:
    """Read `players.csv` into PLAYERS_SCHEMA rows; only `player_id` is a required column.

    is_bot and email_verified default to false; bot_rating is kept as given (a bot without one is
    rated from its PGN Elo tag, a bot_rating without is_bot is not an error). A bad cell is
    quarantined with its column and read as empty; only a row whose player id is missing,
    repeated or unreadable, or whose fields do not line up with the header, is quarantined whole.
    The file is read `rows` rows at a time and only the typed rows kept, so memory follows the
    players, not the file's text (`csv_games.keyed_chunks`; the result never depends on `rows`).
    """
    src = _source(path, source_file)
    return whole_file(
        lambda repeated: keyed_chunks(path, src, "player_id", _player_rows, rows, repeated)
    )


def _player_rows(table: CsvTable) -> IngestResult:
    """Rows and quarantine of a chunk of `players.csv`."""
    src = table.source_file
    require_columns(table, ("player_id",))
    frame = with_defaults(table, PLAYERS_OPTIONAL)
    player_id = pl.col("player_id")
    row_checks = [
        Check(
            pl.col(BAD_UTF8) & player_id.str.contains("\ufffd", literal=True),
            pl.lit(None, dtype=pl.String),
            pl.lit("the player id holds bytes that are not UTF-8"),
        ),
        Check(
            player_id.str.contains("\x00", literal=True),
            shown_nul(player_id),
            pl.lit("the player id holds a NUL byte"),
        ),
        Check(
            pl.col(OVERFLOW),
            pl.lit(None, dtype=pl.String),
            pl.lit(f"the row has more fields than the header's {len(table.columns)} columns"),
        ),
        empty_check("player_id", "the player id"),
        duplicate_check("player_id", "player id"),
    ]
    good, bad_rows = apply_checks(frame, row_checks, "player_id", src)
    good, bad_cells = _quarantine_cells(good, _player_cell_checks(table), src)
    quarantine = pl.concat([bad_rows, bad_cells]).sort("line", maintain_order=True)
    rows = good.select(
        pl.col("player_id"),
        *[
            null_if_empty(c).alias(c)
            for c in ("name", "federation", "sex", "title", "fide_id", "display_name")
        ],
        _birth_year().alias("birth_year"),
        parse_bool("is_bot").fill_null(False).alias("is_bot"),
        parse_int("bot_rating").alias("bot_rating"),
        parse_bool("email_verified").fill_null(False).alias("email_verified"),
    )
    return IngestResult(rows=conform(rows, PLAYERS_SCHEMA), quarantine=quarantine)


# --- starting lists --------------------------------------------------------------------------------

_LIST_NAME = re.compile(
    r"^(?P<list>[a-z]+-[a-z]+)@(?P<year>\d{4})-(?P<month>\d{2})\.(?:csv|txt|xml|zip)$"
)
STARTING_LIST_SUFFIXES = (".csv", ".txt", ".xml", ".zip")
"""A starting list is our CSV, or FIDE's TXT or XML download, plain or zipped (`fide_lists`)."""
LIST_PLAYER_COLUMNS = (
    "federation",
    "sex",
    "title",
    "w_title",
    "o_title",
    "foa_title",
    "birth_year",
    "flag",
)
"""Optional player-data columns of a CSV starting list (as FIDE's downloads give them)."""


def parse_starting_list_name(name: str) -> tuple[str, str]:
    """(list, period) from a file name like `fide-standard@2025-12.csv` (or `.txt`, `.xml`).

    Raises `UnreadableFileError` with one sentence when the name does not follow that pattern.
    """
    m = _LIST_NAME.match(name)
    if m is None or m["list"] not in STARTING_LISTS or not 1 <= int(m["month"]) <= 12:
        raise UnreadableFileError(
            f"{name}: a starting list must be named <list>@<YYYY-MM>.csv with <list> one of "
            f"{', '.join(STARTING_LISTS)} (e.g. fide-standard@2025-12.csv; a FIDE list may "
            "also be FIDE's .txt or .xml download)"
        )
    return m["list"], f"{m['year']}-{m['month']}"


def _unreadable_list_sentence(source_file: str, bad_rows: pl.DataFrame) -> str:
    """One sentence for the first unreadable row of a starting list (and how many more there are)."""
    first = bad_rows.sort("line").row(0, named=True)
    who = f" (player {first['record']})" if first["record"] else ""
    more = bad_rows.height - 1
    rest = f" (and {more} more unreadable row{'s' if more > 1 else ''})" if more else ""
    return (
        f"{source_file} line {first['line']}{who}: {first['reason']}{rest}; a starting list is "
        "official, so it is used whole or not at all"
    )


def read_starting_list(path: Path, source_file: str | None = None) -> IngestResult:
    """Read a starting list `<list>@<YYYY-MM>.csv` into STARTING_LIST_SCHEMA rows (a `.txt` or
    `.xml` FIDE download goes to `fide_lists.read_fide_list`).

    FIDE lists need player_id, rating and rated_games (peak_rating defaults to the rating); UKD
    lists need player_id and rating, and their rated_games/peak_rating are null. An official list
    is all or nothing: the first unreadable row raises `UnreadableFileError` naming the file, the
    line and the value (a quarantined row would silently drop a rated player from the list).
    """
    src = _source(path, source_file)
    list_name, period = parse_starting_list_name(Path(path).name)
    if Path(path).suffix.lower() in (".txt", ".xml", ".zip"):
        return read_fide_list(Path(path), list_name, period, src)
    is_fide = list_name.startswith("fide-")
    table = read_csv_strings(path, src)
    required = ("player_id", "rating", "rated_games") if is_fide else ("player_id", "rating")
    require_columns(table, required)
    frame = with_defaults(table, ("rated_games", "peak_rating", *LIST_PLAYER_COLUMNS))
    checks = [
        *base_checks(table),
        empty_check("player_id", "the player id"),
        Check(pl.col("rating") == "", pl.col("rating"), pl.lit("rating is empty")),
        int_check("rating", low=0, high=MAX_RATING),
    ]
    if is_fide:
        checks += [
            Check(
                pl.col("rated_games") == "", pl.col("rated_games"), pl.lit("rated_games is empty")
            ),
            int_check("rated_games", low=0),
            int_check("peak_rating", low=0, high=MAX_RATING),
        ]
    checks.append(int_check("birth_year", low=0, high=9999))
    checks.append(duplicate_check("player_id", "player id"))
    good, quarantine = apply_checks(frame, checks, "player_id", src)
    if quarantine.height:
        raise UnreadableFileError(_unreadable_list_sentence(src, quarantine))
    none = pl.lit(None, dtype=pl.Int64)
    rows = good.select(
        pl.lit(list_name).alias("list"),
        pl.lit(period).alias("period"),
        pl.col("player_id"),
        parse_int("rating").alias("rating"),
        (parse_int("rated_games") if is_fide else none).alias("rated_games"),
        (pl.coalesce(parse_int("peak_rating"), parse_int("rating")) if is_fide else none).alias(
            "peak_rating"
        ),
        parse_int("birth_year").alias("birth_year"),
        *[
            null_if_empty(c).str.strip_chars().alias(c)
            for c in LIST_PLAYER_COLUMNS
            if c != "birth_year"
        ],
    ).with_columns(
        pl.when(pl.col("birth_year") > 0).then(pl.col("birth_year")).alias("birth_year"),
        pl.col("sex").str.to_uppercase(),
        pl.col("flag").str.to_lowercase(),
    )
    return IngestResult(rows=conform(rows, STARTING_LIST_SCHEMA), quarantine=quarantine)


# --- moderation ------------------------------------------------------------------------------------

MODERATION_REQUIRED = ("game_id", "decided_at", "decision", "reason")


R_NO_GAME = "no game with this id"


def read_moderation(
    path: Path, source_file: str | None = None, known_game_ids: pl.Series | None = None
) -> IngestResult:
    """Read a moderation CSV into MODERATION_SCHEMA rows; the only decision is `annul`.

    A second decision on the same game id is quarantined (it would be applied twice otherwise).
    With `known_game_ids` (every id of the games table), a decision for any other id is
    quarantined too ("no game with this id"): it would otherwise annul nothing, silently.
    """
    src = _source(path, source_file)
    table = read_csv_strings(path, src)
    require_columns(table, MODERATION_REQUIRED)
    frame = table.frame
    checks = [
        *base_checks(table),
        empty_check("game_id", "the game id"),
        Check(
            pl.col("decision").str.to_lowercase() != "annul",
            pl.col("decision"),
            format_text("decision '{}' is not annul", pl.col("decision")),
        ),
        Check(
            parse_utc("decided_at").is_null(),
            pl.col("decided_at"),
            format_text("decided_at '{}' is not a valid ISO 8601 date", pl.col("decided_at")),
        ),
        duplicate_check("game_id", "game id"),
    ]
    if known_game_ids is not None:
        known = known_game_ids.cast(pl.String).drop_nulls().unique().implode()
        checks.append(Check(~pl.col("game_id").is_in(known), pl.col("game_id"), pl.lit(R_NO_GAME)))
    good, quarantine = apply_checks(frame, checks, "game_id", src)
    rows = good.select(
        pl.col("game_id"),
        parse_utc("decided_at").alias("decided_at"),
        pl.lit("annul").alias("decision"),
        null_if_empty("reason").alias("reason"),
        pl.lit(src).alias("source_file"),
        pl.col(LINE).alias("source_line"),
    )
    return IngestResult(rows=conform(rows, MODERATION_SCHEMA), quarantine=quarantine)


# --- backgammon ------------------------------------------------------------------------------------

BACKGAMMON_REQUIRED = ("match_id", "ended_at", "winner_id", "loser_id", "length", "ranked")


def read_backgammon(
    path: Path, source_file: str | None = None, rows: int | None = None
) -> IngestResult:
    """Read a backgammon match CSV into MATCHES_SCHEMA rows (period = UTC month of ended_at).

    vs_ai is optional and defaults to false; an empty ranked is quarantined like a bad boolean.
    The file is read `rows` rows at a time (`backgammon_chunks`); the result never depends on
    `rows`.
    """
    src = _source(path, source_file)
    return whole_file(lambda repeated: backgammon_chunks(path, src, rows, repeated))


def backgammon_chunks(
    path: Path, source_file: str, rows: int | None = None, repeated: Iterable[int] = ()
) -> Iterator[tuple[IngestResult, np.ndarray]]:
    """A backgammon match CSV a chunk of `rows` rows at a time (`keyed_chunks` by match id): the
    lake's store streams it (`ingest_store.ingest_matches`), so its text is never held whole."""
    return keyed_chunks(path, source_file, "match_id", _match_rows, rows, repeated)


def _match_rows(table: CsvTable) -> IngestResult:
    """Rows and quarantine of a chunk of a backgammon match CSV."""
    src = table.source_file
    require_columns(table, BACKGAMMON_REQUIRED)
    frame = with_defaults(table, ("vs_ai",))
    ended = parse_utc("ended_at")
    checks = [
        *base_checks(table),
        empty_check("match_id", "the match id"),
        empty_check("winner_id"),
        empty_check("loser_id"),
        Check(
            pl.col("winner_id") == pl.col("loser_id"),
            pl.col("winner_id"),
            format_text("player '{}' cannot play against themselves", pl.col("winner_id")),
        ),
        Check(
            ended.is_null(),
            pl.col("ended_at"),
            format_text("ended_at '{}' is not a valid ISO 8601 date", pl.col("ended_at")),
        ),
        Check(pl.col("length") == "", pl.col("length"), pl.lit("length is empty")),
        int_check("length", low=1),
        Check(pl.col("ranked") == "", pl.col("ranked"), pl.lit("ranked is empty (true or false)")),
        bool_check("ranked"),
        bool_check("vs_ai"),
        duplicate_check("match_id", "match id"),
    ]
    good, quarantine = apply_checks(frame, checks, "match_id", src)
    rows = good.select(
        pl.col("match_id"),
        ended.alias("ended_at"),
        ended.dt.strftime("%Y-%m").alias("period"),
        pl.col("winner_id"),
        pl.col("loser_id"),
        parse_int("length").alias("length"),
        parse_bool("ranked").alias("ranked"),
        parse_bool("vs_ai").fill_null(False).alias("vs_ai"),
        pl.lit(src).alias("source_file"),
        pl.col(LINE).alias("source_line"),
    )
    return IngestResult(rows=conform(rows, MATCHES_SCHEMA), quarantine=quarantine)
