"""End-to-end tier: one run at a time on a lake, and a killed run never shows a staged file.

Issue 9 items 9 and 10. The runs use small backgammon-only inboxes (one list, `fibs`, a few
periods) so that each `ratings run` takes seconds, not minutes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from pipelines.incremental import period_input_digests
from rating_core import tables
from rating_core.lake import publishing as publish
from rating_core.lake.data_periods import data_periods
from rating_core.lake.storage import read_table
from tests.support.duck import relation

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]
MATCHES = ROOT / "data_samples" / "backgammon" / "matches-2026.csv"

_PAUSED_RUN = r"""
import sys, time
from pathlib import Path
import pipelines.cli.run as runner
from pipelines.cli.app import main

flag = Path(sys.argv[1])
original = runner.periods_to_run


def paused(*args, **kwargs):
    # after ingest and the digests, before any period is rated: where the runs interleaved
    chosen = original(*args, **kwargs)
    (flag / "paused").write_text("paused")
    deadline = time.monotonic() + 300
    while not (flag / "resume").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return chosen


runner.periods_to_run = paused
raise SystemExit(main(sys.argv[2:]))
"""
"""`ratings run ...` that pauses after computing its digests until `<flag>/resume` exists."""

_KILLED_RUN = r"""
import os, signal, sys
from pathlib import Path
from rating_core.lake import publishing as publish
from pipelines.cli.app import main

kill_at, calls = int(sys.argv[1]), 0
original = os.rename


def rename(src, dst, *args, **kwargs):
    # the rename of a staged version into lists/, its files complete and flushed to disk
    global calls
    if publish.STAGING_DIR in Path(src).parts:
        calls += 1
        if calls == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
    return original(src, dst, *args, **kwargs)


os.rename = rename
raise SystemExit(main(sys.argv[2:]))
"""
"""`ratings run ...` killed with SIGKILL just before its `kill_at`-th staged version is renamed
into `lists/` (the versions of a publishing step are staged, flushed, then renamed in order)."""


def _env() -> dict[str, str]:
    return {**os.environ, "COLUMNS": "200", "PYTHONPATH": str(ROOT)}


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "pipelines.cli", *args]


def _inbox(root: Path, months: tuple[str, ...]) -> Path:
    """A backgammon-only inbox with the sample matches of `months` (YYYY-MM)."""
    lines = MATCHES.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines[1:] if line.split(",")[1][:7] in months]
    folder = root / "backgammon"
    folder.mkdir(parents=True)
    (folder / "matches.csv").write_text(lines[0] + "".join(kept), encoding="utf-8")
    return root


def _players(inbox: Path) -> set[str]:
    """The players of the inbox's ranked matches between people (the ones `fibs` lists)."""
    frame = pl.read_csv(inbox / "backgammon" / "matches.csv").filter(
        pl.col("ranked") & ~pl.col("vs_ai")
    )
    return set(frame["winner_id"]) | set(frame["loser_id"])


