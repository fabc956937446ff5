"""End-to-end tier: the `ratings` command line on the sample inbox and on real external files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import chess.pgn
import polars as pl
import pytest

from rating_core import tables
from rating_core.lake import publishing as publish
from rating_core.lake.storage import read_table
from tests.support.moderation import REASON, annul, sample_blitz_game

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]


def ratings(
    *args: str, check: bool = True, columns: int = 200, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """Run the CLI as a user would, in a fresh process (wide by default: no wrapped lines in
    what the tests read), in `cwd` (where `ratings.toml` is read from)."""
    proc = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "COLUMNS": str(columns)},
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"ratings {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture(scope="module")
def sample_lake(tmp_path_factory: pytest.TempPathFactory, samples: Path) -> Path:
    lake = tmp_path_factory.mktemp("samples") / "lake"
    ratings("run", "--inbox", str(samples), "--lake", str(lake))
    return lake


def test_run_publishes_every_list_for_every_period(sample_lake: Path) -> None:
    names = set(publish.list_names(sample_lake))
    expected = {f"fide-{k}" for k in ("standard", "rapid", "blitz")}
    expected |= {f"ukd-{k}" for k in ("standard", "rapid", "blitz")}
    expected |= {"site-elo", "fibs"}
    expected |= {
        f"site-{c}"
        for c in (
            "classical",
            "rapid",
            "blitz",
            "bullet",
            "unlimited",
            "correspondence",
            "otb",
            "bots",
        )
    }
    assert expected <= names
    assert any(n.startswith("club-ankara-sk-") for n in names)
    periods = [f"2026-0{m}" for m in range(1, 7)]
    for name in expected:
        assert publish.list_periods(sample_lake, name)[-1] == "2026-06", name
    for name in ("fide-standard", "ukd-standard", "site-elo", "fibs"):
        assert publish.list_periods(sample_lake, name) == periods


def test_sample_quarantine_has_each_bad_row_with_a_reason(sample_lake: Path) -> None:
    q = read_table(sample_lake, tables.QUARANTINE).collect()
    assert q["reason"].null_count() == 0 and q["source_file"].null_count() == 0
    text = " | ".join(q["reason"].to_list())
    for fragment in (
        "2-0",
        "themsel",
        "2026-02-30",
        "unknown",
        "1 to 7",
        "appears again",
        "maybe",
        "bot never loses",
        "1-1",
        "bullet",
        "truncated",
        "not a FIDE number",  # federation/lists/fide-blitz@2025-12.txt, FIDE's TXT download
    ):
        assert fragment in text, fragment


def test_the_sample_correction_holds_on_its_list_and_carries_on(sample_lake: Path) -> None:
    """data_samples/federation/corrections.csv: 34500007's April rating is 1607 (by hand: the
    round 2 draw gives ΔR -0.19 instead of -0.69, 20 x 0.44 = 8.8 -> +9 from 1598), May starts
    from it, and the UKD row (a K) is quarantined."""
    april = publish.read_list(sample_lake, "fide-standard", "2026-04")
    row = april.filter(pl.col("player_id") == "34500007").row(0, named=True)
    assert (row["rating"], row["change"]) == (1607, 9)
    reason = publish.read_manifest(sample_lake, "fide-standard", "2026-04")["reason"]
    assert "1 correction applied (fide-standard 34500007 rating)" in reason
    may = read_table(
        sample_lake, tables.history("fide-standard", "player_explanations"), ["2026-05"]
    ).collect()
    assert may.filter(pl.col("player_id") == "34500007")["rating_before"].to_list() == [1607]
    q = read_table(sample_lake, tables.QUARANTINE).collect()
    mine = q.filter(pl.col("source_file") == "federation/corrections.csv")
    assert mine.select("line", "value", "reason").rows() == [
        (3, "k", "a ukd-standard list has no k (UKD lists accept rating only)")
    ]


def _written_tables(lake: Path) -> dict[str, set[str | None]]:
    """Every table folder a run left in `lake`, with the partition columns found in it (None:
    one file for the whole table), read from the files themselves, not from the catalogue."""
    found: dict[str, set[str | None]] = {}
    for part in lake.rglob("part-*.parquet"):  # part-0, or part-<group> of the games
        folder = part.parent.relative_to(lake)
        if folder.parts[0].startswith("."):  # the Dagster instance and staging are not tables
            continue
        column = None
        if "=" in folder.name:
            column, folder = folder.name.split("=", 1)[0], folder.parent
        found.setdefault(folder.as_posix(), set()).add(column)
    return found


def test_every_table_a_run_writes_is_in_the_catalogue(sample_lake: Path) -> None:
    written = _written_tables(sample_lake)
    catalogued = {table.name: {table.partition_col} for table in tables.CATALOGUE}
    not_named = {name: cols for name, cols in written.items() if name not in catalogued}
    assert not not_named, f"tables written but not in rating_core.tables: {not_named}"
    wrong = {n: (cols, catalogued[n]) for n, cols in written.items() if cols != catalogued[n]}
    assert not wrong, f"written partitioning (left) differs from the catalogue's: {wrong}"
    # the samples exercise every system, so a catalogue entry no run writes is stale, unless it
    # is a system's period table that had no row in any period (no empty file is written then)
    unwritten = set(catalogued) - set(written)
    assert (
        sorted(
            n
            for n in unwritten
            if not n.startswith(("history/", "state/", "applied/", "excluded/"))
        )
        == []
    )
    assert len(unwritten) < len(catalogued) // 4, sorted(unwritten)
    for table in tables.CATALOGUE:
        if table.schema is not None:  # compared as a mapping: the partition column reads last
            read = read_table(sample_lake, table).collect_schema()
            assert dict(read) == table.schema, table.name


def test_second_run_publishes_nothing_new(sample_lake: Path, samples: Path) -> None:
    before = publish.current_versions(sample_lake)
    out = ratings("run", "--inbox", str(samples), "--lake", str(sample_lake)).stdout
    assert "nothing to recompute" in out
    assert publish.current_versions(sample_lake).equals(before)
    # recomputing every period from scratch gives the same lists: still nothing new
    out = ratings("run", "--inbox", str(samples), "--lake", str(sample_lake), "--full").stdout
    assert "all recomputed" in out and "0 list versions published" in out
    assert publish.current_versions(sample_lake).equals(before)


def test_show_history_and_csv_safety(sample_lake: Path) -> None:
    shown = json.loads(
        ratings("show", "fide-standard", "--lake", str(sample_lake), "--json").stdout
    )
    assert shown["period"] == "2026-06" and shown["rows"]
    history = json.loads(ratings("history", "u-ece", "--lake", str(sample_lake), "--json").stdout)
    assert {row["system"] for row in history} >= {"site", "fibs"}
    for path in (sample_lake / "lists").rglob("list.csv"):
        for line in path.read_text(encoding="utf-8").splitlines():
            for cell in line.split(","):
                assert not cell.startswith(("=", "@")), (path, cell)


def test_explanations_reproduce_published_fide_changes(sample_lake: Path) -> None:
    for period in ("2026-01", "2026-02", "2026-03"):
        listed = publish.read_list(sample_lake, "fide-standard", period)
        expl = read_table(
            sample_lake, tables.history("fide-standard", "player_explanations"), [period]
        ).collect()
        joined = listed.join(expl, on="player_id", suffix="_expl").filter(pl.col("n") > 0)
        assert joined.height > 0
        assert (joined["rating"] == joined["rating_after"]).all()
        assert (joined["rating_before"] + joined["change_expl"] == joined["rating_after"]).all()


def test_moderation_decision_publishes_only_affected_versions(
    tmp_path: Path, samples: Path
) -> None:
    inbox = tmp_path / "inbox"
    shutil.copytree(samples, inbox)
    lake = tmp_path / "lake"
    ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    target = sample_blitz_game(lake)
    v1_bytes = {p: p.read_bytes() for p in (lake / "lists").rglob("v1/list.parquet")}
    annul(inbox, target["game_id"])
    ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    current = publish.current_versions(lake)
    bumped = current.filter(pl.col("version") > 1)
    assert bumped.height > 0
    assert set(bumped["list"].to_list()) <= {
        n for n in publish.list_names(lake) if n.startswith("site-")
    }
    assert bumped["period"].min() == "2026-03"
    assert "site-blitz" in bumped["list"].to_list()
    for path, data in v1_bytes.items():  # published versions are never touched
        assert path.read_bytes() == data
    diff = publish.read_diff(lake, "site-blitz", "2026-03")
    players = {target["white_id"], target["black_id"]}
    moved = diff.filter(pl.col("player_id").is_in(list(players)))
    assert moved.height == 2
    assert all(target["game_id"] in cause and REASON in cause for cause in moved["cause"].to_list())
    manifest = publish.read_manifest(lake, "site-blitz", "2026-03")
    assert manifest["parent_version"] == 1 and target["game_id"] in manifest["reason"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["elo", "--rating", "1500", "--opponent", "1600", "--result", "1", "--k", "32"],
            {"new_rating": 1520.48, "expected": 0.3599},
        ),
        (
            ["fide", "--rating", "1800", "--k", "20", "--game", "1900:1", "--game", "1750:0.5"],
            {"k": 20, "change": 11, "new_rating": 1811},
        ),
        (
            ["ukd", "--rating", "1500", "--game", "2000:1"],
            {"k": 25, "change": 22.25, "new_rating": 1522},
        ),
        (
            [
                "fibs",
                "--rating",
                "1500",
                "--opponent",
                "1600",
                "--length",
                "5",
                "--experience",
                "0",
            ],
            {"win": 25.0, "loss": -19.3, "multiplier": 4.95},
        ),
        (
            [
                "site",
                "--category",
                "blitz",
                "--rating",
                "1500",
                "--opponent",
                "1500",
                "--games",
                "0",
                "--site-elo",
                "1500",
                "--opponent-site-elo",
                "1500",
                "--site-games",
                "0",
                "--result",
                "1",
            ],
            {"category_change": 16.0, "site_elo_change": 12.0},
        ),
    ],
)
def test_calculators_json_contract(args: list[str], expected: dict) -> None:
    payload = json.loads(ratings("calc", *args, "--json").stdout)
    for key, value in expected.items():
        assert payload[key] == pytest.approx(value, abs=1e-9), key
    if args[0] == "fide":
        assert [g["PD"] for g in payload["games"]] == pytest.approx([0.36, 0.57])


def test_calculator_readable_output_shows_steps() -> None:
    out = ratings("calc", "fide", "--rating", "1800", "--k", "20", "--game", "1900:1").stdout
    assert "delta_r" in out and "new_rating" in out


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--inbox", "/nonexistent/inbox"],
        ["calc", "fide", "--rating", "1800", "--k", "20", "--game", "19001"],
        ["calc", "ukd", "--rating", "1500", "--game", "abc:1"],
        ["calc", "elo", "--rating", "1500", "--opponent", "1600", "--result", "2"],
        ["show", "no-such-list", "--lake", "/nonexistent/lake"],
    ],
)
def test_user_mistakes_get_one_sentence_and_nonzero_exit(args: list[str]) -> None:
    proc = ratings(*args, check=False)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ratings: ")
    assert "Traceback" not in proc.stderr


def _pgn_game_count(path: Path) -> int:
    """Games in a PGN file as python-chess (the reference parser) counts them."""
    count = 0
    with path.open(encoding="utf-8", errors="replace") as handle:
        while chess.pgn.read_headers(handle) is not None:
            count += 1
    return count


EXTERNAL_INBOXES = {
    # one inbox per era, so that a run does not list every month of the 20 years between them
    "lichess-and-twic-2025": [
        ("platform", "shakmaty/lichess_db_1000k.pgn"),
        ("federation", "shakmaty/twic1599_1000k.pgn"),
    ],
    "karl-mala-2005": [("federation", "sklangen-TRF/example1.trf")],
    "lichess-swiss-2020": [
        ("federation", "sklangen-TRF/2020_06.trf"),
        ("federation", "sklangen-TRF/2021_03.trf"),
    ],
    "fide-tiebreak-exercise-2024": [("federation", "TieBreakServer/held_swiss_9.trf")],
}


def test_external_inboxes_cover_every_external_file(external: Path) -> None:
    covered = {rel for files in EXTERNAL_INBOXES.values() for _, rel in files}
    present = {
        p.relative_to(external).as_posix()
        for p in external.rglob("*")
        if p.suffix in (".pgn", ".trf")
    }
    assert covered == present


@pytest.mark.parametrize("era", sorted(EXTERNAL_INBOXES))
def test_every_external_file_goes_through_run(tmp_path: Path, external: Path, era: str) -> None:
    inbox = tmp_path / "inbox"
    for folder, rel in EXTERNAL_INBOXES[era]:
        (inbox / folder).mkdir(parents=True, exist_ok=True)
        (inbox / folder / Path(rel).name).symlink_to(external / rel)
    lake = tmp_path / "lake"
    ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    games = read_table(lake, tables.GAMES).collect()
    quarantine = read_table(lake, tables.QUARANTINE).collect()
    assert quarantine["reason"].null_count() == 0
    for folder, rel in EXTERNAL_INBOXES[era]:
        source = f"{folder}/{Path(rel).name}"
        landed = games.filter(pl.col("source_file") == source).height
        rejected = quarantine.filter(pl.col("source_file") == source).height
        assert landed > 0, source
        if rel.endswith(".pgn"):  # python-chess counts the games independently
            assert landed + rejected == _pgn_game_count(inbox / folder / Path(rel).name), rel
    names = set(publish.list_names(lake))
    if era == "karl-mala-2005":
        # the real TRF is rated and published: players carry their report's FIDE rating; it
        # ends on 31 July (TRF 052), so FIDE's closing date puts it on the list of 2005-08
        # (RULES §3.4), which the run rates though no game is dated August
        example = publish.read_list(lake, "fide-standard", "2005-08")
        assert example.filter(pl.col("games") > 0).height > 100
    if era == "lichess-and-twic-2025":
        assert {"site-elo", "site-blitz", "fide-standard"} <= names


def test_a_late_club_tournament_is_the_cause_on_its_clubs_list(
    tmp_path: Path, samples: Path
) -> None:
    """A club tournament file added after a run republishes the club's list from its month on,
    and the diff names it as the cause of its players' changes, as a federation list's does."""
    inbox = tmp_path / "inbox"
    shutil.copytree(samples, inbox)
    lake = tmp_path / "lake"
    ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    (inbox / "clubs" / "ankara-sk" / "ankara-sk-late-2026-03.csv").write_text(
        "game_id,tournament_id,round,played_on,white_id,black_id,result,rating_list\n"
        "late-1,ankara-sk-late-2026-03,1,2026-03-20,ank-01,ank-02,0-1,standard\n",
        encoding="utf-8",
    )
    ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    shown = json.loads(
        ratings("diff", "club-ankara-sk-standard", "2026-03", "--lake", str(lake), "--json").stdout
    )
    assert shown["manifest"]["version"] == 2
    causes = {row["player_id"]: row["cause"] for row in shown["diff"]}
    late = "late result: tournament ankara-sk-late-2026-03 (ankara-sk-standard)"
    assert causes["ank-01"] == causes["ank-02"] == late


def test_late_result_republishes_from_its_month_on(tmp_path: Path, samples: Path) -> None:
    inbox = tmp_path / "inbox"
    shutil.copytree(samples, inbox)
    lake = tmp_path / "lake"
    # FIDE revises under `revise` only (RULES §3.4; its default is next_list)
    (tmp_path / "ratings.toml").write_text('[late_results]\nfide = "revise"\n', encoding="utf-8")
    ratings("run", "--inbox", str(inbox), "--lake", str(lake), cwd=tmp_path)
    before = publish.current_versions(lake)
    # a late result of February between two players on the standard starting list
    (inbox / "federation" / "late-2026-02.csv").write_text(
        "game_id,tournament_id,round,played_on,white_id,black_id,result,rating_list\n"
        "late-1,late-match-2026-02,1,2026-02-20,13400002,34500002,0-1,standard\n",
        encoding="utf-8",
    )
    out = ratings("run", "--inbox", str(inbox), "--lake", str(lake), cwd=tmp_path).stdout
    after = publish.current_versions(lake)
    changed = after.join(before, on=["list", "period"], suffix="_before").filter(
        pl.col("version") != pl.col("version_before")
    )
    assert "late-2026-02.csv" in out
    assert "recomputed from 2026-02 on" in out  # a backfill from the late result's month
    assert changed.height > 0
    assert changed["period"].min() == "2026-02"  # January's lists are untouched
    # standard lists change; a rapid or blitz list may too (RULES §3 step 7 seeds players
    # unrated there at their period-start standard rating); nothing else does
    assert {"fide-standard", "ukd-standard"} <= set(changed["list"].to_list())
    assert all(name.startswith(("fide-", "ukd-")) for name in changed["list"].to_list())
    feb = publish.read_diff(lake, "fide-standard", "2026-02")
    assert set(feb["player_id"].to_list()) == {"13400002", "34500002"}
    manifest = publish.read_manifest(lake, "fide-standard", "2026-02")
    assert "changed since v1" in manifest["reason"]
    shown = json.loads(
        ratings("diff", "fide-standard", "2026-02", "--lake", str(lake), "--json").stdout
    )
    assert shown["manifest"]["version"] == 2
    assert {row["player_id"] for row in shown["diff"]} == {"13400002", "34500002"}
    text = ratings("diff", "fide-standard", "2026-02", "--lake", str(lake)).stdout
    assert "v2 against v1" in text and "13400002" in text
    # issue 32 item 6: a later period names where its change came from, and its reason only
    # what changed since its parent (the sample's correction of 2026-04 was applied by v1)
    late = "late result: tournament late-match-2026-02 (standard)"
    assert set(feb["cause"].to_list()) == {late}
    from rating_core.lake.report_data import player_timeline

    for period in ("2026-03", "2026-04"):
        later = publish.read_diff(lake, "fide-standard", period)
        assert later.height > 0
        assert set(later["cause"].to_list()) == {f"carried from 2026-02: {late}"}, period
        reason = publish.read_manifest(lake, "fide-standard", period)["reason"]
        assert "correction" not in reason, reason
        # the report's timeline credits each player's revision to that player's own cause
        for player in later["player_id"].to_list():
            timeline = player_timeline(lake, player)
            revised = timeline.filter(
                (pl.col("list") == "fide-standard")
                & (pl.col("period") == period)
                & (pl.col("version") > 1)
            )
            assert revised["cause"].to_list() == [f"carried from 2026-02: {late}"]
    first = publish.read_manifest(lake, "fide-standard", "2026-04", 1)["reason"]
    assert "1 correction applied (fide-standard 34500007 rating)" in first


def test_explanations_reproduce_published_ukd_changes(sample_lake: Path) -> None:
    from rating_core.rounding import round_half_away

    for period in ("2026-01", "2026-02", "2026-05"):
        listed = publish.read_list(sample_lake, "ukd-standard", period)
        players = read_table(
            sample_lake, tables.history("ukd-standard", "player_explanations"), [period]
        ).collect()
        tournaments = read_table(
            sample_lake, tables.history("ukd-standard", "tournament_explanations"), [period]
        ).collect()
        played = players.filter((pl.col("games") > 0) & ~pl.col("newcomer"))
        assert played.height > 0
        sums = tournaments.group_by("player_id").agg(pl.col("delta_d").sum().alias("tsum"))
        for row in played.join(sums, on="player_id").iter_rows(named=True):
            assert row["sum_delta_d"] == pytest.approx(row["tsum"], abs=1e-9)
            expected = max(1000, round_half_away(row["rating_before"] + row["sum_delta_d"]))
            assert row["rating_after"] == expected
        ratings_after = dict(zip(played["player_id"], played["rating_after"], strict=True))
        published = dict(zip(listed["player_id"], listed["rating"], strict=True))
        for player, rating in ratings_after.items():
            assert published[player] == rating


def test_club_lists_from_the_first_period(sample_lake: Path) -> None:
    periods = publish.list_periods(sample_lake, "club-ankara-sk-standard")
    assert periods == [f"2026-0{m}" for m in range(1, 7)]
    assert publish.list_periods(sample_lake, "club-ankara-sk-blitz")[0] == "2026-04"


def test_the_sample_merge_publishes_the_lists_of_the_samples_without_the_duplicate(
    sample_lake: Path, samples: Path, tmp_path: Path
) -> None:
    """The samples' merges.csv merges a duplicate id: undoing the duplicate by hand in a copy
    (the kept id in its games, its registry row and the merges file gone) publishes every list
    exactly as the samples do."""
    merges = pl.read_csv(samples / "federation" / "merges.csv", infer_schema=False)
    assert merges.height == 1
    keep, merge = merges.row(0)[:2]
    inbox = tmp_path / "inbox"
    shutil.copytree(samples, inbox)
    (inbox / "federation" / "merges.csv").unlink()
    players = (inbox / "players.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    (inbox / "players.csv").write_text(
        "".join(line for line in players if not line.startswith(f"{merge},")), encoding="utf-8"
    )
    holding = [p for p in (inbox / "federation").glob("*.csv") if merge in p.read_text("utf-8")]
    assert holding  # the duplicate id plays in the samples
    for path in holding:
        path.write_text(path.read_text(encoding="utf-8").replace(merge, keep), encoding="utf-8")
    lake = tmp_path / "lake"
    ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    names = publish.list_names(sample_lake)
    assert publish.list_names(lake) == names
    for name in names:
        assert publish.list_periods(lake, name) == publish.list_periods(sample_lake, name)
        for period in publish.list_periods(lake, name):
            merged = publish.read_list(sample_lake, name, period)
            assert merged.equals(publish.read_list(lake, name, period)), (name, period)
            assert merge not in merged["player_id"].to_list()


def _at_80_columns(*args: str) -> str:
    """The CLI's stdout at an 80-column terminal; every line of it fits."""
    proc = ratings(*args, columns=80)
    wide = [line for line in proc.stdout.splitlines() if len(line.rstrip()) > 80]
    assert not wide, "\n".join(wide)
    return proc.stdout


