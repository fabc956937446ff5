"""The queries the README promises analysts (Polars and DuckDB over the published lists) work."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]


def readme_block(language: str) -> str:
    """The first fenced block of `language` in the README's querying section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Querying published lists", 1)[1].split("\n## ", 1)[0]
    match = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert match, f"no {language} block in the README's querying section"
    return match.group(1)


@pytest.fixture(scope="module")
def lake_parent(tmp_path_factory: pytest.TempPathFactory, samples: Path) -> Path:
    parent = tmp_path_factory.mktemp("readme")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pipelines.cli",
            "run",
            "--inbox",
            str(samples),
            "--lake",
            str(parent / "lake"),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=900,
    )
    return parent


def test_polars_query_gives_the_rating_as_of_a_date(lake_parent: Path) -> None:
    namespace: dict = {}
    cwd = os.getcwd()
    os.chdir(lake_parent)
    try:
        exec(readme_block("python"), namespace)  # noqa: S102 - the README's own example
        result = namespace["rating_as_of"]
    finally:
        os.chdir(cwd)
    assert set(result["list"].to_list()) >= {"fide-standard", "ukd-standard"}
    assert result["period"].max() <= "2026-04"
    april = pl.read_parquet(lake_parent / "lake/lists/fide-standard/2026-04/v1/list.parquet")
    expected = april.filter(pl.col("player_id") == "13400001")["rating"][0]
    got = result.filter(pl.col("list") == "fide-standard")["rating"][0]
    assert got == expected


def test_duckdb_query_gives_the_same_answer(lake_parent: Path) -> None:
    cwd = os.getcwd()
    os.chdir(lake_parent)
    try:
        rows = duckdb.sql(readme_block("sql")).pl()
    finally:
        os.chdir(cwd)
    april = pl.read_parquet(lake_parent / "lake/lists/fide-standard/2026-04/v1/list.parquet")
    expected = april.filter(pl.col("player_id") == "13400001")["rating"][0]
    fide = rows.filter(pl.col("list") == "fide-standard")
    assert fide["period"].to_list() == ["2026-04"]
    assert fide["rating"][0] == expected


def test_ratings_query_and_as_of_agree_with_the_plain_polars_query(lake_parent: Path) -> None:
    """`ratings query` over `current_lists`, and `rating_core`'s as-of lookup on a day after the
    run published everything, give what the README's plain Polars query gives."""
    from datetime import UTC, datetime, timedelta

    from rating_core.lake.as_of import ratings_as_of

    namespace: dict = {}
    cwd = os.getcwd()
    os.chdir(lake_parent)
    try:
        exec(readme_block("python"), namespace)  # noqa: S102 - the README's own example
    finally:
        os.chdir(cwd)
    expected = sorted(namespace["rating_as_of"].rows())
    sql = (
        "SELECT list, period, version, rating FROM current_lists "
        "WHERE player_id = '13400001' AND period <= '2026-04' "
        "QUALIFY row_number() OVER (PARTITION BY list ORDER BY period DESC) = 1 ORDER BY list"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "query", sql, "--json", "--lake", "lake"],
        cwd=lake_parent,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    got = [(r["list"], r["period"], r["version"], r["rating"]) for r in json.loads(proc.stdout)]
    assert got == expected
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date()
    newest = ratings_as_of(lake_parent / "lake", "13400001", tomorrow)  # every period is in force
    current = duckdb.sql(
        "SELECT list, max(period) AS period FROM read_parquet("
        f"'{lake_parent}/lake/lists/**/list.parquet') WHERE player_id = '13400001' GROUP BY list"
    ).fetchall()
    assert sorted(newest.select("list", "period").rows()) == sorted(current)
