"""RULES §3.4 applied by `ratings run`: a FIDE tournament whose list period is already published
when it reaches the inbox goes on the first unpublished period's list under `next_list`
(FIDE's default), published FIDE lists keep their version, and a tournament later than the
third list after it is quarantined naming the rule; under `revise` (`ratings.toml`
`[late_results] fide = "revise"`) the published periods are revised, as before. Each manifest
records the policy it was rated under."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from rating_core import tables
from rating_core.lake import publishing as publish
from rating_core.lake.storage import read_table
from rating_core.systems.late_results import TOO_LATE
from tests.support.inbox import ratings

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

HEADER = "game_id,tournament_id,round,played_on,white_id,black_id,result,rating_list\n"
LATE_MAY = HEADER + "late-1,late-may-2026-05,1,2026-05-20,13400002,34500002,0-1,standard\n"
"""A May tournament between two players of the standard starting list: May and June are
published when it arrives, so under next_list it goes on July's list (the third after it)."""
JULY = HEADER + "july-1,july-cup-2026-07,1,2026-07-10,34500009,34500014,1-0,standard\n"
"""A July tournament between two other players: July is rated by the second run."""
LATE_MARCH = HEADER + "late-2,late-march-2026-03,1,2026-03-10,13400001,34500004,1-0,standard\n"
"""A March tournament: July is its fifth list, too late (FIDE §9.1)."""


def _two_runs(
    tmp_path: Path, samples: Path, toml: str | None, preview: list[str] | None = None
) -> Path:
    """The samples rated, then a late May tournament, a too late March one and July's (with
    `preview`, what `ratings preview --json` says of them first, in its `late_results`)."""
    inbox, lake = tmp_path / "inbox", tmp_path / "lake"
    shutil.copytree(samples, inbox)
    if toml is not None:
        (tmp_path / "ratings.toml").write_text(toml, encoding="utf-8")
    first = ratings("run", "--inbox", str(inbox), "--lake", str(lake), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    periods = publish.list_periods(lake, "fide-standard")
    assert periods[-1] == "2026-06", periods  # the samples end in June
    for name, text in (
        ("late-may-2026-05.csv", LATE_MAY),
        ("july-cup-2026-07.csv", JULY),
        ("late-march-2026-03.csv", LATE_MARCH),
    ):
        (inbox / "federation" / name).write_text(text, encoding="utf-8")
    if preview is not None:
        shown = ratings(
            "preview", "--inbox", str(inbox), "--lake", str(lake), "--json", cwd=tmp_path
        )
        assert shown.returncode == 0, shown.stderr
        preview += json.loads(shown.stdout)["late_results"]
    second = ratings("run", "--inbox", str(inbox), "--lake", str(lake), cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "does not apply the policy" not in second.stderr
    return lake


def _games(lake: Path, period: str, player: str) -> int:
    listed = publish.read_list(lake, "fide-standard", period)
    return int(listed.filter(pl.col("player_id") == player)["games"].sum())


def test_next_list_rates_a_late_tournament_on_the_first_unpublished_list(
    tmp_path: Path, samples: Path
) -> None:
    said: list[str] = []
    lake = _two_runs(tmp_path, samples, None, said)
    # the preview said what each policy would do, the one in force marked
    assert said == [
        "late FIDE tournament late-march-2026-03 of 2026-03: next_list (in force) → not rated, "
        "too late (FIDE §9.1); revise → revises 2026-03 to 2026-06",
        "late FIDE tournament late-may-2026-05 of 2026-05: next_list (in force) → the list of "
        "2026-07; revise → revises 2026-05 to 2026-06",
    ]
    for period in ("2026-03", "2026-05", "2026-06"):  # published FIDE lists are never revised
        assert publish.read_manifest(lake, "fide-standard", period)["version"] == 1, period
    july = publish.read_manifest(lake, "fide-standard", "2026-07")
    assert july["version"] == 1
    assert july["late_results"] == "next_list"
    assert july["late_results_until"] == "list 3 after the tournament"
    # the late May tournament is counted on July's list, beside July's own tournament
    assert _games(lake, "2026-07", "13400002") == 1
    assert _games(lake, "2026-07", "34500009") == 1
    # the March tournament is too late: quarantined, naming the rule, and nowhere on a list
    assert _games(lake, "2026-07", "13400001") == 0
    quarantine = read_table(lake, tables.QUARANTINE).collect()
    late = quarantine.filter(pl.col("source_file").str.ends_with("late-march-2026-03.csv"))
    assert late["reason"].to_list() == [f"tournament late-march-2026-03 of 2026-03: {TOO_LATE}"]
    assert late["record"].to_list() == ["late-2"]
    # UKD keeps `revise`: its May list is revised by the late tournament
    assert publish.read_manifest(lake, "ukd-standard", "2026-05")["version"] == 2
    assert publish.read_manifest(lake, "ukd-standard", "2026-05")["late_results"] == "revise"


def test_revise_republishes_the_published_fide_periods(tmp_path: Path, samples: Path) -> None:
    lake = _two_runs(tmp_path, samples, '[late_results]\nfide = "revise"\n')
    may = publish.read_manifest(lake, "fide-standard", "2026-05")
    assert may["version"] == 2 and may["late_results"] == "revise"
    assert "late_results_until" not in may
    assert publish.read_manifest(lake, "fide-standard", "2026-03")["version"] == 2
    diff = publish.read_diff(lake, "fide-standard", "2026-05")
    assert {"13400002", "34500002"} <= set(diff["player_id"].to_list())
    quarantine = read_table(lake, tables.QUARANTINE).collect()
    assert not quarantine.filter(pl.col("reason").str.contains("FIDE §9.1")).height
