"""FIDE, UKD and club ratings print as the lists publish them, whole numbers (`2389`, never
`2389.0`), in `ratings show`, `ratings diff` and `ratings history --as-of`, text and JSON; FIBS
keeps its decimal (DESIGN §5). The lake is tests/support/published_lake.py's."""

from __future__ import annotations

import json

import polars as pl
import pytest

from rating_core.lake import publishing as publish
from rating_core.systems.contract import as_published, publishes_whole_numbers
from tests.support.inbox import ratings
from tests.support.published_lake import build

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> str:
    built = build(tmp_path_factory.mktemp("whole") / "lake")
    fibs = pl.DataFrame(
        {"player_id": ["u"], "name": ["U"], "rating": [1702.5], "games": [3], "change": [43.5]}
    )
    publish.publish_list(
        built, "fibs", "2026-02", fibs, reason="test", input_digest="f", code_version="test"
    )
    return str(built)


def test_show_prints_whole_ratings_and_fibs_keeps_its_decimal(lake: str) -> None:
    text = ratings("show", "fide-standard", "--period", "2026-02", "--lake", lake).stdout
    assert "1512" in text and "1512.0" not in text
    rows = json.loads(
        ratings("show", "fide-standard", "--period", "2026-02", "--lake", lake, "--json").stdout
    )["rows"]
    assert sorted(r["rating"] for r in rows) == [1512, 1590]
    assert all(isinstance(r["rating"], int) for r in rows)
    fibs = json.loads(ratings("show", "fibs", "--lake", lake, "--json").stdout)["rows"]
    assert (fibs[0]["rating"], fibs[0]["change"]) == (1702.5, 43.5)


def test_diff_prints_whole_ratings(lake: str) -> None:
    payload = json.loads(
        ratings("diff", "fide-standard", "2026-02", "--lake", lake, "--json").stdout
    )
    row = payload["diff"][0]
    assert (row["old"], row["new"], row["change"]) == (1510, 1512, 2)
    assert all(isinstance(row[c], int) for c in ("old", "new", "change"))
    text = ratings("diff", "fide-standard", "2026-02", "--lake", lake).stdout
    assert "1512" in text and "1512.0" not in text and "1510.0" not in text


def test_history_as_of_prints_whole_ratings(lake: str) -> None:
    proc = ratings("history", "a", "--as-of", "2026-03-25", "--lake", lake, "--json")
    assert proc.returncode == 0, proc.stderr
    found = {r["list"]: r["rating"] for r in json.loads(proc.stdout)["ratings"]}
    assert found["fide-standard"] == 1512 and isinstance(found["fide-standard"], int)


def test_which_lists_publish_whole_numbers() -> None:
    assert all(
        publishes_whole_numbers(n)
        for n in ("fide-standard", "fide-blitz", "ukd-rapid", "club-ankara-sk-standard")
    )
    assert not any(publishes_whole_numbers(n) for n in ("fibs", "site-elo", "site-blitz"))
    frame = pl.DataFrame({"rating": [2389.0, None], "change": [0.0, 1.5]})
    shown = as_published(frame, "fide-standard")
    assert shown["rating"].dtype == pl.Int64 and shown["rating"].to_list() == [2389, None]
    assert shown["change"].to_list() == [0.0, 1.5]  # a fraction is never cut
    assert as_published(frame, "fibs").equals(frame)
