"""The lake catalogue: every table a run writes, with its partitioning and, where fixed, its schema.

Callers name tables with these objects instead of string literals, and the storage functions take
them (`read_table(lake, GAMES)`, `write_partitioned(lake, state("site"), frame)`), so a table's
folder, partition column and empty-frame schema are stated once. Storage still accepts a plain
name; one of the catalogue's names gets the catalogue's partitioning and schema.

Families (one table per system or list, all partitioned by `period`):
`state/<system>` what the next period starts from (`state/<list>-pool` the newcomer pools),
`history/<system>[-<table>]` explanations, `excluded/<system>` games a replay did not rate,
`list_rows/<system>` the rows of every list of the system before publication.
Published lists are not tables: they live under `lists/` (`rating_core.lake.publishing`).

A base module (it imports only the other bases): the engines name the tables they write with it
and ingest and storage the tables they read, so no layer spells a table's name or folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from rating_core.names import FIRST_NAMES_SCHEMA, NAMES_SCHEMA
from rating_core.schemas import (
    APPLIED_ANNULMENTS_SCHEMA,
    APPLIED_INPUTS_SCHEMA,
    CORRECTIONS_SCHEMA,
    FILE_SUMMARY_SCHEMA,
    GAMES_SCHEMA,
    MATCHES_SCHEMA,
    MERGES_SCHEMA,
    MODERATION_SCHEMA,
    PLAYERS_SCHEMA,
    QUARANTINE_SCHEMA,
    RATING_LISTS,
    STARTING_LIST_SCHEMA,
    TRF_PLAYERS_SCHEMA,
    TableSchema,
)

PERIOD = "period"
"""Partition column of every period table (`YYYY-MM`)."""

ASSET = "asset"
"""Partition column of the ingest summary tables: the canonical table the rows are about."""

SOURCE = "source"
"""Partition column of the quarantine: the canonical table whose ingest rejected the records."""


@dataclass(frozen=True)
class LakeTable:
    """One lake table: its folder under the lake, its partition column (None: one file) and the
    schema an empty read gives (None: the table's columns depend on what was written)."""

    name: str
    partition_col: str | None = None
    schema: TableSchema | None = field(default=None, hash=False, compare=False)
    statistics: bool = field(default=True, compare=False)
    """Whether its Parquet files carry column statistics (min/max per row group)."""

    @property
    def partitioned(self) -> bool:
        """Whether the table is stored as `<col>=<value>/` folders."""
        return self.partition_col is not None


# --- canonical tables, written by ingest ------------------------------------------------------

GAMES = LakeTable("games", PERIOD, GAMES_SCHEMA)
"""Every chess game of the inbox (platform, federation, clubs), by the month it was played."""

MATCHES = LakeTable("matches", PERIOD, MATCHES_SCHEMA)
"""Every ranked backgammon match, by the month it ended."""

PLAYERS = LakeTable("players", None, PLAYERS_SCHEMA)
"""The player registry `players.csv`."""

STARTING_LISTS = LakeTable("starting_lists", None, STARTING_LIST_SCHEMA)
"""The official starting lists `federation/lists/<list>@<YYYY-MM>.csv`."""

MODERATION = LakeTable("moderation", None, MODERATION_SCHEMA)
"""The moderation decisions `platform/moderation/*.csv`."""

CORRECTIONS = LakeTable("corrections", None, CORRECTIONS_SCHEMA)
"""The rating officer's corrections `federation/corrections.csv`."""

MERGES = LakeTable("merges", None, MERGES_SCHEMA)
"""The duplicate players merged by `federation/merges.csv`, each with the first period it changes."""

QUARANTINE = LakeTable("quarantine", SOURCE, {**QUARANTINE_SCHEMA, SOURCE: pl.String})
"""Rejected records with their reason; each ingest step replaces its own `source=<table>`."""

INGEST_SUMMARY = LakeTable("ingest_summary", ASSET, {**FILE_SUMMARY_SCHEMA, ASSET: pl.String})
"""Per-file counts of each ingest step, read back by the run summary."""

INGEST_NOTES = LakeTable("ingest_notes", ASSET, {"note": pl.String, ASSET: pl.String})
"""The notes of each ingest step ("3 games have no time control..."), one row per note."""

GROUP = "group"
"""Partition column of the ingest store's tables: the inbox file group (`ingest_store`)."""

INGEST_FILES = LakeTable(
    "ingest_files",
    None,
    {
        "group": pl.String,
        "file": pl.String,
        "size": pl.Int64,
        "mtime_ns": pl.Int64,
        "digest": pl.String,
        "group_digest": pl.String,
        "file_count": pl.Int64,
        "ingested": pl.Int64,
        "quarantined": pl.Int64,
        "notes": pl.String,
        "group_notes": pl.String,
        "recheck": pl.Boolean,
        "lost_to": pl.String,
    },
)
"""One row per game file of the inbox as the games were last ingested: what was read (size,
modification time, content digest), what came of it, and what would make its group be read
again (`rating_core.lake.ingest_store`)."""

INGEST_IDS = LakeTable("ingest_ids", GROUP, {"hash": pl.UInt64, GROUP: pl.String})
"""Per file group, the sorted 64-bit hashes of the game ids it keeps (ids unique over groups)."""

INGEST_NAMES = LakeTable("ingest_names", GROUP, {**FIRST_NAMES_SCHEMA, GROUP: pl.String})
"""Per file group, the first name each player id has in its games (`player_names` is built
from them without reading the games again)."""

PLAYER_KEYS_SCHEMA: TableSchema = {"key": pl.UInt64, "by_name": pl.Boolean}
"""One row per player: the 64-bit hash of the id (`rating_core.lake.players_seen`), and whether
a game gave the id only as a name."""

INGEST_PLAYERS = LakeTable("ingest_players", GROUP, {**PLAYER_KEYS_SCHEMA, GROUP: pl.String})
"""Per file group, one row per player id its games name: the id's 64-bit hash and whether a
game gave the id only as a name (what the run summary counts, without reading the games again:
`rating_core.lake.players_seen`)."""

PLAYER_NAMES = LakeTable("player_names", None, NAMES_SCHEMA)
"""One display name per player id (registry first, else the name a game file gave)."""

TOURNAMENT_PLAYERS = LakeTable("tournament_players", None, TRF_PLAYERS_SCHEMA)
"""The TRF files' player records (`001`): the last source of a federation list's player data
(`rating_core.systems.player_data`), written with the starting lists."""

CANONICAL_TABLES = (GAMES, MATCHES, PLAYERS, STARTING_LISTS, MODERATION, CORRECTIONS, MERGES)
"""The tables ingest writes from the inbox, each with its quarantine and summary partitions."""

# --- bookkeeping ------------------------------------------------------------------------------

RUN_INPUTS = LakeTable("run_inputs", None, {PERIOD: pl.String, "digest": pl.String})
"""The input digest of every period the last run rated (`pipelines.incremental`)."""

DERIVED_FACTS = LakeTable(
    "derived_facts", None, {"fact": pl.String, "inputs": pl.String, "value": pl.String}
)
"""Results computed from lake files (a partition file's content hash, a count over the games),
each with a stamp of the files it was computed from: reused while that stamp is unchanged, so a
run with nothing new does not read the whole lake again (`rating_core.lake.facts`)."""

APPLIED_SITE_ANNULMENTS = LakeTable(
    "applied/site_annulments", PERIOD, {**APPLIED_ANNULMENTS_SCHEMA, PERIOD: pl.String}
)
"""Per period, the annulments the last publication of the site lists applied."""


def applied_inputs(system: str) -> LakeTable:
    """`applied/<system>-inputs`: per period, the tournaments and starting-list entries, player
    by player, the system's lists were last published from (the next diff's causes); for the
    site and FIBS lists, the inbox files with records in the period and their digests."""
    return LakeTable(
        f"applied/{system}-inputs", PERIOD, {**APPLIED_INPUTS_SCHEMA, PERIOD: pl.String}
    )


MERGE_SYSTEMS = ("fide", "ukd", "club")
"""The systems whose lists `federation/merges.csv` changes."""

INPUT_CAUSE_SYSTEMS = ("fide", "ukd", "club", "site", "fibs")
"""Systems whose diffs name the inputs that moved a player (`applied/<system>-inputs`: the
site and FIBS lists record their inbox files, `input_causes.file_inputs`)."""


def applied_merges(system: str) -> LakeTable:
    """`applied/<system>-merges`: per period, the merges the last publication of the system's
    lists applied (so a later version names only new merges as its diff cause)."""
    return LakeTable(
        f"applied/{system}-merges",
        PERIOD,
        {"keep_id": pl.String, "merge_id": pl.String, PERIOD: pl.String},
    )


# --- per-system period tables -----------------------------------------------------------------

SYSTEMS = ("fide", "ukd", "club", "site", "fibs")
"""Every rating system, as named in `list_rows/<system>` and in the assets."""

FEDERATION_SYSTEMS = ("fide", "ukd")
"""Systems with one list (and one state, pool and explanation set) per rating list."""

EXPLANATION_TABLES: dict[str, tuple[str, ...]] = {
    "fide": ("game_explanations", "player_explanations", "newcomers", "dropped"),
    "ukd": ("game_explanations", "tournament_explanations", "player_explanations", "newcomers"),
    "club": ("player_explanations", "game_explanations"),
}
"""The named explanation tables of each system with more than one (`history/<name>-<table>`);
the site and FIBS replays write one history table each (`history/site`, `history/fibs`)."""


STATE = "state"
HISTORY = "history"
EXCLUDED = "excluded"
LIST_ROWS = "list_rows"
"""The folders of the per-system families: `<family>/<system>`."""


def state(system: str) -> LakeTable:
    """`state/<system>`: the state after each period, which the next period starts from
    (`system` is a list family such as `fide-standard`, or `site`, `fibs`, `club`)."""
    return LakeTable(f"{STATE}/{system}", PERIOD)


def pool(system: str) -> LakeTable:
    """`state/<system>-pool`: a federation list's pool of unrated players still collecting games."""
    return state(f"{system}-pool")


FIBS_PAIR_STATE = state("fibs_pairs")
"""The FIBS pair state (when each pair last played), carried from period to period."""


def history(system: str, table: str | None = None) -> LakeTable:
    """`history/<system>` or `history/<system>-<table>`: explanation rows of each period."""
    name = system if table is None else f"{system}-{table}"
    # rows in game order: a player's or a game's min/max per row group skips nothing, and
    # writing them is a fifth of the encoding of a large month's history
    return LakeTable(f"{HISTORY}/{name}", PERIOD, statistics=False)


def excluded(system: str) -> LakeTable:
    """`excluded/<system>`: games the replay did not rate in each period, with the reason."""
    return LakeTable(f"{EXCLUDED}/{system}", PERIOD)


def list_rows(system: str) -> LakeTable:
    """`list_rows/<system>`: every list of the system for each period, before publication."""
    return LakeTable(f"{LIST_ROWS}/{system}", PERIOD)


def _system_tables() -> list[LakeTable]:
    """The period tables of every system, as the rating assets write them."""
    found: list[LakeTable] = []
    for system in FEDERATION_SYSTEMS:
        for kind in RATING_LISTS:
            name = f"{system}-{kind}"
            found += [state(name), pool(name)]
            found += [history(name, table) for table in EXPLANATION_TABLES[system]]
        found.append(history(system, "corrections"))  # every list's corrections, applied or not
    found += [state("club")] + [history("club", t) for t in EXPLANATION_TABLES["club"]]
    found += [state("site"), history("site"), excluded("site")]
    found += [state("fibs"), FIBS_PAIR_STATE, history("fibs")]
    found += [list_rows(system) for system in SYSTEMS]
    return found


CATALOGUE: tuple[LakeTable, ...] = (
    *CANONICAL_TABLES,
    QUARANTINE,
    INGEST_SUMMARY,
    INGEST_NOTES,
    INGEST_FILES,
    INGEST_IDS,
    INGEST_NAMES,
    INGEST_PLAYERS,
    PLAYER_NAMES,
    TOURNAMENT_PLAYERS,
    RUN_INPUTS,
    DERIVED_FACTS,
    APPLIED_SITE_ANNULMENTS,
    *(applied_inputs(system) for system in INPUT_CAUSE_SYSTEMS),
    *(applied_merges(system) for system in MERGE_SYSTEMS),
    *_system_tables(),
)
"""Every table a full `ratings run` writes (a test compares it with a run on the samples)."""

_BY_NAME = {table.name: table for table in CATALOGUE}


def named(name: str) -> LakeTable | None:
    """The catalogue's table called `name` (e.g. `"games"`, `"state/site"`), None if none is."""
    return _BY_NAME.get(name)


def history_tables() -> tuple[LakeTable, ...]:
    """Every explanation table of every system, sorted by name (what `ratings history` reads)."""
    return tuple(
        sorted((t for t in CATALOGUE if t.name.startswith(f"{HISTORY}/")), key=lambda t: t.name)
    )