def test_sample_reads_well_at_80_columns(sample_lake: Path, samples: Path) -> None:
    lake = str(sample_lake)
    summary = _at_80_columns("run", "--inbox", str(samples), "--lake", lake)
    assert "federation/baku-rapid-2026-02.csv" in summary  # short enough: whole
    assert "clubs/ankara-sk/a" in summary and "-2026-04.csv" in summary  # long: cut inside
    shown = _at_80_columns("show", "fide-standard", "--lake", lake)
    listed = publish.read_list(sample_lake, "fide-standard", "2026-06")
    assert f"showing 20 of {listed.height} rows" in shown
    rows = [line for line in shown.splitlines() if line.startswith("│")]
    assert len(rows) == 20  # one line a player: no row wraps
    every = _at_80_columns("show", "fide-standard", "--all", "--lake", lake)
    for player in listed["player_id"].to_list():
        assert player in every
    for player, values in (("34500002", ("34500022", "bursa-blitz-2026-03-r1-b1")), ("u-ece", ())):
        history = _at_80_columns("history", player, "--lake", lake)
        assert "…" not in history  # nothing cut: no `peri…`, no `3450…`
        assert "2026-03" in history
        for value in values:
            assert value in history


def test_the_multiprocess_executor_publishes_what_the_in_process_run_does(
    sample_lake: Path, samples: Path, tmp_path: Path
) -> None:
    """`--executor multiprocess` runs the same range job on Dagster's multiprocess executor
    (one process per step): the lists it publishes are the in-process run's, byte for byte."""
    from assets.resources import lake_instance

    lake = tmp_path / "lake"
    ratings("run", "--inbox", str(samples), "--lake", str(lake), "--executor", "multiprocess")
    ours = sorted(p.relative_to(lake) for p in lake.glob("lists/*/*/v*/*.csv"))
    theirs = sorted(p.relative_to(sample_lake) for p in sample_lake.glob("lists/*/*/v*/*.csv"))
    assert ours and ours == theirs
    assert all((lake / p).read_bytes() == (sample_lake / p).read_bytes() for p in ours)
    with lake_instance(lake) as instance:
        (latest,) = instance.get_runs(limit=1)
        messages = [e.message for e in instance.all_logs(latest.run_id) if e.message]
    assert latest.job_name == "rate_and_publish"
    assert any("multiprocess executor" in m for m in messages)


