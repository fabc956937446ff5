"""Tests for rating_core.lake.storage: Hive-partitioned tables, atomic partition rewrites, reading back."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from rating_core import tables
from rating_core.lake import storage as lake_mod
from rating_core.lake.storage import (
    read_table,
    table_partitions,
    write_partitioned,
    write_table,
)
from rating_core.schemas import QUARANTINE_SCHEMA


def _games() -> pl.DataFrame:
    """Three games over two periods, with a datetime and an enum column."""
    return pl.DataFrame(
        {
            "game_id": ["g1", "g2", "g3"],
            "period": ["2024-01", "2024-01", "2024-02"],
            "played_at": [datetime(2024, 1, d, tzinfo=UTC) for d in (3, 4, 5)],
            "result": pl.Series(
                ["1-0", "0-1", "1/2-1/2"], dtype=pl.Enum(["1-0", "0-1", "1/2-1/2"])
            ),
        }
    )


def test_round_trip_with_hive_period_as_string(tmp_path: Path) -> None:
    frame = _games()
    paths = write_partitioned(tmp_path, "games", frame)
    assert paths == [
        tmp_path / "games" / "period=2024-01" / "part-0.parquet",
        tmp_path / "games" / "period=2024-02" / "part-0.parquet",
    ]
    assert "period" not in pl.read_parquet(paths[0], hive_partitioning=False).columns
    back = read_table(tmp_path, "games").collect()
    assert back.schema["period"] == pl.String
    assert back.schema["result"] == frame.schema["result"]
    assert back.select(frame.columns).sort("game_id").equals(frame)
    assert table_partitions(tmp_path, "games") == ["2024-01", "2024-02"]


def test_rewriting_one_partition_leaves_the_others_untouched(tmp_path: Path) -> None:
    write_partitioned(tmp_path, "games", _games())
    other = tmp_path / "games" / "period=2024-02" / "part-0.parquet"
    before = other.read_bytes()
    rerun = pl.DataFrame(
        {
            "game_id": ["g9"],
            "period": ["2024-01"],
            "played_at": [datetime(2024, 1, 9, tzinfo=UTC)],
            "result": pl.Series(["1-0"], dtype=pl.Enum(["1-0", "0-1", "1/2-1/2"])),
        }
    )
    write_partitioned(tmp_path, "games", rerun)
    assert other.read_bytes() == before
    back = read_table(tmp_path, "games").collect().sort("game_id")
    assert back["game_id"].to_list() == ["g3", "g9"]
    assert not list((tmp_path / "games").rglob(".*"))  # no temp file left behind


def test_declared_partition_without_rows_is_emptied(tmp_path: Path) -> None:
    write_partitioned(tmp_path, "games", _games())
    empty = _games().clear()
    write_partitioned(tmp_path, "games", empty, partitions=["2024-02"])
    back = read_table(tmp_path, "games").collect()
    assert back["game_id"].sort().to_list() == ["g1", "g2"]
    assert read_table(tmp_path, "games", ["2024-02"]).collect().columns == back.columns


def test_read_selected_periods(tmp_path: Path) -> None:
    write_partitioned(tmp_path, "games", _games())
    only = read_table(tmp_path, "games", periods=["2024-02", "2030-01"]).collect()
    assert only["game_id"].to_list() == ["g3"]
    assert only["period"].to_list() == ["2024-02"]


def test_missing_table_reads_empty(tmp_path: Path) -> None:
    assert read_table(tmp_path, "games").collect().height == 0
    typed = read_table(tmp_path, "quarantine", partition_col="source", schema=QUARANTINE_SCHEMA)
    assert typed.collect_schema() == pl.Schema({**QUARANTINE_SCHEMA, "source": pl.String})


def test_hive_looking_lake_parent_adds_no_column(tmp_path: Path) -> None:
    lake = tmp_path / "env=test" / "lake"
    write_partitioned(lake, "games", _games())
    assert "env" not in read_table(lake, "games").collect().columns


def test_quarantine_partitioned_by_source_kind(tmp_path: Path) -> None:
    def rejected(source: str, n: int) -> pl.DataFrame:
        return pl.DataFrame(
            {
                "source_file": [f"{source}.csv"] * n,
                "line": list(range(2, 2 + n)),
                "record": [None] * n,
                "value": ["2024-02-30"] * n,
                "reason": ["impossible date"] * n,
                "source": [source] * n,
            },
            schema={**QUARANTINE_SCHEMA, "source": pl.String},
        )

    write_partitioned(tmp_path, tables.QUARANTINE, rejected("platform", 2))
    write_partitioned(tmp_path, tables.QUARANTINE, rejected("federation", 1))
    write_partitioned(tmp_path, "quarantine", rejected("platform", 1), partition_col="source")
    back = read_table(tmp_path, tables.QUARANTINE).collect()
    assert back.group_by("source").len().sort("source").rows() == [
        ("federation", 1),
        ("platform", 1),
    ]


def test_write_table_replaces_an_unpartitioned_table(tmp_path: Path) -> None:
    write_table(tmp_path, "players", pl.DataFrame({"player_id": ["a", "b"]}))
    path = write_table(tmp_path, "players", pl.DataFrame({"player_id": ["c"]}))
    assert path == tmp_path / "players" / "part-0.parquet"
    assert read_table(tmp_path, "players").collect()["player_id"].to_list() == ["c"]


def test_failed_partition_write_keeps_the_old_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_partitioned(tmp_path, "games", _games())

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(lake_mod.os, "replace", broken)
    with pytest.raises(OSError):
        write_partitioned(tmp_path, "games", _games().head(1))
    monkeypatch.undo()
    assert read_table(tmp_path, "games").collect().height == 3
    assert not list((tmp_path / "games").rglob(".*"))


@pytest.mark.parametrize("value", ["../x", "a/b", None, ".hidden"])
def test_unsafe_partition_values_are_refused(tmp_path: Path, value: str | None) -> None:
    frame = pl.DataFrame({"period": [value], "x": [1]}, schema={"period": pl.String, "x": pl.Int64})
    with pytest.raises(ValueError):
        write_partitioned(tmp_path, "games", frame)


def test_unsafe_table_names_and_uris_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        write_table(tmp_path, "../escape", pl.DataFrame({"a": [1]}))
    with pytest.raises(ValueError, match="local"):
        read_table("s3://bucket/lake", "games")
    assert lake_mod.as_local_path(f"file://{tmp_path}") == tmp_path


def test_leftover_temp_file_of_a_killed_write_is_not_read(tmp_path: Path) -> None:
    write_partitioned(tmp_path, "games", _games())
    (tmp_path / "games" / "period=2024-01" / ".part-0.parquet.tmp-dead").write_bytes(b"junk")
    assert read_table(tmp_path, "games").collect().height == 3


def test_rewrite_removes_other_data_files_of_the_partition(tmp_path: Path) -> None:
    write_partitioned(tmp_path, "games", _games())
    stray = tmp_path / "games" / "period=2024-01" / "part-1.parquet"
    _games().head(1).drop("period").write_parquet(stray)
    write_partitioned(tmp_path, "games", _games().head(1))
    assert not stray.exists()
    assert read_table(tmp_path, "games").collect()["game_id"].sort().to_list() == ["g1", "g3"]


@pytest.mark.parametrize(
    "table", [t for t in tables.CATALOGUE if t.schema is not None], ids=lambda t: t.name
)
def test_a_catalogued_table_never_written_reads_back_with_its_columns(
    tmp_path: Path, table: tables.LakeTable
) -> None:
    # an empty inbox writes no `games` partition: its readers still select their columns
    for ref in (table, table.name):  # by catalogue entry and by name alike
        frame = read_table(tmp_path, ref).collect()
        assert frame.height == 0
        assert frame.schema == pl.Schema(table.schema)


def test_a_catalogued_name_gets_the_catalogues_partitioning(tmp_path: Path) -> None:
    rows = pl.DataFrame(
        {"kind": ["games"], "source_file": ["a.pgn"], "ingested": [3], "quarantined": [0]},
        schema_overrides={"ingested": pl.Int64, "quarantined": pl.Int64},
    ).with_columns(notes=pl.lit(None, pl.String), asset=pl.lit("games"))
    paths = write_partitioned(tmp_path, tables.INGEST_SUMMARY, rows)
    assert paths == [tmp_path / "ingest_summary" / "asset=games" / "part-0.parquet"]
    assert table_partitions(tmp_path, "ingest_summary") == ["games"]  # no partition_col given
    back = read_table(tmp_path, "ingest_summary").collect()
    assert dict(back.schema) == tables.INGEST_SUMMARY.schema
    assert back.rows() == [("games", "a.pgn", 3, 0, None, "games")]


def test_a_partitioning_that_contradicts_the_catalogue_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="partitioned by 'source', not 'period'"):
        write_partitioned(tmp_path, "quarantine", _games(), partition_col="period")
    with pytest.raises(ValueError, match="partitioned by 'period'"):
        write_table(tmp_path, tables.GAMES, _games())
    with pytest.raises(ValueError, match="not partitioned"):
        write_partitioned(tmp_path, tables.PLAYERS, _games())
    assert not any(tmp_path.iterdir())  # nothing was written in a second layout


def test_family_tables_are_partitioned_by_period(tmp_path: Path) -> None:
    state = tables.state("fide-standard")
    write_partitioned(tmp_path, state, pl.DataFrame({"player_id": ["a"], "period": ["2024-01"]}))
    assert table_partitions(tmp_path, state) == ["2024-01"]
    assert table_partitions(tmp_path, "state/fide-standard") == ["2024-01"]
    assert lake_mod.table_dir(tmp_path, state) == tmp_path / "state" / "fide-standard"


def test_an_empty_games_table_can_be_filtered_by_source(tmp_path: Path) -> None:
    write_partitioned(tmp_path, "games", _games().clear())  # zero rows: no partition written
    assert read_table(tmp_path, "games").filter(pl.col("source") == "club").collect().height == 0
    assert (
        read_table(tmp_path, "games", ["2024-01"]).select("game_id", "period").collect().height == 0
    )


def test_other_tables_never_written_still_read_back_without_columns(tmp_path: Path) -> None:
    # `read_previous_state` tells "no previous period" from a frame without columns
    assert read_table(tmp_path, "state/fide-standard", ["2024-01"]).collect().columns == []


def test_clean_interrupted_writes_removes_staging_and_temp_files_only(tmp_path: Path) -> None:
    write_partitioned(tmp_path, "games", _games())
    temp = tmp_path / "games" / "period=2024-01" / ".part-0.parquet.tmp-dead"
    temp.write_bytes(b"junk")
    staged = tmp_path / lake_mod.STAGING_DIR / "fide-standard" / "2024-01" / "v2-dead"
    staged.mkdir(parents=True)
    (staged / "list.parquet").write_bytes(b"staged")
    removed = lake_mod.clean_interrupted_writes(tmp_path)
    assert set(removed) == {temp, tmp_path / lake_mod.STAGING_DIR}
    assert not temp.exists() and not (tmp_path / lake_mod.STAGING_DIR).exists()
    assert read_table(tmp_path, "games").collect().height == 3
    assert lake_mod.clean_interrupted_writes(tmp_path / "missing") == []


_HOLDER = r"""
import sys, time
from pathlib import Path
from rating_core.lake.lock import hold_lake

