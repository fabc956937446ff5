"""A reader that stops early (`ratings query ... | head`) ends the command in silence, as it ends
`cat big | head`'s cat: nothing on stderr (no "broken pipe" sentence, no traceback, no
"Exception ignored" at the interpreter's exit) and exit status 141 (128 + SIGPIPE)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.cli.app import READER_GONE
from tests.support.inbox import ROOT
from tests.support.published_lake import build

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(build(tmp_path_factory.mktemp("broken-pipe") / "lake"))


def _environment() -> dict[str, str]:
    return {**os.environ, "COLUMNS": "120", "PYTHONPATH": str(ROOT)}


def _with_reader_gone(*args: str) -> subprocess.CompletedProcess[str]:
    """Run `ratings ARGS` with stdout a pipe whose reading end is closed before it writes."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-m", "pipelines.cli", *args],
            cwd=ROOT,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
            env=_environment(),
        )
    finally:
        os.close(write)


MANY_ROWS = "SELECT range AS n, 'row ' || range AS label FROM range(200000)"


@pytest.mark.parametrize(
    "args",
    [
        ["query", "--csv", MANY_ROWS],
        ["query", "--json", MANY_ROWS],
        ["query", MANY_ROWS],
        ["query", "SELECT 1 AS one"],  # small enough to wait in the buffer for the last flush
        ["show", "fide-standard"],
        ["show", "fide-standard", "--json"],
        ["show"],
        ["history", "a"],
        ["diff", "fide-standard", "2026-02"],
    ],
    ids=lambda args: " ".join(a if len(a) < 20 else a[:17] + "..." for a in args),
)
def test_a_reader_gone_before_the_output_is_silence_and_status_141(
    lake: str, args: list[str]
) -> None:
    proc = _with_reader_gone(*args, "--lake", lake)
    assert proc.stderr == ""
    assert proc.returncode == READER_GONE == 141


def test_a_reader_that_stops_after_the_first_lines_is_silence_and_status_141(lake: str) -> None:
    """`ratings query --csv ... | head -2`: the reader takes two lines and goes away."""
    with subprocess.Popen(
        [sys.executable, "-m", "pipelines.cli", "query", "--csv", MANY_ROWS, "--lake", lake],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_environment(),
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        head = [proc.stdout.readline(), proc.stdout.readline()]
        proc.stdout.close()
        error = proc.stderr.read()
        status = proc.wait(timeout=300)
    assert head == ["n,label\n", "0,row 0\n"]
    assert error == ""
    assert status == READER_GONE


def test_a_reader_that_reads_everything_still_gets_status_0(lake: str, tmp_path: Path) -> None:
    out = tmp_path / "rows.csv"
    with out.open("w") as sink:
        proc = subprocess.run(
            [sys.executable, "-m", "pipelines.cli", "query", "--csv", MANY_ROWS, "--lake", lake],
            cwd=ROOT,
            stdout=sink,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
            env=_environment(),
        )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert len(out.read_text().splitlines()) == 200_001
