"""`ratings preview` (issue 11 item 2): writes nothing, and predicts exactly what the following
`ratings run` publishes (versions, manifests' reasons and diffs, the unchanged list-periods)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from rating_core import tables
from rating_core.lake import publishing as publish
from rating_core.lake import revisions
from rating_core.lake.lock import hold_lake
from tests.pipelines.cli.test_cli import ROOT, ratings
from tests.support.docs import doc_block
from tests.support.moderation import annul, sample_blitz_game

pytestmark = pytest.mark.e2e

LATE_RESULT = (
    "game_id,tournament_id,round,played_on,white_id,black_id,result,rating_list\n"
    "late-1,late-match-2026-02,1,2026-02-20,13400002,34500002,0-1,standard\n"
)
"""A late February result between two players of the standard starting list."""


def _tree(folder: Path) -> dict[str, str]:
    """Every file under `folder` (its path relative to it) with the SHA-256 of its bytes."""
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def _all_versions(lake: Path) -> set[tuple[str, str, int]]:
    """Every complete (list, period, version) of the lake."""
    return {
        (name, period, version)
        for name in publish.list_names(lake)
        for period in publish.list_periods(lake, name)
        for version in range(1, (publish.latest_version(lake, name, period) or 0) + 1)
    }


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory, samples: Path) -> Path:
    """A lake the sample inbox was run into once."""
    lake = tmp_path_factory.mktemp("preview") / "lake"
    ratings("run", "--inbox", str(samples), "--lake", str(lake))
    return lake


@pytest.fixture(scope="module")
def revise(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working directory whose `ratings.toml` sets FIDE's late results to `revise` (RULES
    §3.4; FIDE's default, next_list, would not revise the published February)."""
    folder = tmp_path_factory.mktemp("revise")
    (folder / "ratings.toml").write_text('[late_results]\nfide = "revise"\n', encoding="utf-8")
    return folder


def _late_inbox(root: Path, samples: Path, lake: Path) -> Path:
    """The samples with a late February result and a moderation decision on a March site game."""
    inbox = root / "inbox"
    shutil.copytree(samples, inbox)
    (inbox / "federation" / "late-2026-02.csv").write_text(LATE_RESULT, encoding="utf-8")
    annul(inbox, sample_blitz_game(lake)["game_id"])
    return inbox


def test_preview_writes_nothing_and_predicts_the_next_run_exactly(
    tmp_path: Path, samples: Path, published: Path, revise: Path
) -> None:
    lake = tmp_path / "lake"
    shutil.copytree(published, lake)
    inbox = _late_inbox(tmp_path, samples, lake)
    before_tree, before_versions = _tree(lake), _all_versions(lake)

    proc = ratings("preview", "--inbox", str(inbox), "--lake", str(lake), "--json", cwd=revise)
    preview = json.loads(proc.stdout)

    # nothing written: not under lists/, nor anywhere else (run_inputs, tables, the instance)
    assert _tree(lake) == before_tree
    assert not list(lake.glob(".preview-*"))
    assert preview["recomputed"][0] == "2026-02"
    new = {(v["list"], v["period"], v["version"]) for v in preview["lists"] if v["status"] == "new"}
    assert new, "a late result and a moderation decision must publish something"
    assert {name for name, _, _ in new} >= {"fide-standard", "ukd-standard", "site-blitz"}

    out = ratings("run", "--inbox", str(inbox), "--lake", str(lake), cwd=revise).stdout
    # the run recomputes what the preview did (the preview left the run's inputs alone) ...
    assert "recomputed from 2026-02 on" in out
    # ... and publishes exactly the versions the preview announced, no more, no fewer
    assert _all_versions(lake) - before_versions == new
    unchanged = sum(v["status"] == "unchanged" for v in preview["lists"])
    assert f"{unchanged} list-periods unchanged" in out
    for entry in preview["lists"]:
        if entry["status"] != "new":
            continue
        name, period, version = entry["list"], entry["period"], entry["version"]
        manifest = publish.read_manifest(lake, name, period, version)
        assert entry["reason"] == manifest["reason"]
        assert entry["row_count"] == manifest["row_count"]
        assert entry["changed_rows"] == manifest["changed_rows"]
        assert (entry["publication"], entry["revises"]) == ("revision", version - 1)
        diff = publish.read_diff(lake, name, period, version)
        assert entry["diff"] == diff.drop(list(publish.SNAPSHOT_COLUMNS)).to_dicts(), entry
    # the moderation decision is the cause the preview gives the site players it moves
    blitz = next(
        v for v in preview["lists"] if (v["list"], v["period"]) == ("site-blitz", "2026-03")
    )
    assert blitz["diff"] and all("engine use confirmed" in r["cause"] for r in blitz["diff"])
    late = next(
        v for v in preview["lists"] if (v["list"], v["period"]) == ("fide-standard", "2026-02")
    )
    assert {r["player_id"] for r in late["diff"]} == {"13400002", "34500002"}
    for name in ("fide-standard", "ukd-standard"):  # the late tournament is the cause, by name
        entry = next(v for v in preview["lists"] if (v["list"], v["period"]) == (name, "2026-02"))
        assert {r["cause"] for r in entry["diff"]} == {
            "late result: tournament late-match-2026-02 (standard)"
        }, entry
    _check_original_queries(lake, revised={(n, p) for n, p, _ in new})


