"""`ratings export`: a published list as CSV, FIDE TXT and FIDE XML, and the round trip: each
export, read back as a starting list, starts the next period as the CSV export does."""

from __future__ import annotations

import os
import subprocess
import xml.etree.ElementTree as ET
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
from tests.support.inbox import ratings as run_ratings

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
COMBINED_XML_FIELDS = [
    *XML_FIELDS[:11],
    "rapid_rating", "rapid_games", "rapid_k", "blitz_rating", "blitz_games", "blitz_k",
    "birthday", "flag",
]  # fmt: skip


def ratings(*args: str) -> subprocess.CompletedProcess[str]:
    return run_ratings(*args, columns=200)


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
    # the era is the manifest's; the name the asset attaches (registry, games, official list)
    return listed.drop("list", RULES_COLUMN, "name", strict=False).sort("player_id")


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


PER_LIST_CUTS = {"id": (0, 15), "name": (15, 76), "fed": (76, 80), "sex": (80, 84),
                 "rating": (113, 119), "gms": (119, 123), "k": (123, 126), "bday": (126, 132),
                 "flag": (132, 136)}  # fmt: skip
COMBINED_CUTS = {"id": (0, 15), "name": (15, 76), "srtng": (113, 119), "rrtng": (126, 132),
                 "brtng": (139, 145), "bday": (152, 158), "flag": (158, 162)}  # fmt: skip
"""FIDE's columns as its users cut them, by byte position (0-based start, end)."""


def cut_by_bytes(data: bytes, cuts: dict[str, tuple[int, int]], width: int) -> list[dict]:
    """The players of a FIDE TXT read as a parser cutting by byte position does, after checking
    the file is ASCII, CRLF and `width` characters a line."""
    data.decode("ascii")
    header, *lines = data.split(b"\r\n")
    assert header.startswith(b"ID Number      Name") and lines[-1] == b""
    assert {len(line) for line in [header, *lines[:-1]]} == {width}
    return [{f: line[a:b].decode().strip() for f, (a, b) in cuts.items()} for line in lines[:-1]]


def published(lake: Path, name: str, period: str) -> dict[str, int]:
    listed = publish.read_list(lake, name, period)
    return dict(listed.select("player_id", pl.col("rating").cast(pl.Int64)).iter_rows())


def test_txt_and_xml_are_fides_files(lake: Path, tmp_path: Path) -> None:
    txt, xml = tmp_path / "list.txt", tmp_path / "list.xml"
    _export(lake, "fide-txt", txt)
    _export(lake, "fide-xml", xml)
    data = txt.read_bytes()
    assert data.split(b"\r\n")[0].endswith(b"FOA JUL26 Gms K  B-day Flag")
    players = cut_by_bytes(data, PER_LIST_CUTS, 136)
    ratings_ = published(lake, "fide-standard", "2026-06")
    assert {p["id"]: int(p["rating"]) for p in players} == ratings_  # every rating, every player
    assert all(p["bday"].isdigit() and p["k"] in {"10", "20", "40"} for p in players)
    text = xml.read_bytes().decode("ascii")
    assert text.startswith("<playerslist>\r\n<player>\r\n")
    root = ET.fromstring(text)
    assert root.tag == "playerslist" and len(root) == len(ratings_)
    assert all([child.tag for child in player] == XML_FIELDS for player in root)
    by_id = {p.findtext("fideid"): p for p in root}
    assert {i: int(p.findtext("rating") or 0) for i, p in by_id.items()} == ratings_
    ayse = next(p for p in root if p.findtext("name") == "Yilmaz, Ayse")  # Yılmaz, Ayşe
    assert ayse.findtext("country") == "TUR"


def test_the_combined_files_carry_the_three_lists(lake: Path, tmp_path: Path) -> None:
    txt, xml = tmp_path / "players_list_foa.txt", tmp_path / "players_list_xml_foa.xml"
    said = _export(lake, "fide-txt-combined", txt, "--period", "2026-03")
    assert "fide-standard 2026-03 v1 with fide-rapid v1 and fide-blitz v1 (" in said
    _export(lake, "fide-xml-combined", xml, "--period", "2026-03")
    players = cut_by_bytes(txt.read_bytes(), COMBINED_CUTS, 162)
    lists = {f: published(lake, f"fide-{k}", "2026-03")
             for f, k in (("srtng", "standard"), ("rrtng", "rapid"), ("brtng", "blitz"))}  # fmt: skip
    everyone = set().union(*lists.values())
    assert {p["id"] for p in players} == everyone and len(players) == len(everyone)
    for field, ratings_ in lists.items():  # 0 where the player is not on that list
        assert {p["id"]: int(p[field]) for p in players} == {
            i: ratings_.get(i, 0) for i in everyone
        }, field
    root = ET.fromstring(xml.read_bytes())
    assert len(root) == len(everyone)
    assert all([child.tag for child in player] == COMBINED_XML_FIELDS for player in root)
    rapid = {p.findtext("fideid"): p.findtext("rapid_rating") for p in root}
    assert rapid == {i: str(lists["rrtng"][i]) if i in lists["rrtng"] else "" for i in everyone}


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
        (["fide-rapid", "--version", "7", "--format", "csv"], "has version v1 only, not v7"),
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
