"""Rows from the PGN scan: the scanner's per-game arrays as an Arrow table (no string copied),
then Polars expressions mapping tags to RAW_GAMES_SCHEMA and naming each game's first defect.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
import polars as pl
import pyarrow as pa

from rating_core.ingest.common import (
    ID_HASH_SEED,
    IngestResult,
    UnreadableFileError,
    repeats,
)
from rating_core.ingest.pgn_files import file_stem
from rating_core.ingest.pgn_scan import (
    ABSENT,
    BADTAG_LINE,
    DATE_ROWS,
    DAY_BASE,
    FIRST_LINE,
    HAS_MT,
    HAS_QUESTION_MARK,
    HAS_RESULT,
    LAST_MOVE_PATTERN,
    OTHER_FORM,
    PLIES,
    SITE_URL,
    STRING_COLUMNS,
    TAGS,
    VALUE_MAX,
    Part,
    scan_chunks,
)
from rating_core.schemas import QUARANTINE_SCHEMA, RAW_GAMES_SCHEMA, conform
from rating_core.text import format_text

FINISHED_RESULTS = ("1-0", "0-1", "1/2-1/2")
TERMINATION_MAP = {
    "Normal": "normal",
    "Time forfeit": "timeout",
    "Abandoned": "abandon",
    "Rules infraction": "normal",
    "Unterminated": "unknown",
    **{t: t for t in ("normal", "resign", "timeout", "abandon", "abort", "bot_no_move", "expired")},
    "unknown": "unknown",
}
NO_FIDE_ID = ("", "0", "?", "-")
MISSING_PLAYER = ("", "?")
STANDARD_VARIANTS = ("", "standard", "chess", "classical", "normal")  # Variant tags of chess
START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"  # its first four fields
NOT_STANDARD = "the rating rules are for standard chess"


def _cut(expr: pl.Expr) -> pl.Expr:
    """A quarantine value no longer than VALUE_MAX characters."""
    return expr.str.slice(0, VALUE_MAX)


def _complete_date(tag: str) -> pl.Expr:
    """True where the date tag is present and has no `?`: from the scanner's code of its value
    (`_date_code`: a real date has no `?`, any other value is coded by whether it has one)."""
    code = pl.col(f"code_{tag}")
    return (code != ABSENT) & (code != HAS_QUESTION_MARK)


def _batch(part: Part, first_game: int, line_base: int) -> pa.RecordBatch:
    """One chunk's games as an Arrow batch without copying its strings: the game ordinal, line
    numbers made absolute (`line_base`: lines before the chunk), flags and STRING_COLUMNS."""
    info, views, valid, data, _, _ = part
    m = info.shape[1]

    def line(row: int) -> pa.Array:
        values = info[row]
        return pa.array(values + line_base, mask=values == 0)

    columns = {
        "game": pa.array(np.arange(first_game, first_game + m, dtype=np.int64)),
        "first_line": pa.array(info[FIRST_LINE] + line_base),
        "plies": pa.array(info[PLIES].astype(np.int32)),
        "has_result": pa.array(info[HAS_RESULT] == 1),
        "has_mt": pa.array(info[HAS_MT] == 1),
        "site_url": pa.array(info[SITE_URL] == 1),
        "bad_tag_line": line(BADTAG_LINE),
        **{f"code_{tag}": pa.array(info[row]) for tag, row in DATE_ROWS.items()},
    }
    chars = pa.py_buffer(data)
    for c, name in enumerate(STRING_COLUMNS):
        buffers = [pa.py_buffer(valid[c]), pa.py_buffer(views[c]), chars]
        columns[name] = pa.Array.from_buffers(pa.string_view(), m, buffers)
    return pa.RecordBatch.from_pydict(columns)


def games_frame(
    buf: np.ndarray, start: int, chunks: int, first_game: int = 1, line_base: int = 0
) -> tuple[pl.DataFrame, int]:
    """One row per game from the byte scan: first line, needed tags, plies and defects found.

    Also returns the line of the first stray text before the first game (0 when none), or -1
    when the buffer is not UTF-8. One Polars chunk per scan chunk. A window of a longer file
    passes the ordinal of its first game (`first_game`) and the lines before it (`line_base`).
    """
    frame, stray, _ = games_window(buf, start, chunks, first_game, line_base)
    return frame, stray


def games_window(
    buf: np.ndarray, start: int, chunks: int, first_game: int, line_base: int
) -> tuple[pl.DataFrame, int, int]:
    """`games_frame` of one window of a file, with the lines before the next window (the line
    base to pass it)."""
    parts = scan_chunks(buf, start, chunks)
    if not parts:
        return pl.DataFrame(), -1, line_base
    batches = []
    for part in parts:
        if part[3].shape[0] >= 1 << 31:  # only if a chunk could not be cut below CHUNK_MAX
            raise UnreadableFileError("a stretch of over 1 GiB without a game boundary")
        batches.append(_batch(part, first_game, line_base))
        first_game += part[0].shape[1]
        line_base += part[5] - 1
    games = pl.from_arrow(pa.Table.from_batches(batches), rechunk=False)
    assert isinstance(games, pl.DataFrame)
    return games, parts[0][4], line_base


def derive(
    games: pl.DataFrame, source_file: str, nul_lines: np.ndarray | None = None
) -> pl.DataFrame:
    """Map tags to RAW_GAMES_SCHEMA columns and name each game's first defect (`reason`).

    `nul_lines`: the lines of the file's NUL bytes (None: it has none), for the games whose
    needed tags hold one.
    """
    stem = file_stem(source_file)
    c = pl.col
    games = _with_nul_tags(games, nul_lines)
    site_is_url = c("site_url")  # the scanner matched URL_PATTERN and URL_ID_PATTERN
    gid = pl.coalesce(
        pl.when(c("GameId").is_not_null() & (c("GameId") != "")).then(c("GameId")), c("url_id")
    )
    if games.select(gid.null_count()).item():  # else the ordinal ids need not be built
        gid = pl.coalesce(gid, pl.lit(stem + "#") + c("game").cast(pl.String))
    dated = pl.coalesce(
        pl.when(_complete_date("UTCDate")).then(c("UTCDate")),
        pl.when(_complete_date("Date")).then(c("Date")),
        pl.when(_complete_date("EventDate")).then(c("EventDate")),
    )
    time = (
        pl.when(_complete_date("UTCDate") & c("UTCTime").is_not_null())
        .then(c("UTCTime"))
        .otherwise(pl.lit("00:00:00"))
    )
    event = pl.when(c("Event").is_in(["", "?"])).then(None).otherwise(c("Event"))
    site_part = pl.when(~site_is_url & c("Site").is_not_null() & ~c("Site").is_in(["", "?"]))
    tc = c("TimeControl")
    games = games.with_columns(
        gid.alias("game_id"),
        dated.alias("date_used"),
        time.alias("time_used"),
        event.alias("event"),
        *_played(games, dated, time),
    ).with_columns(
        pl.concat_str(
            c("event"), site_part.then(pl.lit(" | ") + c("Site")).otherwise(pl.lit(""))
        ).alias("tournament_id"),
        c("Round").str.extract(r"^\s*(\d+)", 1).cast(pl.Int32, strict=False).alias("round"),
        *_player("White", "white"),
        *_player("Black", "black"),
        c("Result").alias("result"),
        tc.alias("time_control"),
        (~c("event").str.contains("Casual", literal=True)).fill_null(True).alias("rated"),
        pl.when(tc == "-")
        .then(
            pl.when(c("event").str.contains("Correspondence", literal=True).fill_null(False))
            .then(pl.lit("correspondence"))
            .otherwise(pl.lit("unlimited"))
        )
        .otherwise(pl.lit("live"))
        .alias("kind"),
        pl.when(c("Termination").is_null())
        .then(pl.lit("normal"))
        .otherwise(c("Termination").replace_strict(TERMINATION_MAP, default="unknown"))
        .alias("termination"),
        c("WhiteElo").str.strip_chars().cast(pl.Int32, strict=False).alias("white_elo"),
        c("BlackElo").str.strip_chars().cast(pl.Int32, strict=False).alias("black_elo"),
        (c("WhiteTitle") == "BOT").fill_null(False).alias("white_is_bot"),
        (c("BlackTitle") == "BOT").fill_null(False).alias("black_is_bot"),
        pl.lit("pgn").alias("format"),
        pl.lit(source_file).alias("source_file"),
        c("first_line").alias("source_line"),
        _unrated_reason(games).alias("unrated_reason"),
    )
    return games.with_columns(_first_defect().alias(DEFECT))


def _unrated_reason(games: pl.DataFrame) -> pl.Expr:
    """Why a game is kept but not rated: a Variant other than standard chess, or a start from a
    set-up position (a FEN other than the initial position, or SetUp "1" without a FEN). Null
    without a test when no game of the file has one of those tags (a Lichess standard file)."""
    c = pl.col
    tags = ("Variant", "FEN", "SetUp")
    if games.select(pl.all_horizontal(c(t).null_count() == pl.len() for t in tags)).item():
        return pl.lit(None, pl.String)
    variant = c("Variant").str.strip_chars()
    fen = c("FEN").str.strip_chars()
    has_fen = fen.is_not_null() & (fen != "")
    return (
        pl.when(variant.is_not_null() & ~variant.str.to_lowercase().is_in(STANDARD_VARIANTS))
        .then(format_text("variant '{}': " + NOT_STANDARD, variant))
        .when(has_fen & ~fen.str.starts_with(START_FEN))
        .then(pl.lit("starts from a set-up position (FEN tag): " + NOT_STANDARD))
        .when(~has_fen & (c("SetUp").str.strip_chars() == "1"))
        .then(pl.lit("starts from a set-up position (SetUp tag): " + NOT_STANDARD))
        .otherwise(pl.lit(None, pl.String))
    )


def _with_nul_tags(games: pl.DataFrame, nul_lines: np.ndarray | None) -> pl.DataFrame:
    """`nul_tag`, `nul_value`, `nul_line`: the first needed tag of each game holding a NUL byte,
    its value (the NUL shown as `\\0`) and the line of the game's first NUL (null: none)."""
    if nul_lines is None or not games.height:
        return games.with_columns(
            nul_tag=pl.lit(None, pl.String),
            nul_value=pl.lit(None, pl.String),
            nul_line=pl.lit(None, pl.Int64),
        )
    c = pl.col
    has = [(t, c(t).str.contains("\x00", literal=True).fill_null(False)) for t in TAGS]
    nuls = pl.DataFrame({"nul_line": nul_lines.astype(np.int64)})
    return (
        games.with_columns(
            nul_tag=pl.coalesce([pl.when(h).then(pl.lit(t)) for t, h in has]),
            nul_value=pl.coalesce([pl.when(h).then(c(t)) for t, h in has]).str.replace_all(
                "\x00", "\\0", literal=True
            ),
        )
        .join_asof(nuls, left_on="first_line", right_on="nul_line", strategy="forward")
        .with_columns(nul_line=pl.when(c("nul_tag").is_not_null()).then(c("nul_line")))
    )


