"""The python-chess reference reader: slow, obviously correct, game by game; the oracle of the
differential tests of `read_pgn`.

Each game is read by `chess.pgn.read_game` with `MainLineReader`, a visitor that keeps the
headers (with python-chess's seven-tag defaults, as a `Game` has) and counts the main-line
moves, skipping variations instead of building a tree of them.
"""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import polars as pl

from rating_core.ingest.pgn_files import decode, file_stem, read_bytes
from rating_core.ingest.pgn_frames import (
    FINISHED_RESULTS,
    MISSING_PLAYER,
    NO_FIDE_ID,
    NOT_STANDARD,
    STANDARD_VARIANTS,
    START_FEN,
    TERMINATION_MAP,
)
from rating_core.ingest.pgn_scan import TAGS, URL_ID_PATTERN, URL_PATTERN
from rating_core.schemas import RAW_GAMES_SCHEMA, conform


class MainLineReader(chess.pgn.BaseVisitor[tuple[dict[str, str], int]]):
    """A `read_game` visitor giving a game's headers and its number of main-line plies.

    Behaves as python-chess's `GameBuilder` for what the rows need: the headers start from the
    seven-tag defaults, a movetext result fills a `*` Result, an illegal move ends the main
    line (the error is kept, not raised); variations are skipped, never parsed.
    """

    def begin_game(self) -> None:
        """Start a game: no headers, no plies, no errors yet."""
        self.headers = chess.pgn.Headers()
        self.plies = 0
        self.errors: list[Exception] = []

    def begin_headers(self) -> chess.pgn.Headers:
        """The headers read_game fills (managed by it, as `GameBuilder`'s are)."""
        return self.headers

    def visit_header(self, tagname: str, tagvalue: str) -> None:
        """Keep a tag (a repeated tag keeps its last value, as in a `Game`)."""
        self.headers[tagname] = tagvalue

    def begin_variation(self) -> chess.pgn.SkipType:
        """Skip every variation: only the main line is counted."""
        return chess.pgn.SKIP

    def visit_move(self, board: chess.Board, move: chess.Move) -> None:
        """Count one main-line ply (variations are skipped, so every move seen is one)."""
        self.plies += 1

    def visit_result(self, result: str) -> None:
        """A result in the movetext fills a missing (`*`) Result tag, as `GameBuilder` does."""
        if self.headers.get("Result", "*") == "*":
            self.headers["Result"] = result

    def handle_error(self, error: Exception) -> None:
        """Keep the error (an illegal move: read_game skips the rest of the main line)."""
        self.errors.append(error)

    def result(self) -> tuple[dict[str, str], int]:
        """The game's headers as a plain dict and its main-line plies."""
        return dict(self.headers.items()), self.plies


def _ref_complete(value: str | None) -> bool:
    """True when a date tag is present and has no `?` (same rule as the fast path)."""
    return value is not None and "?" not in value