with hold_lake(Path(sys.argv[1]), "ratings run --inbox first"):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""
"""Holds the lake's lock for `argv[2]` seconds, saying `held` once it has it."""


def _start_holder(lake: Path, seconds: float):
    import os
    import subprocess
    import sys

    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(lake), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


@pytest.mark.slow
def test_a_second_holder_is_told_who_holds_the_lake_and_waits_for_it(tmp_path: Path) -> None:
    import time

    from rating_core.lake.lock import LOCK_FILE, LockHolder, hold_lake, read_holder

    holder = _start_holder(tmp_path, 3)
    held_at = time.monotonic()
    assert read_holder(tmp_path).pid == holder.pid
    told: list[LockHolder] = []
    with hold_lake(tmp_path, "ratings run --inbox second", on_wait=told.append):
        assert time.monotonic() - held_at > 2.5  # it waited for the holder's 3 seconds
        assert read_holder(tmp_path).command == "ratings run --inbox second"
    holder.wait()
    assert [(h.pid, h.command) for h in told] == [(holder.pid, "ratings run --inbox first")]
    assert (tmp_path / LOCK_FILE).read_text() == ""  # released: nobody is named any more
    started = time.monotonic()
    with hold_lake(tmp_path, "third", on_wait=told.append):
        pass
    assert len(told) == 1 and time.monotonic() - started < 5