def _played(
    games: pl.DataFrame, dated: pl.Expr, time: pl.Expr, *, in_polars: bool = False
) -> list[pl.Expr]:
    """`date_parsed` and `played_at` of the chosen date (`dated`) and time (`time`) strings.

    From the scanner's codes when it vouched for every date and time tag of the file (real
    YYYY.MM.DD dates, HH:MM:SS times: the same values as Polars' parse, without its cost);
    else, or with `in_polars`, Polars parses the strings.
    """
    c = pl.col
    codes = [c(f"code_{tag}") for tag in DATE_ROWS]
    if not in_polars and games.height:
        in_polars = games.select(pl.any_horizontal([x == OTHER_FORM for x in codes]).any()).item()
    if in_polars or not games.height:
        if not games.height:
            date = pl.lit(None, pl.Date)
        else:
            date = dated.str.strptime(pl.Date, "%Y.%m.%d", strict=False, cache=False)
        played = (dated + " " + time).str.strptime(
            pl.Datetime("us"), "%Y.%m.%d %H:%M:%S", strict=False, cache=False
        )
    else:  # the same choice as `dated` and `time`: complete dates are the real ones here
        utc, day, event, clock = codes
        days = pl.coalesce(*(pl.when(x >= 0).then(x - DAY_BASE) for x in (utc, day, event)))
        seconds = pl.when((utc >= 0) & (clock >= 0)).then(clock).otherwise(0)
        date = days.cast(pl.Int32).cast(pl.Date)
        played = (days * 86_400_000_000 + seconds * 1_000_000).cast(pl.Datetime("us"))
    return [
        date.alias("date_parsed"),
        played.dt.replace_time_zone("UTC").alias("played_at"),
    ]


