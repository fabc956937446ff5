"""Results computed from lake files, remembered with what those files held and reused while
they hold the same (the `derived_facts` table): a run with nothing new then reads no table whole
(the games' content hashes, the unclassified and repeated games, the summary's player counts).

Each file's content hash (XXH3-128, `fingerprints.content_hash`) is recorded with the file's stamp:
size, modification and change times (nanoseconds) and inode number. A file with the stamp it
had is not read again. The lake's files are only ever replaced whole (a new file renamed over
the old, `storage`), which gives a new inode and change time, so a rewritten file never keeps
its stamp, whatever its size or the clock's resolution: it is read and hashed again, and a fact
computed from files whose contents are all unchanged still holds. A copied or restored lake
gets new stamps and is hashed again once. A fact is only a shortcut: a missing, stale or
unreadable record means computing it again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from pathlib import Path

import polars as pl

from rating_core import tables
from rating_core.lake import fingerprints
from rating_core.lake.fingerprints import content_hash
from rating_core.lake.storage import (
    PART_FILE,
    PART_GLOB,
    as_local_path,
    read_table,
    table_dir,
    table_file,
    write_table,
)

CONTENT = "content:"
"""Prefix of the facts holding one lake file's content hash (`content:<path in the lake>`)."""


def file_stamp(path: Path) -> str:
    """`size:mtime_ns:ctime_ns:inode` of a file, `-` when it does not exist."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return "-"
    return f"{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_ino}"


def table_files(lake: Path, table: tables.LakeTable) -> list[Path]:
    """Every data file of `table` (of every partition), sorted: what a fact over it reads."""
    base = table_dir(lake, table)
    if not table.partitioned:
        path = base / PART_FILE
        return [path] if path.is_file() else []
    return sorted(base.glob(f"{table.partition_col}=*/{PART_GLOB}"))


def _name(root: Path, path: Path) -> str:
    """`path`'s name relative to the lake (the lake may be moved)."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _read(lake: Path) -> pl.DataFrame:
    """Every recorded fact; none when the table is missing or unreadable (a cache only)."""
    if not table_file(lake, tables.DERIVED_FACTS).is_file():
        return pl.DataFrame(schema=tables.DERIVED_FACTS.schema)
    try:
        return read_table(lake, tables.DERIVED_FACTS).collect()
    except (OSError, pl.exceptions.PolarsError):
        return pl.DataFrame(schema=tables.DERIVED_FACTS.schema)


def _write(lake: Path, before: pl.DataFrame, after: pl.DataFrame) -> None:
    """Replace the table with `after` unless it equals `before`; a write that fails (a full
    disk, a lake another run holds, as the summary writes after the run) records nothing,
    which costs only the computing again."""
    after = after.sort("fact")
    if after.equals(before.sort("fact")):
        return
    try:
        write_table(lake, tables.DERIVED_FACTS, after)
    except OSError:
        return


def _hashed(lake: Path, recorded: pl.DataFrame, paths: Iterable[Path]) -> dict[Path, bytes]:
    """`content_hash` of each of `paths`, from `recorded` where a file's stamp is the one its
    hash was recorded with, else read."""
    mine = recorded.filter(pl.col("fact").str.starts_with(CONTENT))
    pairs = zip(mine["inputs"], mine["value"], strict=True)
    known = dict(zip(mine.get_column("fact"), pairs, strict=True))
    hashes: dict[Path, bytes] = {}
    for path in paths:
        old = known.get(CONTENT + _name(lake, path))
        if old is not None and old[0] == file_stamp(path):
            hashes[path] = bytes.fromhex(old[1])
        elif path.is_file():
            hashes[path] = content_hash(path)
    return hashes


def _with_hashes(lake: Path, recorded: pl.DataFrame, hashes: dict[Path, bytes]) -> pl.DataFrame:
    """`recorded` with the content records of `hashes` (their files' stamps now) and without
    those of files that no longer exist."""
    fresh = {CONTENT + _name(lake, path): (path, value) for path, value in hashes.items()}
    rows = [
        {"fact": fact, "inputs": file_stamp(path), "value": value.hex()}
        for fact, (path, value) in fresh.items()
    ]
    gone = [
        fact
        for fact in recorded.get_column("fact").to_list()
        if fact.startswith(CONTENT)
        and fact not in fresh
        and not (lake / fact.removeprefix(CONTENT)).is_file()
    ]
    kept = recorded.filter(~pl.col("fact").is_in([*fresh, *gone]))
    return pl.concat([kept, pl.DataFrame(rows, schema=tables.DERIVED_FACTS.schema)])


def content_hashes(lake: Path, paths: Iterable[Path]) -> dict[Path, bytes]:
    """`fingerprints.content_hash` of each of `paths` (files in the lake), reading only the files
    whose stamp differs from the one their hash was recorded with (a missing file has none)."""
    lake = as_local_path(lake)
    recorded = _read(lake)
    hashes = _hashed(lake, recorded, paths)
    _write(lake, recorded, _with_hashes(lake, recorded, hashes))
    return hashes


def derived(lake: Path, fact: str, paths: Iterable[Path], compute: Callable[[], str]) -> str:
    """The value of `fact` computed from the files `paths`: the recorded one when their names
    and contents are those it was computed from, else `compute()`, then recorded. A file whose
    stamp changed is read to know (a table written again with the same rows keeps its facts).
    A new version of any `rating_core` module (`fingerprints.code_version`) computes every fact
    again; name a new version of a computation outside it with a new `fact` (e.g.
    `summary-players/2`)."""
    lake = as_local_path(lake)
    recorded = _read(lake)
    paths = sorted(set(paths))
    hashes = _hashed(lake, recorded, paths)
    digest = hashlib.sha256(f"{fingerprints.code_version()}\0".encode())  # new code: computed again
    for path in paths:
        found = hashes.get(path)
        digest.update(f"{_name(lake, path)}\0{found.hex() if found else '-'}\0".encode())
    inputs = digest.hexdigest()
    after = _with_hashes(lake, recorded, hashes)
    same = recorded.filter((pl.col("fact") == fact) & (pl.col("inputs") == inputs))
    if same.height:
        value = str(same.get_column("value")[0])
    else:
        value = compute()
        row = pl.DataFrame({"fact": [fact], "inputs": [inputs], "value": [value]})
        after = pl.concat([after.filter(pl.col("fact") != fact), row])
    _write(lake, recorded, after)
    return value


def recorded(lake: Path, fact: str) -> tuple[str, str] | None:
    """The `inputs` and `value` recorded for `fact` (None: none is)."""
    mine = _read(as_local_path(lake)).filter(pl.col("fact") == fact)
    if not mine.height:
        return None
    return str(mine.get_column("inputs")[0]), str(mine.get_column("value")[0])


def record(lake: Path, fact: str, inputs: str, value: str) -> None:
    """Record `value` for `fact`, made from `inputs` (replacing what was recorded for it): for a
    result computed elsewhere than `derived`, such as an ingest step's (`assets.ingest`)."""
    lake = as_local_path(lake)
    before = _read(lake)
    row = pl.DataFrame({"fact": [fact], "inputs": [inputs], "value": [value]})
    _write(lake, before, pl.concat([before.filter(pl.col("fact") != fact), row]))


def unchanged(lake: Path, path: Path) -> bool:
    """Whether `path`'s content hash is recorded with the stamp the file has now: it was read
    (hashed) before and has not changed since."""
    lake = as_local_path(lake)
    fact = CONTENT + _name(lake, path)
    mine = _read(lake).filter(pl.col("fact") == fact)
    return bool(mine.height) and mine.get_column("inputs")[0] == file_stamp(path)
