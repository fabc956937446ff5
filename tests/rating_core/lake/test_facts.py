"""Tests of the lake's derived facts (`rating_core.lake.facts`): a result computed from lake files
is reused exactly while those files are unchanged, and computed again as soon as one is
replaced, added or removed (issue 31 item 6: a rerun with nothing new reads no table whole)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from rating_core import tables
from rating_core.lake import facts, fingerprints
from rating_core.lake.digests import period_input_digests
from rating_core.lake.fingerprints import content_hash
from rating_core.lake.storage import table_file, write_partitioned, write_table


def _games(lake: Path, period: str, rows: int, start: int = 0) -> None:
    frame = pl.DataFrame({"game_id": [f"g{start + i}" for i in range(rows)], "period": period})
    write_partitioned(lake, tables.GAMES, frame)


def _counter(values: list[str]) -> tuple[list[int], Callable[[], str]]:
    calls = [0]

    def compute() -> str:
        calls[0] += 1
        return values[calls[0] - 1]

    return calls, compute


def test_a_fact_is_reused_while_its_files_are_unchanged(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    _games(lake, "2025-05", 3)
    calls, compute = _counter(["first", "second", "third", "fourth"])
    files = lambda: facts.table_files(lake, tables.GAMES)  # noqa: E731
    assert facts.derived(lake, "n/1", files(), compute) == "first"
    assert facts.derived(lake, "n/1", files(), compute) == "first"
    assert calls == [1]
    # the same rows written again: a new file, read again, and the same content: still holds
    _games(lake, "2025-05", 3)
    assert facts.derived(lake, "n/1", files(), compute) == "first"
    _games(lake, "2025-05", 3, start=1)  # other rows
    assert facts.derived(lake, "n/1", files(), compute) == "second"
    _games(lake, "2025-06", 1)  # a file added
    assert facts.derived(lake, "n/1", files(), compute) == "third"
    table_file(lake, tables.GAMES, "2025-06").unlink()  # a file removed
    assert facts.derived(lake, "n/1", files(), compute) == "fourth"
    assert calls == [4]


def test_a_new_version_of_a_fact_is_computed_again(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    _games(lake, "2025-05", 3)
    files = facts.table_files(lake, tables.GAMES)
    assert facts.derived(lake, "n/1", files, lambda: "old") == "old"
    assert facts.derived(lake, "n/2", files, lambda: "new") == "new"
    assert facts.derived(lake, "n/1", files, lambda: "again") == "old"


def test_a_new_version_of_the_code_computes_every_fact_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = tmp_path / "lake"
    _games(lake, "2025-05", 3)
    files = facts.table_files(lake, tables.GAMES)
    assert facts.derived(lake, "n/1", files, lambda: "old") == "old"
    monkeypatch.setattr(fingerprints, "code_version", lambda: "another version")
    assert facts.derived(lake, "n/1", files, lambda: "new") == "new"


def test_a_file_rewritten_with_the_same_size_and_time_is_read_again(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    _games(lake, "2025-05", 3)
    path = table_file(lake, tables.GAMES, "2025-05")
    first = facts.content_hashes(lake, [path])
    assert first == {path: content_hash(path)}
    before = path.stat()
    replacement = path.with_name("other.tmp")
    _games(lake, "2025-05", 3, start=1)  # other ids, the same size
    os.replace(path, replacement)
    os.replace(replacement, path)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    assert path.stat().st_mtime_ns == before.st_mtime_ns
    again = facts.content_hashes(lake, [path])
    assert again == {path: content_hash(path)} and again != first


def test_content_hashes_read_only_the_changed_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = tmp_path / "lake"
    for number, period in enumerate(("2025-05", "2025-06", "2025-07")):
        _games(lake, period, 2 + number)
    paths = facts.table_files(lake, tables.GAMES)
    expected = {path: content_hash(path) for path in paths}
    assert facts.content_hashes(lake, paths) == expected
    read: list[Path] = []

    def counted(path: Path) -> bytes:
        read.append(path)
        return content_hash(path)

    monkeypatch.setattr(facts, "content_hash", counted)
    assert facts.content_hashes(lake, paths) == expected
    assert read == []
    _games(lake, "2025-06", 9)
    changed = table_file(lake, tables.GAMES, "2025-06")
    hashes = facts.content_hashes(lake, paths)
    assert read == [changed] and hashes[changed] == content_hash(changed)
    # a removed file's record goes with it
    table_file(lake, tables.GAMES, "2025-07").unlink()
    facts.content_hashes(lake, paths[:1])
    recorded = pl.read_parquet(table_file(lake, tables.DERIVED_FACTS)).get_column("fact")
    assert sorted(recorded) == sorted(
        f"content:{p.relative_to(lake).as_posix()}" for p in paths[:2]
    )


def test_period_digests_with_recorded_hashes_equal_those_read_afresh(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    _games(lake, "2025-05", 3)
    _games(lake, "2025-06", 4, start=10)
    periods = ["2025-05", "2025-06"]
    first = period_input_digests(lake, periods, "code")
    assert table_file(lake, tables.DERIVED_FACTS).is_file()
    assert period_input_digests(lake, periods, "code").equals(first)
    _games(lake, "2025-06", 4, start=11)  # a changed period changes its digest only
    changed = period_input_digests(lake, periods, "code")
    table_file(lake, tables.DERIVED_FACTS).unlink()
    assert period_input_digests(lake, periods, "code").equals(changed)
    assert changed["digest"][0] == first["digest"][0]
    assert changed["digest"][1] != first["digest"][1]


def test_an_unreadable_record_means_computing_again(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    _games(lake, "2025-05", 3)
    files = facts.table_files(lake, tables.GAMES)
    assert facts.derived(lake, "n/1", files, lambda: "one") == "one"
    table_file(lake, tables.DERIVED_FACTS).write_bytes(b"not parquet")
    assert facts.derived(lake, "n/1", files, lambda: "two") == "two"
    assert facts.derived(lake, "n/1", files, lambda: "three") == "two"
    write_table(lake, tables.DERIVED_FACTS, pl.DataFrame(schema=tables.DERIVED_FACTS.schema))
    assert facts.derived(lake, "n/1", files, lambda: "four") == "four"
