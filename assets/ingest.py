"""Ingest assets: read the inbox, write canonical tables and the quarantine to the lake.

Thin by design: paths come from the `paths` resource, the work is `rating_core.ingest.inbox` (and,
for the games, `rating_core.lake.ingest_store`: each file group read once, streamed).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl

from assets.period_io import CODE_VERSION, table_metadata
from assets.resources import PipelinePaths
from rating_core import tables
from rating_core.ingest import inbox as inbox_readers
from rating_core.ingest.inbox import InboxBatch
from rating_core.lake import facts, ingest_store
from rating_core.lake.fingerprints import content_hash, reader_version
from rating_core.lake.storage import (
    partition_files,
    read_table,
    table_file,
    table_partitions,
    write_partitioned,
    write_table,
)
from rating_core.schemas import GAMES_SCHEMA, MATCHES_SCHEMA
from rating_core.systems.player_data import (
    conflict_note,
    conflicts,
    registry_data,
    starting_list_data,
    tournament_data,
)

MERGE_GAME_COLUMNS = (
    "game_id",
    "source",
    "source_file",
    "source_line",
    "period",
    "white_id",
    "black_id",
)
"""What the merges asset reads of the games: the ids, the period and the provenance."""


def inbox_digest(
    inbox: Path, files: Iterable[str], hashes: Mapping[Path, bytes] | None = None
) -> str:
    """A digest of the inbox files an ingest asset read (names and contents): its data version,
    so the UI marks what reads it stale exactly when one of those files changed. `hashes`: the
    files' content hashes where already known (`facts.content_hashes`), else each is read."""
    digest = hashlib.sha256()
    for name in sorted(files):
        path = Path(name) if Path(name).is_absolute() else inbox / name
        digest.update(f"{name}\0".encode())
        known = hashes.get(path) if hashes is not None else None
        if known is not None:
            digest.update(known)
        elif path.is_file():
            digest.update(content_hash(path))
    return digest.hexdigest()


def _store(paths: PipelinePaths, table: tables.LakeTable, batch: InboxBatch) -> None:
    """Write rows (by the catalogue's partitioning), this table's quarantine and its per-file
    summary."""
    lake = paths.lake_path
    if table.partitioned:
        stale = table_partitions(lake, table)  # periods that no longer have rows get emptied
        write_partitioned(lake, table, batch.rows, partitions=stale)
    else:
        write_table(lake, table, batch.rows)
    quarantine = batch.quarantine.with_columns(source=pl.lit(table.name))
    write_partitioned(lake, tables.QUARANTINE, quarantine, partitions=[table.name])
    _store_summary(paths, table, batch.files, batch.notes)


def _store_summary(
    paths: PipelinePaths, table: tables.LakeTable, files: pl.DataFrame, notes: Iterable[str]
) -> None:
    """Write a table's per-file summary and notes (read back by the run summary)."""
    lake = paths.lake_path
    noted = pl.DataFrame({"note": list(notes)}, schema={"note": pl.String})
    for summary, frame in ((tables.INGEST_SUMMARY, files), (tables.INGEST_NOTES, noted)):
        tagged = frame.with_columns(asset=pl.lit(table.name))
        write_partitioned(lake, summary, tagged, partitions=[table.name])


INGESTED = "ingested/1:"
"""Prefix of an ingest step's record in `derived_facts` (`ingested/1:players`): the digest of
what the step read (`Once.inputs`) and, as JSON, its counts and the stamps of the lake files it
wrote (a new layout of the record: /2)."""


def _relative_name(path: Path, inbox: Path) -> str:
    try:
        return path.relative_to(inbox).as_posix()
    except ValueError:
        return path.as_posix()


