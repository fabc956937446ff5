"""`ratings export`: a published list as CSV, FIDE TXT and FIDE XML, and the round trip: each
export, read back as a starting list, starts the next period as the CSV export does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from assets.systems import read_states
from rating_core.ingest.registry import read_starting_list
from rating_core.lake import publishing as publish
from rating_core.lake.storage import read_table
from rating_core.schemas import GAMES_SCHEMA
from rating_core.systems.contract import RULES_COLUMN
from rating_core.systems.federation import federation_state_tables, fide_lists_periods

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]
XML_FIELDS = [
    "fideid",
    "name",
    "country",
    "sex",
    "title",
    "w_title",
    "o_title",
    "foa_title",
    "rating",
    "games",
    "k",
    "birthday",
    "flag",
]
"""DESIGN §7's fields of each `player` element, in order."""


def ratings(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pipelines.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "COLUMNS": "200"},
    )


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory, samples: Path) -> Path:
    folder = tmp_path_factory.mktemp("export") / "lake"
    proc = ratings("run", "--inbox", str(samples), "--lake", str(folder))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return folder


def _export(lake: Path, fmt: str, target: Path, *extra: str) -> str:
    proc = ratings("export", "fide-standard", "--lake", str(lake), "--format", fmt,
                   "--output", str(target), *extra)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _next_period(lake: Path, start: pl.DataFrame, period: str) -> pl.DataFrame:
    """The fide-standard list of `period` computed as the pipeline does, from `start` (the
    official list after the period before) and the lake's games, registry and pools."""
    games = read_table(lake, "games", [period], schema=GAMES_SCHEMA).collect()
    games = games.filter(pl.col("source") == "federation")
    players = read_table(lake, "players").collect()
    states = read_states(lake, federation_state_tables("fide"), period)
    corrections = read_table(lake, "corrections").collect()  # the sample corrects 2026-04
    outputs = dict(fide_lists_periods(games, start, states, players, [period], corrections))
    result = outputs[period]
    listed = result.list_rows.filter(pl.col("list") == "fide-standard")
    return listed.drop("list", RULES_COLUMN, strict=False).sort("player_id")  # era: manifest


def test_every_export_starts_the_next_period_as_the_csv_does(lake: Path, tmp_path: Path) -> None:
    starts = {}
    for fmt, suffix in (("csv", "csv"), ("fide-txt", "txt"), ("fide-xml", "xml")):
        folder = tmp_path / suffix
        folder.mkdir()
        target = folder / f"fide-standard@2026-03.{suffix}"
        said = _export(lake, fmt, target, "--period", "2026-03")
        assert "fide-standard 2026-03 v1 (33 players)" in said
        read = read_starting_list(target, target.name)
        assert read.quarantine.height == 0
        starts[suffix] = read.rows
    published_03 = publish.read_list(lake, "fide-standard", "2026-03")
    for rows in starts.values():  # every format carries every player at the published rating
        assert (
            rows.select("player_id", "rating").sort("player_id").rows()
            == published_03.select("player_id", pl.col("rating").cast(pl.Int32))
            .sort("player_id")
            .rows()
        )

    from_csv = _next_period(lake, starts["csv"], "2026-04")
    published = publish.read_list(lake, "fide-standard", "2026-04").sort("player_id")
    assert from_csv.height == published.height > 30
    assert from_csv.equals(published.select(from_csv.columns).cast(from_csv.schema))

    career = ["rated_games", "peak_rating"]  # not in FIDE's formats: inferred from K
    for suffix in ("txt", "xml"):
        from_fide = _next_period(lake, starts[suffix], "2026-04")
        assert from_fide.drop(career).equals(from_csv.drop(career)), suffix
    # the inference, by hand: 13400001 (peak 2460: K 10) gets max(rating, 2400) as peak and
    # 30 games; 13400002 (260 games, peak 2231: K 20) 30 games and its rating as peak
    from_txt = {r["player_id"]: r for r in _next_period(lake, starts["txt"], "2026-04").to_dicts()}
    listed_03 = {r["player_id"]: r for r in published_03.to_dicts()}
    gm = from_txt["13400001"]
    assert gm["peak_rating"] == max(listed_03["13400001"]["rating"], 2400, gm["rating"])
    assert gm["rated_games"] == 30 + gm["games"]
    im = from_txt["13400002"]
    assert im["rated_games"] == 30 + im["games"]
    assert im["peak_rating"] == max(listed_03["13400002"]["rating"], im["rating"])