ORIGINALS_POLARS = doc_block("polars-originals")
ORIGINALS_DUCKDB = doc_block("duckdb-originals")
"""The docs' queries for the original list of each period (its first version: docs/querying.md)."""


def _check_original_queries(lake: Path, revised: set[tuple[str, str]]) -> None:
    """The docs' Polars and DuckDB queries, the reader and `ratings show --original` agree on
    the original of each period, revised ones included."""
    import os

    from tests.support.duck import relation

    expected = revisions.original_versions(lake).sort("list", "period")
    assert revised and set(expected.filter(pl.col("version") != 1).rows()) == set()
    namespace: dict = {}
    cwd = os.getcwd()
    os.chdir(lake.parent)
    try:
        exec(ORIGINALS_POLARS, namespace)  # noqa: S102 - the docs' own example
        by_polars = namespace["originals"].collect()
        by_duckdb = relation(ORIGINALS_DUCKDB).pl()
    finally:
        os.chdir(cwd)
    for frame in (by_polars, by_duckdb):
        keys = frame.select("list", "period", "version").unique().sort("list", "period")
        assert keys.equals(expected)
    rows = revisions.original_lists(lake).collect()
    assert rows.sort("list", "period", "player_id").equals(
        by_polars.sort("list", "period", "player_id")
    )
    name, period = sorted(revised)[0]
    shown = json.loads(
        ratings(
            "show", name, "--period", period, "--original", "--lake", str(lake), "--json"
        ).stdout
    )
    assert shown["version"] == 1 and publish.latest_version(lake, name, period) == 2
    original = publish.read_list(lake, name, period, 1)
    assert {r["player_id"]: r["rating"] for r in shown["rows"]} == dict(
        zip(original["player_id"], original["rating"], strict=True)
    )


def test_preview_table_fits_80_columns_and_names_the_changes(
    tmp_path: Path, samples: Path, published: Path, revise: Path
) -> None:
    lake = tmp_path / "lake"
    shutil.copytree(published, lake)
    inbox = _late_inbox(tmp_path, samples, lake)
    before = _tree(lake / "lists")
    text = ratings(
        "preview", "--inbox", str(inbox), "--lake", str(lake), columns=80, cwd=revise
    ).stdout
    assert _tree(lake / "lists") == before
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "the next run would recompute 2026-02 to 2026-06" in text
    assert re.search(r"│ fide-standard +│ 2026-02 +│ new v2 ", text), text
    assert "fide-standard 2026-02 v2 (revises v1)" in text
    assert "13400002" in text and " → " in text
    assert "engine use confirmed" in " ".join(text.replace("│", " ").split())  # it wraps


def test_preview_of_an_inbox_already_run_publishes_nothing_and_waits_for_the_lock(
    tmp_path: Path, samples: Path, published: Path
) -> None:
    lake = tmp_path / "lake"
    shutil.copytree(published, lake)
    before = _tree(lake)
    err = tmp_path / "preview.err"
    with hold_lake(lake, "a test holding the lake"), open(err, "w", encoding="utf-8") as handle:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pipelines.cli", "preview", "--inbox", str(samples)]
            + ["--lake", str(lake), "--json"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=handle,
            text=True,
        )
        deadline = time.monotonic() + 120
        while "waiting" not in err.read_text() and proc.poll() is None:
            assert time.monotonic() < deadline, "the preview never said it waits"
            time.sleep(0.1)
        time.sleep(0.5)
        assert proc.poll() is None, "the preview did not wait for the lake's lock"
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out + err.read_text()
    assert f"ratings: waiting for the run holding lake '{lake}'" in err.read_text()
    preview = json.loads(out)
    assert preview["recomputed"] == [] and preview["lists"] == []
    assert _tree(lake) == before


