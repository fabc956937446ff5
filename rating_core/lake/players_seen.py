"""The players the games name, as the run summary counts them: seen, not in the registry, and
of those the ones a game file identified by name only (id equal to the name).

The ingest keeps, per inbox file group, one row per player id its games name
(`ingest_players`: the id's 64-bit hash and whether a game gave it only as a name), committed
with the group's games files. The summary combines those sets (one row per player and group,
about a million rows for a platform's month) instead of reading 4 columns of every game again
(issue 31 item 8: 4.6 s at 30M games). A games file without its group's set (a lake written
before the sets were kept, a table written by hand) is read as before, and only that file.

Ids are told apart by their 64-bit hash (`ID_HASH_SEED`, the seed of every id hash of the
ingest) rather than by their text: hashing text in a table of a million players was most of the
summary's seconds. Two different ids share a hash with a chance of about n²/2^65, 3 in 100
million at a million players; they would be counted as one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from rating_core import tables
from rating_core.ingest.common import ID_HASH_SEED
from rating_core.lake import facts
from rating_core.lake.storage import read_table, table_dir
from rating_core.tables import PLAYER_KEYS_SCHEMA

PLAYERS_FACT = "summary-players/2"
"""The `derived_facts` record of the counts (/2: from the per-group sets; a new computation: /3)."""

_GROUP_FILE = ("part-", ".parquet")
"""How the ingest store names a group's file in every table it writes (`part-<group>.parquet`)."""


def player_keys(games: pl.LazyFrame) -> pl.LazyFrame:
    """One row per player id `games` name on either side (a null side is no player), with
    whether any of their games gave the id only as the name (PLAYER_KEYS_SCHEMA)."""
    return reduce_player_keys(player_sides(games))


def player_sides(games: pl.LazyFrame) -> pl.LazyFrame:
    """One row per side of each game that names a player (PLAYER_KEYS_SCHEMA, a player on
    many rows): what `reduce_player_keys` makes one row per player of. Hashing costs far less
    than reducing, so the ingest reduces many windows' sides at once."""
    sides = pl.concat(
        [
            games.select(
                pl.col(f"{side}_id").alias("id"),
                (pl.col(f"{side}_id") == pl.col(f"{side}_name")).alias("by_name"),
            )
            for side in ("white", "black")
        ]
    )
    return sides.drop_nulls("id").select(pl.col("id").hash(ID_HASH_SEED).alias("key"), "by_name")


def reduce_player_keys(keys: pl.LazyFrame) -> pl.LazyFrame:
    """Rows of PLAYER_KEYS_SCHEMA (several per player: pieces of games, several groups) reduced
    to one per player, by name only if any of them is."""
    return keys.group_by("key").agg(pl.col("by_name").any()).cast(PLAYER_KEYS_SCHEMA)


def group_sets(lake: Path) -> tuple[list[Path], list[Path]]:
    """What the counts read: the player sets of the groups that have games files, and the games
    files whose group has none (read whole). A group's set is committed with its games files,
    so it names exactly the players of those files; a set whose group has no games file left
    counts nothing."""
    sets: dict[Path, None] = {}
    games: list[Path] = []
    for path in facts.table_files(lake, tables.GAMES):
        prefix, suffix = _GROUP_FILE
        group = path.name[len(prefix) : -len(suffix)] if path.name.startswith(prefix) else ""
        kept = table_dir(lake, tables.INGEST_PLAYERS) / f"{tables.GROUP}={group}" / path.name
        if group and kept.is_file():
            sets[kept] = None
        else:
            games.append(path)
    return sorted(sets), games


def counts(lake: Path) -> tuple[int, int, int]:
    """Players seen in the games, those not in the registry, and of those the ones identified by
    name only; counted again only when a file they are counted from changed since they were
    recorded (`rating_core.lake.facts`): a run with nothing new reads nothing but the stamps."""
    sets, games = group_sets(lake)
    inputs = [*sets, *games, *facts.table_files(lake, tables.PLAYERS)]
    recorded = facts.derived(lake, PLAYERS_FACT, inputs, lambda: json.dumps(count(lake)))
    total, not_registered, by_name = json.loads(recorded)
    return int(total), int(not_registered), int(by_name)


def count(lake: Path) -> tuple[int, int, int]:
    """`counts`, counted: from the groups' player sets, and the games files without one."""
    return _count(lake, *group_sets(lake))


def _count(lake: Path, sets: Sequence[Path], games: Sequence[Path]) -> tuple[int, int, int]:
    frames = [pl.scan_parquet(path, hive_partitioning=False) for path in sets]
    if games:  # the files of a group without its set (an older lake): 4 columns of their games
        rows = pl.concat(
            [pl.scan_parquet(path, hive_partitioning=False) for path in games],
            how="diagonal_relaxed",
        )
        frames.append(player_keys(rows.select("white_id", "black_id", "white_name", "black_name")))
    if not frames:
        return 0, 0, 0
    together = pl.concat([f.select(list(PLAYER_KEYS_SCHEMA)) for f in frames])
    seen = (together if len(frames) == 1 and not games else reduce_player_keys(together)).collect()
    known = read_table(lake, tables.PLAYERS).select(
        pl.col("player_id").cast(pl.String).hash(ID_HASH_SEED).alias("key")
    )
    missing = seen.join(known.collect(), on="key", how="anti")
    return seen.height, missing.height, int(missing.get_column("by_name").sum())