def test_txt_and_xml_have_fides_header_and_elements(lake: Path, tmp_path: Path) -> None:
    txt, xml = tmp_path / "list.txt", tmp_path / "list.xml"
    _export(lake, "fide-txt", txt)
    _export(lake, "fide-xml", xml)
    header, *lines = txt.read_text(encoding="utf-8").splitlines()
    assert header.startswith("ID Number      Name") and "FOA JUL26 Gms K  B-day Flag" in header
    listed = publish.read_list(lake, "fide-standard", "2026-06")
    assert len(lines) == listed.height
    text = xml.read_text(encoding="utf-8")
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<playerslist>\n')
    first = text.split("<player>\n", 2)[1].split("</player>")[0]
    assert [part.split(">")[0].lstrip("<") for part in first.splitlines()] == XML_FIELDS
    assert text.count("<player>") == listed.height
    assert "<name>Yılmaz, Ayşe</name>" in text and "<country>TUR</country>" in text


def test_csv_export_is_the_published_csv(lake: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    target.write_text("an older file, replaced whole\n" * 1000)
    proc = ratings("export", "ukd-blitz", "--lake", str(lake), "--format", "csv",
                   "--output", str(target), "--period", "2026-02", "--version", "1")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    folder = publish.version_dir(lake, "ukd-blitz", "2026-02", 1)
    assert target.read_bytes() == (folder / "list.csv").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]  # no temporary left


@pytest.mark.parametrize(
    ("args", "sentence"),
    [
        (["fide-rapidd", "--format", "csv"], "no list named 'fide-rapidd'"),
        (["fide-rapid", "--period", "2019-01", "--format", "csv"], "has no period 2019-01"),
        (["fide-rapid", "--version", "7", "--format", "csv"], "has versions v1 to v1, not v7"),
        (["fide-rapid", "--version", "0", "--format", "csv"], "--version must be"),
        (["site-elo", "--format", "fide-txt"], "the FIDE formats hold FIDE lists"),
        (["fide-rapid", "--format", "txt"], "--format must be one of"),
        (["fide-rapid", "--format", "fide-xml", "--output", "/no/such/folder/x.xml"],
         "the folder '/no/such/folder' does not exist"),
        (["fide-rapid", "--format", "fide-txt", "--output", "pyproject.toml/x.txt"],
         "'pyproject.toml' is a file, not a folder"),
    ],
)  # fmt: skip
def test_export_mistakes_are_one_sentence(
    lake: Path, tmp_path: Path, args: list[str], sentence: str
) -> None:
    if "--output" not in args:
        args = [*args, "--output", str(tmp_path / "x")]
    proc = ratings("export", *args, "--lake", str(lake))
    assert proc.returncode == 2
    assert proc.stderr.startswith("ratings: ") and sentence in proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert not (tmp_path / "x").exists()


def test_an_unwritable_output_is_one_sentence(lake: Path, tmp_path: Path) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as a user who can write anywhere")
        proc = ratings("export", "fide-blitz", "--lake", str(lake), "--format", "fide-txt",
                       "--output", str(folder / "x.txt"))  # fmt: skip
    finally:
        folder.chmod(0o700)
    assert proc.returncode == 2
    assert proc.stderr.startswith("ratings: cannot write") and "permission denied" in proc.stderr
