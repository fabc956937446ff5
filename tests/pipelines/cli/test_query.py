"""`ratings query`, `ratings show --as-of` and `ratings history --as-of` as a user runs them, on
the hand-written lake of tests/support/published_lake.py (expected values from its docstring)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.inbox import ROOT, assert_one_sentence, ratings
from tests.support.published_lake import build

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(build(tmp_path_factory.mktemp("query-cli") / "lake"))


def _fits(text: str, width: int = 80) -> None:
    wide = [line for line in text.splitlines() if len(line.rstrip()) > width]
    assert not wide, "\n".join(wide)


def test_query_prints_a_table_that_fits_80_columns(lake: str) -> None:
    proc = ratings(
        "query",
        "SELECT * FROM current_lists ORDER BY list, period, player_id",
        "--lake",
        lake,
        columns=80,
    )
    assert proc.returncode == 0, proc.stderr
    _fits(proc.stdout)
    assert proc.stdout.startswith("8 rows")
    narrow = ratings(
        "query",
        "SELECT list, period, rating FROM original_lists WHERE player_id = 'a' ORDER BY 2",
        "--lake",
        lake,
        columns=80,
    )
    assert "fide-standard │ 2026-02 │ 1510.0" in narrow.stdout


def test_query_json_is_a_list_of_row_objects(lake: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Europe/Berlin")  # times stay in UTC whatever the machine's zone
    proc = ratings(
        "query",
        "SELECT list, period, version, created_at, rating FROM lists JOIN versions USING (list, period, version) "
        "WHERE player_id = 'a' AND period = '2026-02' AND list = 'fide-standard' ORDER BY version",
        "--lake",
        lake,
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [
        {
            "list": "fide-standard",
            "period": "2026-02",
            "version": 1,
            "created_at": "2026-03-02T09:00:00+00:00",
            "rating": 1510.0,
        },
        {
            "list": "fide-standard",
            "period": "2026-02",
            "version": 2,
            "created_at": "2026-03-20T12:00:00+00:00",
            "rating": 1512.0,
        },
    ]


def test_query_csv_has_a_header_and_is_spreadsheet_safe(lake: str) -> None:
    proc = ratings(
        "query",
        "SELECT player_id, old, new, '=HYPERLINK(1)' AS name, -2 AS n, NULL AS nothing FROM diffs",
        "--lake",
        lake,
        "--csv",
    )
    assert proc.returncode == 0, proc.stderr
    assert list(csv.reader(io.StringIO(proc.stdout))) == [
        ["player_id", "old", "new", "name", "n", "nothing"],
        ["a", "1510.0", "1512.0", "'=HYPERLINK(1)", "-2", ""],
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["CREATE TABLE t AS SELECT 1"], "CREATE statements are refused"),
        (["COPY lists TO 'x.csv'"], "COPY statements are refused"),
        (["ATTACH 'other.duckdb'"], "ATTACH statements are refused"),
        (["SELECT * FROM players"], "no view named players"),
        (["SELECT * FROM history_fibs"], "history_fibs"),
        (["SELECT rating FROM lists WHERE rating > 'x'"], "Could not convert string 'x'"),
        (["SELEC 1"], "not valid SQL"),
        (["SELECT 1", "--json", "--csv"], "--csv"),
    ],
)
def test_query_mistakes_are_one_sentence_exit_2(lake: str, args: list[str], message: str) -> None:
    proc = ratings("query", *args, "--lake", lake)
    assert proc.returncode == 2
    assert message in assert_one_sentence(proc)


def test_query_on_a_missing_lake_is_one_sentence(tmp_path: Path) -> None:
    proc = ratings("query", "SELECT 1", "--lake", str(tmp_path / "none"))
    assert proc.returncode == 2
    assert "there is no lake at" in assert_one_sentence(proc)


def test_show_as_of_shows_the_version_in_force(lake: str) -> None:
    before = ratings("show", "fide-standard", "--as-of", "2026-03-19", "--lake", lake, columns=80)
    assert before.returncode == 0, before.stderr
    assert (
        "in force on 2026-03-19: fide-standard 2026-02 v1, published 2026-03-02 09:00 UTC"
        in before.stdout
    )
    assert "│ a         │ Player a │ 1510" in before.stdout
    after = ratings("show", "fide-standard", "--as-of", "2026-03-20", "--json", "--lake", lake)
    shown = json.loads(after.stdout)
    assert (shown["period"], shown["version"]) == ("2026-02", 2)
    assert (shown["as_of"], shown["created_at"][:10]) == ("2026-03-20", "2026-03-20")
    assert {r["player_id"]: r["rating"] for r in shown["rows"]} == {"a": 1512, "b": 1590}
    first = ratings(
        "show", "fide-standard", "--as-of", "2026-03-20", "--original", "--json", "--lake", lake
    )
    assert json.loads(first.stdout)["version"] == 1
    listed = ratings("show", "--as-of", "2026-04-20", "--json", "--lake", lake)
    assert [(r["list"], r["period"], r["version"]) for r in json.loads(listed.stdout)] == [
        ("fide-standard", "2026-03", 1),
        ("site-elo", "2026-02", 1),
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["fide-standard", "--as-of", "2026-02-02"],
            "no version of 'fide-standard' was in force on 2026-02-02",
        ),
        (["fide-standard", "--as-of", "2026-02-30"], "is not a date of the calendar"),
        (["fide-standard", "--as-of", "March"], "YYYY-MM-DD"),
        (
            ["fide-standard", "--as-of", "2026-03-20", "--version", "1"],
            "leave out --period/--version",
        ),
        (["nope", "--as-of", "2026-03-20"], "no list named 'nope'"),
    ],
)
def test_show_as_of_mistakes_are_one_sentence(lake: str, args: list[str], message: str) -> None:
    proc = ratings("show", *args, "--lake", lake)
    assert proc.returncode == 2
    assert message in assert_one_sentence(proc)


def test_history_as_of_gives_the_ratings_in_force_and_the_periods_up_to_them(lake: str) -> None:
    proc = ratings("history", "a", "--as-of", "2026-03-25", "--lake", lake, columns=80)
    assert proc.returncode == 0, proc.stderr
    _fits(proc.stdout)
    assert "fide-standard │ 2026-02 │       2 │ 2026-03-20 12:00 UTC │   1512" in proc.stdout
    payload = json.loads(
        ratings("history", "a", "--as-of", "2026-01-31", "--json", "--lake", lake).stdout
    )
    assert payload["ratings"] == []  # nothing was published by 2026-01-31
    assert payload["history"] == []
    payload = json.loads(
        ratings("history", "a", "--as-of", "2026-02-03", "--json", "--lake", lake).stdout
    )
    assert [(r["list"], r["rating"]) for r in payload["ratings"]] == [("fide-standard", 1500.0)]
    assert [(r["period"], r["game_id"]) for r in payload["history"]] == [("2026-01", "g1")]


def test_a_damaged_lake_file_is_one_sentence_naming_it_exit_1(tmp_path: Path) -> None:
    """A fault of the lake, not a mistake of the query: exit 1, and the other views still work."""
    lake = build(tmp_path / "lake")
    damaged = lake / "games" / "period=2026-01" / "part-0.parquet"
    damaged.write_bytes(b"PAR1 not a parquet file PAR1")
    proc = ratings("query", "SELECT count(*) AS n FROM games", "--lake", str(lake))
    assert proc.returncode == 1
    sentence = assert_one_sentence(proc)
    assert "view games cannot be read" in sentence and str(damaged) in sentence
    assert "damaged or incomplete" in sentence
    other = ratings("query", "SELECT count(*) AS n FROM quarantine", "--lake", str(lake), "--csv")
    assert other.stdout == "n\n1\n"


def test_query_table_shows_a_limit_of_rows_and_says_how_many_it_left_out(lake: str) -> None:
    proc = ratings(
        "query", "SELECT r FROM range(30) t(r) ORDER BY r DESC", "--lake", lake, "--limit", "4"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[:2] == ["30", "rows"]  # the title, wrapped to the narrow table
    assert "│ 26 │" in proc.stdout and "│ 25 │" not in proc.stdout
    assert proc.stdout.rstrip().endswith(
        "26 more rows not shown (--limit N shows more, --csv or --json every row)"
    )
    csv_proc = ratings(
        "query", "SELECT r FROM range(30) t(r)", "--lake", lake, "--csv", "--limit", "2"
    )
    assert csv_proc.stdout == "r\n0\n1\n"


def test_query_json_and_csv_stream_many_batches_as_one_document(lake: str) -> None:
    """25,000 rows are three batches of the stream; the output is the one JSON list (two-space
    indent, as every --json of the command line) and the one CSV table."""
    sql = "SELECT r, r % 3 = 0 AS third, 'x' || r AS name, NULL AS nothing FROM range(25000) t(r)"
    as_json = ratings("query", sql, "--lake", lake, "--json")
    assert as_json.returncode == 0, as_json.stderr
    expected = [
        {"r": r, "third": r % 3 == 0, "name": f"x{r}", "nothing": None} for r in range(25000)
    ]
    assert as_json.stdout == json.dumps(expected, indent=2) + "\n"
    as_csv = ratings("query", sql, "--lake", lake, "--csv")
    rows = list(csv.reader(io.StringIO(as_csv.stdout)))
    assert rows[0] == ["r", "third", "name", "nothing"]
    assert rows[1:] == [
        [str(r), "true" if r % 3 == 0 else "false", f"x{r}", ""] for r in range(25000)
    ]
    empty = ratings("query", "SELECT 1 AS a WHERE false", "--lake", lake, "--json")
    assert empty.stdout == "[]\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--memory", "lots"], "--memory takes a size such as 3G, 2GB or 512MiB"),
        (["--memory", "1MB"], "--memory must be at least 64 MiB"),
        (["--limit", "0"], "--limit takes a number of rows, 1 or more"),
    ],
)
def test_query_option_mistakes_are_one_sentence_exit_2(
    lake: str, args: list[str], message: str
) -> None:
    proc = ratings("query", "SELECT 1", "--lake", lake, *args)
    assert proc.returncode == 2
    assert message in assert_one_sentence(proc)


@pytest.mark.parametrize(
    "sql",
    ["SELECT 1", "SELECT count(*) FROM games", "SELECT list, player_id FROM history_fide"],
)
def test_query_of_tables_imports_neither_polars_nor_arrow(lake: str, sql: str) -> None:
    """`ratings query "SELECT 1"` starts with DuckDB alone (the command line imports only the
    query command's modules, and no view is opened for a query naming none); a query of table
    views lists their files and reads their footers with DuckDB, without the catalogue."""
    probe = (
        "import sys\n"
        "from pipelines.cli import app as cli\n"
        f"status = cli.main(['query', {sql!r}, '--lake', {lake!r}, '--csv'])\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'polars', 'pyarrow', 'dagster'})\n"
        "print(status, heavy)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert proc.stdout.splitlines()[-1] == "0 []"
