"""A full disk during `ratings run` (issue 33 item 7): the run's summary of what was published
before it, then the one sentence the README promises, on a real small disk (a tmpfs, where the
machine lets the tests mount one) and by fault injection (sqlite's "disk I/O error" from the
Dagster instance once a list is published, the disk then reported full)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[3]
SENTENCE = "ratings: the disk is full (no space left on the device) writing in '{lake}'; free some space and run again"

FAULT_HOOK = '''
"""Test-only: after the first published list version, every Dagster event-log write fails as
sqlite does on a full disk, and the disk reports no free space."""
import collections
import os
import pathlib
import shutil
import sqlite3

LAKE = pathlib.Path(os.environ["RATINGS_TEST_FULL_LAKE"])
_usage = shutil.disk_usage


def _published():
    return any((LAKE / "lists").glob("*/*/v*/manifest.json"))


def disk_usage(path):
    usage = _usage(path)
    if _published() and str(path).startswith(str(LAKE)):
        return collections.namedtuple("usage", "total used free")(usage.total, usage.total, 0)
    return usage


shutil.disk_usage = disk_usage

from dagster._core.storage.event_log.sqlite import sqlite_event_log  # noqa: E402
import sqlalchemy.exc  # noqa: E402

_store = sqlite_event_log.SqliteEventLogStorage.store_event


def store_event(self, event):
    if _published():
        raise sqlalchemy.exc.OperationalError("INSERT", {}, sqlite3.OperationalError("disk I/O error"))
    return _store(self, event)


sqlite_event_log.SqliteEventLogStorage.store_event = store_event
'''


def _ratings(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "COLUMNS": "200", "PYTHONPATH": str(ROOT), **(env or {})}
    environment.pop("RATINGS_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "pipelines.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env=environment,
    )


def _check_ending(proc: subprocess.CompletedProcess[str], lake: Path) -> None:
    """Exit 1; stderr is the one sentence naming the lake (no Dagster or SQLAlchemy line)."""
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines == [SENTENCE.format(lake=lake)], proc.stderr


def test_injected_sqlite_disk_io_error_ends_in_the_full_disk_sentence(tmp_path: Path) -> None:
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(FAULT_HOOK, encoding="utf-8")
    lake = tmp_path / "lake"
    proc = _ratings(
        "run",
        "--lake",
        str(lake),
        env={"PYTHONPATH": f"{hook}{os.pathsep}{ROOT}", "RATINGS_TEST_FULL_LAKE": str(lake)},
    )
    _check_ending(proc, lake)
    published = sorted(p.parent for p in (lake / "lists").glob("*/*/v*/manifest.json"))
    assert published  # the fault comes after a publication
    summary = " ".join(proc.stdout.split())
    assert f"{len(published)} list version" in summary, proc.stdout
    for version in published:
        assert version.parents[1].name in summary  # each list published before it is named


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs: room for the ingest and some lists, not for the whole sample run (its lake
    takes about 5.5 MB on a tmpfs)."""
    folder = tmp_path / "small"
    folder.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


def test_a_real_full_disk_ends_in_the_full_disk_sentence(small_disk: Path) -> None:
    lake = small_disk / "lake"
    proc = _ratings("run", "--lake", str(lake))
    _check_ending(proc, lake)
    assert "internal error" not in proc.stdout + proc.stderr
    assert "Exception while writing" not in proc.stderr and "sqlalche" not in proc.stderr
    assert "published" in proc.stdout  # the summary of what was published before it