def _player(tag: str, side: str) -> list[pl.Expr]:
    """Id, name and id-from-name flag of one side: the FIDE id when present, else the name."""
    c = pl.col
    fide = c(f"{tag}FideId")
    has_fide = fide.is_not_null() & ~fide.str.strip_chars().is_in(NO_FIDE_ID)
    return [
        pl.when(has_fide).then(fide.str.strip_chars()).otherwise(c(tag)).alias(f"{side}_id"),
        c(tag).alias(f"{side}_name"),
        (~has_fide).alias(f"{side}_id_from_name"),
    ]


DEFECT = "q_check"
"""The column `derive` adds: which of `_checks` a game fails first (null: a good game)."""


@functools.cache
def _first_defect() -> pl.Expr:
    """The number of the first of `_checks` a game fails, null for a good game: only the
    conditions are computed for every game, the values and reasons for the rejected ones."""
    return pl.coalesce(
        [pl.when(cond).then(pl.lit(k, pl.Int8)) for k, (cond, _, _, _) in enumerate(_checks())]
    )


@functools.cache
def _defect() -> tuple[pl.Expr, ...]:
    """`q_line`, `q_value`, `q_reason` of each game's first defect (its `DEFECT`), null for a
    good game."""
    check = pl.col(DEFECT)
    parts = list(enumerate(_checks()))
    line = pl.coalesce([pl.when(check == k).then(v) for k, (_, v, _, _) in parts])
    value = pl.coalesce([pl.when(check == k).then(v) for k, (_, _, v, _) in parts])
    reason = pl.coalesce([pl.when(check == k).then(r) for k, (_, _, _, r) in parts])
    return line.alias("q_line"), value.alias("q_value"), reason.alias("q_reason")


