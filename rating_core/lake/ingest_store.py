"""The games table kept per inbox file group: each group is read once, streamed into the lake,
and read again only when its files change (DESIGN §2 "ingest once", issue 31 items 1-2).

A group (`rating_core.ingest.inbox.GameGroup`: a platform file, the federation folder, a club
folder) writes its rows as `games/period=P/part-<group>.parquet` and its rejected records as
`quarantine/source=games/part-<group>.parquet`, a window at a time for a platform PGN file, so
memory does not grow with the file. Beside them, per group: the 64-bit hashes of the ids it
keeps (`ingest_ids`), the first name each player has in its games (`ingest_names`), the players
its games name (`ingest_players`, committed with its games: what the run summary counts) and one
row per file in `ingest_files` (size, modification time, content digest, counts, notes).

A run compares each group with that record: a file of the same size and modification time is
not read at all, another is hashed (XXH3-128) and, if its content is new, its group is read
again and replaces exactly its own files; a group that left the inbox is removed. A group is
also read again when what its rows depend on changed: the code that reads them, the registry's
bots, the day (a game dated after today is rejected only until that day comes), or a group it
lost a game id to.

Game ids stay unique over the table, the first record in inbox order keeping an id, as a
reading of the whole inbox keeps it: a group's id hashes are compared with every earlier
group's (and, within a streamed file, across its windows); on a match the exact ids are looked
up and the group is read again with them excluded (a rare path: duplicates are mistakes). A
later group that holds an id a re-read group now holds is read again in its turn. The hashes are
gathered in spill files on disk and compared, sorted and checked for repeats by DuckDB within the
budget (`id_spill`): a month's tens of millions of ids cost no memory that grows with its games.

What does grow with a group's players (their first names and ids: a month of 3M games among
1.14M players grew 450 MiB while read, then its names were built) is bounded by a `--memory`
budget: a group whose players so far could not be rated within it stops the ingest there
(`OverBudgetError`, one sentence), committing nothing of it, before it holds them all.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import numpy as np
import polars as pl

from rating_core import tables
from rating_core.budget import MemoryBudget, OverBudgetError, players_refusal
from rating_core.ingest.canonical import TAKEN_SCHEMA, check_match_dates
from rating_core.ingest.common import ID_HASH_SEED, IngestResult, id_hashes, repeated_hashes
from rating_core.ingest.inbox import (
    RESTART,
    GameGroup,
    GroupReading,
    backgammon_files,
    game_groups,
    last_line,
)
from rating_core.ingest.registry import backgammon_chunks
from rating_core.lake import facts
from rating_core.lake.fingerprints import content_hash, reader_version
from rating_core.lake.id_spill import HashQueries, HashSpill, hash_queries, spill_folder
from rating_core.lake.players_seen import PLAYER_KEYS_SCHEMA, player_sides, reduce_player_keys
from rating_core.lake.storage import (
    StagedParts,
    drop_partition,
    partition_files,
    read_table,
    table_dir,
    table_file,
    table_metadata,
    table_partitions,
    write_partitions,
    write_table,
)
from rating_core.names import (
    FIRST_NAMES_SCHEMA,
    first_names,
    merge_first_names,
    names_from,
    reduce_first_names,
    side_rows,
)
from rating_core.periods import AFTER_TODAY
from rating_core.progress import Progress, report
from rating_core.schemas import MATCHES_SCHEMA, QUARANTINE_SCHEMA, empty

GAMES_SOURCE = "games"
"""The quarantine partition of the games table (`quarantine/source=games`)."""


def registry_digest(players: pl.DataFrame | None) -> str:
    """A digest of what the registry tells the games (its bots and their fixed ratings)."""
    if players is None or not players.height:
        return "-"
    bots = (
        players.select(
            pl.col("player_id").cast(pl.String),
            pl.col("is_bot").cast(pl.Boolean).fill_null(False),
            pl.col("bot_rating").cast(pl.Float64),
        )
        .filter(pl.col("is_bot") | pl.col("bot_rating").is_not_null())
        .sort(pl.all())
    )
    return hashlib.sha256(bots.write_csv().encode()).hexdigest()


@dataclass
class StoreOutcome:
    """What one ingest of the games did: per-file counts (FILE_SUMMARY_SCHEMA), notes, the
    groups read (`read`) and removed, and a digest of every group's inputs (the asset's data
    version)."""

    files: pl.DataFrame
    notes: list[str]
    read: list[str]
    removed: list[str]
    digest: str
    games: int
    quarantined: int

    @property
    def changed(self) -> bool:
        return bool(self.read or self.removed)


@dataclass
class _Read:
    """One group's reading: its per-file counts and notes, the hashes of the ids it keeps (on
    disk), first names."""

    counts: pl.DataFrame
    notes: dict[str, tuple[str, ...]]
    group_notes: list[str]
    kept: HashSpill
    names: pl.DataFrame
    recheck: bool
    lost_to: list[str]


def _quarantine_frame(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(pl.lit(GAMES_SOURCE).alias(tables.SOURCE))


def _read_group(
    lake: Path,
    group: GameGroup,
    players: pl.DataFrame | None,
    today: date | None,
    earlier: list[GameGroup],
    queries: HashQueries,
    folder: Path,
    budget: MemoryBudget | None = None,
) -> _Read:
    """Read `group` into its files in the lake, keeping game ids unique (see the module). The
    ids' hashes go to spill files in `folder`, compared by `queries` (bounded memory)."""
    taken = pl.DataFrame(schema=TAKEN_SCHEMA)
    repeated: frozenset[int] = frozenset()
    lost_to: set[str] = set()
    looked_up: set[int] = set()
    while True:
        kept, split = HashSpill(folder, "kept"), HashSpill(folder, "split")
        sink = _GroupSink(
            StagedParts(lake, f"part-{group.key}.parquet"), kept, budget, group_words(group)
        )
        reading = GroupReading(
            group, players, today, True, taken, repeated, budget, split_ids=split
        )
        try:
            sink.take(reading.pieces())
            again = queries.repeated(split.files()) - repeated
            split.clear()
            clash: set[int] = set()
            for other in earlier:
                clash |= queries.common(kept.files(), _ids_files(lake, other.key)) - looked_up
            if again or clash:  # read again, without the ids found twice
                sink.files.discard()
                kept.clear()
                repeated = repeated | frozenset(again)
                if clash:
                    looked_up |= clash
                    found, winners = _lookup(lake, earlier, clash)
                    taken = pl.concat([taken, found]).unique("game_id", keep="first")
                    lost_to |= winners
                continue
            # the group's players, committed with its games: never one without the other
            sink.files.put(tables.INGEST_PLAYERS, group.key, sink.players_seen())
            sink.files.commit([tables.GAMES, tables.QUARANTINE])
        except BaseException:
            sink.files.discard()
            kept.clear()
            split.clear()
            raise
        return _Read(
            counts=sink.counts_per_file(),
            notes=reading.notes,
            group_notes=reading.group_notes,
            kept=kept,
            names=merge_first_names(sink.names) if sink.names else empty(FIRST_NAMES_SCHEMA),
            recheck=sink.recheck,
            lost_to=sorted(lost_to),
        )