@dataclass(frozen=True)
class Once:
    """An ingest step read once (issue 31 item 1): the inbox files it reads (`files`, hashed
    only when their stamp changed: `facts.content_hashes`), what else its rows depend on
    (`depends`: the games' version, a lake table's content hash, the inbox's listing) and the
    lake tables it writes. `inputs` digests them all with the readers' version; when it is the
    one recorded and every file the step wrote still has the stamp it was recorded with, the
    step reads and writes nothing: its rows are those already in the lake."""

    paths: PipelinePaths
    table: tables.LakeTable
    files: list[Path]
    depends: tuple[str, ...] = ()
    also_writes: tuple[tables.LakeTable, ...] = ()

    @cached_property
    def hashes(self) -> dict[Path, bytes]:
        """The files' content hashes (recorded by their absolute names: an inbox given as a
        relative path one run and an absolute one the next is the same inbox)."""
        named = {path: path.absolute() for path in self.files}
        found = facts.content_hashes(self.paths.lake_path, named.values())
        return {path: found[name] for path, name in named.items() if name in found}

    @cached_property
    def inputs(self) -> str:
        inbox = self.paths.inbox_path
        digest = hashlib.sha256(f"{reader_version()}\0{self.table.name}\0".encode())
        for path in self.files:
            found = self.hashes.get(path)
            name = _relative_name(path, inbox)
            digest.update(f"{name}\0{found.hex() if found else '-'}\0".encode())
        for part in self.depends:
            digest.update(f"{part}\0".encode())
        return digest.hexdigest()

    @property
    def fact(self) -> str:
        return INGESTED + self.table.name

    def outputs(self) -> list[Path]:
        """Every lake file the step writes (those of its table, its quarantine, summary and
        notes partitions, and of `also_writes`)."""
        lake, name = self.paths.lake_path, self.table.name
        found = [*facts.table_files(lake, self.table)]
        for table in self.also_writes:
            found.extend(facts.table_files(lake, table))
        for table in (tables.QUARANTINE, tables.INGEST_SUMMARY, tables.INGEST_NOTES):
            found.extend(partition_files(lake, table, name))
        return found

    def stamps(self) -> dict[str, str]:
        lake = self.paths.lake_path
        return {_relative_name(p, lake): facts.file_stamp(p) for p in self.outputs()}

    def kept(self) -> dg.MaterializeResult | None:
        """The materialization of the rows already in the lake, when they are those of the same
        inputs and untouched since (None: the step must run)."""
        found = facts.recorded(self.paths.lake_path, self.fact)
        if found is None or found[0] != self.inputs:
            return None
        value = json.loads(found[1])
        if value.get("recheck") or value.get("outputs") != self.stamps():
            return None
        lake = self.paths.lake_path
        files = read_table(lake, tables.INGEST_SUMMARY, [self.table.name]).collect()
        notes = read_table(lake, tables.INGEST_NOTES, [self.table.name]).collect()
        files = files.drop(tables.ASSET, strict=False).select(list(tables.FILE_SUMMARY_SCHEMA))
        names = files.get_column("source_file").to_list()
        schema = self.table.schema or {}
        return dg.MaterializeResult(
            data_version=dg.DataVersion(inbox_digest(self.paths.inbox_path, names, self.hashes)),
            metadata={
                **table_metadata(int(value["rows"]), schema),
                "quarantined": dg.MetadataValue.int(int(value["quarantined"])),
                "files": dg.MetadataValue.json(files.to_dicts()),
                "notes": dg.MetadataValue.json(notes.get_column("note").to_list()),
            },
        )

    def done(self, batch: InboxBatch, recheck: bool = False) -> dg.MaterializeResult:
        """Record what the step read and wrote (once its files are all written), and its
        materialization. `recheck`: its rows depend on the day (a date after today)."""
        return self.done_counted(
            batch.files,
            list(batch.notes),
            batch.rows.height,
            batch.quarantine.height,
            batch.rows.schema,
            recheck,
        )

    def done_counted(
        self,
        files: pl.DataFrame,
        notes: list[str],
        rows: int,
        quarantined: int,
        schema: Mapping[str, Any],
        recheck: bool = False,
    ) -> dg.MaterializeResult:
        """`done` for a step that streamed its rows to the lake: their counts and schema."""
        value = {
            "rows": rows,
            "quarantined": quarantined,
            "recheck": recheck,
            "outputs": self.stamps(),
        }
        facts.record(self.paths.lake_path, self.fact, self.inputs, json.dumps(value))
        names = files.get_column("source_file").to_list() if files.height else []
        return dg.MaterializeResult(
            data_version=dg.DataVersion(inbox_digest(self.paths.inbox_path, names, self.hashes)),
            metadata={
                **table_metadata(rows, schema),
                "quarantined": dg.MetadataValue.int(quarantined),
                "files": dg.MetadataValue.json(files.to_dicts()),
                "notes": dg.MetadataValue.json(notes),
            },
        )


def lake_file_hash(lake: Path, table: tables.LakeTable) -> str:
    """The content hash of an unpartitioned lake table's file (`-`: none), what a step reading
    that table depends on (hashed only when its stamp changed)."""
    path = table_file(lake, table)
    return facts.content_hashes(lake, [path]).get(path, b"-").hex() if path.is_file() else "-"


