"""The inbox layout of DESIGN §2: find each kind's files and run the right reader on them.

Each `ingest_*` function returns one combined `IngestResult` plus a per-file summary
(`FILE_SUMMARY_SCHEMA`), so the run summary can count ingested and quarantined records per file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import polars as pl

from rating_core.ingest.canonical import canonical_games, check_match_dates, drop_duplicate_game_ids
from rating_core.ingest.common import IngestResult, UnreadableFileError
from rating_core.ingest.corrections import CORRECTIONS_FILE, CORRECTIONS_SCHEMA, read_corrections
from rating_core.ingest.csv_games import read_game_csv
from rating_core.ingest.merges import (
    MERGES_FILE,
    MERGES_SCHEMA,
    MergeChainError,
    read_merges,
    resolve_merges,
)
from rating_core.ingest.pgn import PGN_SUFFIXES, read_pgn
from rating_core.ingest.prefetch import forget_prefetched, take_prefetched
from rating_core.ingest.registry import (
    STARTING_LIST_SUFFIXES,
    read_backgammon,
    read_moderation,
    read_players,
    read_starting_list,
)
from rating_core.ingest.trf import read_trf
from rating_core.lake.tables import FILE_SUMMARY_SCHEMA
from rating_core.schemas import (
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
from rating_core.systems.site.classification import rejected_site_games

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
        prefetched = take_prefetched(path, name) if source == "platform" else None
        return prefetched if prefetched is not None else read_pgn(path, name)
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


def platform_pgn_files(inbox: Path) -> list[tuple[Path, str]]:
    """The platform's PGN files `ingest_games` reads, each with its name as it records it (what
    `prefetch.prefetch` reads ahead)."""
    inbox = Path(inbox)
    return [
        (p, _relative(p, inbox))
        for source, _, _, files in _game_sources(inbox)
        if source == "platform"
        for p in files
        if p.name.lower().endswith(PGN_SUFFIXES)
    ]


def game_files(inbox: Path) -> list[str]:
    """The names (relative to the inbox, as in the per-file summary) of the game files
    `ingest_games` reads, in its order."""
    inbox = Path(inbox)
    return [_relative(p, inbox) for _, _, _, files in _game_sources(inbox) for p in files]


def ingest_games(
    inbox: Path,
    players: pl.DataFrame | None = None,
    today: date | None = None,
    after_read: Callable[[], object] | None = None,
) -> InboxBatch:
    """Read every chess game file of the inbox into the canonical games table (games dated
    after `today`, default today in UTC, are quarantined). `after_read` is called once the
    platform's files (the large ones) are read, before their rows are classified: the games
    asset then starts hashing the files, when the scanner no longer needs every CPU."""
    inbox = Path(inbox)
    per_file: list[tuple[str, IngestResult]] = []
    canonical: list[pl.DataFrame] = []
    quarantine: list[pl.DataFrame] = []
    notes: list[str] = []
    for source, club_id, _folder, files in _game_sources(inbox, notes):
        raws: list[pl.DataFrame] = []
        for path in files:
            name = _relative(path, inbox)
            result = _read_game_file(path, name, source)
            raws.append(result.rows)
            quarantine.append(result.quarantine)
            per_file.append((name, result))
            notes.extend(result.notes)  # a reader's notes ("not UTF-8...") reach the summary
        if source == "platform" and after_read is not None:
            after_read()
            after_read = None
        if not raws:
            continue
        raw = pl.concat(raws, how="vertical_relaxed") if raws else empty(RAW_GAMES_SCHEMA)
        done = canonical_games(raw, source, players, club_id, today)
        rows = done.rows
        if source == "platform":
            rows, contradictory = split_contradictory(rows, players)
            quarantine.append(contradictory)
        canonical.append(rows)
        quarantine.append(done.quarantine)
        notes.extend(done.notes)
    forget_prefetched()  # files read ahead and not taken: none with the same listing
    games = pl.concat(canonical) if canonical else empty(GAMES_SCHEMA)
    # game ids are unique over the whole games table, whatever folder they came from
    games, dups = drop_duplicate_game_ids(games)
    quarantine.append(dups)
    all_quarantine = pl.concat(quarantine) if quarantine else empty(QUARANTINE_SCHEMA)
    return InboxBatch(
        rows=games,
        quarantine=all_quarantine,
        files=_file_counts("games", per_file, games, all_quarantine),
        notes=tuple(notes),
    )


def split_contradictory(
    games: pl.DataFrame, players: pl.DataFrame | None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Quarantine platform records the site rules call contradictory (a bot losing on time...)."""
    rejected = rejected_site_games(games, players)
    if not rejected.height:
        return games, empty(QUARANTINE_SCHEMA)
    quarantine = rejected.select(
        "source_file",
        pl.col("source_line").alias("line"),
        pl.col("game_id").alias("record"),
        "value",
        "reason",
    ).cast(QUARANTINE_SCHEMA)
    refused = pl.col("game_id").is_in(rejected.get_column("game_id").implode())
    kept = games.filter(pl.col("game_id").is_null() | ~refused)  # an anti join, without one
    return kept, quarantine


