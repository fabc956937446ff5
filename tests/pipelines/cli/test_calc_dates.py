"""`ratings calc fide --date`: the calculator rates by the FIDE rules in force that day (RULES
§3.3) and says which era applied."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]


def calc_fide(*args: str) -> subprocess.CompletedProcess[str]:
    """`ratings calc fide ...` in a fresh process, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "calc", "fide", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "200"},
    )


@pytest.mark.parametrize(
    ("date", "rules", "change"),
    [
        # 2700 beats 2200: capped D -400 -> PD .92 -> 10 x 0.08 = 0.8 -> +1 before 2025-10;
        # from 2025-10 the real D -500 -> PD .96 -> 10 x 0.04 = 0.4 -> 0
        ("2025-09-30", "FIDE 2024-12", 1),
        ("2025-10-01", "FIDE 2025-10", 0),
        (None, "FIDE 2025-10", 0),  # default: today
    ],
)
def test_date_picks_the_era(date: str | None, rules: str, change: int) -> None:
    args = ["--rating", "2700", "--k", "10", "--game", "2200:1", "--json"]
    proc = calc_fide(*args, *(["--date", date] if date else []))
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert (payload["rules"], payload["change"]) == (rules, change)
    if date:
        assert payload["date"] == date


def test_readable_output_names_the_era_and_old_k_values_are_accepted() -> None:
    # 2013: K 15 is an established player's K; 1800 beats 1900 (PD .36) and draws 1750
    # (PD .57): 15 x 0.57 = 8.55 -> +9
    proc = calc_fide(
        "--rating", "1800", "--k", "15", "--game", "1900:1", "--game", "1750:0.5",
        "--date", "2013-05-01",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "FIDE 2012-07" in proc.stdout and "1809" in proc.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--k", "40", "--date", "2013-05-01"], "--k must be one of 10, 15, 30 under the FIDE"),
        (
            ["--k", "40", "--list", "blitz", "--date", "2018-03-01"],
            "--k must be one of 20 under the FIDE 2014-07 rules of the blitz list",
        ),
        (["--k", "15"], "--k must be one of 10, 20, 40"),
        (["--k", "20", "--date", "2025-13-01"], "--date: '2025-13-01' is not a date YYYY-MM-DD"),
    ],
)
def test_mistakes_are_one_sentence(args: list[str], expected: str) -> None:
    proc = calc_fide("--rating", "1800", "--game", "1900:1", *args)
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ratings: ") and expected in lines[0], lines


def test_k_30_before_2014_07_is_accepted() -> None:
    # RULES §3.3: 2013-05, a 2000 player new to the list (K 30) scores 3/4 against four 2000s
    # (PD .50 each): 30 x 1.0 = +30
    games = ["--game", "2000:1", "--game", "2000:1", "--game", "2000:1", "--game", "2000:0"]
    proc = calc_fide("--rating", "2000", "--k", "30", "--date", "2013-06-01", *games, "--json")
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert (payload["rules"], payload["list"], payload["k"], payload["change"]) == (
        "FIDE 2012-07",
        "standard",
        30,
        30,
    )


@pytest.mark.parametrize(
    ("kind", "date", "k", "change"),
    [
        # RULES §3.3: 2018-03 blitz, 1500 (K 20 for everyone) beats 1500: 20 x 0.5 = +10;
        # 2022-10, the same junior: K 40 -> +20
        ("blitz", "2018-03-15", "20", 10),
        ("blitz", "2022-10-01", "40", 20),
        ("rapid", "2018-03-15", "20", 10),
    ],
)
def test_list_picks_the_rows_of_that_list(kind: str, date: str, k: str, change: int) -> None:
    args = ["--rating", "1500", "--k", k, "--game", "1500:1", "--list", kind, "--date", date]
    proc = calc_fide(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert (payload["list"], payload["change"]) == (kind, change)


def test_the_600_point_rule_on_rapid_is_shown() -> None:
    # 2700 beats 2000 on rapid in 2025: 600 or more apart, one above 2600: not rated; beats
    # 2500: D -200 -> PD .76 -> 10 x 0.24 = 2.4 -> +2. On the standard list both count.
    games = ["--game", "2000:1", "--game", "2500:1", "--date", "2025-11-01", "--json"]
    rapid = json.loads(calc_fide("--rating", "2700", "--k", "10", "--list", "rapid", *games).stdout)
    assert [g["opponent"] for g in rapid["not_rated"]] == [2000]
    assert rapid["not_rated"][0]["reason"] == "600-point rule"
    assert (len(rapid["games"]), rapid["change"]) == (1, 2)
    standard = json.loads(calc_fide("--rating", "2700", "--k", "10", *games).stdout)
    assert standard["not_rated"] == [] and len(standard["games"]) == 2
