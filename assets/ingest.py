"""Ingest assets: read the inbox, write canonical tables and the quarantine to the lake.

Thin by design: paths come from the `paths` resource, the work is `rating_core.ingest.inbox` (and,
for the games, `rating_core.lake.ingest_store`: each file group read once, streamed).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import dagster as dg
import polars as pl

from assets.period_io import CODE_VERSION, frame_metadata, table_metadata
from assets.resources import PipelinePaths
from rating_core import tables
from rating_core.ingest import inbox as inbox_readers
from rating_core.ingest.inbox import InboxBatch
from rating_core.lake import facts, ingest_store
from rating_core.lake.fingerprints import content_hash
from rating_core.lake.storage import read_table, table_partitions, write_partitioned, write_table
from rating_core.schemas import GAMES_SCHEMA
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


def inbox_digest(inbox: Path, files: Iterable[str]) -> str:
    """A digest of the inbox files an ingest asset read (names and contents): its data version,
    so the UI marks what reads it stale exactly when one of those files changed."""
    digest = hashlib.sha256()
    for name in sorted(files):
        path = Path(name) if Path(name).is_absolute() else inbox / name
        digest.update(f"{name}\0".encode())
        if path.is_file():
            digest.update(content_hash(path))
    return digest.hexdigest()


def _result(paths: PipelinePaths, batch: InboxBatch) -> dg.MaterializeResult:
    """The materialization: the digest of the files read as data version; row count, schema,
    quarantined count, per-file counts and notes as metadata."""
    files = batch.files.get_column("source_file").to_list() if batch.files.height else []
    return dg.MaterializeResult(
        data_version=dg.DataVersion(inbox_digest(paths.inbox_path, files)),
        metadata={
            **frame_metadata(batch.rows),
            "quarantined": dg.MetadataValue.int(batch.quarantine.height),
            "files": dg.MetadataValue.json(batch.files.to_dicts()),
            "notes": dg.MetadataValue.json(list(batch.notes)),
        },
    )


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


@dg.asset(
    group_name="ingest", code_version=CODE_VERSION, description="The player registry players.csv."
)
def players(paths: PipelinePaths) -> dg.MaterializeResult:
    batch = inbox_readers.ingest_players(paths.inbox_path, paths.budget)
    _store(paths, tables.PLAYERS, batch)
    return _result(paths, batch)


@dg.asset(
    group_name="ingest",
    code_version=CODE_VERSION,
    deps=[players],
    description="Every chess game (platform, federation, clubs) as the canonical games table.",
)
def games(paths: PipelinePaths) -> dg.MaterializeResult:
    # Only the inbox's game files that changed since the last run are read, streamed into the
    # lake group by group (rating_core.lake.ingest_store); the names come from every group's.
    lake = paths.lake_path
    registry = read_table(lake, tables.PLAYERS).collect()
    outcome = ingest_store.ingest_games(paths.inbox_path, lake, registry, budget=paths.budget)
    ingest_store.refresh_player_names(lake, registry, outcome)
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
    lake = paths.lake_path
    batch = inbox_readers.ingest_starting_lists(paths.inbox_path)
    trf = inbox_readers.tournament_players(paths.inbox_path)
    write_table(lake, tables.TOURNAMENT_PLAYERS, trf)
    sources = [
        registry_data(read_table(lake, tables.PLAYERS).collect()),
        starting_list_data(batch.rows),
        tournament_data(trf),
    ]
    batch = replace(batch, notes=batch.notes + conflict_note(conflicts(sources)))
    _store(paths, tables.STARTING_LISTS, batch)
    return _result(paths, batch)


@dg.asset(
    group_name="ingest",
    code_version=CODE_VERSION,
    description="A rating officer's corrections federation/corrections.csv.",
)
def corrections(paths: PipelinePaths) -> dg.MaterializeResult:
    batch = inbox_readers.ingest_corrections(paths.inbox_path)
    _store(paths, tables.CORRECTIONS, batch)
    return _result(paths, batch)


@dg.asset(
    group_name="ingest",
    code_version=CODE_VERSION,
    deps=[games],
    description="Moderation decisions platform/moderation/*.csv (a decision needs its game).",
)
def moderation_decisions(paths: PipelinePaths) -> dg.MaterializeResult:
    game_ids = None  # without a decision file no game id is read back
    if inbox_readers.moderation_files(paths.inbox_path):  # only the ids the decisions name
        named = inbox_readers.moderation_game_ids(paths.inbox_path)
        game_ids = ingest_store.known_game_ids(paths.lake_path, named)
    batch = inbox_readers.ingest_moderation(paths.inbox_path, game_ids)
    _store(paths, tables.MODERATION, batch)
    return _result(paths, batch)


@dg.asset(
    group_name="ingest",
    code_version=CODE_VERSION,
    description="Ranked backgammon matches backgammon/*.csv.",
)
def backgammon_matches(paths: PipelinePaths) -> dg.MaterializeResult:
    batch = inbox_readers.ingest_backgammon(paths.inbox_path)
    _store(paths, tables.MATCHES, batch)
    return _result(paths, batch)


@dg.asset(
    group_name="ingest",
    code_version=CODE_VERSION,
    deps=[games, starting_lists, players],
    description="Duplicate players federation/merges.csv (an id needs a game, a list or the "
    "registry; chains and cycles are refused).",
)
def merges(paths: PipelinePaths) -> dg.MaterializeResult:
    lake, inbox = paths.lake_path, paths.inbox_path
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
    return _result(paths, batch)


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