def group_words(group: GameGroup) -> str:
    """A group as a sentence names it: its file (`platform/lichess_2024-01.pgn.zst`), or the
    folder of its files (`federation/`)."""
    names = [name for _, name in group.files]
    if len(names) == 1:
        return names[0]
    folder = posixpath.commonpath(names) if names else ""
    return f"{folder}/" if folder else "the inbox's game files"


@dataclass
class _GroupSink:
    """Where one reading of a group goes: its files, and what the group keeps of its pieces
    (per-file counts, the ids' hashes on disk, the players' first names and ids, whether a date
    was after today). With a `budget`, the reading stops (`OverBudgetError`) as soon as the
    players its games name so far could not be rated within it (`_check_players_fit`)."""

    files: StagedParts
    kept: HashSpill
    budget: MemoryBudget | None = None
    words: str = "the group"
    counts: list[pl.DataFrame] = field(default_factory=list)
    names: list[pl.DataFrame] = field(default_factory=list)
    players: list[pl.DataFrame] = field(default_factory=list)
    player_rows: int = 0
    known: int = 0
    """Players in the reduced set (`players[0]` after a reduction): the group names at least
    these."""
    games: int = 0
    recheck: bool = False

    def take(self, pieces: Iterable[IngestResult]) -> None:
        """Write every piece, each on a thread while the next one is read (Polars, the scanner
        and Parquet release the GIL), one in flight: the order and the memory stay those of one
        piece at a time. A RESTART voids what came before it."""
        with ThreadPoolExecutor(1, thread_name_prefix="ratings-write") as writer:
            writing: Future[None] | None = None
            for piece in pieces:
                if writing is not None:
                    writing.result()
                    writing = None
                if piece is RESTART:
                    self.files.discard()
                    self.kept.clear()
                    self.counts, self.names, self.players, self.recheck = [], [], [], False
                    self.player_rows = self.known = self.games = 0
                else:
                    writing = writer.submit(self._keep, piece)
            if writing is not None:
                writing.result()

    def _keep(self, piece: IngestResult) -> None:
        rows = piece.rows
        self.files.write(tables.GAMES, rows)
        self.files.write(tables.QUARANTINE, _quarantine_frame(piece.quarantine))
        self.counts.append(_counts(rows, piece.quarantine))
        self.kept.append(id_hashes(rows.get_column("game_id")))
        sides = player_sides(rows.lazy()).collect()
        self.players.append(sides)
        self.player_rows += sides.height
        self.games += rows.height
        self._check_players_fit()  # before the names' reduction: per player too
        first = first_names if not self.names else side_rows  # merged with the first's
        self.names.append(_detached(first(rows)))
        if len(self.names) >= _NAMES_REDUCED_EVERY:  # per player, not per game
            self.names = [_reduced_names(self.names)]
        self.recheck = self.recheck or _dated_after_today(piece.quarantine)

    def _check_players_fit(self) -> None:
        """Reduce the players' sides when they are many (per player, not per game) or when the
        players might no longer fit the budget beside the games so far; OverBudgetError when
        the players counted then do not fit: the ingest stops within the budget, never holding
        a file's players that the run could not rate (`players_room`)."""
        room = self.budget.players_room(self.games) if self.budget is not None else None
        if _reduce_sides(self.player_rows, self.known, room):
            reduced = self._players_reduced()
            self.players, self.player_rows, self.known = [reduced], 0, reduced.height
        if room is not None and self.known > room:
            assert self.budget is not None and self.budget.total is not None
            counted = (
                f"{self.words} names at least {self.known:,} players in its first "
                f"{self.games:,} games, which need"
            )
            raise OverBudgetError(
                players_refusal(counted, self.known, self.games, self.budget.total, least=True)
            )

    def players_seen(self) -> pl.DataFrame:
        """One row per player id the group's games name so far (`players_seen.player_keys`),
        sorted by hash: a group read again with the same games writes the same file."""
        if not self.players:
            return empty(PLAYER_KEYS_SCHEMA)
        return self._players_reduced().sort("key")

    def _players_reduced(self) -> pl.DataFrame:
        """The players of every piece so far, one row each (about 9 bytes a player)."""
        return reduce_player_keys(pl.concat(self.players).lazy()).collect()

    def counts_per_file(self) -> pl.DataFrame:
        """Rows kept and rejected per file of the group."""
        if not self.counts:
            return pl.DataFrame(
                schema={"source_file": pl.String, "ingested": pl.Int64, "quarantined": pl.Int64}
            )
        together = pl.concat(self.counts)
        return together.group_by("source_file").agg(pl.col("ingested", "quarantined").sum())


