"""`ratings show LIST --federation --women --juniors --top N` on a list published by hand (with
the player columns FIDE publishes), and the one sentence for a list without them."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from pipelines.cli.app import main
from rating_core.lake import publishing as publish

ROWS = pl.DataFrame(
    {
        "player_id": ["1", "2", "3", "4", "5", "6"],
        "name": ["Ana", "Banu", "Cem", "Deniz", "Ece", "Filiz"],
        "rating": [2500.0, 2400.0, 2450.0, 2300.0, 2600.0, 2350.0],
        "federation": ["TUR", "TUR", "AZE", "TUR", "TUR", "TUR"],
        "sex": ["M", "F", "F", "F", "M", "F"],
        "birth_year": [1990, 2007, 2006, 2005, 2008, 2006],
        "flag": [None, "w", "w", "w", "i", "wi"],
    }
)


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    folder = tmp_path / "lake"
    publish.publish_list(
        folder, "fide-standard", "2026-06", ROWS, reason="test", input_digest="x", code_version="t"
    )
    publish.publish_list(
        folder,
        "fide-rapid",
        "2026-06",
        ROWS.select("player_id", "name", "rating"),
        reason="test",
        input_digest="x",
        code_version="t",
    )
    return folder


def _show(lake: Path, capsys: pytest.CaptureFixture[str], *args: str) -> list[dict]:
    assert main(["show", "fide-standard", "--json", "--lake", str(lake), *args]) == 0
    return json.loads(capsys.readouterr().out)["rows"]


def test_federation_women_juniors_top(lake: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = _show(lake, capsys, "--federation", "TUR")
    assert [(r["position"], r["player_id"]) for r in rows] == [(1, "1"), (2, "2"), (3, "4")]
    rows = _show(lake, capsys, "--women")
    assert [r["player_id"] for r in rows] == ["3", "2", "4"]
    rows = _show(lake, capsys, "--women", "--juniors", "--federation", "tur")
    assert [r["player_id"] for r in rows] == ["2"]  # JUL26's juniors: born 2006 or later
    rows = _show(lake, capsys, "--women", "--top", "1")
    assert [r["player_id"] for r in rows] == ["3"]


def test_the_table_shows_the_place(lake: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "fide-standard", "--women", "--lake", str(lake)]) == 0
    out = capsys.readouterr().out
    assert "position" in out and "Banu" in out and "Ece" not in out


def test_a_list_without_the_columns_is_one_sentence(
    lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", "fide-rapid", "--women", "--lake", str(lake)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ratings: show fide-rapid 2026-06: this list has no sex column")