@functools.cache
def _defect_inputs() -> frozenset[str]:
    """The columns `_defect` reads, and the game id."""
    return frozenset({name for expr in _defect() for name in expr.meta.root_names()} | {"game_id"})


def _checks() -> list[tuple[pl.Expr, pl.Expr, pl.Expr, pl.Expr]]:
    """Each defect a game can have, in the order they are named: (condition, line, value,
    reason)."""
    c = pl.col
    missing = lambda tag: c(tag).is_null() | c(tag).is_in(MISSING_PLAYER)  # noqa: E731
    last = c("mt_last")
    not_result = last.is_not_null() & ~last.str.contains(LAST_MOVE_PATTERN)
    checks: list[tuple[pl.Expr, pl.Expr, pl.Expr, pl.Expr]] = [
        (
            c("nul_tag").is_not_null(),
            c("nul_line"),
            _cut(c("nul_value")),
            format_text(
                "a NUL byte is in tag {} (shown as \\0): the file is damaged there", c("nul_tag")
            ),
        ),
        (
            c("bad_tag_line").is_not_null(),
            c("bad_tag_line"),
            _cut(c("bad_tag")),
            pl.lit('malformed tag line (expected [Name "value"])'),
        ),
        (
            (~c("has_mt") | ~c("has_result")) & not_result,
            c("first_line"),
            last,
            format_text("'{}' is not a result (a movetext ends with 1-0, 0-1, 1/2-1/2 or *)", last),
        ),
        (
            ~c("has_mt") | ~c("has_result"),
            c("first_line"),
            pl.coalesce(c("mt"), pl.lit("")),
            pl.lit("game has tags but its movetext is missing or has no result (truncated?)"),
        ),
        (missing("White"), c("first_line"), c("White"), pl.lit("White player is missing")),
        (missing("Black"), c("first_line"), c("Black"), pl.lit("Black player is missing")),
        (
            ~c("Result").is_in(FINISHED_RESULTS).fill_null(False),
            c("first_line"),
            c("Result"),
            format_text("result '{}' is not a finished result", c("Result").fill_null("")),
        ),
        (
            c("date_used").is_null(),
            c("first_line"),
            pl.coalesce(c("UTCDate"), c("Date"), c("EventDate")),
            format_text(
                "date '{}' is incomplete",
                pl.coalesce(c("UTCDate"), c("Date"), c("EventDate"), pl.lit("")),
            ),
        ),
        (
            c("date_parsed").is_null(),
            c("first_line"),
            c("date_used"),
            format_text("date '{}' is not a real date", c("date_used")),
        ),
        (
            c("played_at").is_null(),
            c("first_line"),
            c("time_used"),
            format_text("time '{}' is not a valid time of day", c("time_used")),
        ),
    ]
    return checks


def split(
    games: pl.DataFrame, source_file: str, earlier: EarlierLines | None = None
) -> IngestResult:
    """Good rows (conformed) and quarantine rows, with duplicate game ids quarantined too (those
    `earlier` windows of the file hold as well, naming the file's first record: `EarlierLines`;
    none when `earlier.keep`)."""
    kept = games.get_column(DEFECT).is_null()
    named = _defect()
    read = _defect_inputs()
    bad = games.select(name for name in games.columns if name in read).filter(~kept)
    bad = bad.select(*named, "game_id").select("q_line", "game_id", "q_value", "q_reason")
    good = games.select(c for c in RAW_GAMES_SCHEMA if c in games.columns)
    if bad.height:  # only the kept columns are filtered, not every tag the scanner read
        good = good.filter(kept)
    good, dup = repeated_ids(conform(good, RAW_GAMES_SCHEMA), earlier)
    quarantine = (
        pl.concat([bad, dup], how="vertical_relaxed")
        .sort("q_line")
        .select(
            pl.lit(source_file).alias("source_file"),
            pl.col("q_line").alias("line"),
            pl.col("game_id").alias("record"),
            pl.col("q_value").cast(pl.String).alias("value"),
            pl.col("q_reason").alias("reason"),
        )
    )
    return IngestResult(
        rows=good,
        quarantine=conform(quarantine, QUARANTINE_SCHEMA),
    )


