"""Digests of files, frames and the inputs of each period, as SHA-256 hex strings (a file's
`fingerprints.content_hash`, for change detection only, is XXH3-128).

A frame is hashed through its CSV text (nulls written as `\\N`, so a null and an empty string
differ; floats in their shortest round-trip form, so 1e-9 apart differ) plus its schema: the same
values and types give the same digest whatever the frame's chunks or memory layout, and unlike
`DataFrame.hash_rows` the text does not change between Polars versions.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterable
from pathlib import Path

import polars as pl

from rating_core import tables
from rating_core.lake import facts
from rating_core.lake.storage import as_local_path, partition_files, read_table, table_file
from rating_core.periods import previous_period

NULL_MARK = "\\N"
"""How a null cell is written in the CSV text a frame digest hashes."""

_SLICE_ROWS = 200_000
"""Rows hashed per CSV chunk, so a large frame never becomes one huge string."""

RUN_INPUTS_SCHEMA: dict[str, pl.DataType] = {"period": pl.String(), "digest": pl.String()}
"""`period_input_digests`' frame: one digest per period."""


def digest_bytes(data: bytes) -> str:
    """Hex SHA-256 of bytes."""
    return hashlib.sha256(data).hexdigest()


def digest_frame(frame: pl.DataFrame) -> str:
    """SHA-256 of a frame's schema and values in row order (sort first if order is irrelevant)."""
    digest = hashlib.sha256()
    digest.update(json.dumps([[n, str(t)] for n, t in frame.schema.items()]).encode())
    for chunk in frame.iter_slices(n_rows=_SLICE_ROWS):
        digest.update(chunk.write_csv(include_header=False, null_value=NULL_MARK).encode())
    return digest.hexdigest()


def digest_parts(parts: Iterable[str]) -> str:
    """One digest over digests (or any strings), in order."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def digest_frames(*frames: pl.DataFrame | None) -> str:
    """One digest over frames in order, a missing frame (None) counting as `-`."""
    return digest_parts(digest_frame(f) if f is not None else "-" for f in frames)


def digest_files(paths: Iterable[Path | str]) -> str:
    """SHA-256 over the names and bytes of files (folders expanded), in sorted order.

    Names are taken relative to the files' common folder, so moving the inbox keeps the digest.
    """
    files: list[Path] = []
    for item in paths:
        path = as_local_path(item)
        if path.is_dir():
            files.extend(p for p in path.rglob("*") if p.is_file())
        else:
            files.append(path)
    files = sorted(set(files))
    if not files:
        return hashlib.sha256(b"").hexdigest()
    root = Path(os.path.commonpath([str(p.parent.resolve()) for p in files]))
    digest = hashlib.sha256()
    for path in files:
        name = path.resolve().relative_to(root).as_posix()
        digest.update(name.encode() + b"\0")
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of one file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _file_bytes(path: Path) -> bytes:
    return path.read_bytes() if path.is_file() else b"-"


def period_input_digests(lake: Path, periods: list[str], code_version: str) -> pl.DataFrame:
    """One digest per period over everything its lists are computed from besides P-1's state:
    the code version, the registry, the period's games and matches files, the moderation
    decisions on its games, the official starting lists after P-1, the rating officer's
    corrections of P and the duplicate-player merges in force in P (so adding a merge recomputes
    from the first period it changes).

    Hashes the files ingest wrote (no frame is serialised), reading only those whose stamp
    changed since their hash was recorded (`rating_core.lake.facts`).
    """

    common = hashlib.sha256()
    common.update(code_version.encode())
    common.update(_file_bytes(table_file(lake, tables.PLAYERS)))
    moderation = read_table(lake, tables.MODERATION).collect()
    starts = read_table(lake, tables.STARTING_LISTS).collect()
    corrections = read_table(lake, tables.CORRECTIONS).collect()
    merges = read_table(lake, tables.MERGES).collect()
    annulled = None
    if moderation.height:
        games = _moderated_game_periods(lake, moderation.get_column("game_id"))
        annulled = moderation.join(games, on="game_id").sort("game_id")
    parts = {
        (period, table.name): partition_files(lake, table, period)
        for period in periods
        for table in (tables.GAMES, tables.MATCHES)
    }
    hashes: dict[Path, bytes] = {}
    for table in (tables.GAMES, tables.MATCHES):
        files = [path for (_, name), paths in parts.items() if name == table.name for path in paths]
        hashes.update(facts.content_hashes(lake, files))
    rows = []
    for period in periods:
        digest = common.copy()
        for table in (tables.GAMES, tables.MATCHES):
            for path in parts[period, table.name]:
                digest.update(path.name.encode() + hashes[path])
            if not parts[period, table.name]:
                digest.update(b"-")
        if annulled is not None:
            mine = annulled.filter(pl.col("period") == period).drop("period")
            digest.update(mine.write_csv().encode())
        if starts.height:
            official = starts.filter(pl.col("period") == previous_period(period))
            digest.update(official.sort("list", "player_id").write_csv().encode())
        fixes = corrections.filter(pl.col("period") == period)
        if fixes.height:  # a correction republishes its period and every later one
            digest.update(fixes.sort("source_line").write_csv().encode())
        in_force = merges.filter(pl.col("effective_period") <= period)
        if in_force.height:  # a period no merge changes keeps its digest
            digest.update(in_force.drop("source_line").sort("merge_id").write_csv().encode())
        rows.append({"period": period, "digest": digest.hexdigest()})
    return pl.DataFrame(rows, schema=RUN_INPUTS_SCHEMA)


MODERATED_FACT = "moderated-game-periods/1"
"""The `derived_facts` record of `_moderated_game_periods` (a new computation: /2)."""


def _moderated_game_periods(lake: Path, ids: pl.Series) -> pl.DataFrame:
    """`game_id` and `period` of the games the moderation decisions name, read from the games
    only when a file of the games or of the decisions changed (`rating_core.lake.facts`)."""

    schema = {"game_id": pl.String(), "period": pl.String()}

    def found() -> str:
        return (
            read_table(lake, tables.GAMES)
            .select("game_id", "period")
            .filter(pl.col("game_id").is_in(ids.unique().implode()))
            .collect()
            .write_json()
        )

    inputs = [*facts.table_files(lake, tables.GAMES), *facts.table_files(lake, tables.MODERATION)]
    value = facts.derived(lake, MODERATED_FACT, inputs, found)
    return pl.read_json(io.StringIO(value), schema=schema)
