"""Outputs that can never touch published data (issue 33 item 7): `export` and `report` refuse
any lake's `lists/` (directly, through a symbolic link, their own lake or another) and a lake's
`.lock`; a killed writer's temporary file is gone after the next output; `--as-of 9999-12-31`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.cli import app as cli
from pipelines.cli import outputs
from tests.support.published_lake import build, publish_versions

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A published lake without lock or Dagster instance (recognised by its manifests)."""
    return build(tmp_path_factory.mktemp("published") / "lake")


@pytest.fixture(scope="module")
def report_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Published lists and the tables a report reads (games with their source, quarantine)."""
    import polars as pl

    from rating_core import tables
    from rating_core.lake.storage import write_partitioned

    lake = tmp_path_factory.mktemp("report") / "lake"
    publish_versions(lake)
    games = {"game_id": ["g1"], "source": ["platform"], "period": ["2026-01"]}
    write_partitioned(lake, tables.GAMES, pl.DataFrame(games))
    write_partitioned(
        lake, tables.MATCHES, pl.DataFrame({"match_id": ["m1"], "period": ["2026-01"]})
    )
    quarantined = {"source_file": ["a.csv"], "line": [2], "record": ["g7"], "value": ["2-0"]}
    quarantined |= {"reason": ["result '2-0' is not a result"], "source": ["games"]}
    write_partitioned(lake, tables.QUARANTINE, pl.DataFrame(quarantined))
    return lake


@pytest.fixture
def other_lake(tmp_path: Path) -> Path:
    """Another lake, recognised by its markers only (a lock and an empty `lists/`)."""
    folder = tmp_path / "other"
    (folder / "lists" / "x").mkdir(parents=True)
    (folder / ".lock").write_text("", encoding="utf-8")
    return folder


def _files(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _commands(lake: Path, output: Path) -> list[list[str]]:
    return [
        [
            "export",
            "fide-standard",
            "--format",
            "csv",
            "--lake",
            str(lake),
            "--output",
            str(output),
        ],
        ["report", "--lake", str(lake), "--output", str(output)],
    ]


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ratings: ") and "\n" not in err, err
    return err


def test_the_own_lakes_lists_are_refused(lake: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _files(lake)
    targets = [
        lake / "lists" / "new.csv",
        lake / "lists" / "fide-standard" / "2026-01" / "v1" / "list.csv",
        lake / "lists" / "fide-standard" / "2026-01" / "v1" / "list.parquet",
    ]
    for target in targets:
        for argv in _commands(lake, target):
            err = _refused(argv, capsys)
            assert "inside the published lists" in err and str(lake) in err
    assert _files(lake) == before


def test_another_lakes_lists_and_lock_are_refused(
    lake: Path, other_lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for target in (other_lake / "lists" / "x" / "a.csv", other_lake / "lists" / "a.csv"):
        for argv in _commands(lake, target):
            assert "inside the published lists" in _refused(argv, capsys)
    for argv in _commands(lake, other_lake / ".lock"):
        assert "lock of the lake" in _refused(argv, capsys)
    assert (other_lake / ".lock").read_text(encoding="utf-8") == ""
    assert list((other_lake / "lists").rglob("*.*")) == []


def test_lists_reached_through_a_symbolic_link_are_refused(
    lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _files(lake)
    (tmp_path / "to-lists").symlink_to(lake / "lists")
    (tmp_path / "to-lake").symlink_to(lake)
    published = lake / "lists" / "fide-standard" / "2026-01" / "v1" / "list.csv"
    (tmp_path / "to-file.csv").symlink_to(published)
    targets = [
        tmp_path / "to-lists" / "a.csv",
        tmp_path / "to-lake" / "lists" / "a.csv",
        tmp_path / "to-file.csv",
    ]
    for target in targets:
        for argv in _commands(lake, target):
            assert "inside the published lists" in _refused(argv, capsys)
    assert _files(lake) == before


def test_a_folder_named_lists_outside_a_lake_is_a_plain_folder(
    lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "lists").mkdir()
    target = tmp_path / "lists" / "fide.csv"
    assert cli.main(_commands(lake, target)[0]) == 0
    capsys.readouterr()
    assert target.read_bytes().startswith(b"player_id")  # the published CSV's header


def test_beside_the_lists_is_allowed(lake: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = lake / "export.csv"
    try:
        assert cli.main(_commands(lake, target)[0]) == 0
        assert target.is_file()
    finally:
        target.unlink(missing_ok=True)
    capsys.readouterr()


def _dead_pid() -> int:
    """The id of a process that has ended."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)


def test_a_killed_writers_temporary_file_is_removed_by_the_next_output(
    lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = tmp_path / f".fide.csv.ratings-{_dead_pid()}-{'0' * 32}.partial"
    dead.write_bytes(b"half a list")
    alive = tmp_path / f".other.csv.ratings-{os.getppid()}-{'1' * 32}.partial"  # still running
    alive.write_bytes(b"being written")
    assert cli.main(_commands(lake, tmp_path / "elsewhere.csv")[0]) == 0
    capsys.readouterr()
    assert not dead.exists() and alive.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([alive.name, "elsewhere.csv"])


def test_temporary_names_match_what_is_swept(tmp_path: Path) -> None:
    name = outputs.temporary_for(tmp_path / "r.html").name
    match = outputs.TEMPORARY.match(name)
    assert match and int(match["pid"]) == os.getpid()


KILL_HOOK = """
import os, signal
_replace = os.replace
def replace(src, dst, *args, **kwargs):
    if str(dst).endswith(os.environ["KILL_AT"]):
        os.kill(os.getpid(), signal.SIGKILL)  # killed between writing and renaming
    return _replace(src, dst, *args, **kwargs)
os.replace = replace
"""


@pytest.mark.e2e
@pytest.mark.parametrize("command", ["export", "report"])
def test_a_kill_during_the_write_leaves_nothing_after_the_next_command(
    command: str, lake: Path, report_lake: Path, tmp_path: Path
) -> None:
    lake = report_lake if command == "report" else lake
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(KILL_HOOK, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    target = out / "result.html"
    argv = {"export": 0, "report": 1}[command]
    base = {**os.environ, "PYTHONPATH": f"{hook}{os.pathsep}{ROOT}", "KILL_AT": "result.html"}
    killed = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", *_commands(lake, target)[argv]],
        env=base,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == -9, killed.stderr
    assert [p.name for p in out.iterdir() if p.name.endswith(".partial")]  # what the kill left
    again = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", *_commands(lake, target)[argv]],
        env={**base, "KILL_AT": "never"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    assert [p.name for p in out.iterdir()] == ["result.html"]


def test_as_of_the_calendars_last_day_is_a_date(
    lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["show", "fide-standard", "--as-of", "9999-12-31", "--lake", str(lake)]) == 0
    assert "2026-05 v1" in capsys.readouterr().out  # the latest period, published by then
    assert cli.main(["history", "a", "--as-of", "9999-12-31", "--lake", str(lake)]) == 0
    assert "1530" in capsys.readouterr().out