@dg.asset(
    group_name="ingest", code_version=CODE_VERSION, description="The player registry players.csv."
)
def players(paths: PipelinePaths) -> dg.MaterializeResult:
    step = Once(paths, tables.PLAYERS, inbox_readers.players_files(paths.inbox_path))
    kept = step.kept()
    if kept is not None:
        return kept
    batch = inbox_readers.ingest_players(paths.inbox_path, paths.budget)
    _store(paths, tables.PLAYERS, batch)
    return step.done(batch)


@dg.asset(
    group_name="ingest",
    code_version=CODE_VERSION,
    deps=[players],
    description="Every chess game (platform, federation, clubs) as the canonical games table.",
)
def games(paths: PipelinePaths) -> dg.MaterializeResult:
    # Only the inbox's game files that changed since the last run are read, streamed into the
    # lake group by group (rating_core.lake.ingest_store); the names come from every group's.
    # The games read only the registry's bots; its names only when the names are written again.
    lake = paths.lake_path
    bots = ingest_store.registry_bots(lake)
    outcome = ingest_store.ingest_games(paths.inbox_path, lake, bots, budget=paths.budget)
    ingest_store.refresh_player_names(lake, None, outcome)
    _store_summary(paths, tables.GAMES, outcome.files, outcome.notes)
    return dg.MaterializeResult(
        data_version=dg.DataVersion(outcome.digest),
        metadata={
            **table_metadata(outcome.games, GAMES_SCHEMA),
            "quarantined": dg.MetadataValue.int(outcome.quarantined),
            "files": dg.MetadataValue.json(outcome.files.to_dicts()),
            "notes": dg.MetadataValue.json(outcome.notes),
            "groups read": dg.MetadataValue.json(outcome.read),
            "groups removed": dg.MetadataValue.json(outcome.removed),
        },
    )


@dg.asset(
    group_name="ingest",
    code_version=CODE_VERSION,
    deps=[players],
    description="Official starting lists federation/lists/*.csv (or FIDE's TXT, XML, zipped), "
    "and the tournament files' player records.",
)
def starting_lists(paths: PipelinePaths) -> dg.MaterializeResult:
    # with the tournament files' player records (`tournament_players`), the last source of the
    # federation lists' player data; a value two sources give differently is a note
    lake, inbox = paths.lake_path, paths.inbox_path
    lists = inbox_readers.check_starting_lists(inbox)
    step = Once(
        paths,
        tables.STARTING_LISTS,
        [*lists, *inbox_readers.tournament_files(inbox)],
        # the registry (conflicts) and the inbox's listing (the note on files no reader takes)
        (lake_file_hash(lake, tables.PLAYERS), *inbox_readers.unexpected_files(inbox)),
        also_writes=(tables.TOURNAMENT_PLAYERS,),
    )
    kept = step.kept()
    if kept is not None:
        return kept
    batch = inbox_readers.ingest_starting_lists(inbox)
    trf = inbox_readers.tournament_players(inbox)
    write_table(lake, tables.TOURNAMENT_PLAYERS, trf)
    sources = [
        registry_data(read_table(lake, tables.PLAYERS).collect()),
        starting_list_data(batch.rows),
        tournament_data(trf),
    ]
    batch = replace(batch, notes=batch.notes + conflict_note(conflicts(sources)))
    _store(paths, tables.STARTING_LISTS, batch)
    return step.done(batch)


@dg.asset(
    group_name="ingest",
    code_version=CODE_VERSION,
    description="A rating officer's corrections federation/corrections.csv.",
)
def corrections(paths: PipelinePaths) -> dg.MaterializeResult:
    step = Once(paths, tables.CORRECTIONS, inbox_readers.corrections_files(paths.inbox_path))
    kept = step.kept()
    if kept is not None:
        return kept
    batch = inbox_readers.ingest_corrections(paths.inbox_path)
    _store(paths, tables.CORRECTIONS, batch)
    return step.done(batch)


@dg.asset(
    group_name="ingest",
    code_version=CODE_VERSION,
    deps=[games],
    description="Moderation decisions platform/moderation/*.csv (a decision needs its game).",
)
def moderation_decisions(paths: PipelinePaths) -> dg.MaterializeResult:
    files = inbox_readers.moderation_files(paths.inbox_path)
    # a decision is checked against the games: read again when they changed
    depends = (ingest_store.games_version(paths.lake_path),) if files else ()
    step = Once(paths, tables.MODERATION, files, depends)
    kept = step.kept()
    if kept is not None:
        return kept
    game_ids = None  # without a decision file no game id is read back
    if files:  # only the ids the decisions name
        named = inbox_readers.moderation_game_ids(paths.inbox_path)
        game_ids = ingest_store.known_game_ids(paths.lake_path, named)
    batch = inbox_readers.ingest_moderation(paths.inbox_path, game_ids)
    _store(paths, tables.MODERATION, batch)
    return step.done(batch)