def _file_counts(
    kind: str,
    per_file: list[tuple[str, IngestResult]],
    rows: pl.DataFrame,
    quarantine: pl.DataFrame,
) -> pl.DataFrame:
    """Per-file counts after every stage (a game quarantined late no longer counts as ingested)."""
    names = [name for name, _ in per_file]
    ingested = rows.group_by("source_file").len("ingested")
    quarantined = quarantine.group_by("source_file").len("quarantined")
    notes = {name: "; ".join(r.notes) or None for name, r in per_file}
    return (
        pl.DataFrame({"source_file": names}, schema={"source_file": pl.String})
        .join(ingested, on="source_file", how="left")
        .join(quarantined, on="source_file", how="left")
        .with_columns(
            kind=pl.lit(kind),
            ingested=pl.col("ingested").fill_null(0).cast(pl.Int64),
            quarantined=pl.col("quarantined").fill_null(0).cast(pl.Int64),
            notes=pl.col("source_file").replace_strict(notes, default=None, return_dtype=pl.String),
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


def ingest_players(inbox: Path) -> InboxBatch:
    """The registry `players.csv` (an inbox without one has no registry: every player is new)."""
    inbox = Path(inbox)
    path = inbox / "players.csv"
    paths = [path] if path.is_file() else []
    return _ingest_simple("players", inbox, paths, read_players, PLAYERS_SCHEMA)


def ingest_starting_lists(inbox: Path) -> InboxBatch:
    """Every `federation/lists/<list>@<YYYY-MM>.csv` (or FIDE's `.txt` / `.xml` download)."""
    inbox = Path(inbox)
    paths = _files(inbox / "federation" / "lists", STARTING_LIST_SUFFIXES)
    return _ingest_simple("starting_lists", inbox, paths, read_starting_list, STARTING_LIST_SCHEMA)


def _own_file(inbox: Path, name: str) -> list[Path]:
    """The inbox file `name` (e.g. `federation/corrections.csv`, in any case), if there is one."""
    wanted = Path(name).name.lower()
    return [p for p in _files((inbox / name).parent, (".csv",)) if p.name.lower() == wanted]


def ingest_corrections(inbox: Path) -> InboxBatch:
    """The rating officer's `federation/corrections.csv` (none: no corrections)."""
    inbox = Path(inbox)
    paths = _own_file(inbox, CORRECTIONS_FILE)
    return _ingest_simple("corrections", inbox, paths, read_corrections, CORRECTIONS_SCHEMA)


def moderation_files(inbox: Path) -> list[Path]:
    """The `platform/moderation/*.csv` decision files, sorted."""
    return _files(Path(inbox) / "platform" / "moderation", (".csv",))


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


def ingest_backgammon(inbox: Path, today: date | None = None) -> InboxBatch:
    """Every `backgammon/*.csv` match file (matches dated after `today` or before 1850 are
    quarantined, as games are)."""
    inbox = Path(inbox)
    paths = _files(inbox / "backgammon", (".csv",))

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
    games: pl.DataFrame,
    starting_lists: pl.DataFrame,
    players: pl.DataFrame | None,
) -> InboxBatch:
    """`federation/merges.csv`, each merge dated by the games and starting lists it changes
    (`resolve_merges`); raises `MergeChainError` for merges that chain or cycle."""
    inbox = Path(inbox)
    path = decision_file(inbox, "merges")
    paths = [path] if path is not None else []

    def reader(path: Path, name: str) -> IngestResult:
        read = read_merges(path, name)
        resolved = resolve_merges(read.rows, games, starting_lists, players)
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


def check_merge_chains(inbox: Path) -> None:
    """Raise `MergeChainError` when `federation/merges.csv` chains or cycles, before any work (any
    other problem of the file is left to the merges asset, which reports it with the others)."""
    inbox = Path(inbox)
    try:
        path = decision_file(inbox, "merges")
        if path is not None:
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
