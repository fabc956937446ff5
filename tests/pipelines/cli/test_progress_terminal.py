"""`ratings run`'s live display on a real (pseudo-)terminal (issue 31 item 7): it keeps drawing
while a Dagster step runs, although Dagster's compute log capture points the process's stdout and
stderr descriptors at a log file for the step's length (before, the display found no terminal
and drew nothing until the step ended: no bar, no rates, a spinner frozen). No timing: the work
waits until the terminal has received a new frame before going on."""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest
from rich.console import Console

from pipelines.cli.progress import ProgressDisplay
from rating_core.progress import Progress
from tests.support.pgn_text import blitz_game, write_pgn

ROOT = Path(__file__).resolve().parents[3]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
STATUS = "ingesting the inbox"
LABEL_END = "2025-05.pgn"
"""The end of the file's label (`tests.support.live_step.LABEL`), which a shortened row keeps."""
WAIT_S = 30.0
"""The longest a frame may take to come (only a broken display ever waits that long)."""
START_S = 180.0
"""The longest the step may take to read its first window (Python, Dagster and the scanner's
kernels loaded on a busy machine)."""


class Terminal:
    """A pseudo-terminal of 100 columns whose output is read on a thread: `text` is what it
    showed (escape sequences removed), `frames` how many times the status line was drawn."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
        self._chunks: list[bytes] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # the last writer closed the terminal
                return
            if not data:
                return
            with self._changed:
                self._chunks.append(data)
                self._changed.notify_all()

    def text(self) -> str:
        with self._changed:
            raw = b"".join(self._chunks)
        return ANSI.sub("", raw.decode("utf-8", "replace"))

    def frames(self) -> int:
        return self.text().count(STATUS)

    def wait_for(self, shown: str, after: int = 0) -> None:
        """Wait until `shown` is on the terminal in a frame drawn after the first `after`."""
        deadline = time.monotonic() + WAIT_S
        with self._changed:
            while True:
                drawn = self._frames_after(after)
                if shown in drawn:
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    pytest.fail(f"not drawn within {WAIT_S:.0f} s: {shown!r}; drawn: {drawn!r}")
                self._changed.wait(left)

    def _frames_after(self, after: int) -> str:
        text = ANSI.sub("", b"".join(self._chunks).decode("utf-8", "replace"))
        return STATUS.join(text.split(STATUS)[after + 1 :])

    def close(self) -> None:
        os.close(self.slave)
        self._reader.join(timeout=5)
        os.close(self.master)


def rows_of(text: str, label: str) -> list[str]:
    """The live rows naming `label`'s end, as drawn, each once, in order."""
    rows = [
        line.strip()
        for line in re.split(r"[\r\n]+", text)
        if label in line and " done:" not in line
    ]
    return list(dict.fromkeys(rows))


def test_the_live_display_keeps_drawing_while_its_descriptor_points_elsewhere(
    tmp_path: Path,
) -> None:
    """What Dagster does to fd 2 during a step, done to the display's terminal descriptor: the
    rows and the spinner go on being drawn on the terminal, and nothing of them in the file."""
    terminal = Terminal()
    file = open(terminal.slave, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    display = ProgressDisplay(Console(file=file), every=5)
    log = tmp_path / "step.err"
    total = 9_000_000
    try:
        with display, display.status(STATUS):
            terminal.wait_for(STATUS)
            saved = os.dup(terminal.slave)
            with log.open("w") as step_log:
                os.dup2(step_log.fileno(), terminal.slave)  # the step's capture begins
                try:
                    for step in range(1, 5):
                        seen = terminal.frames()
                        display(Progress("ingest", "big.pgn.zst", step * 1_000_000, total, "bytes"))
                        terminal.wait_for(f"{step}.0/9.0 MB", after=seen)
                finally:
                    os.dup2(saved, terminal.slave)  # the step ends
                    os.close(saved)
    finally:
        file.close()
        terminal.close()
    shown = terminal.text()
    assert ["big.pgn.zst ━" in shown, *(f"{n}.0/9.0 MB" in shown for n in range(1, 5))] == [
        True
    ] * 5
    assert "MB/s" in shown and "s left" in shown
    assert len({c for c in shown if c in SPINNER}) >= 2  # the spinner turns
    assert "MB" not in log.read_text()


@pytest.mark.slow
def test_a_dagster_step_reading_a_file_is_drawn_live_with_rates_and_time_left(
    tmp_path: Path,
) -> None:
    """The real path: the streamed reader's reports from inside a step of the lake's Dagster
    instance, under `ratings run`'s display, on a terminal. The step waits after each window
    until the terminal has received a frame drawn since: at least one frame per window, and
    the rows change as the reader goes (a report every half second at most)."""
    games = 900
    pgn = write_pgn(tmp_path / "month.pgn", [blitz_game(i, gid=f"g{i:07d}") for i in range(games)])
    tell_r, tell_w = os.pipe()
    wait_r, wait_w = os.pipe()
    terminal = Terminal()
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "DAGSTER_HOME")}
    env.update(TERM="xterm-256color", PYTHONPATH=str(ROOT))
    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE"):
        env.pop(name, None)
    window = pgn.stat().st_size // 16
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.support.live_step", str(pgn), str(tmp_path / "lake")]
        + [str(tell_w), str(wait_r), str(window)],
        stdin=terminal.slave,
        stdout=terminal.slave,
        stderr=terminal.slave,
        pass_fds=(tell_w, wait_r),
        cwd=ROOT,
        env=env,
    )
    os.close(tell_w)
    os.close(wait_r)
    windows = 0
    try:
        while select.select([tell_r], [], [], START_S)[0]:
            said = os.read(tell_r, 1)
            if not said:
                break  # the step is over
            windows += 1
            terminal.wait_for(LABEL_END, after=terminal.frames())  # a frame since the window
            os.write(wait_w, b"k")
        assert child.wait(timeout=WAIT_S) == 0, terminal.text()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        os.close(tell_r)
        os.close(wait_w)
        terminal.close()
    shown = terminal.text()
    assert f"games {games}" in shown and windows >= 12, (windows, shown[-2000:])
    rows = rows_of(shown, LABEL_END)
    moving = [row for row in rows if "B/s" in row and "games/s" in row and "s left" in row]
    assert len(moving) >= 3, rows
    assert len({c for c in shown if c in SPINNER}) >= 2
    # the step's output was captured by Dagster all along, and the display wrote around it
    logs = list((tmp_path / "lake").rglob("compute_logs/*.err"))
    assert logs and not any("B/s" in log.read_text() for log in logs)