def test_preview_of_a_lake_not_yet_created_creates_nothing(tmp_path: Path, samples: Path) -> None:
    lake = tmp_path / "no-lake-yet"
    preview = json.loads(
        ratings("preview", "--inbox", str(samples), "--lake", str(lake), "--json").stdout
    )
    assert not lake.exists()
    assert preview["lists"] and all(
        (v["status"], v["version"], v["publication"], v["revises"]) == ("new", 1, "original", None)
        for v in preview["lists"]
    )
    assert {v["list"] for v in preview["lists"]} >= {"fide-standard", "site-elo", "fibs"}


def test_the_scratch_copy_links_files_and_leaves_out_what_is_written_in_place(
    tmp_path: Path,
) -> None:
    from pipelines.cli.preview import scratch_copy
    from rating_core.lake.storage import write_table

    lake, scratch = tmp_path / "lake", tmp_path / "lake" / ".preview-x"
    write_table(lake, tables.RUN_INPUTS, pl.DataFrame({"period": ["2026-01"], "digest": ["d"]}))
    (lake / "lists" / "fide-standard" / "2026-01" / "v1").mkdir(parents=True)
    (lake / "lists" / "fide-standard" / "2026-01" / "v1" / "manifest.json").write_text("{}")
    (lake / "lists" / "fide-standard" / "2026-01" / ".lock").write_text("")
    (lake / ".lock").write_text('{"pid": 1}')
    (lake / ".dagster").mkdir()
    (lake / ".dagster" / "runs.db").write_text("sqlite")
    (lake / "run_inputs" / ".part-0.parquet.tmp-123").write_text("half")
    before = _tree(lake)
    scratch_copy(lake, scratch)
    copied = _tree(scratch)
    assert set(copied) == {
        "run_inputs/part-0.parquet",
        "lists/fide-standard/2026-01/v1/manifest.json",
    }
    part = lake / "run_inputs" / "part-0.parquet"
    assert (scratch / "run_inputs" / "part-0.parquet").stat().st_ino == part.stat().st_ino
    # the scratch run replaces a linked file by renaming a new one over it: the lake's stays
    write_table(scratch, tables.RUN_INPUTS, pl.DataFrame({"period": ["2026-02"], "digest": ["e"]}))
    shutil.rmtree(scratch)
    assert _tree(lake) == before


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--inbox", "no-such-inbox"], "inbox folder 'no-such-inbox' does not exist"),
        (["--lake", "README.md"], "is a file, not a folder"),
    ],
)
def test_preview_mistakes_are_one_sentence(args: list[str], fragment: str) -> None:
    proc = ratings("preview", *args, check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith("ratings: ") and fragment in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_changed_starting_list_entry_is_the_cause_it_names(
    tmp_path: Path, samples: Path, published: Path
) -> None:
    lake = tmp_path / "lake"
    shutil.copytree(published, lake)
    inbox = tmp_path / "inbox"
    shutil.copytree(samples, inbox)
    path = inbox / "federation" / "lists" / "fide-standard@2025-12.csv"
    header, first, *rest = path.read_text(encoding="utf-8").splitlines()
    player, rating, *others = first.split(",")
    corrected = ",".join([player, str(int(rating) + 50), *others])
    path.write_text("\n".join([header, corrected, *rest]) + "\n", encoding="utf-8")
    ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    diff = publish.read_diff(lake, "fide-standard", "2026-01")
    row = diff.filter(pl.col("player_id") == player).row(0, named=True)
    assert row["cause"] == "changed starting list fide-standard@2025-12"
    assert row["new"] - row["old"] != 0
    # the UKD lists start from their own starting lists: nothing of theirs changed
    assert publish.latest_version(lake, "ukd-standard", "2026-01") == 1


def test_the_previews_runs_are_named_preview_and_tagged(
    tmp_path: Path, samples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The preview's runs (on its own ephemeral instance) carry the job name `preview` and the
    command's tags, never `__ephemeral_asset_job__`."""
    import dagster as dg

    from pipelines.cli import run
    from pipelines.cli.preview import preview_run

    inbox = tmp_path / "inbox"
    shutil.copytree(samples / "backgammon", inbox / "backgammon")
    runs: list[dg.DagsterRun] = []
    holding_lock = run._run_holding_lock

    def recording(inbox, lake, instance, *args, **kwargs):  # the runs, while it is open
        outcome = holding_lock(inbox, lake, instance, *args, **kwargs)
        runs.extend(instance.get_runs())
        return outcome

    monkeypatch.setattr(run, "_run_holding_lock", recording)
    preview_run(inbox, tmp_path / "lake")
    assert len(runs) == 2 and {run.job_name for run in runs} == {"preview"}
    assert {run.tags["ratings/command"] for run in runs} == {"preview"}
    assert {run.tags["ratings/inbox"] for run in runs} == {str(inbox.resolve())}
