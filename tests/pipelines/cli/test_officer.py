"""The officer's commands on the sample lake: `ratings tournament`, `find`, `history`'s links,
and `ratings reconcile` against an official file built from our own list with one known
difference of each kind (TXT and XML, as FIDE publishes them)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import polars as pl
import pytest

from rating_core.lake import publishing as publish
from rating_core.systems.fide.formats import fide_month_label
from tests.support.inbox import ratings as run_ratings

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[3]
PERIOD = "2026-06"


def ratings(*args: str) -> subprocess.CompletedProcess[str]:
    return run_ratings(*args, columns=80)


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory, samples: Path) -> Path:
    folder = tmp_path_factory.mktemp("officer") / "lake"
    proc = ratings("run", "--inbox", str(samples), "--lake", str(folder))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return folder


def test_tournament_report_fits_80_columns_and_matches_the_json(lake: Path) -> None:
    proc = ratings("tournament", "ankara-winter-2026-01", "--lake", str(lake))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "ankara-winter-2026-01: fide-standard, rated in period 2026-01"
    assert max(len(line) for line in lines) <= 80
    data = json.loads(
        ratings("tournament", "ankara-winter-2026-01", "--json", "--lake", str(lake)).stdout
    )
    list_ = publish.read_list(lake, "fide-standard", "2026-01")
    rated = {row["player_id"]: row for row in data["players"] if row["ro"] is not None}
    assert rated
    for player_id, row in rated.items():
        # the tournament is this period's only standard event: its K×(W−We) is the period's
        # change before rounding, and the list's rating is Ro plus that change rounded
        found = list_.filter(pl.col("player_id") == player_id)
        if found.is_empty():  # fell below the floor (RULES §3 step 6): off the list
            assert row["rating_after"] < 1400
            continue
        on_list = found.row(0, named=True)
        assert row["change"] == pytest.approx(on_list["change_exact"], abs=0.01)
        assert row["rating_after"] == on_list["rating"]
        assert f"{row['name']} ({player_id})" in proc.stdout
    games = [g for g in data["games"] if g["counted"]]
    assert all(g["d"] == g["opponent_rating"] - g["ro"] or abs(g["d"]) == 400 for g in games)


def test_unknown_tournament_is_one_sentence(lake: Path) -> None:
    proc = ratings("tournament", "nowhere-open", "--lake", str(lake))
    assert proc.returncode == 2
    assert proc.stderr.startswith("ratings: no FIDE-rated tournament 'nowhere-open'")
    assert "ankara-winter-2026-01" in proc.stderr and "Traceback" not in proc.stderr


def test_find_ignores_accents_and_case(lake: Path) -> None:
    proc = ratings("find", "DOGAN", "--lake", str(lake))
    assert proc.returncode == 0, proc.stderr
    assert "Doğan, Şule (34500005)" in proc.stdout
    assert "fide-standard" in proc.stdout
    found = json.loads(ratings("find", "şule", "--json", "--lake", str(lake)).stdout)
    assert {row["player_id"] for row in found} >= {"34500005"}
    assert ratings("find", "Zzyzx", "--lake", str(lake)).returncode == 1


def test_history_names_the_tournament_of_each_change(lake: Path) -> None:
    rows = json.loads(ratings("history", "34500001", "--json", "--lake", str(lake)).stdout)
    per_period = [r for r in rows if r["system"] == "fide-blitz-player_explanations"]
    assert [r["tournament_ids"] for r in per_period] == [
        "bursa-blitz-2026-03",
        "samsun-blitz-2026-05",
    ]
    game = next(r for r in rows if r.get("game_id") == "bursa-blitz-2026-03-r1-b2")
    assert game["tournament_id"] == "bursa-blitz-2026-03"


# --- reconcile -----------------------------------------------------------------------------

EXPECTED = {
    "unknown to us": "99900001",
    "unknown to them": "34500019",
    "tournament we do not have": "13400001",
    "tournament they do not have": "34500002",
    "different games count": "13400003",
    "different K": "34500012",
    "different starting rating": "34500018",
    "unexplained": "34500003",
}
"""Which player of the official file carries each kind of difference (rounding, which needs an
exact rating ending in .5, is in the unit test: the sample has none)."""


def _official_rows(lake: Path) -> list[dict]:
    """Our list of PERIOD as FIDE would publish it, with one difference of each kind."""
    ours = publish.read_list(lake, "fide-standard", PERIOD)
    rows = {
        r["player_id"]: {
            "id": r["player_id"],
            "rating": int(r["rating"]),
            "games": r["games"] or 0,
            "k": r["k"] or 20,
        }
        for r in ours.iter_rows(named=True)
    }
    played = {pid for pid, r in rows.items() if r["games"]}
    assert {"34500002", "13400003", "34500012", "34500003"} <= played
    assert not {"13400001", "34500018"} & played
    rows["99900001"] = {"id": "99900001", "rating": 2222, "games": 0, "k": 20}
    del rows["34500019"]
    rows["13400001"].update(rating=rows["13400001"]["rating"] + 7, games=5)
    rows["34500002"].update(rating=rows["34500002"]["rating"] + 22, games=0)
    rows["13400003"].update(rating=rows["13400003"]["rating"] - 3, games=8)
    rows["34500012"].update(rating=rows["34500012"]["rating"] - 17, k=40)
    rows["34500018"].update(rating=rows["34500018"]["rating"] + 10)
    rows["34500003"].update(rating=rows["34500003"]["rating"] + 30)
    return list(rows.values())


def _txt(rows: list[dict]) -> str:
    """FIDE's TXT layout (the sample's header, this period's month), CRLF."""
    header = (
        (ROOT / "data_samples/federation/lists/fide-blitz@2025-12.txt")
        .read_text(encoding="utf-8")
        .splitlines()[0]
        .replace("JAN26", fide_month_label(PERIOD))
    )
    at = {
        label: header.index(label)
        for label in ("Name", fide_month_label(PERIOD), "Gms", "K  ", "B-day")
    }

    def line(r: dict) -> str:
        text = r["id"].ljust(at["Name"]) + "Player".ljust(at[fide_month_label(PERIOD)] - at["Name"])
        text = (text + str(r["rating"])).ljust(at["Gms"]) + str(r["games"])
        text = text.ljust(at["K  "]) + str(r["k"])
        return text.ljust(at["B-day"]) + "1990"

    return "\r\n".join([header, *(line(r) for r in rows)]) + "\r\n"


