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
        (["--k", "40", "--date", "2013-05-01"], "--k must be one of 10, 15, 25 under the FIDE"),
        (["--k", "15"], "--k must be one of 10, 20, 40"),
        (["--k", "20", "--date", "2025-13-01"], "--date: '2025-13-01' is not a date YYYY-MM-DD"),
    ],
)
def test_mistakes_are_one_sentence(args: list[str], expected: str) -> None:
    proc = calc_fide("--rating", "1800", "--game", "1900:1", *args)
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ratings: ") and expected in lines[0], lines
