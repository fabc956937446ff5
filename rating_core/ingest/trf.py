"""Reader for FIDE tournament report files (TRF16 and TRF-2026 `001` player records).

A TRF lists each game twice, once in each player's record; the reader pairs the two records,
checks that they agree, and emits every game once (DESIGN §2). TRF files are small, so a plain
line loop is used; the output is conformed to RAW_GAMES_SCHEMA like every other reader's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl

from rating_core.ingest.common import (
    IngestResult,
    UnreadableFileError,
    decode_noted,
    quarantine_rows,
)
from rating_core.schemas import RAW_GAMES_SCHEMA, RESULT_BY_SCORE, TableSchema, conform, empty
from rating_core.schemas import TRF_PLAYERS_SCHEMA as TRF_PLAYERS_SCHEMA  # re-exported

__all__ = ["TRF_PLAYERS_SCHEMA", "TrfResult", "parse_trf_date", "read_trf"]


@dataclass(frozen=True)
class TrfResult:
    """The games of one TRF file (with its quarantine) and the players of its `001` records."""

    games: IngestResult
    players: pl.DataFrame


# --- dates -------------------------------------------------------------------------------------

_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    )
}
_YMD = re.compile(r"^(\d{4})\s*[-/.]\s*(\d{1,2})\s*[-/.]\s*(\d{1,2})$")
_DMY = re.compile(r"^(\d{1,2})\s*[-/.]\s*(\d{1,2})\s*[-/.]\s*(\d{4})$")
_YY = re.compile(r"^(\d{2})\s*[-/.]\s*(\d{1,2})\s*[-/.]\s*(\d{1,2})$")
_MON_D_Y = re.compile(r"^([A-Za-z]{3})[a-z]*\.?\s+(\d{1,2}),?\s+(\d{4})$")
_D_MON_Y = re.compile(r"^(\d{1,2})\.?\s+([A-Za-z]{3})[a-z]*\.?,?\s+(\d{4})$")


def _safe_date(year: int, month: int, day: int) -> date | None:
    """The date, or None when it does not exist (2025-02-30)."""
    try:
        return date(year, month, day)
    except ValueError:
        return None


def parse_trf_date(text: str) -> date | None:
    """A TRF date in any common spelling, or None when it is empty or not a real date.

    Accepts `2005/07/31`, `2005-07-31`, `2005.07.31`, `31. 07. 2005` (day first), `05/07/31`
    (tag 132's YY/MM/DD; years 00-69 are 20xx), `May 29, 2020` and `29 May 2020`.
    """
    s = text.strip()
    if not s:
        return None
    if m := _YMD.match(s):
        return _safe_date(int(m[1]), int(m[2]), int(m[3]))
    if m := _DMY.match(s):
        return _safe_date(int(m[3]), int(m[2]), int(m[1]))
    if m := _YY.match(s):
        yy = int(m[1])
        return _safe_date(2000 + yy if yy < 70 else 1900 + yy, int(m[2]), int(m[3]))
    if (m := _MON_D_Y.match(s)) and m[1].lower() in _MONTHS:
        return _safe_date(int(m[3]), _MONTHS[m[1].lower()], int(m[2]))
    if (m := _D_MON_Y.match(s)) and m[2].lower() in _MONTHS:
        return _safe_date(int(m[3]), _MONTHS[m[2].lower()], int(m[1]))
    return None


# --- records -------------------------------------------------------------------------------------

_FIRST_SLOT = 91  # 0-based column of round 1 (position 92)
_SLOT = 10
_PLAYED = {"1": 1.0, "=": 0.5, "0": 0.0, "W": 1.0, "D": 0.5, "L": 0.0}
_UNRATED_PLAYED = {"W", "D", "L"}  # games that lasted less than one move (TRF: not rated)
_FORFEIT = {"+", "-"}
_BYE_POINTS = {
    "F": 1.0,
    "U": 1.0,
    "H": 0.5,
    "Z": 0.0,
    "+": 1.0,
    "-": 0.0,
    "1": 1.0,
    "W": 1.0,
    "=": 0.5,
    "D": 0.5,
    "0": 0.0,
    "L": 0.0,
}
_COMPLEMENT = {
    "1": "0",
    "0": "1",
    "=": "=",
    "W": "L",
    "L": "W",
    "D": "D",
    "+": "-",
    "-": "+",
}


@dataclass
class _Player:
    """A valid `001` record: identity and rating of one start rank."""

    rank: int
    line: int
    player_id: str
    name: str | None
    fide_id: str | None
    federation: str | None
    sex: str | None
    birth_year: int | None
    title: str | None
    rating: int | None
    from_name: bool


@dataclass
class _Slot:
    """One round slot of a player's record: opponent, colour and result code."""

    rank: int
    round: int
    opponent: int  # 0 for none
    colour: str  # "w", "b" or "-"
    code: str  # upper-cased result code
    line: int


def _field(line: str, start: int, end: int) -> str:
    """The stripped text between 0-based `start` and `end` (blank when the line is shorter)."""
    return line[start:end].strip()


# The fixed fields of a `001` record (1-based columns, TRF16 and TRF26 alike), in line order. Every
# record carries them up to the points (columns 81-84); the rank (86-89) is often left blank.
_RECORD_FIELDS: tuple[tuple[str, int, int], ...] = (
    ("start rank", 5, 8),
    ("sex", 10, 10),
    ("title", 11, 13),
    ("name", 15, 47),
    ("rating", 49, 52),
    ("federation", 54, 56),
    ("FIDE id", 58, 68),
    ("birth date", 70, 79),
    ("points", 81, 84),
)
_RECORD_END = _RECORD_FIELDS[-1][2]  # 84: a shorter record lost fields it must hold


def _cut_short_reason(line: str) -> str | None:
    """Why a `001` record ends before its points column (a cut line), or None when it is whole.

    A cut record cannot be trusted: a cut rating or FIDE id reads as another number (a different
    player, an invented rating), so the record is quarantined rather than read from what is left.
    """
    end = len(line.rstrip())
    if end >= _RECORD_END:
        return None
    where = next(
        (
            f"in the {name} (columns {a}-{b})" if a != b else f"in the {name} (column {a})"
            for name, a, b in _RECORD_FIELDS
            if a <= end <= b
        ),
        None,
    )
    if where is None:
        after = [name for name, _, b in _RECORD_FIELDS if b < end][-1]
        where = f"after the {after}"
    reason = (
        f"player record is cut short: it ends at column {end}, {where}, but a 001 record holds "
        f"every field up to the points (columns 81-{_RECORD_END})"
    )
    missing = [name for name, start, _ in _RECORD_FIELDS if start > end]
    return f"{reason}; missing: {', '.join(missing)}" if missing else reason


def _quarantine(src: str, line: int, record: str | None, value: str | None, reason: str) -> dict:
    """One quarantine record in the shape `quarantine_rows` takes."""
    return {"source_file": src, "line": line, "record": record, "value": value, "reason": reason}


def _parse_player(
    line: str, lineno: int, src: str
) -> tuple[_Player | None, list[_Slot], list[dict]]:
    """One `001` record: the player, their round slots, and quarantine rows for bad slots."""
    problems: list[dict] = []
    rank_text = _field(line, 4, 8)
    if not rank_text.isdigit() or int(rank_text) == 0:
        reason = (
            f"start rank '{rank_text}' in columns 5-8 of the 001 record is not a positive number"
        )
        return None, [], [_quarantine(src, lineno, None, rank_text, reason)]
    rank = int(rank_text)
    name = _field(line, 14, 47) or None
    rating_text = _field(line, 48, 52)
    if rating_text and not rating_text.isdigit():
        reason = f"rating '{rating_text}' in columns 49-52 of player {rank} is not a number"
        return None, [], [_quarantine(src, lineno, f"rank {rank}", rating_text, reason)]
    fide_text = _field(line, 57, 68)
    if fide_text and not fide_text.isdigit():
        reason = f"FIDE id '{fide_text}' in columns 58-68 of player {rank} is not a number"
        return None, [], [_quarantine(src, lineno, f"rank {rank}", fide_text, reason)]
    fide_id = str(int(fide_text)) if fide_text and int(fide_text) > 0 else None
    if fide_id is None and name is None:
        reason = f"player {rank} has neither a FIDE id nor a name"
        return None, [], [_quarantine(src, lineno, f"rank {rank}", None, reason)]
    birth = re.search(r"\d{4}", _field(line, 69, 79))
    player = _Player(
        rank=rank,
        line=lineno,
        player_id=fide_id or str(name),
        name=name,
        fide_id=fide_id,
        federation=_field(line, 53, 56) or None,
        sex=_field(line, 9, 10) or None,
        birth_year=int(birth[0]) if birth else None,
        title=_field(line, 10, 13) or None,
        rating=int(rating_text) if rating_text and int(rating_text) > 0 else None,
        from_name=fide_id is None,
    )
    slots: list[_Slot] = []
    n_rounds = max(0, (len(line.rstrip()) - _FIRST_SLOT + _SLOT - 1) // _SLOT)
    for k in range(n_rounds):
        rnd = k + 1
        start = _FIRST_SLOT + k * _SLOT
        raw = line[start : start + _SLOT]
        text = raw.ljust(_SLOT)
        opp_text, colour, code = text[0:4].strip(), text[5].strip().lower(), text[7].upper()
        gaps = text[4] + text[6] + text[8:]
        record = f"rank {rank} round {rnd}"
        if not raw.strip():
            continue  # not paired
        bad = (
            gaps.strip()
            or (opp_text and not opp_text.isdigit())
            or colour not in ("", "w", "b", "-")
            or code not in {*_PLAYED, *_FORFEIT, *"HFUZ", " "}
        )
        if bad:
            reason = (
                f"round {rnd} slot (columns {start + 1}-{start + 8}) of player {rank} is not "
                "'opponent colour result'"
            )
            problems.append(_quarantine(src, lineno, record, raw.rstrip(), reason))
            continue
        opponent = int(opp_text) if opp_text else 0
        if code == " ":
            if opponent:
                reason = f"player {rank} has no result against {opponent} in round {rnd}"
                problems.append(_quarantine(src, lineno, record, raw.rstrip(), reason))
            continue
        slots.append(_Slot(rank, rnd, opponent, colour or "-", code, lineno))
    return player, slots, problems


def _result(white_code: str, black_code: str | None) -> str:
    """The recorded result from white's code (and black's, to tell a double forfeit)."""
    if white_code == "+":
        return "+-"
    if white_code == "-":
        return "--" if black_code == "-" else "-+"
    return RESULT_BY_SCORE[_PLAYED[white_code]]


@dataclass(frozen=True)
class _Header:
    """Tournament tags that every game of the file carries."""

    tournament_id: str
    start: date | None
    end: date | None
    time_control: str | None
    allotted: str | None
    round_dates: dict[int, date]


def read_trf(path: Path, source_file: str | None = None) -> TrfResult:
    """Read a TRF16 or TRF-2026 file into RAW_GAMES_SCHEMA rows (format `trf`) and its players.

    Each game is emitted once, from the white player's record (or the only record that exists);
    byes (H, F, U, Z, or a `0000` opponent) become result `bye` with the code in `extra`. Records
    that contradict each other, malformed slots, unknown opponents and `001` records cut short
    (with the games of their players) are quarantined. `source_file` is the inbox-relative name
    used in provenance and game ids (default: the path, and the file name in the ids).
    """
    src = str(path) if source_file is None else source_file
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise UnreadableFileError(f"{src}: cannot be read ({exc.strerror or exc})") from exc
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if not raw.strip():
        raise UnreadableFileError(f"{src}: the file is empty")
    text, notes = decode_noted(raw, src)  # arbiters' programs often write Windows-1252
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")

    quarantine: list[dict] = []
    players: dict[int, _Player] = {}
    slots: list[_Slot] = []
    bad_ranks: dict[int, str] = {}  # start rank -> why its record was quarantined (for its games)
    first_lines: dict[int, int] = {}  # start rank -> line of its first 001 record
    tags: dict[str, tuple[int, str]] = {}
    round_dates: dict[int, date] = {}
    for lineno, line in enumerate(lines, start=1):
        tag = line[:3]
        if tag == "001":
            player, player_slots, problems = _parse_player(line, lineno, src)
            quarantine.extend(problems)
            if player is None:
                rank_text = _field(line, 4, 8)
                if rank_text.isdigit() and int(rank_text) not in first_lines:
                    first_lines[int(rank_text)] = lineno
                    bad_ranks[int(rank_text)] = f"has a quarantined 001 record (line {lineno})"
                continue
            record = f"rank {player.rank}"
            if player.rank in first_lines:
                first = first_lines[player.rank]
                reason = f"start rank {player.rank} appears again (first on line {first})"
                quarantine.append(_quarantine(src, lineno, record, None, reason))
                continue
            first_lines[player.rank] = lineno
            if (cut := _cut_short_reason(line)) is not None:
                quarantine.append(_quarantine(src, lineno, record, line.rstrip(), cut))
                bad_ranks[player.rank] = f"has a player record cut short (line {lineno})"
                continue
            players[player.rank] = player
            slots.extend(player_slots)
        elif tag == "132":
            for k in range(max(0, (len(line) - _FIRST_SLOT + _SLOT - 1) // _SLOT)):
                cell = line[_FIRST_SLOT + k * _SLOT : _FIRST_SLOT + (k + 1) * _SLOT].strip()
                if not cell:
                    continue
                day = parse_trf_date(cell)
                if day is None:
                    reason = f"tag 132 date of round {k + 1} '{cell}' is not a date"
                    quarantine.append(_quarantine(src, lineno, "132", cell, reason))
                else:
                    round_dates[k + 1] = day
        elif tag in ("012", "042", "052", "122", "222") and tag not in tags:
            tags[tag] = (lineno, line[4:].strip())

    if not players and not quarantine:
        raise UnreadableFileError(f"{src}: no player records (001 lines); not a TRF file")

    dates: dict[str, date | None] = {}
    for tag, label in (("042", "start"), ("052", "end")):
        lineno, value = tags.get(tag, (0, ""))
        dates[tag] = parse_trf_date(value)
        if value and dates[tag] is None:
            reason = f"tag {tag} {label} date '{value}' is not a date"
            quarantine.append(_quarantine(src, lineno, tag, value, reason))
    header = _Header(
        tournament_id=tags.get("012", (0, ""))[1] or Path(src).stem,
        start=dates["042"],
        end=dates["052"],
        time_control=tags.get("222", (0, ""))[1] or None,
        allotted=tags.get("122", (0, ""))[1] or None,
        round_dates=round_dates,
    )
    file_key = src if source_file is not None else Path(path).name
    rows, problems = _pair_games(header, players, slots, bad_ranks, src, file_key)
    quarantine.extend(problems)

    games = (
        conform(pl.DataFrame(rows, schema=_ROW_SCHEMA), RAW_GAMES_SCHEMA)
        if rows
        else empty(RAW_GAMES_SCHEMA)
    )
    player_frame = pl.DataFrame(
        [
            {
                "player_id": p.player_id,
                "name": p.name,
                "fide_id": p.fide_id,
                "federation": p.federation,
                "sex": p.sex,
                "birth_year": p.birth_year,
                "title": p.title,
                "rating": p.rating,
                "start_rank": p.rank,
            }
            for p in sorted(players.values(), key=lambda p: p.rank)
        ],
        schema=TRF_PLAYERS_SCHEMA,
    )
    result = IngestResult(
        rows=games.sort("source_line", "game_id"),
        quarantine=quarantine_rows(
            sorted(quarantine, key=lambda q: (q["line"], q["record"] or ""))
        ),
        notes=notes,
    )
    return TrfResult(games=result, players=player_frame)


_ROW_SCHEMA: TableSchema = {
    "game_id": pl.String,
    "source_file": pl.String,
    "source_line": pl.Int64,
    "format": pl.String,
    "tournament_id": pl.String,
    "tournament_end": pl.Date,
    "round": pl.Int32,
    "played_at": pl.Datetime("us", "UTC"),
    "white_id": pl.String,
    "black_id": pl.String,
    "white_name": pl.String,
    "black_name": pl.String,
    "white_id_from_name": pl.Boolean,
    "black_id_from_name": pl.Boolean,
    "result": pl.String,
    "time_control": pl.String,
    "rated": pl.Boolean,
    "kind": pl.String,
    "termination": pl.String,
    "white_elo": pl.Int32,
    "black_elo": pl.Int32,
    "white_is_bot": pl.Boolean,
    "black_is_bot": pl.Boolean,
    "extra": pl.String,
}


def _round_time(header: _Header, rnd: int) -> datetime | None:
    """00:00 UTC of the round's date (tag 132), else of the end (052) or start (042) date."""
    day = header.round_dates.get(rnd) or header.end or header.start
    return None if day is None else datetime(day.year, day.month, day.day, tzinfo=UTC)


def _row(
    header: _Header,
    src: str,
    file_key: str,
    slot: _Slot,
    white: _Player,
    black: _Player | None,
    result: str,
    extra: dict,
) -> dict:
    """One RAW_GAMES row for a game (or a bye when `black` is None), seen from white's side.

    The game id is `<file>:<tournament>:r<round>:<white rank>-<black rank or bye>`: the file part
    keeps two reports of the same tournament name (tag 012) apart, and the id stays the same from
    run to run as long as the file keeps its place in the inbox.
    """
    tid = header.tournament_id
    pairing = f"{white.rank}-bye" if black is None else f"{white.rank}-{black.rank}"
    game_id = f"{file_key}:{tid}:r{slot.round}:{pairing}"
    if header.allotted:
        extra = {**extra, "tag_122": header.allotted}
    return {
        "game_id": game_id,
        "source_file": src,
        "source_line": slot.line,
        "format": "trf",
        "tournament_id": tid,
        "tournament_end": header.end,
        "round": slot.round,
        "played_at": _round_time(header, slot.round),
        "white_id": white.player_id,
        "black_id": None if black is None else black.player_id,
        "white_name": white.name,
        "black_name": None if black is None else black.name,
        "white_id_from_name": white.from_name,
        "black_id_from_name": None if black is None else black.from_name,
        "result": result,
        "time_control": header.time_control,
        "rated": extra.get("trf_code") not in _UNRATED_PLAYED,
        "kind": "otb",
        "termination": "unknown",
        "white_elo": white.rating,
        "black_elo": None if black is None else black.rating,
        "white_is_bot": False,
        "black_is_bot": False if black is not None else None,
        "extra": json.dumps(extra, sort_keys=True) if extra else None,
    }


def _pair_games(
    header: _Header,
    players: dict[int, _Player],
    slots: list[_Slot],
    bad_ranks: dict[int, str],
    src: str,
    file_key: str,
) -> tuple[list[dict], list[dict]]:
    """Turn round slots into one row per game or bye, quarantining what does not add up.

    `bad_ranks` maps the start ranks whose `001` record was quarantined to the reason's wording;
    their games are quarantined too, pointing at that record. `file_key` prefixes the game ids.
    """
    rows: list[dict] = []
    problems: list[dict] = []
    by_key = {(s.rank, s.round): s for s in slots}
    done: set[tuple[int, int]] = set()  # (rank, round) slots already used
    for slot in slots:
        if (slot.rank, slot.round) in done:
            continue
        me = players[slot.rank]
        record = f"rank {slot.rank} round {slot.round}"
        value = f"{slot.opponent:>4} {slot.colour} {slot.code}"
        if _round_time(header, slot.round) is None:
            reason = f"no date for round {slot.round}: tags 132, 052 and 042 give none"
            problems.append(_quarantine(src, slot.line, record, value, reason))
            continue
        if slot.opponent == 0 or slot.code in "HFUZ":
            if slot.opponent != 0:
                reason = (
                    f"bye code '{slot.code}' in round {slot.round} names opponent {slot.opponent}"
                )
                problems.append(_quarantine(src, slot.line, record, value, reason))
                continue
            extra = {"trf_code": slot.code, "bye_points": _BYE_POINTS[slot.code]}
            rows.append(_row(header, src, file_key, slot, me, None, "bye", extra))
            continue
        if slot.opponent not in players:
            if slot.opponent in bad_ranks:
                reason = (
                    f"opponent {slot.opponent} in round {slot.round} {bad_ranks[slot.opponent]}"
                )
            else:
                reason = f"opponent start rank {slot.opponent} in round {slot.round} is not a player in the file"
            problems.append(_quarantine(src, slot.line, record, value, reason))
            continue
        if slot.opponent == slot.rank:
            reason = f"player {slot.rank} is paired against themselves in round {slot.round}"
            problems.append(_quarantine(src, slot.line, record, value, reason))
            continue
        mirror = by_key.get((slot.opponent, slot.round))
        if mirror is not None and mirror.opponent != slot.rank:
            them = f"opponent {mirror.opponent}" if mirror.opponent else f"code '{mirror.code}'"
            reason = (
                f"player {slot.rank} records a game against {slot.opponent} in round "
                f"{slot.round}, but player {slot.opponent}'s record for that round has {them}"
            )
            problems.append(_quarantine(src, slot.line, record, value, reason))
            continue
        if mirror is not None:
            done.add((mirror.rank, mirror.round))
            mirror_value = f"{mirror.opponent:>4} {mirror.colour} {mirror.code}"
            if not _consistent(slot, mirror):
                reason = (
                    f"round {slot.round}: player {slot.rank} records '{value.strip()}' but "
                    f"player {mirror.rank} records '{mirror_value.strip()}'"
                )
                problems.append(_quarantine(src, slot.line, record, value, reason))
                mirror_record = f"rank {mirror.rank} round {mirror.round}"
                problems.append(_quarantine(src, mirror.line, mirror_record, mirror_value, reason))
                continue
        white_slot, black_slot = _orient(slot, mirror)
        white, black = players[white_slot.rank], players[white_slot.opponent]
        black_code = None if black_slot is None else black_slot.code
        result = _result(white_slot.code, black_code)
        extra = {"trf_code": white_slot.code} if white_slot.code in _UNRATED_PLAYED else {}
        rows.append(_row(header, src, file_key, white_slot, white, black, result, extra))
    return rows, problems


def _consistent(a: _Slot, b: _Slot) -> bool:
    """Whether two records of one pairing agree on the result and on the colours."""
    results_agree = _COMPLEMENT[a.code] == b.code or (a.code == "-" and b.code == "-")
    colours_agree = {a.colour, b.colour} in ({"w", "b"}, {"-"}, {"w", "-"}, {"b", "-"})
    return results_agree and colours_agree


def _orient(slot: _Slot, mirror: _Slot | None) -> tuple[_Slot, _Slot | None]:
    """(white's slot, black's slot) of a pairing; colourless pairings put the lower rank white."""
    pair = [slot] if mirror is None else [slot, mirror]
    for s in pair:
        if s.colour == "w":
            return s, next((o for o in pair if o is not s), None)
    for s in pair:
        if s.colour == "b":
            other = next((o for o in pair if o is not s), None)
            if other is not None:
                return other, s
            # only black's record exists: emit from it, seen from white's side
            flipped = _Slot(s.opponent, s.round, s.rank, "w", _COMPLEMENT[s.code], s.line)
            return flipped, None
    low = min(pair, key=lambda s: s.rank)
    if low.rank < low.opponent:
        return low, next((o for o in pair if o is not low), None)
    flipped = _Slot(low.opponent, low.round, low.rank, "w", _COMPLEMENT[low.code], low.line)
    return flipped, None
