"""`ratings show --original` and `ratings diff --from-original` on a lake of three versions."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from rating_core.lake import publishing as publish
from tests.pipelines.cli.test_cli import ratings

pytestmark = pytest.mark.e2e

LIST, PERIOD = "fide-standard", "2026-02"


def _publish(lake: Path, ratings_of: dict[str, int], causes: dict[str, str] | None = None) -> None:
    rows = pl.DataFrame(
        {"player_id": list(ratings_of), "rating": list(ratings_of.values())},
        schema_overrides={"rating": pl.Int32},
    )
    cause_frame = (
        pl.DataFrame({"player_id": list(causes), "cause": list(causes.values())})
        if causes
        else None
    )
    publish.publish_list(
        lake,
        LIST,
        PERIOD,
        rows,
        reason="rated from the period's federation games",
        input_digest=str(len(ratings_of)) + str(sorted(ratings_of.values())),
        code_version="0.1.0",
        causes=cause_frame,
    )


@pytest.fixture(scope="module")
def revised_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    lake = tmp_path_factory.mktemp("revised") / "lake"
    _publish(lake, {"p1": 1500, "p2": 1600, "p3": 1700})
    _publish(lake, {"p1": 1512, "p2": 1588, "p3": 1700}, {"p1": "late result: tournament T"})
    _publish(lake, {"p1": 1512, "p2": 1600, "p3": 1690}, {"p3": "correction: wrong result"})
    return lake


def test_show_original_shows_the_first_version(revised_lake: Path) -> None:
    shown = json.loads(
        ratings(
            "show", LIST, "--period", PERIOD, "--original", "--lake", str(revised_lake), "--json"
        ).stdout
    )
    assert (shown["version"], shown["publication"], shown["revises"]) == (1, "original", None)
    assert {r["player_id"]: r["rating"] for r in shown["rows"]} == {
        "p1": 1500,
        "p2": 1600,
        "p3": 1700,
    }
    latest = json.loads(ratings("show", LIST, "--lake", str(revised_lake), "--json").stdout)
    assert (latest["version"], latest["publication"], latest["revises"]) == (3, "revision", 2)
    text = ratings("show", LIST, "--original", "--lake", str(revised_lake)).stdout
    assert f"{LIST} {PERIOD} v1 (3 players)" in " ".join(text.split())  # the title may wrap


def test_diff_from_original_against_the_latest_revision(revised_lake: Path) -> None:
    shown = json.loads(
        ratings(
            "diff", LIST, PERIOD, "--from-original", "--lake", str(revised_lake), "--json"
        ).stdout
    )
    assert shown["from_version"] == 1 and shown["manifest"]["version"] == 3
    got = {r["player_id"]: (r["old"], r["new"], r["cause"]) for r in shown["diff"]}
    assert got == {  # p2 moved in v2 and back in v3: no net change
        "p1": (1500, 1512, "v2: late result: tournament T"),
        "p3": (1700, 1690, "v3: correction: wrong result"),
    }
    text = ratings("diff", LIST, PERIOD, "--from-original", "--lake", str(revised_lake)).stdout
    text = " ".join(text.split())  # the title may wrap
    assert f"{LIST} {PERIOD} v3 against the original v1" in text
    assert "2 revisions since the original" in text
    older = json.loads(
        ratings(
            "diff",
            LIST,
            PERIOD,
            "--from-original",
            "--version",
            "2",
            "--lake",
            str(revised_lake),
            "--json",
        ).stdout
    )
    assert {r["player_id"] for r in older["diff"]} == {"p1", "p2"}


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["show", LIST, "--original", "--version", "2"], "--original and --version"),
        (["diff", LIST, PERIOD, "--from-original", "--version", "1"], "is the original list"),
    ],
)
def test_original_mistakes_are_one_sentence(
    revised_lake: Path, args: list[str], fragment: str
) -> None:
    proc = ratings(*args, "--lake", str(revised_lake), check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith("ratings: ") and fragment in proc.stderr
    assert "Traceback" not in proc.stderr