def test_an_unknown_executor_is_one_sentence(tmp_path: Path) -> None:
    proc = ratings("run", "--lake", str(tmp_path / "lake"), "--executor", "celery", check=False)
    assert proc.returncode != 0
    assert proc.stderr.startswith("ratings: ") and "Traceback" not in proc.stderr
    assert "multiprocess" in proc.stderr


def _probe(script: str) -> str:
    """What a fresh Python process running `script` in the repository prints."""
    return subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


def test_the_parser_and_the_read_commands_import_no_dagster() -> None:
    """`ratings show`, `calc`, `query`, ... start in well under a second: only `run`, `preview`
    and `ui` need Dagster, and `run` starts reading its PGN files before it imports it."""
    probe = (
        "import sys\n"
        "from pipelines.cli import app as cli\n"
        "cli.build_parser().parse_args(['show', '--lake', 'lake'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'dagster'))\n"
    )
    assert _probe(probe).strip() == "[]"


def test_collection_resumes_frozen_after_the_imports_and_only_when_paused() -> None:
    """`main` pauses the garbage collector for its own process's imports; `resume_collection`
    freezes what they made and collects again, and leaves a collector it did not pause alone."""
    probe = (
        "import gc\n"
        "from pipelines.cli.app import resume_collection\n"
        "resume_collection()\n"
        "print(gc.isenabled(), gc.get_freeze_count() == 0)\n"
        "gc.disable()\n"
        "resume_collection()\n"
        "print(gc.isenabled(), gc.get_freeze_count() > 0)\n"
    )
    assert _probe(probe).split() == ["True", "True", "True", "True"]
