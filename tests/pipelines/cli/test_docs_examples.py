"""Every documented example holds: the command outputs shown in docs/ are what the commands print
at 80 columns, the README's tour and the `ratings query` lines run, the calculator forms give the
figures their comments promise, and the Polars and DuckDB queries answer what the docs say.

The scenario is the one docs/commands.md describes: the sample inbox, a first `ratings run`,
then the late result the page shows (`<!-- file: ... -->`), the preview (`late-added` outputs),
the second run (the `run` output) and the commands over its lake (`published` outputs).
The blocks are found by their markers (see tests/support/docs.py).
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from tests.support.docs import (
    STAGES,
    Marked,
    Scenario,
    command_lines,
    doc_block,
    marked_blocks,
    play_scenario,
    run_ratings,
    shown,
)
from tests.support.duck import relation

pytestmark = pytest.mark.e2e

OUTPUTS = [b for b in marked_blocks() if b.kind == "output"]


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory, samples: Path) -> Scenario:
    return play_scenario(tmp_path_factory.mktemp("docs"), samples)


def test_the_scenario_has_one_run_and_outputs_at_every_stage() -> None:
    assert [b.name for b in OUTPUTS].count("run") == 1
    assert {b.name for b in OUTPUTS} == set(STAGES)
    assert all(b.name in STAGES for b in OUTPUTS)


@pytest.mark.parametrize(
    "block", OUTPUTS, ids=[f"{b.page}:{b.body.splitlines()[0][2:60]}" for b in OUTPUTS]
)
def test_the_documented_output_is_what_the_command_prints(
    scenario: Scenario, block: Marked
) -> None:
    proc = scenario.printed[block.body]
    expected = shown(block.body)[1:]
    got = shown(proc.stdout)
    diff = "\n".join(difflib.unified_diff(expected, got, "docs", "printed", lineterm=""))
    assert got == expected, (
        f"{block.page}: the output of '{block.body.splitlines()[0]}' differs (after a deliberate "
        f"change: python -m tests.support.docs --rewrite):\n{diff}"
    )
    failed = any(line.startswith("ratings: ") for line in expected)
    assert (proc.returncode != 0) == failed


def test_the_readme_tour_runs(scenario: Scenario) -> None:
    assert len(scenario.tour) >= 9
    for line, proc in scenario.tour:
        assert proc.returncode == 0, f"{line}:\n{proc.stdout}"
        assert "ratings:" not in proc.stdout, line
    assert (
        (scenario.folder / "fide-standard.txt").read_text(encoding="utf-8").startswith("ID Number")
    )


def test_every_documented_query_command_runs(scenario: Scenario) -> None:
    lines = command_lines("query-commands")
    assert len(lines) >= 5
    for line in lines:
        args = shlex.split(line)
        assert args[:2] == ["ratings", "query"]
        proc = run_ratings(args[1:], scenario.folder)
        assert proc.returncode == 0, f"{line}:\n{proc.stdout}"
        assert "rows" in proc.stdout or proc.stdout.lstrip().startswith(("[", "list,")), line


def _promised(comment: str) -> dict[str, str]:
    """`change 11, new_rating 1811` -> the figures a calculator form's comment promises (what is
    in brackets is an aside, not a promise)."""
    plain = re.sub(r"\([^)]*\)", "", comment)
    return dict(re.findall(r"\b([a-z_]+) (-?\d[\d.]*|FIDE \d{4}-\d\d)\b", plain))


def test_the_calculator_forms_give_the_figures_of_their_comments(tmp_path: Path) -> None:
    forms = [line for line in doc_block("calc-forms").splitlines() if line.strip()]
    assert len(forms) == 6
    checked = 0
    for form in forms:
        command, _, comment = form.partition("  # ")
        args = shlex.split(command)[1:]
        proc = run_ratings([*args, "--json"] if "--json" not in args else args, tmp_path)
        assert proc.returncode == 0, f"{command}:\n{proc.stdout}"
        result = json.loads(proc.stdout)
        promised = _promised(comment)
        assert promised, f"no figure in the comment of {command}"
        for key, value in promised.items():
            if value.startswith("FIDE"):
                assert result[key] == value, command
            else:
                assert Decimal(str(result[key])) == Decimal(value), (command, key)
            checked += 1
    assert checked >= 12


def _newest_rating(lake: Path, list_name: str, period: str, player: str) -> float:
    folder = lake / "lists" / list_name / period
    newest = max(folder.glob("v*"), key=lambda v: int(v.name[1:]))
    rows = pl.read_parquet(newest / "list.parquet")
    return rows.filter(pl.col("player_id") == player)["rating"][0]


def _exec_in(folder: Path, source: str) -> dict:
    namespace: dict = {}
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        exec(source, namespace)  # noqa: S102 - the docs' own example
    finally:
        os.chdir(cwd)
    return namespace


def test_polars_query_gives_the_rating_as_of_a_date(scenario: Scenario) -> None:
    result = _exec_in(scenario.folder, doc_block("polars-as-of"))["rating_as_of"]
    assert set(result["list"].to_list()) >= {"fide-standard", "ukd-standard"}
    assert result["period"].max() <= "2026-04"
    lake = scenario.folder / "lake"
    got = result.filter(pl.col("list") == "fide-standard")
    assert got["period"].to_list() == ["2026-04"]
    assert got["version"].to_list() == [2]  # the late result revised every period from 2026-02
    assert got["rating"][0] == _newest_rating(lake, "fide-standard", "2026-04", "13400001")


def test_duckdb_query_gives_the_same_answer(scenario: Scenario) -> None:
    cwd = os.getcwd()
    os.chdir(scenario.folder)
    try:
        rows = relation(doc_block("duckdb-as-of")).pl()
    finally:
        os.chdir(cwd)
    lake = scenario.folder / "lake"
    fide = rows.filter(pl.col("list") == "fide-standard")
    assert fide["period"].to_list() == ["2026-04"]
    assert fide["rating"][0] == _newest_rating(lake, "fide-standard", "2026-04", "13400001")
    ukd = rows.filter(pl.col("list") == "ukd-standard")
    assert ukd["rating"][0] == _newest_rating(lake, "ukd-standard", "2026-04", "13400001")


def test_ratings_query_and_as_of_agree_with_the_plain_polars_query(scenario: Scenario) -> None:
    """`ratings query` over `current_lists`, and `rating_core`'s as-of lookup on a day after the
    run published everything, give what the docs' plain Polars query gives."""
    from datetime import UTC, datetime, timedelta

    from rating_core.lake.as_of import ratings_as_of

    folder = scenario.folder
    expected = sorted(_exec_in(folder, doc_block("polars-as-of"))["rating_as_of"].rows())
    sql = (
        "SELECT list, period, version, rating FROM current_lists "
        "WHERE player_id = '13400001' AND period <= '2026-04' "
        "QUALIFY row_number() OVER (PARTITION BY list ORDER BY period DESC) = 1 ORDER BY list"
    )
    proc = run_ratings(["query", sql, "--json", "--lake", "lake"], folder)
    assert proc.returncode == 0, proc.stdout
    got = [(r["list"], r["period"], r["version"], r["rating"]) for r in json.loads(proc.stdout)]
    assert got == expected
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date()
    newest = ratings_as_of(folder / "lake", "13400001", tomorrow)  # every period is in force
    current = relation(
        "SELECT list, max(period) AS period FROM read_parquet("
        f"'{folder}/lake/lists/**/list.parquet') WHERE player_id = '13400001' GROUP BY list"
    ).fetchall()
    assert sorted(newest.select("list", "period").rows()) == sorted(current)


def test_the_original_list_queries_find_the_first_versions(scenario: Scenario) -> None:
    source = doc_block("polars-originals") + "originals = originals.collect()\n"  # in the folder
    polars_rows = _exec_in(scenario.folder, source)["originals"]
    cwd = os.getcwd()
    os.chdir(scenario.folder)
    try:
        duckdb_rows = relation(doc_block("duckdb-originals")).pl()
    finally:
        os.chdir(cwd)
    for rows in (polars_rows, duckdb_rows):
        assert set(rows["version"].to_list()) == {1}
        revised = rows.filter((pl.col("list") == "fide-standard") & (pl.col("period") == "2026-02"))
        assert revised.height == 32  # the original of a period the late result revised


def test_the_python_examples_run_on_the_lake(scenario: Scenario) -> None:
    views = _exec_in(scenario.folder, doc_block("python-views"))
    assert views["march"].height > 0
    catalogue = _exec_in(scenario.folder, doc_block("python-catalogue"))
    assert "read_table" in catalogue