def _wait_for(predicate, what: str, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_a_second_run_waits_for_the_first_and_nothing_interleaves(tmp_path: Path) -> None:
    first_inbox = _inbox(tmp_path / "first", ("2026-01",))
    second_inbox = _inbox(tmp_path / "second", ("2026-01", "2026-02"))
    lake, flag = tmp_path / "lake", tmp_path / "flag"
    flag.mkdir()
    run = ("run", "--lake", str(lake), "--inbox")
    first = subprocess.Popen(
        [sys.executable, "-c", _PAUSED_RUN, str(flag), *run, str(first_inbox)],
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    second_err = tmp_path / "second.err"
    try:
        _wait_for(lambda: (flag / "paused").exists() or first.poll() is not None, "the pause")
        assert first.poll() is None, first.communicate()
        with open(second_err, "w", encoding="utf-8") as err:
            second = subprocess.Popen(
                _cli(*run, str(second_inbox)),
                cwd=ROOT,
                env=_env(),
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
            )
        _wait_for(
            lambda: "waiting" in second_err.read_text() or second.poll() is not None,
            "the second run to wait",
        )
        time.sleep(1)
        assert second.poll() is None, "the second run did not wait for the first"
        (flag / "resume").write_text("go")
        first_out, first_errors = first.communicate(timeout=300)
        second_out, _ = second.communicate(timeout=300)
    finally:
        (flag / "resume").write_text("go")
        for proc in (first, locals().get("second")):
            if proc is not None and proc.poll() is None:
                proc.kill()
    assert first.returncode == 0, first_out + first_errors
    assert second.returncode == 0, second_out + second_err.read_text()
    waited = second_err.read_text().strip()
    assert waited == (
        f"ratings: waiting for the run holding lake '{lake}' (pid {first.pid}) to finish"
    )
    # the lake is the second inbox's, whole: digests recorded, lists and tables agree
    periods = data_periods(lake)
    assert periods == ["2026-01", "2026-02"]
    recorded = read_table(lake, tables.RUN_INPUTS).collect().sort("period")
    assert recorded.equals(period_input_digests(lake, periods).sort("period"))
    assert publish.list_periods(lake, "fibs") == periods
    assert set(publish.read_list(lake, "fibs", "2026-02")["player_id"]) == _players(second_inbox)
    again = subprocess.run(
        _cli(*run, str(second_inbox)), cwd=ROOT, env=_env(), capture_output=True, text=True
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert "nothing to recompute" in again.stdout
    assert "waiting" not in again.stderr
    changed = subprocess.run(
        _cli(*run, str(first_inbox)), cwd=ROOT, env=_env(), capture_output=True, text=True
    )
    assert changed.returncode == 0, changed.stdout + changed.stderr
    assert "nothing to recompute" not in changed.stdout


def _glob_snapshots(lake: Path) -> tuple[set[tuple], set[tuple]]:
    """(list, period, version) of every row the README's glob reads, with Polars and DuckDB."""
    pattern = f"{lake}/lists/**/list.parquet"
    with_polars = pl.scan_parquet(pattern).select("list", "period", "version").unique().collect()
    with_duckdb = relation(
        f"SELECT DISTINCT list, period, version FROM read_parquet('{pattern}')"
    ).fetchall()
    return set(with_polars.iter_rows()), set(with_duckdb)


def _complete(lake: Path) -> set[tuple]:
    return set(publish.current_versions(lake).iter_rows())


@pytest.mark.parametrize("kill_at", [1, 2])
def test_a_run_killed_at_a_staged_version_hides_it_and_the_next_run_completes(
    tmp_path: Path, kill_at: int
) -> None:
    inbox = _inbox(tmp_path / "inbox", ("2026-01", "2026-02"))
    lake = tmp_path / "lake"
    run = ("run", "--lake", str(lake), "--inbox", str(inbox))
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_RUN, str(kill_at), *run],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == -9, killed.stdout + killed.stderr
    staged = [p for p in (lake / publish.STAGING_DIR).rglob(publish.LIST_FILE)]
    assert staged, "the kill left no staged version: the test did not reach a staging point"
    expected = {("fibs", "2026-01", 1)} if kill_at == 2 else set()
    assert _complete(lake) == expected
    polars_seen, duckdb_seen = _glob_snapshots(lake) if expected else (set(), set())
    assert polars_seen == duckdb_seen == expected
    if not expected:  # nothing published yet: the glob must match no file at all
        assert not list((lake / "lists").rglob(publish.LIST_FILE))
    again = subprocess.run(_cli(*run), cwd=ROOT, env=_env(), capture_output=True, text=True)
    assert again.returncode == 0, again.stdout + again.stderr
    complete = {("fibs", "2026-01", 1), ("fibs", "2026-02", 1)}
    assert _complete(lake) == complete
    assert _glob_snapshots(lake) == (complete, complete)
    assert not (lake / publish.STAGING_DIR).exists()