def test_a_killed_holder_never_blocks_the_lake(tmp_path: Path) -> None:
    from rating_core.lake.lock import LockHolder, hold_lake, read_holder

    holder = _start_holder(tmp_path, 60)
    holder.kill()  # kill -9: the lock file still names it, but the kernel released the lock
    holder.wait()
    assert read_holder(tmp_path).pid == holder.pid
    told: list[LockHolder] = []
    with hold_lake(tmp_path, "next run", on_wait=told.append):
        pass
    assert told == []


def test_table_file_names_the_data_file_of_a_partition_or_table(tmp_path: Path) -> None:
    written = write_partitioned(tmp_path, tables.GAMES, _games())
    assert lake_mod.table_file(tmp_path, tables.GAMES, "2024-01") == written[0]
    assert lake_mod.table_file(tmp_path, "players") == tmp_path / "players" / "part-0.parquet"
    with pytest.raises(ValueError, match="name the partition"):
        lake_mod.table_file(tmp_path, tables.GAMES)
    with pytest.raises(ValueError):
        lake_mod.table_file(tmp_path, tables.GAMES, "../x")


def test_history_tables_are_written_without_column_statistics(tmp_path: Path) -> None:
    """Per-game explanations are in game order: min/max statistics would skip no row group."""
    import pyarrow.parquet as pq

    from rating_core.lake.storage import write_partitioned

    frame = pl.DataFrame({"period": ["2026-01"] * 3, "player_id": ["b", "a", "c"], "x": [1, 2, 3]})
    for table in ("history/site", "state/site"):
        (path,) = write_partitioned(tmp_path, table, frame)
        column = pq.ParquetFile(path).metadata.row_group(0).column(0)
        assert column.is_stats_set is (table == "state/site"), table
        assert pl.read_parquet(path).equals(frame.drop("period"))


def test_a_period_tables_own_period_column_reads_back_as_written(tmp_path: Path) -> None:
    """Storage keeps a frame's own `period` (here the period a state row was last seen in) as
    `row_period` beside the partition column, and gives it back under its name on reading."""
    table = tables.state("fibs")
    frame = pl.DataFrame({"player_id": ["a", "b"], "period": ["2026-01", "2025-11"]})
    stored = lake_mod.stored_rows(frame)
    assert stored.columns == ["player_id", lake_mod.ROW_PERIOD]
    write_partitioned(tmp_path, table, stored.with_columns(period=pl.lit("2026-02")))
    assert lake_mod.read_period(tmp_path, table, "2026-02").equals(frame)
    state = lake_mod.read_state_before(tmp_path, table, "2026-03")
    assert state is not None and state.equals(frame)
    ranges = lake_mod.read_period_range(
        tmp_path, table, ["2026-02", "2026-03"], {"period": pl.String}
    )
    assert ranges["2026-02"].equals(frame) and ranges["2026-03"].height == 0
    lazy = pl.LazyFrame({"x": [1], lake_mod.ROW_PERIOD: ["2026-01"]})
    assert lake_mod.restored_rows(lazy).collect().columns == ["x", "period"]
