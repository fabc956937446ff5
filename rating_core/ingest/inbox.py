"""The inbox layout of DESIGN §2: find each kind's files and run the right reader on them.

Each `ingest_*` function returns one combined `IngestResult` plus a per-file summary
(`FILE_SUMMARY_SCHEMA`), so the run summary can count ingested and quarantined records per file.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

import numpy as np
import polars as pl

from rating_core.budget import MemoryBudget
from rating_core.ingest.canonical import (
    canonical_games,
    check_match_dates,
    drop_duplicate_game_ids,
    drop_taken_game_ids,
)
from rating_core.ingest.common import (
    HashSink,
    IngestResult,
    UnreadableFileError,
    id_hashes,
)
from rating_core.ingest.corrections import CORRECTIONS_FILE, CORRECTIONS_SCHEMA, read_corrections
from rating_core.ingest.csv_games import CsvChunks, platform_game_chunks, read_game_csv
from rating_core.ingest.merges import (
    MERGES_FILE,
    MERGES_SCHEMA,
    MergeChainError,
    merge_player_games,
    read_merges,
    resolve_merges,
)
from rating_core.ingest.pgn import PGN_SUFFIXES, pgn_windows, read_pgn
from rating_core.ingest.registry import (
    STARTING_LIST_SUFFIXES,
    parse_starting_list_name,
    read_backgammon,
    read_moderation,
    read_players,
    read_starting_list,
)
from rating_core.ingest.trf import TRF_PLAYERS_SCHEMA, read_trf
from rating_core.progress import Progress, report
from rating_core.schemas import (
    FILE_SUMMARY_SCHEMA,
    GAMES_SCHEMA,
    MATCHES_SCHEMA,
    MODERATION_SCHEMA,
    PLAYERS_SCHEMA,
    QUARANTINE_SCHEMA,
    RAW_GAMES_SCHEMA,
    STARTING_LIST_SCHEMA,
    TableSchema,
    empty,
)
from rating_core.systems.club.folders import check_club_folders
from rating_core.systems.site.classification import split_site_games

NOT_GAMES = (CORRECTIONS_FILE,)
"""Files of `federation/` that are their own kind, not games (matched lower-cased)."""

FEDERATION_DECISION_FILES: dict[str, str] = {
    MERGES_FILE: "merges",
}
"""Files of `federation/` that are a rating officer's decisions, not games: their name (matched
lower-cased) and their kind. Each has its own reader and canonical table."""


@dataclass(frozen=True)
class InboxBatch:
    """What one ingest step produced: rows, quarantine, per-file summary."""

    rows: pl.DataFrame
    quarantine: pl.DataFrame
    files: pl.DataFrame
    notes: tuple[str, ...] = ()


def _files(folder: Path, suffixes: Iterable[str]) -> list[Path]:
    """Files of `folder` (not recursive) whose name ends with one of `suffixes`, sorted."""
    if not folder.is_dir():
        return []
    suffixes = tuple(suffixes)
    return sorted(p for p in folder.iterdir() if p.is_file() and p.name.lower().endswith(suffixes))


def _relative(path: Path, inbox: Path) -> str:
    try:
        return path.relative_to(inbox).as_posix()
    except ValueError:
        return path.as_posix()


def _summary_row(kind: str, source_file: str, result: IngestResult) -> dict:
    return {
        "kind": kind,
        "source_file": source_file,
        "ingested": result.rows.height,
        "quarantined": result.quarantine.height,
        "notes": "; ".join(result.notes) or None,
    }


def _batch(
    kind: str,
    results: list[tuple[str, IngestResult]],
    schema: TableSchema,
) -> InboxBatch:
    rows = [r.rows for _, r in results if r.rows.height]
    quarantine = [r.quarantine for _, r in results if r.quarantine.height]
    return InboxBatch(
        rows=pl.concat(rows, how="vertical_relaxed") if rows else empty(schema),
        quarantine=pl.concat(quarantine) if quarantine else empty(QUARANTINE_SCHEMA),
        files=pl.DataFrame(
            [_summary_row(kind, name, r) for name, r in results], schema=FILE_SUMMARY_SCHEMA
        ),
        notes=tuple(n for _, r in results for n in r.notes),
    )


def _read_game_file(path: Path, name: str, source: str) -> IngestResult:
    """Read one game file by its suffix in any case (`GAMES.PGN.GZ` is gzip-compressed PGN); a
    CSV by the kind of the folder it came from (`source`: platform, federation or club)."""
    lower = path.name.lower()
    if lower.endswith(PGN_SUFFIXES):
        return read_pgn(path, name)
    if lower.endswith(".trf"):
        return read_trf(path, name).games
    return read_game_csv(path, name, source)


def _inside(path: Path, inbox: Path) -> bool:
    """Whether `path`, symbolic links followed, is inside the inbox."""
    return path.resolve().is_relative_to(inbox.resolve())


def _outside_note(path: Path, inbox: Path) -> str:
    return f"{_relative(path, inbox)}: a symbolic link leading outside the inbox, not followed"


def _game_sources(
    inbox: Path, notes: list[str] | None = None
) -> list[tuple[str, str | None, Path, list[Path]]]:
    """(source, club_id, folder, files) for every folder holding chess games.

    A club folder's name is its `club_id`, whatever its letters (`clubs/Şişli/`); folders whose
    names would publish under one list name are refused (`ClubFolderError`). A club folder that
    is a symbolic link leading outside the inbox is skipped, with a note appended to `notes`; a
    linked *file* is followed (linking a large archive instead of copying it is deliberate).
    """
    skipped = notes if notes is not None else []
    sources: list[tuple[str, str | None, Path, list[Path]]] = [
        ("platform", None, inbox / "platform", _files(inbox / "platform", (*PGN_SUFFIXES, ".csv"))),
        (
            "federation",
            None,
            inbox / "federation",
            [
                p
                for p in _files(inbox / "federation", (*PGN_SUFFIXES, ".csv", ".trf"))
                if _relative(p, inbox).lower() not in NOT_GAMES
                and p.name.lower() not in FEDERATION_DECISION_FILES
            ],
        ),
    ]
    clubs = inbox / "clubs"
    if clubs.is_dir() and _inside(clubs, inbox):
        folders = sorted(p for p in clubs.iterdir() if p.is_dir())
        skipped.extend(_outside_note(p, inbox) for p in folders if not _inside(p, inbox))
        folders = [p for p in folders if _inside(p, inbox)]
        check_club_folders(p.name for p in folders)
        for club in folders:
            files = _files(club, (*PGN_SUFFIXES, ".csv", ".trf"))
            sources.append(("club", club.name, club, files))
    elif clubs.is_dir():
        skipped.append(_outside_note(clubs, inbox))
    return sources


_SAFE_KEY = re.compile(r"[^A-Za-z0-9._-]")
_RANKS = {"platform": "a", "federation": "b", "club": "c"}


@dataclass(frozen=True)
class GameGroup:
    """Game files read together: each platform file alone (a platform's monthly dump), the
    federation folder's files together and each club folder's together (a tournament's period
    is the month of its last game, whichever of the folder's files holds it). `key` names the
    group's files in the lake and sorts as the inbox is read."""

    key: str
    source: str
    club_id: str | None
    files: tuple[tuple[Path, str], ...]


def _group_key(source: str, name: str) -> str:
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{_RANKS[source]}-{_SAFE_KEY.sub('_', name)[:60]}-{digest}"


def group_source(key: str) -> str:
    """The source (platform, federation or club) of a group, by its key (`_group_key`; "" for
    a key no group of this code has)."""
    rank = key.split("-", 1)[0]
    return next((source for source, mark in _RANKS.items() if mark == rank), "")


def game_groups(inbox: Path, notes: list[str] | None = None) -> list[GameGroup]:
    """The inbox's game files in their groups, in the order they are read (`notes`: folders
    skipped, as `_game_sources` says)."""
    inbox = Path(inbox)
    groups: list[GameGroup] = []
    for source, club_id, folder, files in _game_sources(inbox, notes):
        named = tuple((p, _relative(p, inbox)) for p in files)
        if source == "platform":
            groups.extend(
                GameGroup(_group_key(source, n), source, None, ((p, n),)) for p, n in named
            )
        elif named:
            groups.append(
                GameGroup(_group_key(source, _relative(folder, inbox)), source, club_id, named)
            )
    return groups


@dataclass
class GroupReading:
    """One group's games read piece by piece: `pieces()` yields canonical rows and quarantine
    rows, a window of a platform PGN file (a chunk of rows of a platform CSV) at a time when
    `streamed` (else each file whole); once exhausted, `notes` holds each file's reader notes
    and `group_notes` the canonical step's.

    Game ids a group must not keep: `taken` (id -> first file and line, held by a group read
    before), quarantined as seen again; `repeated` (id hashes a streamed file holds more than
    once), whose later records are quarantined as the whole file's reading would. `split_ids`
    gathers the hashes of every record a streamed PGN reading kept past its reader's own checks
    (of a CSV: each chunk's distinct ids, every record's), to find the ids repeated across
    windows."""

    group: GameGroup
    players: pl.DataFrame | None = None
    today: date | None = None
    streamed: bool = False
    taken: pl.DataFrame | None = None
    repeated: frozenset[int] = frozenset()
    budget: MemoryBudget | None = None
    notes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    group_notes: list[str] = field(default_factory=list)
    split_ids: HashSink = field(default_factory=list[np.ndarray])

    def pieces(self) -> Iterator[IngestResult]:
        group = self.group
        if self.streamed and group.source == "platform":
            [(path, name)] = group.files
            if name.lower().endswith(PGN_SUFFIXES):
                yield from self._windows(path, name)
                return
            if name.lower().endswith(".csv"):
                yield from self._csv_chunks(path, name)
                return
        raws: list[pl.DataFrame] = []
        quarantine: list[pl.DataFrame] = []
        for path, name in group.files:
            result = _read_game_file(path, name, group.source)
            self.notes[name] = result.notes
            raws.append(result.rows)
            quarantine.append(result.quarantine)
        raw = pl.concat(raws, how="vertical_relaxed") if raws else empty(RAW_GAMES_SCHEMA)
        done = self._canonical(raw)
        yield IngestResult(done.rows, pl.concat([*quarantine, done.quarantine]))

    def _windows(self, path: Path, name: str) -> Iterator[IngestResult]:
        """A platform PGN file a window at a time: each window's ids kept past the reader's own
        checks go to `split_ids`; the ids `repeated` across windows are quarantined by the
        reader itself, every later record naming the file's first, as the whole file's reading
        names it (`pgn_frames.EarlierLines`)."""
        reading = None
        for stream, result in pgn_windows(path, name, budget=self.budget, repeated=self.repeated):
            if stream is not reading:  # read again as Windows-1252: what came before is void
                reading = stream
                self.split_ids.clear()
                yield RESTART
            self.split_ids.append(id_hashes(result.rows.get_column("game_id")))
            done = self._canonical(result.rows)
            yield IngestResult(done.rows, pl.concat([result.quarantine, done.quarantine]))
        assert reading is not None
        self.notes[name] = tuple(reading.notes)

    def _csv_chunks(self, path: Path, name: str) -> Iterator[IngestResult]:
        """A platform CSV a chunk of rows at a time (`csv_games.platform_game_chunks`): each
        chunk's distinct ids go to `split_ids`, and the ids `repeated` across chunks are
        quarantined by the reader itself, with the reason and line the whole file's reading
        gives them. Each chunk reports the lines read so far (the file's size in lines is not
        known before it is read)."""
        rows = (self.budget or MemoryBudget()).csv_rows
        games, lines = 0, 0
        for result, hashes in platform_game_chunks(path, name, rows, self.repeated):
            self.split_ids.append(hashes)
            done = self._canonical(result.rows)
            games += done.rows.height
            lines = max(lines, last_line(result))
            report(Progress("ingest", name, lines, None, "lines", games))
            yield IngestResult(done.rows, pl.concat([result.quarantine, done.quarantine]))
        report(Progress("ingest", name, lines, None, "lines", games, finished=True))
        self.notes[name] = ()

    def _canonical(self, raw: pl.DataFrame) -> IngestResult:
        """Raw rows -> canonical rows of the group's source, without the ids `taken`."""
        group = self.group
        done = canonical_games(raw, group.source, self.players, group.club_id, self.today)
        rows, quarantine = done.rows, [done.quarantine]
        if group.source == "platform":
            rows, contradictory = split_contradictory(rows, self.players)
            quarantine.append(contradictory)
        if self.taken is not None and self.taken.height:
            rows, again = drop_taken_game_ids(rows, self.taken)
            quarantine.append(again)
        self.group_notes.extend(done.notes)
        return IngestResult(rows, pl.concat(quarantine))


def last_line(result: IngestResult) -> int:
    """The last line a reader's rows or quarantine name (0: none): how far a file was read."""
    last = [
        result.rows.select(pl.col("source_line").max()).item(),
        result.quarantine.select(pl.col("line").max()).item(),
    ]
    return max((int(line) for line in last if line is not None), default=0)


RESTART = IngestResult(empty(GAMES_SCHEMA), empty(QUARANTINE_SCHEMA), ("restart",))
"""What `GroupReading.pieces` yields when a file is read again from its start (it was not
UTF-8): every piece yielded before it is void."""


def ingest_games(
    inbox: Path,
    players: pl.DataFrame | None = None,
    today: date | None = None,
) -> InboxBatch:
    """Read every chess game file of the inbox into the canonical games table, whole, in
    memory (games dated after `today`, default today in UTC, are quarantined). The lake's
    ingest store (`rating_core.lake.ingest_store`) reads the same groups in bounded memory."""
    inbox = Path(inbox)
    canonical: list[pl.DataFrame] = []
    quarantine: list[pl.DataFrame] = []
    notes: list[str] = []
    names: list[str] = []
    file_notes: dict[str, tuple[str, ...]] = {}
    for group in game_groups(inbox, notes):
        reading = GroupReading(group, players, today)
        for piece in reading.pieces():
            canonical.append(piece.rows)
            quarantine.append(piece.quarantine)
        names.extend(name for _, name in group.files)
        file_notes.update(reading.notes)
        notes.extend(n for _, name in group.files for n in reading.notes[name])
        notes.extend(reading.group_notes)
    games = pl.concat(canonical) if canonical else empty(GAMES_SCHEMA)
    # game ids are unique over the whole games table, whatever folder they came from
    games, dups = drop_duplicate_game_ids(games)
    quarantine.append(dups)
    all_quarantine = pl.concat(quarantine) if quarantine else empty(QUARANTINE_SCHEMA)
    return InboxBatch(
        rows=games,
        quarantine=all_quarantine,
        files=file_counts("games", names, file_notes, games, all_quarantine),
        notes=tuple(notes),
    )


def split_contradictory(
    games: pl.DataFrame, players: pl.DataFrame | None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Quarantine platform records the site rules call contradictory (a bot losing on time...);
    the games kept carry the site rules' classification, made here once for the rating."""
    kept, rejected = split_site_games(games, players)
    if not rejected.height:
        return kept, empty(QUARANTINE_SCHEMA)
    quarantine = rejected.select(
        "source_file",
        pl.col("source_line").alias("line"),
        pl.col("game_id").alias("record"),
        "value",
        "reason",
    ).cast(QUARANTINE_SCHEMA)
    return kept, quarantine


def file_counts(
    kind: str,
    names: list[str],
    notes: dict[str, tuple[str, ...]],
    rows: pl.DataFrame,
    quarantine: pl.DataFrame,
) -> pl.DataFrame:
    """Per-file counts after every stage (a game quarantined late no longer counts as ingested),
    with each file's reader notes."""
    ingested = rows.group_by("source_file").len("ingested")
    quarantined = quarantine.group_by("source_file").len("quarantined")
    joined = {name: "; ".join(notes.get(name, ())) or None for name in names}
    return (
        pl.DataFrame({"source_file": names}, schema={"source_file": pl.String})
        .join(ingested, on="source_file", how="left")
        .join(quarantined, on="source_file", how="left")
        .with_columns(
            kind=pl.lit(kind),
            ingested=pl.col("ingested").fill_null(0).cast(pl.Int64),
            quarantined=pl.col("quarantined").fill_null(0).cast(pl.Int64),
            notes=pl.col("source_file").replace_strict(
                joined, default=None, return_dtype=pl.String
            ),
        )
        .select(list(FILE_SUMMARY_SCHEMA))
    )


def _ingest_simple(
    kind: str,
    inbox: Path,
    paths: list[Path],
    reader: Callable[[Path, str], IngestResult],
    schema: TableSchema,
) -> InboxBatch:
    return _batch(
        kind, [(_relative(p, inbox), reader(p, _relative(p, inbox))) for p in paths], schema
    )


def players_files(inbox: Path) -> list[Path]:
    """The registry `players.csv`, if the inbox has one."""
    path = Path(inbox) / "players.csv"
    return [path] if path.is_file() else []


def ingest_players(inbox: Path, budget: MemoryBudget | None = None) -> InboxBatch:
    """The registry `players.csv` (an inbox without one has no registry: every player is new),
    read as many rows at a time as `budget` allows (the typed rows are kept, not the text)."""
    inbox = Path(inbox)
    paths = players_files(inbox)
    rows = (budget or MemoryBudget()).csv_rows

    def reader(path: Path, name: str) -> IngestResult:
        return read_players(path, name, rows)

    return _ingest_simple("players", inbox, paths, reader, PLAYERS_SCHEMA)


def tournament_files(inbox: Path) -> list[Path]:
    """The federation and club TRF files, in inbox order (what `tournament_players` reads)."""
    return [
        path
        for group in game_groups(Path(inbox))
        if group.source != "platform"
        for path, _ in group.files
        if path.name.lower().endswith(".trf")
    ]


def tournament_players(inbox: Path) -> pl.DataFrame:
    """The player records (`001`) of every federation and club TRF file, in inbox order
    (TRF_PLAYERS_SCHEMA): the tournament files' federation, title, sex and birth year, the last
    source of a list's player data. A file that cannot be read gives none (its games' reading
    says why)."""
    frames = [empty(TRF_PLAYERS_SCHEMA)]
    for group in game_groups(Path(inbox)):
        if group.source == "platform":
            continue
        for path, name in group.files:
            if path.name.lower().endswith(".trf"):
                try:
                    frames.append(read_trf(path, name).players)
                except UnreadableFileError:
                    continue
    return pl.concat(frames)


def check_starting_lists(inbox: Path) -> list[Path]:
    """The starting-list files of `federation/lists/`, after refusing two files for one list and
    period (`fide-standard@2026-05.csv` beside `fide-standard@2026-05.txt`: which is official
    is the federation's to say) in one `UnreadableFileError` sentence, before any work. A name
    that is no starting list's is left to its reading, which says why."""
    inbox = Path(inbox)
    paths = _files(inbox / "federation" / "lists", STARTING_LIST_SUFFIXES)
    seen: dict[tuple[str, str], Path] = {}
    for path in paths:
        try:
            key = parse_starting_list_name(path.name)
        except UnreadableFileError:
            continue
        if key in seen:
            raise UnreadableFileError(
                f"'{_relative(seen[key], inbox)}' and '{_relative(path, inbox)}' are both the "
                f"{key[0]} list after {key[1]}; keep the official one"
            )
        seen[key] = path
    return paths


DATA_SUFFIXES = (".csv", ".pgn", ".trf", ".txt", ".xml", ".zip", ".gz", ".zst", ".json", ".xlsx")
"""Files at the inbox's top that look like data: one there other than `players.csv` is named in
the note (a game file put one folder too high); other files there are the inbox's own."""
MAX_NAMED_FILES = 5
"""Unexpected inbox files a note names one by one (the others are counted)."""


def unexpected_files(inbox: Path) -> list[str]:
    """Files in the inbox's folders that no reader takes (`inbox_files`): a `.pdf` beside the
    lists, a `.rar` download, a game file one folder too high. Hidden files (`.DS_Store`) are
    not counted, nor files at the top that are no data (`DATA_SUFFIXES`)."""
    inbox = Path(inbox)
    known = {p.resolve() for p in inbox_files(inbox)}
    folders = [inbox, inbox / "platform", inbox / "platform" / "moderation", inbox / "federation"]
    folders += [inbox / "federation" / "lists", inbox / "backgammon"]
    clubs = inbox / "clubs"
    if clubs.is_dir() and _inside(clubs, inbox):
        folders += sorted(p for p in clubs.iterdir() if p.is_dir() and _inside(p, inbox))
    found = []
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.is_file() and not path.name.startswith(".") and path.resolve() not in known:
                if folder == inbox and not path.name.lower().endswith(DATA_SUFFIXES):
                    continue  # the inbox's own README, a script that made it, ratings.toml
                found.append(_relative(path, inbox))
    return found


def unexpected_files_note(inbox: Path) -> tuple[str, ...]:
    """The run summary's note naming the inbox files no reader takes (none: no note)."""
    found = unexpected_files(inbox)
    if not found:
        return ()
    more = len(found) - MAX_NAMED_FILES
    shown = ", ".join(found[:MAX_NAMED_FILES]) + (f" and {more} more" if more > 0 else "")
    noun = "file is" if len(found) == 1 else "files are"
    return (
        f"inbox: {len(found)} {noun} not read, as no input is named so ({shown}); see the "
        "inbox layout for the names each reader takes",
    )


def ingest_starting_lists(inbox: Path) -> InboxBatch:
    """Every `federation/lists/<list>@<YYYY-MM>.csv` (or FIDE's `.txt` / `.xml` download, plain
    or zipped); two files for one list and period are refused (`check_starting_lists`). The
    batch's notes also name the inbox files no reader takes (`unexpected_files_note`)."""
    inbox = Path(inbox)
    paths = check_starting_lists(inbox)
    batch = _ingest_simple("starting_lists", inbox, paths, read_starting_list, STARTING_LIST_SCHEMA)
    extra = unexpected_files_note(inbox)
    return replace(batch, notes=batch.notes + extra) if extra else batch


def _own_file(inbox: Path, name: str) -> list[Path]:
    """The inbox file `name` (e.g. `federation/corrections.csv`, in any case), if there is one."""
    wanted = Path(name).name.lower()
    return [p for p in _files((inbox / name).parent, (".csv",)) if p.name.lower() == wanted]


def corrections_files(inbox: Path) -> list[Path]:
    """The rating officer's `federation/corrections.csv`, if the inbox has one."""
    return _own_file(Path(inbox), CORRECTIONS_FILE)


def ingest_corrections(inbox: Path) -> InboxBatch:
    """The rating officer's `federation/corrections.csv` (none: no corrections)."""
    inbox = Path(inbox)
    paths = corrections_files(inbox)
    return _ingest_simple("corrections", inbox, paths, read_corrections, CORRECTIONS_SCHEMA)


def moderation_files(inbox: Path) -> list[Path]:
    """The `platform/moderation/*.csv` decision files, sorted."""
    return _files(Path(inbox) / "platform" / "moderation", (".csv",))


def moderation_game_ids(inbox: Path) -> pl.Series:
    """The game ids the decision files name (stripped, each once; a file that cannot be read
    names none: its reading says why), so that only those are looked up in the games table."""
    named = [pl.Series("game_id", [], dtype=pl.String)]
    for path in moderation_files(inbox):
        try:
            for table in CsvChunks(path, path.name).tables():
                if "game_id" in table.frame.columns:
                    named.append(table.frame.get_column("game_id"))
        except UnreadableFileError:
            continue
    ids = pl.concat(named)
    return ids.filter(ids != "").unique().sort()


def ingest_moderation(inbox: Path, known_game_ids: pl.Series | None = None) -> InboxBatch:
    """Every `platform/moderation/*.csv` decision.

    With `known_game_ids` (the games table's ids), a decision for a game that does not exist is
    quarantined ("no game with this id") and counted in its file's summary row.
    """
    inbox = Path(inbox)
    paths = moderation_files(inbox)

    def reader(path: Path, name: str) -> IngestResult:
        return read_moderation(path, name, known_game_ids)

    return _ingest_simple("moderation", inbox, paths, reader, MODERATION_SCHEMA)


def backgammon_files(inbox: Path) -> list[Path]:
    """The `backgammon/*.csv` match files, sorted."""
    return _files(Path(inbox) / "backgammon", (".csv",))


def ingest_backgammon(inbox: Path, today: date | None = None) -> InboxBatch:
    """Every `backgammon/*.csv` match file (matches dated after `today` or before 1850 are
    quarantined, as games are)."""
    inbox = Path(inbox)
    paths = backgammon_files(inbox)

    def read_dated(path: Path, name: str) -> IngestResult:
        return check_match_dates(read_backgammon(path, name), today)

    return _ingest_simple("backgammon", inbox, paths, read_dated, MATCHES_SCHEMA)


def decision_file(inbox: Path, kind: str) -> Path | None:
    """The `federation/` file of a decision kind (`merges`), whatever the case of its name;
    two spellings of it side by side (`merges.csv`, `Merges.csv`) are refused, never one read and
    the other ignored."""
    inbox = Path(inbox)
    found = [
        p
        for p in _files(inbox / "federation", (".csv",))
        if FEDERATION_DECISION_FILES.get(p.name.lower()) == kind
    ]
    if len(found) > 1:
        names = " and ".join(f"'{_relative(p, inbox)}'" for p in found)
        raise UnreadableFileError(f"{names} are both the {kind} file; keep one")
    return found[0] if found else None


MERGES_NAMED = 3
"""Merges a run's note names one by one (the others are counted)."""


def merge_notes(merges: pl.DataFrame) -> tuple[str, ...]:
    """The run summary's note on the merges in force: which id went into which, from when."""
    if not merges.height:
        return ()
    named = [
        f"{m} into {k} from {p}" if p else f"{m} into {k} (in no game or list: nothing to change)"
        for k, m, p in merges.select("keep_id", "merge_id", "effective_period").iter_rows()
    ]
    more = len(named) - MERGES_NAMED
    shown = ", ".join(named[:MERGES_NAMED]) + (f" and {more} more" if more > 0 else "")
    noun = "duplicate player" if merges.height == 1 else "duplicate players"
    return (f"{merges['source_file'][0]}: {merges.height} {noun} merged ({shown})",)


def ingest_merges(
    inbox: Path,
    games: pl.LazyFrame | pl.DataFrame,
    starting_lists: pl.DataFrame,
    players: pl.DataFrame | None,
) -> InboxBatch:
    """`federation/merges.csv`, each merge dated by the games and starting lists it changes
    (`resolve_merges`); raises `MergeChainError` for merges that chain or cycle. Of `games`
    (a scan of the games table) only those naming an id of the file are read
    (`merge_player_games`)."""
    inbox = Path(inbox)
    path = decision_file(inbox, "merges")
    paths = [path] if path is not None else []

    def reader(path: Path, name: str) -> IngestResult:
        read = read_merges(path, name)
        named = merge_player_games(games, read.rows)
        resolved = resolve_merges(read.rows, named, starting_lists, players)
        quarantine = pl.concat([read.quarantine, resolved.quarantine])
        notes = [*read.notes, *merge_notes(resolved.rows)]
        games_between = resolved.quarantine.filter(pl.col("source_file") != name).height
        if games_between:  # counted on the merges file's summary row: say what they are
            notes.append(
                f"{name}: {games_between} game(s) between a kept and a merged id quarantined "
                "(once merged, a player against themself)"
            )
        return IngestResult(resolved.rows, quarantine, tuple(notes))

    return _ingest_simple("merges", inbox, paths, reader, MERGES_SCHEMA)


def check_merge_chains(inbox: Path, checked: Callable[[Path], bool] | None = None) -> None:
    """Raise `MergeChainError` when `federation/merges.csv` chains or cycles, before any work (any
    other problem of the file is left to the merges asset, which reports it with the others).
    `checked(path)`: whether the file is the one a run already checked and ingested, unchanged
    since (it is then not read again)."""
    inbox = Path(inbox)
    try:
        path = decision_file(inbox, "merges")
        if path is not None and not (checked is not None and checked(path)):
            read_merges(path, _relative(path, inbox))
    except MergeChainError:
        raise
    except UnreadableFileError:
        return


def inbox_files(inbox: Path) -> list[Path]:
    """Every input file the pipeline would read (for the sensor and the input digest)."""
    inbox = Path(inbox)
    found: list[Path] = []
    if (inbox / "players.csv").is_file():
        found.append(inbox / "players.csv")
    for _, _, _, files in _game_sources(inbox):
        found.extend(files)
    found.extend(_files(inbox / "federation" / "lists", STARTING_LIST_SUFFIXES))
    found.extend(moderation_files(inbox))
    found.extend(_files(inbox / "backgammon", (".csv",)))
    found.extend(_own_file(inbox, CORRECTIONS_FILE))
    found.extend(
        p
        for p in _files(inbox / "federation", (".csv",))
        if p.name.lower() in FEDERATION_DECISION_FILES
    )
    return found