_NAMES_REDUCED_EVERY = 8
"""Windows of first names gathered before they are reduced to one row per player and side."""

_PLAYER_SIDES_REDUCED_ABOVE = 2_000_000
"""Players' sides gathered (9 bytes each: about 30 windows of a platform's file) before they are
reduced to one row per player: reducing costs per call far more than per row."""

_ROOM_SHARE = 4
"""Under a budget, once the players might not fit (`_reduce_sides`), the sides are reduced
whenever they are a quarter of the budget's room for players: a file's players are counted at
most a quarter of that room late, and a run that fits reduces a few dozen times at most."""


def _reduce_sides(sides: int, known: int, room: int | None) -> bool:
    """Whether `sides` players' sides gathered beside `known` players already reduced are to be
    reduced now: when they are many (`_PLAYER_SIDES_REDUCED_ABOVE`), or, when a budget leaves
    `room` players (None: no budget), when they might hold more players than it leaves and
    are a `_ROOM_SHARE` of it (any, when the games alone leave no room)."""
    if sides >= _PLAYER_SIDES_REDUCED_ABOVE:
        return True
    if room is None or not sides:
        return False
    return known + sides > room and sides >= room // _ROOM_SHARE


def _reduced_names(names: list[pl.DataFrame]) -> pl.DataFrame:
    """Windows' first names reduced to one row per player and side, detached: the reduced rows'
    strings would otherwise view the buffers of every window reduced before, chaining them all
    (about 80 bytes a game over a month, issue 31 item 4)."""
    return _detached(merge_first_names(names))