def _xml(rows: list[dict]) -> str:
    players = "".join(
        f"<player><fideid>{r['id']}</fideid><name>Player</name><country>TUR</country>"
        f"<rating>{r['rating']}</rating><games>{r['games']}</games><k>{r['k']}</k>"
        "<birthday>1990</birthday><flag></flag></player>\r\n"
        for r in rows
    )
    return f"<playerslist>\r\n{players}</playerslist>\r\n"


@pytest.mark.parametrize("suffix", [".txt", ".xml"])
def test_reconcile_explains_every_kind(lake: Path, tmp_path: Path, suffix: str) -> None:
    rows = _official_rows(lake)
    official = tmp_path / f"official{suffix}"
    official.write_text(_txt(rows) if suffix == ".txt" else _xml(rows), encoding="ascii")
    args = ("reconcile", "fide-standard", "--period", PERIOD, "--official", str(official))
    proc = ratings(*args, "--json", "--lake", str(lake))
    assert proc.returncode == 1, proc.stderr  # one difference is left unexplained
    data = json.loads(proc.stdout)
    found = {row["player_id"]: row["explanation"] for row in data["differences"]}
    assert found == {pid: kind for kind, pid in EXPECTED.items()}
    assert {c["explanation"]: c["players"] for c in data["counts"]} == dict.fromkeys(EXPECTED, 1)
    text = ratings(*args, "--lake", str(lake))
    assert text.returncode == 1
    assert "1 difference unexplained" in text.stdout
    assert max(len(line) for line in text.stdout.splitlines()) <= 80
    # the unexplained one put right: everything left is explained, exit 0
    fixed = [r for r in rows if r["id"] != "34500003"]
    fixed.append({**next(r for r in rows if r["id"] == "34500003"), "rating": data_rating(lake)})
    official.write_text(_txt(fixed) if suffix == ".txt" else _xml(fixed), encoding="ascii")
    assert ratings(*args, "--lake", str(lake)).returncode == 0


def data_rating(lake: Path) -> int:
    ours = publish.read_list(lake, "fide-standard", PERIOD)
    return int(ours.filter(pl.col("player_id") == "34500003")["rating"][0])


def test_reconcile_refuses_a_wrong_month_in_one_sentence(lake: Path, tmp_path: Path) -> None:
    official = tmp_path / "official.txt"
    official.write_text(_txt(_official_rows(lake)), encoding="ascii")
    proc = ratings(
        "reconcile",
        "fide-standard",
        "--period",
        "2026-05",
        "--official",
        str(official),
        "--lake",
        str(lake),
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("ratings: reconcile: official.txt: its rating column is headed")