@dg.asset(
    group_name="ingest",
    code_version=CODE_VERSION,
    description="Ranked backgammon matches backgammon/*.csv.",
)
def backgammon_matches(paths: PipelinePaths) -> dg.MaterializeResult:
    step = Once(paths, tables.MATCHES, inbox_readers.backgammon_files(paths.inbox_path))
    kept = step.kept()
    if kept is not None:
        return kept
    # each file streamed into the lake a chunk at a time (rating_core.lake.ingest_store)
    outcome = ingest_store.ingest_matches(paths.inbox_path, paths.lake_path, paths.budget)
    _store_summary(paths, tables.MATCHES, outcome.files, outcome.notes)
    return step.done_counted(
        outcome.files,
        outcome.notes,
        outcome.matches,
        outcome.quarantined,
        MATCHES_SCHEMA,
        recheck=outcome.recheck,
    )


@dg.asset(
    group_name="ingest",
    code_version=CODE_VERSION,
    deps=[games, starting_lists, players],
    description="Duplicate players federation/merges.csv (an id needs a game, a list or the "
    "registry; chains and cycles are refused).",
)
def merges(paths: PipelinePaths) -> dg.MaterializeResult:
    lake, inbox = paths.lake_path, paths.inbox_path
    path = inbox_readers.decision_file(inbox, "merges")
    found = path is not None  # else nothing to read
    depends: tuple[str, ...] = ()
    if found:  # a merge is dated by the games, the starting lists and the registry
        depends = (
            ingest_store.games_version(lake),
            lake_file_hash(lake, tables.STARTING_LISTS),
            lake_file_hash(lake, tables.PLAYERS),
        )
    step = Once(paths, tables.MERGES, [path] if path is not None else [], depends)
    kept = step.kept()
    if kept is not None:
        return kept
    registry = read_table(lake, tables.PLAYERS).collect()
    # a scan: only the games naming an id of the merges file are read (none without the file)
    games = read_table(lake, tables.GAMES, schema=GAMES_SCHEMA).select(MERGE_GAME_COLUMNS)
    batch = inbox_readers.ingest_merges(
        inbox,
        games,
        read_table(lake, tables.STARTING_LISTS).collect(),
        registry if registry.height else None,
    )
    _store(paths, tables.MERGES, batch)
    return step.done(batch)


@dg.asset_check(asset=games, blocking=True, description="Every game id appears once.")
def games_have_unique_ids(paths: PipelinePaths) -> dg.AssetCheckResult:
    dups = ingest_store.duplicate_game_ids(paths.lake_path, paths.budget)
    return dg.AssetCheckResult(passed=dups == 0, metadata={"duplicates": dups})


UNCLASSIFIED_FACT = "unclassified-games/2"
"""The `derived_facts` record of the unclassified games' count (a new computation: /3)."""


def _unclassified_games(lake: Path) -> int:
    """Platform games without a site category or the site rules' decisions, and other games
    without a list."""
    return int(
        read_table(lake, tables.GAMES)
        .filter(
            (
                (pl.col("source") == "platform")
                & (pl.col("category").is_null() | pl.col("site_verdict").is_null())
            )
            | ((pl.col("source") != "platform") & pl.col("rating_list").is_null())
        )
        .select(pl.len())
        .collect(engine="streaming")
        .item()
    )


@dg.asset_check(
    asset=games,
    blocking=True,
    description=(
        "Every platform game has a site category and the site rules' decisions (the rating "
        "reads them), and every federation game a list."
    ),
)
def games_are_classified(paths: PipelinePaths) -> dg.AssetCheckResult:
    lake = paths.lake_path
    unclassified = int(  # counted again only when a games file changed (a rerun reads none)
        facts.derived(
            lake,
            UNCLASSIFIED_FACT,
            facts.table_files(lake, tables.GAMES),
            lambda: str(_unclassified_games(lake)),
        )
    )
    return dg.AssetCheckResult(passed=unclassified == 0, metadata={"unclassified": unclassified})


INGEST_ASSETS = [
    players,
    games,
    starting_lists,
    corrections,
    moderation_decisions,
    backgammon_matches,
    merges,
]
INGEST_CHECKS = [games_have_unique_ids, games_are_classified]