def _detached(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` with its strings copied out of the window they came from: a few rows selected
    from a window's string views keep that window's whole string buffers alive (about 20 MB a
    window), which a streamed file must not pile up."""
    copied = pl.from_arrow(frame.to_arrow())
    assert isinstance(copied, pl.DataFrame)
    return copied


def _counts(rows: pl.DataFrame, quarantine: pl.DataFrame) -> pl.DataFrame:
    ingested = rows.group_by("source_file").len("ingested")
    rejected = quarantine.group_by("source_file").len("quarantined")
    return (
        ingested.join(rejected, on="source_file", how="full", coalesce=True)
        .with_columns(pl.col("ingested", "quarantined").fill_null(0).cast(pl.Int64))
        .select("source_file", "ingested", "quarantined")
    )


def _dated_after_today(quarantine: pl.DataFrame) -> bool:
    """Whether a record was rejected for a date after today (it may be good on a later day)."""
    return bool(
        quarantine.select(pl.col("reason").str.contains(AFTER_TODAY, literal=True).any()).item()
    )


def _ids_files(lake: Path, key: str) -> list[Path]:
    """The file of a group's id hashes in the lake ([]: none)."""
    return partition_files(lake, tables.INGEST_IDS, key)


def _write_ids(lake: Path, key: str, kept: HashSpill, queries: HashQueries) -> None:
    """Replace a group's `ingest_ids` partition with its kept hashes, sorted (by DuckDB within
    its memory limit) and written a batch at a time."""
    files = kept.files()
    if not files:
        empty_ids = pl.DataFrame({"hash": np.empty(0, np.uint64)})
        write_partitions(lake, tables.INGEST_IDS, {key: empty_ids})
        return
    staged = StagedParts(lake)
    try:
        for batch in queries.sorted_batches(files):
            frame = pl.from_arrow(batch)
            assert isinstance(frame, pl.DataFrame)
            staged.append(tables.INGEST_IDS, key, frame)
        staged.commit()
    except BaseException:
        staged.discard()
        raise


def _lookup(lake: Path, groups: list[GameGroup], hashes: set[int]) -> tuple[pl.DataFrame, set[str]]:
    """The records of `groups` (in order) whose id hash is one of `hashes`: TAKEN_SCHEMA rows of
    the first record of each id, and the groups that hold them."""
    wanted = pl.Series(sorted(hashes), dtype=pl.UInt64).implode()
    found: list[pl.DataFrame] = []
    for group in groups:
        files = sorted(table_dir(lake, tables.GAMES).glob(f"*/part-{group.key}.parquet"))
        if not files:
            continue
        rows = (
            pl.scan_parquet(files, hive_partitioning=False)
            .select("game_id", "source_file", "source_line")
            .filter(pl.col("game_id").hash(ID_HASH_SEED).is_in(wanted))
            .collect()
        )
        if rows.height:
            found.append(rows.with_columns(pl.lit(group.key).alias("group")))
    if not found:
        return pl.DataFrame(schema=TAKEN_SCHEMA), set()
    both = pl.concat(found).unique("game_id", keep="first", maintain_order=True)
    taken = both.select(
        "game_id", first_file=pl.col("source_file"), first_line=pl.col("source_line")
    ).cast(TAKEN_SCHEMA)
    return taken, set(both.get_column("group").to_list())


def _records(lake: Path) -> pl.DataFrame:
    return read_table(lake, tables.INGEST_FILES).collect()


def _stamp(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_size, info.st_mtime_ns


def ingest_games(
    inbox: Path,
    lake: Path,
    players: pl.DataFrame | None = None,
    today: date | None = None,
    budget: MemoryBudget | None = None,
) -> StoreOutcome:
    """Bring the lake's games table up to date with the inbox's game files, reading only the
    groups that changed (see the module), streamed within `budget`; returns what it did."""
    inbox, lake = Path(inbox), Path(lake)
    run_notes: list[str] = []
    groups = game_groups(inbox, run_notes)
    before = _records(lake)
    if not before.height and table_partitions(lake, tables.GAMES):
        _clear(lake)  # a lake written before the games were kept per group: read all again
    version = f"{reader_version()}:{registry_digest(players)}"
    known = {row["file"]: row for row in before.iter_rows(named=True)}  # file name -> its record
    previous = {row["group"]: row for row in before.iter_rows(named=True)}
    digests: dict[str, str] = {}
    group_digest: dict[str, str] = {}
    for group in groups:
        whole = hashlib.sha256(version.encode())
        for path, name in group.files:
            size, mtime = _stamp(path)
            old = known.get(name)
            if old is not None and (old["size"], old["mtime_ns"]) == (size, mtime):
                digests[name] = old["digest"]
            else:
                digests[name] = content_hash(path).hex()
            whole.update(f"{name}\0{digests[name]}\0".encode())
        group_digest[group.key] = whole.hexdigest()
    present = {group.key for group in groups}
    removed = sorted(set(previous) - present)
    todo = {
        group.key
        for group in groups
        if group.key not in previous
        or previous[group.key]["group_digest"] != group_digest[group.key]
        or previous[group.key]["recheck"]
        or previous[group.key]["file_count"] != len(group.files)
    }
    for group in groups:
        lost = previous.get(group.key, {}).get("lost_to") or ""
        if set(filter(None, lost.split(","))) & (todo | set(removed)):
            todo.add(group.key)
    for key in removed:
        _remove_group(lake, key)
    rows: list[dict[str, object]] = []
    read: list[str] = []
    with spill_folder() as folder, hash_queries(_hash_memory(budget)) as queries:
        for index, group in enumerate(groups):
            if group.key not in todo:  # kept; a file touched but unchanged gets its new stamp
                for path, name in group.files:
                    size, mtime = _stamp(path)
                    rows.append({**known[name], "size": size, "mtime_ns": mtime})
                continue
            result = _read_group(
                lake, group, players, today, groups[:index], queries, folder, budget
            )
            read.append(group.key)
            _write_ids(lake, group.key, result.kept, queries)
            result.kept.clear()
            write_partitions(lake, tables.INGEST_NAMES, {group.key: result.names})
            mine = _ids_files(lake, group.key)
            for later in groups[index + 1 :]:
                if (
                    later.key not in todo
                    and later.key in previous
                    and queries.any_common(_ids_files(lake, later.key), mine)
                ):
                    todo.add(later.key)
            counts = {r["source_file"]: r for r in result.counts.iter_rows(named=True)}
            for position, (path, name) in enumerate(group.files):
                size, mtime = _stamp(path)
                rows.append(
                    {
                        "group": group.key,
                        "file": name,
                        "size": size,
                        "mtime_ns": mtime,
                        "digest": digests[name],
                        "group_digest": group_digest[group.key],
                        "file_count": len(group.files),
                        "ingested": counts.get(name, {}).get("ingested", 0),
                        "quarantined": counts.get(name, {}).get("quarantined", 0),
                        "notes": json.dumps(list(result.notes.get(name, ()))),
                        "group_notes": json.dumps(result.group_notes if position == 0 else []),
                        "recheck": result.recheck,
                        "lost_to": ",".join(result.lost_to) or None,
                    }
                )
    records = pl.DataFrame(rows, schema=tables.INGEST_FILES.schema)
    if not records.equals(before):
        write_table(lake, tables.INGEST_FILES, records)
    return _outcome(records, run_notes, read, removed)


def _hash_memory(budget: MemoryBudget | None) -> int:
    """What DuckDB may hold comparing and sorting id hashes before it spills to disk."""
    return (budget or MemoryBudget()).sort_memory


def _outcome(
    records: pl.DataFrame, run_notes: list[str], read: list[str], removed: list[str]
) -> StoreOutcome:
    files = pl.DataFrame(
        [
            {
                "kind": "games",
                "source_file": row["file"],
                "ingested": row["ingested"],
                "quarantined": row["quarantined"],
                "notes": "; ".join(json.loads(row["notes"])) or None,
            }
            for row in records.iter_rows(named=True)
        ],
        schema=tables.FILE_SUMMARY_SCHEMA,
    )
    notes = list(run_notes)
    for row in records.iter_rows(named=True):
        notes.extend(json.loads(row["notes"]))
        notes.extend(json.loads(row["group_notes"]))
    digest = _version_of(records)
    return StoreOutcome(
        files=files,
        notes=notes,
        read=read,
        removed=removed,
        digest=digest,
        games=int(records.get_column("ingested").sum() or 0),
        quarantined=int(records.get_column("quarantined").sum() or 0),
    )


def _version_of(records: pl.DataFrame) -> str:
    """A digest of every group's inputs (their files' names and contents, the reader's version,
    the registry's bots): the games table's data version."""
    groups = sorted(set(records.get_column("group_digest").to_list()))
    return hashlib.sha256("\n".join(groups).encode()).hexdigest()


def games_version(lake: Path) -> str:
    """The data version of the games table as the last ingest left it (`_version_of`)."""
    return _version_of(_records(Path(lake)))


def _remove_group(lake: Path, key: str) -> None:
    """Remove a group's files from every table it wrote."""
    for table in (tables.GAMES, tables.QUARANTINE):
        for path in table_dir(lake, table).glob(f"*/part-{key}.parquet"):
            path.unlink()
    for table in (tables.INGEST_IDS, tables.INGEST_NAMES, tables.INGEST_PLAYERS):
        drop_partition(lake, table, key)


def _clear(lake: Path) -> None:
    """Remove the games table and its quarantine as a lake of the whole-table layout wrote them."""
    for value in table_partitions(lake, tables.GAMES):
        drop_partition(lake, tables.GAMES, value)
    drop_partition(lake, tables.QUARANTINE, GAMES_SOURCE)


def player_first_names(lake: Path) -> pl.DataFrame:
    """Every group's first names, in inbox order (FIRST_NAMES_SCHEMA)."""
    keys = table_partitions(lake, tables.INGEST_NAMES)
    if not keys:
        return empty(FIRST_NAMES_SCHEMA)
    names = read_table(lake, tables.INGEST_NAMES, keys).collect().drop(tables.GROUP)
    return names if len(keys) == 1 else reduce_first_names(names)  # one group's are reduced


NAMES_INPUTS = "inputs"
"""The key, in `player_names`' file, of the digest of what the names were made from."""


def registry_bots(lake: Path) -> pl.DataFrame:
    """The registry's rows the games read (PLAYERS_SCHEMA): its bots and the players given a
    bot rating, read through a filter (a million players are never held for a few bots)."""
    return (
        read_table(lake, tables.PLAYERS)
        .filter(pl.col("is_bot").fill_null(False) | pl.col("bot_rating").is_not_null())
        .collect(engine="streaming")
    )


def refresh_player_names(lake: Path, registry: pl.DataFrame | None, outcome: StoreOutcome) -> bool:
    """Write `player_names` from the registry (None: the lake's, read only when the names are
    written) and every group's first names, unless neither changed since they were last
    written (a run with nothing new skips the work: a second at a million players); returns
    whether it wrote them."""
    registry_file = table_file(lake, tables.PLAYERS)
    found = facts.content_hashes(lake, [registry_file]).get(registry_file)  # by its stamp
    registry_hash = found.hex() if found is not None else "-"
    inputs = hashlib.sha256(f"{outcome.digest}\0{registry_hash}".encode()).hexdigest()
    if table_metadata(lake, tables.PLAYER_NAMES).get(NAMES_INPUTS) == inputs:
        return False
    if registry is None:
        registry = read_table(lake, tables.PLAYERS).collect()
    names = names_from(registry, player_first_names(lake))
    write_table(lake, tables.PLAYER_NAMES, names, metadata={NAMES_INPUTS: inputs})
    return True


def known_game_ids(lake: Path, ids: pl.Series) -> pl.Series:
    """Those of `ids` the games table holds (read through a filter on them, streamed: never
    the table's every id)."""
    if not ids.len():
        return ids.clear()
    return (
        read_table(lake, tables.GAMES, schema={"game_id": pl.String})
        .select("game_id")
        .filter(pl.col("game_id").is_in(ids.implode()))
        .collect(engine="streaming")
        .get_column("game_id")
    )


DUPLICATES_FACT = "duplicate-game-ids/1"
"""The `derived_facts` record of `duplicate_game_ids` (a new computation: /2)."""


def duplicate_game_ids(lake: Path, budget: MemoryBudget | None = None) -> int:
    """How many records of the games table repeat a game id another record holds (from every
    group's id hashes, compared on disk within `budget`; a repeated hash is checked against
    the ids themselves). Counted again only when a file of the id hashes or of the games
    changed: a rerun with nothing new reads neither."""
    lake = Path(lake)
    inputs = [*facts.table_files(lake, tables.INGEST_IDS), *facts.table_files(lake, tables.GAMES)]
    return int(
        facts.derived(lake, DUPLICATES_FACT, inputs, lambda: str(_duplicate_game_ids(lake, budget)))
    )


def _duplicate_game_ids(lake: Path, budget: MemoryBudget | None) -> int:
    """`duplicate_game_ids`, counted."""
    keys = table_partitions(lake, tables.INGEST_IDS)
    if not keys:
        return 0
    files = [path for key in keys for path in _ids_files(lake, key)]
    with hash_queries(_hash_memory(budget)) as queries:  # the month's ids, never all in memory
        again = queries.repeated(files)
    if not again:
        return 0
    wanted = pl.Series(sorted(again), dtype=pl.UInt64).implode()
    ids = (
        read_table(lake, tables.GAMES)
        .select("game_id")
        .filter(pl.col("game_id").hash(ID_HASH_SEED).is_in(wanted))
        .collect()
        .get_column("game_id")
    )
    return ids.len() - ids.n_unique()


MATCHES_SOURCE = tables.MATCHES.name
"""The quarantine partition of the matches table (`quarantine/source=matches`)."""


@dataclass
class MatchesOutcome:
    """What one ingest of the backgammon matches did: per-file counts (FILE_SUMMARY_SCHEMA),
    the readers' notes, the matches kept and rejected, and whether one was rejected for a date
    after today (the files are then read again on a later day)."""

    files: pl.DataFrame
    notes: list[str]
    matches: int
    quarantined: int
    recheck: bool


def ingest_matches(
    inbox: Path,
    lake: Path,
    budget: MemoryBudget | None = None,
    today: date | None = None,
) -> MatchesOutcome:
    """Write the matches table and its quarantine from every `backgammon/*.csv`, each file
    streamed `budget.csv_rows` rows at a time (its text is never held whole, nor its rows),
    with a progress report per chunk. The rows and quarantine are those of a whole reading
    (`inbox.ingest_backgammon`): match ids a file repeats across chunks are found on a first
    pass and the files read again with them (a rare path: repeated ids are mistakes). The
    files replace the table whole, atomically; a period left without matches is emptied."""
    inbox, lake = Path(inbox), Path(lake)
    rows = (budget or MemoryBudget()).csv_rows
    files = backgammon_files(inbox)
    repeated: dict[str, frozenset[int]] = {}
    while True:
        staged = StagedParts(lake)
        try:
            outcome, again = _stream_matches(staged, inbox, files, rows, today, repeated)
            if again:
                staged.discard()
                continue
            for value in table_partitions(lake, tables.MATCHES):  # emptied, as a whole write
                if staged.staged(tables.MATCHES, value) is None:
                    staged.put(tables.MATCHES, value, empty(MATCHES_SCHEMA).drop(tables.PERIOD))
            if staged.staged(tables.QUARANTINE, MATCHES_SOURCE) is None:
                staged.put(tables.QUARANTINE, MATCHES_SOURCE, empty(QUARANTINE_SCHEMA))
            staged.commit()
        except BaseException:
            staged.discard()
            raise
        return outcome


def _stream_matches(
    staged: StagedParts,
    inbox: Path,
    files: list[Path],
    rows: int,
    today: date | None,
    repeated: dict[str, frozenset[int]],
) -> tuple[MatchesOutcome, bool]:
    """One streamed reading of the match files into `staged`; True beside the outcome when a
    file repeats ids across its chunks that `repeated` did not name (added to it: read again)."""
    summary: list[dict[str, object]] = []
    notes: list[str] = []
    matches = rejected = 0
    recheck = again = False
    for path in files:
        name = path.relative_to(inbox).as_posix()
        hashes: list[np.ndarray] = []
        kept = lost = lines = 0
        mine: list[str] = []
        for result, ids in backgammon_chunks(path, name, rows, repeated.get(name, frozenset())):
            hashes.append(ids)
            done = check_match_dates(result, today)
            staged.write(tables.MATCHES, done.rows)
            staged.write(
                tables.QUARANTINE,
                done.quarantine.with_columns(pl.lit(MATCHES_SOURCE).alias("source")),
            )
            kept += done.rows.height
            lost += done.quarantine.height
            mine.extend(done.notes)
            recheck = recheck or _dated_after_today(done.quarantine)
            lines = max(lines, last_line(done))
            report(Progress("ingest", name, lines, None, "lines", kept, counts="matches"))
        report(Progress("ingest", name, lines, None, "lines", kept, True, "matches"))
        found = frozenset(repeated_hashes(hashes))
        if found - repeated.get(name, frozenset()):
            repeated[name] = found
            again = True
        summary.append(
            {
                "kind": "backgammon",
                "source_file": name,
                "ingested": kept,
                "quarantined": lost,
                "notes": "; ".join(mine) or None,
            }
        )
        notes.extend(mine)
        matches += kept
        rejected += lost
    outcome = MatchesOutcome(
        files=pl.DataFrame(summary, schema=tables.FILE_SUMMARY_SCHEMA),
        notes=notes,
        matches=matches,
        quarantined=rejected,
        recheck=recheck,
    )
    return outcome, again