_FIRST_LINES_SCHEMA = {"game_id": pl.String, "first_line": pl.Int64}


@dataclass
class EarlierLines:
    """What a file's windows pass on to each other about game ids seen twice, so that every
    later record of an id names the file's first record, as the whole file's reading names it.

    `repeated`: the hashes of the ids repeated across the file's windows (found by a first
    reading); `lines` gathers, window by window, the line of the first good record of each such
    id (a few rows: duplicates are mistakes; never the file's every id). `keep`: leave every
    repeat in the rows, for a caller that holds the whole file to find (`pgn.read_pgn`)."""

    repeated: frozenset[int] = frozenset()
    keep: bool = False
    lines: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=_FIRST_LINES_SCHEMA))
    _wanted: pl.Series | None = field(default=None, repr=False)

    def wanted(self) -> pl.Series:
        """`repeated` as one list value, for `is_in`."""
        if self._wanted is None:
            self._wanted = pl.Series(sorted(self.repeated), dtype=pl.UInt64).implode()
        return self._wanted


def repeated_ids(
    good: pl.DataFrame, earlier: EarlierLines | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The rows of one file (or window of it) without the later records of a game id seen twice,
    and those records as (q_line, game_id, q_value, q_reason) naming the line of the first: in
    an earlier window when `earlier` knows one (then every record of the id here is a later
    one), else the first here. `earlier` learns the ids repeated across windows whose first
    record is here."""
    dup = pl.DataFrame(
        schema={
            "q_line": pl.Int64,
            "game_id": pl.String,
            "q_value": pl.String,
            "q_reason": pl.String,
        }
    )
    if earlier is not None and earlier.keep:
        return good, dup
    first = repeats(good.get_column("game_id"))
    if earlier is not None and earlier.repeated:
        return _repeated_across(good, first, earlier, dup)
    if first is None:  # the common case, no duplicate, skips the grouping
        return good, dup
    first_line = pl.col("source_line").first().over("game_id")
    later = good.with_columns(first_line.alias("dup_of")).filter(~first)
    return good.filter(first), _dup_rows(later)


def _repeated_across(
    good: pl.DataFrame, first: pl.Series | None, earlier: EarlierLines, none: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """`repeated_ids` of a window of a file whose ids `earlier.repeated` recur across windows."""
    lines = earlier.lines
    across = pl.col("game_id").hash(ID_HASH_SEED).is_in(earlier.wanted())
    before = pl.col("game_id").replace_strict(
        lines.get_column("game_id"), lines.get_column("first_line"), default=None
    )
    here = pl.lit(True) if first is None else pl.Series("_first", first)
    marked = good.with_columns(
        across.alias("_across"),
        pl.when(across).then(before).cast(pl.Int64).alias("_before"),
        here.alias("_here"),
    )
    firsts = marked.filter(pl.col("_across") & pl.col("_before").is_null() & pl.col("_here"))
    if firsts.height:
        found = firsts.select("game_id", first_line=pl.col("source_line").cast(pl.Int64))
        earlier.lines = pl.concat([lines, found])
    kept = pl.col("_here") & pl.col("_before").is_null()
    if first is None and not marked.get_column("_before").is_not_null().any():
        return good, none
    dup_of = pl.coalesce("_before", pl.col("source_line").first().over("game_id"))
    later = marked.with_columns(dup_of.alias("dup_of")).filter(~kept)
    return good.filter(marked.select(kept).to_series()), _dup_rows(later)


def _dup_rows(later: pl.DataFrame) -> pl.DataFrame:
    """The later records of repeated ids (with `dup_of`, the line of the first) as
    (q_line, game_id, q_value, q_reason)."""
    return later.select(
        pl.col("source_line").cast(pl.Int64).alias("q_line"),
        "game_id",
        pl.col("game_id").alias("q_value"),
        format_text(
            "game id '{}' already appears at line {}", pl.col("game_id"), pl.col("dup_of")
        ).alias("q_reason"),
    )