def _ref_row(
    headers: dict[str, str], plies: int, ordinal: int, line: int, stem: str, source: str
) -> dict[str, Any] | None:
    """One RAW_GAMES_SCHEMA row from python-chess headers, or None when the game is rejected."""
    h = headers
    white, black, result = h.get("White"), h.get("Black"), h.get("Result")
    if white in (None, *MISSING_PLAYER) or black in (None, *MISSING_PLAYER):
        return None
    if result not in FINISHED_RESULTS:
        return None
    if any("\0" in h[tag] for tag in TAGS if tag in h):
        return None
    utc_date = h.get("UTCDate")
    if _ref_complete(utc_date):
        date, time = utc_date, h.get("UTCTime") or "00:00:00"
        if "UTCTime" not in h:
            time = "00:00:00"
    elif _ref_complete(h.get("Date")):
        date, time = h["Date"], "00:00:00"
    elif _ref_complete(h.get("EventDate")):
        date, time = h["EventDate"], "00:00:00"
    else:
        return None
    try:
        played = datetime.strptime(f"{date} {time}", "%Y.%m.%d %H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return None
    site = h.get("Site")
    is_url = site is not None and re.match(URL_PATTERN, site) is not None
    game_id = h.get("GameId") or None
    if game_id is None and is_url:
        m = re.match(URL_ID_PATTERN, site or "")
        game_id = m.group(1) if m else None
    if game_id is None:
        game_id = f"{stem}#{ordinal}"
    event = h.get("Event")
    event = None if event in ("", "?") else event
    tournament = None
    if event is not None:
        tournament = event + (f" | {site}" if site not in (None, "", "?") and not is_url else "")
    rnd = re.match(r"^\s*(\d+)", h.get("Round", ""))
    tc = h.get("TimeControl")
    kind = "live"
    if tc == "-":
        kind = "correspondence" if event and "Correspondence" in event else "unlimited"
    term = h.get("Termination")

    def elo(v: str | None) -> int | None:
        try:
            return int(v.strip()) if v is not None else None
        except ValueError:
            return None

    def side(tag: str) -> tuple[str, bool]:
        fide = h.get(f"{tag}FideId")
        if fide is not None and fide.strip() not in NO_FIDE_ID:
            return fide.strip(), False
        return h[tag], True

    (wid, wfrom), (bid, bfrom) = side("White"), side("Black")
    return {
        "game_id": game_id,
        "source_file": source,
        "source_line": line,
        "format": "pgn",
        "tournament_id": tournament,
        "round": int(rnd.group(1)) if rnd else None,
        "played_at": played,
        "white_id": wid,
        "black_id": bid,
        "white_name": white,
        "black_name": black,
        "white_id_from_name": wfrom,
        "black_id_from_name": bfrom,
        "result": result,
        "time_control": tc,
        "rated": not (event is not None and "Casual" in event),
        "kind": kind,
        "plies": plies,
        "termination": "normal" if term is None else TERMINATION_MAP.get(term, "unknown"),
        "white_elo": elo(h.get("WhiteElo")),
        "black_elo": elo(h.get("BlackElo")),
        "white_is_bot": h.get("WhiteTitle") == "BOT",
        "black_is_bot": h.get("BlackTitle") == "BOT",
        "event": event,
        "unrated_reason": _ref_unrated_reason(h),
    }


def _ref_unrated_reason(h: dict[str, str]) -> str | None:
    """`_unrated_reason` of one game's headers, in plain Python."""
    variant = h.get("Variant", "").strip()
    fen = h.get("FEN", "").strip()
    if variant.lower() not in STANDARD_VARIANTS:
        return f"variant '{variant}': {NOT_STANDARD}"
    if fen and not fen.startswith(START_FEN):
        return f"starts from a set-up position (FEN tag): {NOT_STANDARD}"
    if not fen and h.get("SetUp", "").strip() == "1":
        return f"starts from a set-up position (SetUp tag): {NOT_STANDARD}"
    return None


class _LineCounter:
    """A text stream wrapper that counts lines read, so each game's first tag line is known."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.line = 0

    def readline(self) -> str:
        """Read one line and count it."""
        s = self.handle.readline()
        if s:
            self.line += 1
        return s


def read_pgn_reference(path: Path, source_file: str | None = None) -> pl.DataFrame:
    """Slow, obviously-correct reader built on `chess.pgn.read_game` (`MainLineReader`).

    Applies the same acceptance rules as `read_pgn` (missing players, unfinished result, bad
    date, duplicate id) and returns the accepted games as RAW_GAMES_SCHEMA rows.
    """
    path = Path(path)
    source = str(path) if source_file is None else source_file
    text, _ = decode(read_bytes(path))
    stream = _LineCounter(io.StringIO(text))
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    ordinal = 0
    pending: str | None = None
    while True:
        # find the first tag line of the next game to record its line number
        line = pending if pending is not None else stream.readline()
        pending = None
        while line and not (line.startswith("[") and not line.startswith("[%")):
            line = stream.readline()
        if not line:
            break
        first_line = stream.line
        ordinal += 1
        replay = _Prefixed(line, stream)
        game = chess.pgn.read_game(replay, Visitor=MainLineReader)  # type: ignore[call-overload]
        if game is None:
            break
        headers, plies = game
        row = _ref_row(headers, plies, ordinal, first_line, file_stem(source), source)
        if row is not None and row["game_id"] not in seen:
            seen.add(row["game_id"])
            rows.append(row)
    if not rows:
        return conform(pl.DataFrame(schema=RAW_GAMES_SCHEMA), RAW_GAMES_SCHEMA)
    frame = pl.DataFrame(rows, schema_overrides={"played_at": pl.Datetime("us", "UTC")})
    return conform(frame, RAW_GAMES_SCHEMA)


class _Prefixed:
    """A stream that yields one already-read line first, then continues from another stream."""

    def __init__(self, first: str, rest: _LineCounter) -> None:
        self.first: str | None = first
        self.rest = rest

    def readline(self) -> str:
        """The pushed-back line, then the underlying stream's lines."""
        if self.first is not None:
            s, self.first = self.first, None
            return s
        return self.rest.readline()
