"""rating_core.lake.query and .as_of against a lake written by hand (tests/support/published_lake.py):
every expectation below is read off that module's docstring, not computed by the code."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

from rating_core.lake import as_of, query, spilling
from rating_core.lake import publishing as publish
from rating_core.lake.query import QueryError, connect, lake_frames, query_frame, run_query
from tests.support.published_lake import build


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("query") / "lake")


def _rows(lake: Path, sql: str) -> list[tuple]:
    return run_query(lake, sql).rows


# --- the views -----------------------------------------------------------------------------------


def test_lists_holds_every_snapshot(lake: Path) -> None:
    rows = _rows(
        lake,
        "SELECT list, period, version, player_id, rating FROM lists ORDER BY ALL",
    )
    assert rows == [
        ("fide-standard", "2026-01", 1, "a", 1500.0),
        ("fide-standard", "2026-01", 1, "b", 1600.0),
        ("fide-standard", "2026-02", 1, "a", 1510.0),
        ("fide-standard", "2026-02", 1, "b", 1590.0),
        ("fide-standard", "2026-02", 2, "a", 1512.0),
        ("fide-standard", "2026-02", 2, "b", 1590.0),
        ("fide-standard", "2026-03", 1, "a", 1520.0),
        ("fide-standard", "2026-05", 1, "a", 1530.0),
        ("site-elo", "2026-02", 1, "a", 1400.0),
        ("site-elo", "2026-02", 1, "c", 1300.0),
    ]


def test_current_and_original_lists_differ_only_where_a_period_was_revised(lake: Path) -> None:
    sql = "SELECT list, period, version, rating FROM {} WHERE player_id = 'a' ORDER BY ALL"
    current = _rows(lake, sql.format("current_lists"))
    original = _rows(lake, sql.format("original_lists"))
    assert current == [
        ("fide-standard", "2026-01", 1, 1500.0),
        ("fide-standard", "2026-02", 2, 1512.0),
        ("fide-standard", "2026-03", 1, 1520.0),
        ("fide-standard", "2026-05", 1, 1530.0),
        ("site-elo", "2026-02", 1, 1400.0),
    ]
    assert original == [
        ("fide-standard", "2026-01", 1, 1500.0),
        ("fide-standard", "2026-02", 1, 1510.0),
        ("fide-standard", "2026-03", 1, 1520.0),
        ("fide-standard", "2026-05", 1, 1530.0),
        ("site-elo", "2026-02", 1, 1400.0),
    ]


def test_versions_and_diffs(lake: Path) -> None:
    versions = _rows(
        lake, "SELECT list, period, version, created_at, parent_version FROM versions ORDER BY ALL"
    )
    assert versions[1:3] == [
        ("fide-standard", "2026-02", 1, datetime(2026, 3, 2, 9, 0, tzinfo=UTC), None),
        ("fide-standard", "2026-02", 2, datetime(2026, 3, 20, 12, 0, tzinfo=UTC), 1),
    ]
    assert len(versions) == 6
    diffs = _rows(lake, "SELECT list, period, version, player_id, old, new, change FROM diffs")
    assert diffs == [("fide-standard", "2026-02", 2, "a", 1510.0, 1512.0, 2.0)]


def test_tables_carry_their_partition_column_and_skip_files_without_columns(lake: Path) -> None:
    assert _rows(lake, "SELECT game_id, period FROM games ORDER BY 1") == [
        ("g1", "2026-01"),
        ("g2", "2026-01"),
    ]
    assert _rows(lake, "SELECT source, line, value FROM quarantine") == [("games", 7, "2-0")]


def test_history_of_a_system_reads_every_list_with_a_list_column(lake: Path) -> None:
    rows = _rows(lake, "SELECT list, player_id, delta_r, period FROM history_fide ORDER BY 1")
    assert rows == [("fide-rapid", "b", -0.5, "2026-01"), ("fide-standard", "a", 0.36, "2026-01")]
    one = _rows(lake, "SELECT player_id FROM history_fide_standard_game_explanations")
    assert one == [("a",)]


def test_a_view_of_a_table_not_written_yet_is_a_clear_error(lake: Path) -> None:
    with pytest.raises(QueryError, match=r"history_fibs .* has no data in lake .* yet"):
        run_query(lake, "SELECT * FROM history_fibs")


def test_an_empty_lake_still_has_the_views_with_their_columns(tmp_path: Path) -> None:
    empty = tmp_path / "lake"
    empty.mkdir()
    for view, columns in (
        ("lists", [*publish.SNAPSHOT_COLUMNS, *publish.LIST_SCHEMA]),
        ("current_lists", [*publish.SNAPSHOT_COLUMNS, *publish.LIST_SCHEMA]),
        ("diffs", list(publish.DIFF_SCHEMA)),
        ("games", ["game_id", "source", "played_at", "period"]),
        ("quarantine", ["source_file", "line", "reason", "source"]),
        ("versions", ["list", "period", "version", "created_at"]),
    ):
        result = run_query(empty, f"SELECT * FROM {view}")
        assert result.rows == []
        assert set(columns) <= set(result.columns), view
    described = dict(_rows(empty, "SELECT column_name, column_type FROM (DESCRIBE games)"))
    assert described["played_at"] == "TIMESTAMP WITH TIME ZONE"
    assert described["result"] == "VARCHAR"  # an Enum reads as text


def test_repeated_column_names_are_made_unique(lake: Path) -> None:
    result = run_query(lake, "SELECT 1 AS a, 2 AS a, 3 AS a_1")
    assert result.columns == ["a", "a_1", "a_1_1"]
    assert result.rows == [(1, 2, 3)]


def test_an_unknown_view_names_the_views(lake: Path) -> None:
    with pytest.raises(QueryError, match=r"no view named nope; the views are lists, current_lists"):
        run_query(lake, "SELECT * FROM nope")


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("CREATE TABLE t AS SELECT 1", "CREATE"),
        ("CREATE TEMP TABLE t AS SELECT 1", "CREATE"),
        ("INSERT INTO versions VALUES (1)", "INSERT"),
        ("DROP VIEW lists", "DROP"),
        ("ATTACH ':memory:' AS m", "ATTACH"),
        ("SET enable_external_access = true", "SET"),
        ("INSTALL httpfs", "LOAD"),
        ("PRAGMA version", "PRAGMA"),
    ],
)
def test_statements_that_are_not_a_select_are_refused(lake: Path, sql: str, kind: str) -> None:
    with pytest.raises(
        QueryError, match=rf"the lake is read-only here: {kind} statements are refused"
    ):
        run_query(lake, sql)


def test_copy_over_a_published_file_is_refused_and_writes_nothing(lake: Path) -> None:
    target = publish.version_dir(lake, "fide-standard", "2026-02", 2) / publish.LIST_FILE
    before = target.read_bytes()
    with pytest.raises(QueryError, match="COPY statements are refused"):
        run_query(lake, f"COPY (SELECT 1 AS x) TO '{target}' (FORMAT parquet, USE_TMP_FILE false)")
    assert target.read_bytes() == before


def test_the_notebook_connection_refuses_writes_by_duckdbs_own_settings(lake: Path) -> None:
    """No statement check on a raw connection: DuckDB's read-only database and closed file
    access are what keep the lake safe."""
    target = publish.version_dir(lake, "fide-standard", "2026-02", 2) / publish.LIST_FILE
    before = target.read_bytes()
    con = connect(lake)
    assert con.sql("SELECT count(*) FROM current_lists").fetchall() == [(8,)]
    for sql in (
        f"COPY (SELECT 1 AS x) TO '{target}' (FORMAT parquet, USE_TMP_FILE false)",
        "CREATE TABLE t AS SELECT 1",
        "ATTACH ':memory:' AS m",
        f"SELECT * FROM read_parquet('{target}')",
        "SET enable_external_access = true",
    ):
        with pytest.raises(duckdb.Error):
            con.execute(sql)
    assert target.read_bytes() == before


def test_files_outside_the_views_are_refused(lake: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.csv"
    outside.write_text("a\n1\n", encoding="utf-8")
    with pytest.raises(QueryError, match="not other files"):
        run_query(lake, f"SELECT * FROM read_csv('{outside}')")


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELEC 1", "not valid SQL"),
        ("SELECT 1; SELECT 2", "one query at a time, not 2 statements"),
        ("  -- nothing", "the query is empty"),
        ("SELECT nope FROM lists", 'Referenced column "nope" not found'),
    ],
)
def test_mistakes_are_one_sentence(lake: Path, sql: str, message: str) -> None:
    with pytest.raises(QueryError, match=message) as caught:
        run_query(lake, sql)
    assert "\n" not in str(caught.value)


def test_polars_frames_match_the_duckdb_views(lake: Path) -> None:
    frames = lake_frames(lake)
    assert set(frames) == set(query.view_names())
    for name in ("lists", "current_lists", "original_lists", "diffs", "games", "history_fide"):
        expected = frames[name].collect()
        got = query_frame(lake, f"SELECT * FROM {name}")
        assert got.height == expected.height, name
        keys = [
            c for c in ("list", "period", "version", "player_id", "game_id") if c in got.columns
        ]
        assert got.select(keys).sort(keys).equals(expected.select(keys).sort(keys)), name
    assert frames["history_fibs"].collect().width == 0


# --- as of a date --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("day", "original", "expected"),
    [
        ("2026-02-03", False, ("2026-01", 1)),  # published 09:00 that day: in force that day
        ("2026-03-01", False, ("2026-01", 1)),  # February's list not published until 03-02
        ("2026-03-10", False, ("2026-02", 1)),
        ("2026-03-20", False, ("2026-02", 2)),  # the correction, published that day
        ("2026-03-20", True, ("2026-02", 1)),
        ("2026-04-20", False, ("2026-03", 1)),  # May's list, published 04-10, is for a later period
        ("2026-05-01", False, ("2026-05", 1)),
        ("2026-12-31", True, ("2026-05", 1)),
    ],
)
def test_the_list_in_force_on_a_day(lake: Path, day: str, original: bool, expected: tuple) -> None:
    chosen = as_of.list_in_force(lake, "fide-standard", date.fromisoformat(day), original=original)
    assert chosen is not None
    assert (chosen.period, chosen.version) == expected


def test_no_list_in_force_before_the_first_publication(lake: Path) -> None:
    assert as_of.list_in_force(lake, "fide-standard", date(2026, 2, 2)) is None
    assert as_of.why_none_in_force(lake, "fide-standard", date(2026, 2, 2)) == (
        "its first version of a period on or before 2026-02 (2026-01 v1) was published on 2026-02-03"
    )
    assert as_of.why_none_in_force(lake, "fide-standard", date(2025, 12, 31)) == (
        "its first period is 2026-01"
    )


def test_a_players_ratings_on_every_list_as_of_a_day(lake: Path) -> None:
    def ratings(player: str, day: str, original: bool = False) -> list[tuple]:
        frame = as_of.ratings_as_of(lake, player, date.fromisoformat(day), original=original)
        return frame.select("list", "period", "version", "rating").rows()

    assert ratings("a", "2026-03-10") == [
        ("fide-standard", "2026-02", 1, 1510.0),
        ("site-elo", "2026-02", 1, 1400.0),
    ]
    assert ratings("a", "2026-03-25") == [
        ("fide-standard", "2026-02", 2, 1512.0),
        ("site-elo", "2026-02", 1, 1400.0),
    ]
    assert ratings("a", "2026-03-25", original=True)[0] == ("fide-standard", "2026-02", 1, 1510.0)
    assert ratings("b", "2026-03-25") == [("fide-standard", "2026-02", 2, 1590.0)]
    assert ratings("b", "2026-04-05") == []  # not on the list in force (2026-03)
    assert ratings("a", "2026-01-31") == []
    frame = as_of.ratings_as_of(lake, "a", date(2026, 3, 25))
    assert frame.equals(as_of.ratings_as_of(lake, "a", "2026-03-25"))  # a notebook's string
    assert frame["created_at"][0] == datetime(2026, 3, 20, 12, 0, tzinfo=UTC)
    assert frame.schema["rating"] == pl.Float64


@pytest.mark.parametrize("text", ["2026-3-01", "2026-02-30", "yesterday", "2026-03-01T10:00"])
def test_an_as_of_date_is_a_calendar_date(text: str) -> None:
    with pytest.raises(ValueError, match="date"):
        as_of.parse_date(text)


def test_partitions_that_disagree_on_a_column_type_are_one_sentence(tmp_path: Path) -> None:
    from rating_core import tables
    from rating_core.lake.storage import write_partitioned

    lake = tmp_path / "lake"
    fibs = tables.history("fibs")
    write_partitioned(lake, fibs, pl.DataFrame({"player_id": ["a"], "period": ["2026-01"]}))
    write_partitioned(lake, fibs, pl.DataFrame({"player_id": [7], "period": ["2026-02"]}))
    with pytest.raises(QueryError, match="files of view history_fibs do not share one schema"):
        run_query(lake, "SELECT * FROM history_fibs")
    tables_shown = {row[0] for row in run_query(lake, "SHOW TABLES").rows}
    assert "games" in tables_shown and "history_fibs" not in tables_shown  # the others still open


# --- files, memory and streaming (issue 31 item 8) -------------------------------------------------


def test_a_query_reads_no_file_outside_the_views(lake: Path, tmp_path: Path) -> None:
    """The views' own Parquet files are the only ones DuckDB may open: a Parquet file outside the
    lake, a lake file no view reads (a version's list.csv and manifest.json) and a glob of the
    lake are refused, by DuckDB's settings, for `ratings query` and for a notebook connection."""
    outside = tmp_path / "outside.parquet"
    pl.DataFrame({"secret": [1]}).write_parquet(outside)
    version = publish.version_dir(lake, "fide-standard", "2026-02", 2)
    refused = (
        f"SELECT * FROM read_parquet('{outside}')",
        f"SELECT * FROM read_csv('{version / 'list.csv'}')",
        f"SELECT * FROM read_text('{version / publish.MANIFEST_FILE}')",
        f"SELECT * FROM read_parquet('{lake}/lists/*/*/*/list.parquet')",
        f"SELECT * FROM lists, read_parquet('{outside}')",  # with the views opened
    )
    for sql in refused:
        with pytest.raises(QueryError, match="not other files"):
            run_query(lake, sql)
    con = connect(lake)
    for sql in refused:
        with pytest.raises(duckdb.PermissionException):
            con.execute(sql)


def test_a_view_reads_its_files_with_duckdbs_parquet_reader(lake: Path) -> None:
    """`ratings query` views are read_parquet scans (filters and columns pushed into them), not
    scans of Arrow objects: the plan of a filtered query names the Parquet reader."""
    opened = query.open_lake(lake, {"games"}, read_files=True)
    sql = "EXPLAIN SELECT game_id FROM games WHERE period = '2026-01'"
    text = "\n".join(str(cell) for row in opened.connection.sql(sql).fetchall() for cell in row)
    assert "READ_PARQUET" in text.upper() or "PARQUET_SCAN" in text.upper(), text
    assert "ARROW_SCAN" not in text.upper()


def test_the_memory_budget_and_spill_folder_are_duckdbs_settings(lake: Path) -> None:
    rows = run_query(
        lake,
        "SELECT current_setting('memory_limit'), current_setting('temp_directory')",
        memory=query.memory_bytes("256MiB"),
    ).rows
    limit, spill = rows[0]
    assert limit == "256.0 MiB"
    assert Path(spill).name == "spill" and Path(spill).parent.name.startswith("ratings-query-")
    assert not Path(spill).parent.exists()  # removed with the connection


def test_duckdb_threads_follow_the_budget_and_parquet_is_read_without_prefetching(
    lake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each thread's sort holds blocks that cannot spill, and a prefetched row group is read
    whole: a budget of 100 MB runs one thread, page by page (tests/pipelines/cli/
    test_query_memory.py: the sort that failed before)."""
    monkeypatch.setattr(spilling.os, "cpu_count", lambda: 8)
    assert [spilling.threads_for(query.memory_bytes(m)) for m in ("64MiB", "100MB", "255MiB")] == [
        1,
        1,
        1,
    ]
    assert spilling.threads_for(query.memory_bytes("256MiB")) == 2
    assert spilling.threads_for(query.memory_bytes("1GiB")) == 8
    assert spilling.threads_for(query.memory_bytes("64GiB")) == 8  # never above the cores
    sql = "SELECT current_setting('threads'), current_setting('disable_parquet_prefetching')"
    assert run_query(lake, sql, memory=query.memory_bytes("512MiB")).rows == [(4, True)]


def test_a_sort_larger_than_the_budget_spills_instead_of_failing(lake: Path) -> None:
    """~120 MB of strings sorted within 64 MiB: DuckDB spills to the connection's temporary
    folder (with no spill folder the same sort ends in DuckDB's out-of-memory error)."""
    sql = (
        "SELECT count(*) FROM (SELECT md5(r::VARCHAR) || md5((r + 1)::VARCHAR) AS h "
        "FROM range(1500000) t(r) ORDER BY h LIMIT 1200000)"
    )
    rows = run_query(lake, sql, memory=query.memory_bytes("64MiB")).rows
    assert rows == [(1_200_000,)]


@pytest.mark.parametrize("text", ["2XB", "lots", "-1GB", "10MB", ""])
def test_a_memory_budget_is_a_size_of_64_mib_or_more(text: str) -> None:
    with pytest.raises(QueryError, match="--memory"):
        query.memory_bytes(text)


@pytest.mark.parametrize(
    ("text", "size"),
    [("1GiB", 1024**3), ("2GB", 2 * 1000**3), ("512 MiB", 512 * 1024**2), ("1.5gb", 1_500_000_000)],
)
def test_memory_sizes_read_as_duckdb_reads_them(text: str, size: int) -> None:
    assert query.memory_bytes(text) == size


def test_rows_stream_in_batches_and_the_head_and_count_need_no_full_result(lake: Path) -> None:
    with query.stream_query(lake, "SELECT r FROM range(25) t(r) ORDER BY r DESC") as stream:
        assert (stream.columns, stream.types) == (["r"], ["BIGINT"])
        batches = list(stream.batches(10))
        assert [len(batch) for batch in batches] == [10, 10, 5]
        assert [row[0] for batch in batches for row in batch] == list(range(24, -1, -1))
        assert stream.head(3) == [(24,), (23,), (22,)]
        assert stream.count() == 25


def test_a_query_naming_no_view_opens_none(lake: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`SELECT 1` lists no file of the lake; SHOW TABLES (the catalogue) still sees every view."""
    from rating_core.lake import views

    listed: list[object] = []
    real = views.lake_views

    def listing(*a: Any, **k: Any) -> list[views.LakeView]:  # lake_views(lake, names)
        listed.append(a[1:])
        return real(*a, **k)

    monkeypatch.setattr(views, "lake_views", listing)
    assert run_query(lake, "SELECT 1 AS one").rows == [(1,)]
    assert listed == []
    shown = {row[0] for row in run_query(lake, "SHOW TABLES").rows}
    assert {"lists", "games", "history_fide", "versions"} <= shown
    assert listed == [(None,)]


def test_a_lake_under_a_folder_named_like_a_partition_gains_no_column(tmp_path: Path) -> None:
    """DuckDB reads every `key=value` folder of a path as a partition column; the lake's own
    ancestors are not the table's partitions."""
    lake = build(tmp_path / "x=1" / "lake")
    result = run_query(lake, "SELECT * FROM games ORDER BY game_id")
    assert "x" not in result.columns
    assert [row[result.columns.index("period")] for row in result.rows] == ["2026-01", "2026-01"]


def test_the_table_views_listed_without_the_catalogue_are_the_catalogues() -> None:
    """`ratings query` opens games, quarantine and history_<system> from its own list of their
    folders (no Polars to import); that list says what the catalogue says."""
    from rating_core.lake import views

    specs = {spec.name: spec for spec in views.VIEW_SPECS}
    for name, (what, folders) in query._QUICK_TABLES.items():
        spec = specs[name]
        assert what == spec.what, name
        expected = [
            (table.name, table.partition_col, dict(constants).get("list"))
            for table, constants in spec.tables
        ]
        assert list(folders) == expected, name
    for table in tables_of_history():
        lake_table = views.tables.named(table)
        assert lake_table is not None, table
        assert query._view_name(table) == views.history_view_name(lake_table)


def tables_of_history() -> list[str]:
    from rating_core import tables

    return [table.name for table in tables.history_tables()]


@pytest.mark.parametrize(
    "view",
    [
        "games",
        "quarantine",
        "history_fide",
        "history_fide_standard_game_explanations",
        "history_fide_rapid_game_explanations",
    ],
)
def test_a_table_view_is_the_same_listed_by_folder_or_by_the_catalogue(
    lake: Path, view: str
) -> None:
    quick = run_query(lake, f"SELECT * FROM {view} ORDER BY ALL")  # listed by its folders
    with duckdb.connect() as con:  # every view, listed from the catalogue
        opened = query.open_lake(lake, None, con, read_files=True)
        relation = opened.connection.sql(f"SELECT * FROM {view} ORDER BY ALL")
        assert quick.columns == list(relation.columns)
        assert quick.types == [str(t) for t in relation.types]
        assert quick.rows == relation.fetchall()


def test_the_command_lines_memory_default_is_the_librarys() -> None:
    from pipelines.cli import query as command

    assert command.DEFAULT_MEMORY == query.DEFAULT_MEMORY


def test_a_query_that_cannot_fit_its_budget_is_one_sentence_naming_it(lake: Path) -> None:
    """One string of ~800 MB cannot spill: DuckDB's out-of-memory error becomes a sentence."""
    sql = (
        "SELECT length(string_agg(range::VARCHAR || 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', ',')) "
        "FROM range(20000000)"
    )
    with pytest.raises(
        QueryError, match=r"the memory budget of 64 MiB is too small for this query"
    ) as e:
        run_query(lake, sql, memory=query.memory_bytes("64MiB"))
    assert "--memory" in str(e.value) and "\n" not in str(e.value)


def test_the_views_errors_name_are_the_catalogues_per_game_views() -> None:
    from rating_core.lake.view_parts import MAIN_VIEWS
    from rating_core.lake.views import PER_GAME_TABLES

    named = [v.removeprefix("history_") for v in MAIN_VIEWS if v.startswith("history_")]
    assert named == list(PER_GAME_TABLES)
