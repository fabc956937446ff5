"""What `ratings run` shows of long work (`rating_core.progress` reports): on a terminal, a live
bar per file being ingested and per system being rated under the run's spinner; elsewhere (CI,
cron, a log file) a plain timestamped line per piece of work at most every few seconds.

Both go to stderr, so stdout keeps only the run's summary. Rates and estimates come from the
reports' own times (`time.monotonic`, over the last `RATE_WINDOW_S` seconds). Work that ends
within the interval leaves no line behind: a run on a small inbox prints what it printed before.
Reports may come from any thread. On a terminal nothing is printed while this display's lock is
held: rich's live display takes its own lock to render, then renders this display.

On a terminal the live display writes to its own duplicate of the terminal's file descriptor
(`own_terminal`), taken when it starts: while a Dagster step runs, Dagster's compute log capture
points the process's stdout and stderr descriptors at a log file, and a display writing to fd 2
would find it no terminal and stop refreshing until the step ends (what `ratings run` did).
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import IO

from rich.cells import cell_len
from rich.console import Console, ConsoleDimensions, ConsoleOptions, RenderResult
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from pipelines.cli.output import err_console, shorten_middle
from pipelines.cli.ticker import Heartbeat, Work, plain_heartbeat, seconds_setting, utc_stamp
from rating_core.progress import Progress

EVERY_S = 5.0
"""Default seconds between two plain lines of one piece of work (and the least a piece must last
to get a line at all)."""

EVERY_ENV = "RATINGS_PROGRESS_SECONDS"
"""Environment variable overriding `EVERY_S` (`0`: a line at every report, for tests and logs)."""

RATE_WINDOW_S = 15.0
"""Rates are measured over about the last this many seconds of reports: recent enough to follow
a change of pace, long enough to smooth the chunks' irregular sizes."""

BAR_WIDTH = (10, 30)
"""Least and greatest width of a live bar; below the least, the bar is left out."""

LABEL_LEAST = 12
"""A live row keeps at least this much of its label (file names are cut in the middle)."""


def every_seconds(environ: Mapping[str, str] | None = None) -> float:
    """The plain lines' interval: `RATINGS_PROGRESS_SECONDS` (0: a line at every report), else
    `EVERY_S`."""
    return seconds_setting(EVERY_ENV, EVERY_S, environ)


STEP_UP = 0.9995
"""An amount is shown in a unit from this much of it on: what would show as `1000` of the unit
below (999.6 MB) shows as `1.0 GB`."""


def format_bytes(count: float, unit_of: float | None = None) -> str:
    """`count` bytes in decimal units (`85 MB`, `1.2 GB`); `unit_of` picks the unit from another
    amount (a total), so that `1.2/6.0 GB` share one."""
    scale = max(count, unit_of or 0)
    for factor, unit in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if scale >= factor * STEP_UP:
            return f"{_number(count / factor, scale / factor)} {unit}"
    return f"{count:.0f} B"


def _number(value: float, scale: float) -> str:
    """One decimal below 10 (`1.2`, `6.0`), none from 10 on (`85`, `340`; 9.96 is `10`, never
    `10.0`): two or three figures."""
    return f"{value:.1f}" if float(f"{scale:.1f}") < 10 else f"{value:.0f}"


def format_count(count: float) -> str:
    """A count in a few characters: `850`, `4.1k`, `41k`, `1.2M`."""
    for factor, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if count >= factor * STEP_UP:
            return f"{_number(count / factor, count / factor)}{suffix}"
    return f"{count:.0f}"


def counted(count: float, unit: str) -> str:
    """`unit` for `count` of it: `1 period`, `0 periods`, `12 periods` (units are named in the
    plural, `periods`, `games`, `lines`; `matches` is `1 match`)."""
    if count != 1 or not unit.endswith("s"):
        return unit
    return unit[:-2] if unit.endswith(("ches", "shes", "xes")) else unit[:-1]


def games_text(count: int, counts: str = "games") -> str:
    """`1 game`, `850 games`, `1.2M games` (`1 match`, `12 matches` when `counts` is
    `matches`)."""
    return f"{format_count(count)} {counted(count, counts)}"


def time_left(seconds: float) -> tuple[str, str]:
    """The time left, in full and short: `about 57 s left` and `57 s left`; under half a second
    (which `format_duration` would show as `0 s`), `less than a second left` and `<1 s left`."""
    if seconds < 0.5:
        return "less than a second left", "<1 s left"
    return f"about {format_duration(seconds)} left", f"{format_duration(seconds)} left"


def format_duration(seconds: float) -> str:
    """`<1 s`, `57 s`, `99 s`, `4 min 10 s`, `2 h 05 min`: rounded to what a person reads."""
    whole = max(0, round(seconds))
    if whole == 0:
        return "<1 s"
    if whole < 100:
        return f"{whole} s"
    if whole < 3600:
        minutes, rest = divmod(whole, 60)
        return f"{minutes} min {rest} s" if minutes < 10 and rest else f"{minutes} min"
    hours, rest = divmod(whole, 3600)
    return f"{hours} h {rest // 60:02d} min"


@dataclass
class Piece:
    """What the display knows of one piece of work (a file, a system's range of periods): its
    last report and the recent reports' times, to measure rates over `RATE_WINDOW_S`."""

    stage: str
    label: str
    unit: str
    started: float
    total: int | None = None
    done: int = 0
    games: int = 0
    counts: str = "games"
    """What `games` counts (`games`, or `matches` for backgammon)."""
    samples: deque[tuple[float, int, int]] = field(default_factory=deque)
    last_line: float | None = None
    """When its last plain line was printed (None: not yet)."""

    def update(self, progress: Progress, now: float) -> None:
        """Take a report made at `now`, keeping the samples of the last `RATE_WINDOW_S` (and the
        one just before them, so the window is always spanned). A report behind the last one
        (a file read again from its start, as Windows-1252) starts the samples again."""
        if progress.done < self.done:
            self.samples.clear()
        self.total, self.done, self.games = progress.total, progress.done, progress.games
        self.counts = progress.counts
        self.samples.append((now, progress.done, progress.games))
        while len(self.samples) > 2 and self.samples[1][0] <= now - RATE_WINDOW_S:
            self.samples.popleft()

    def rates(self) -> tuple[float | None, float | None]:
        """Units (bytes, periods) and games per second over the window; None before two reports
        at different times."""
        if len(self.samples) < 2:
            return None, None
        (t0, done0, games0), (t1, done1, games1) = self.samples[0], self.samples[-1]
        if t1 <= t0:
            return None, None
        return (done1 - done0) / (t1 - t0), (games1 - games0) / (t1 - t0)

    def seconds_left(self) -> float | None:
        """The time left at the current rate (None: no total, or no rate yet)."""
        rate, _ = self.rates()
        if self.total is None or not rate or rate <= 0:
            return None
        return max(0, self.total - self.done) / rate

    def describe(self) -> list[str]:
        """Where the piece stands, fullest first, then shorter and shorter (for narrow lines):
        `1.2/6.0 GB 20% 85 MB/s 41k games/s about 57 s left`, the same with `57 s left`, then
        without the percentage, the games per second, the bytes per second; for periods
        `3/12 periods 25% 41k games about 30 s left`, then shorter likewise."""
        amount = self._amount()
        percent = f"{min(100, 100 * self.done // self.total)}%" if self.total else ""
        rate, games_rate = self.rates()
        left = self.seconds_left()
        ahead = left is not None and self.done < (self.total or 0)
        about, short = time_left(left) if left is not None and ahead else ("", "")
        if self.unit == "bytes":
            speed = f"{format_bytes(rate)}/s" if rate is not None else ""
            games = f"{format_count(games_rate)} {self.counts}/s" if games_rate is not None else ""
            shapes = [
                (amount, percent, speed, games, about),
                (amount, percent, speed, games, short),
                (amount, speed, games, short),
                (amount, speed, short),
                (amount, short),
            ]
        else:
            games = games_text(self.games, self.counts)
            shapes = [
                (amount, percent, games, about),
                (amount, percent, games, short),
                (amount, games, short),
                (amount, short),
            ]
        return [" ".join(part for part in shape if part) for shape in shapes]

    def _amount(self) -> str:
        """`1.2/6.0 GB`, `3/12 periods`, `1.2 GB` (total unknown)."""
        if self.unit == "bytes":
            done = format_bytes(self.done, self.total)
            if self.total is None:
                return done
            number, unit = format_bytes(self.total).rsplit(" ", 1)
            return f"{done.rsplit(' ', 1)[0]}/{number} {unit}"
        total = "" if self.total is None else f"/{self.total}"
        unit = counted(self.done if self.total is None else self.total, self.unit)
        return f"{self.done}{total} {unit}"

    def summary(self, now: float) -> list[str]:
        """What the finished piece did, timed from its first report, fullest first:
        `done: 6.0 GB, 3.1M games in 72 s (83 MB/s)`, then without the speed, then the games
        and time only (`done: 12 periods, 310k games in 14 s` for periods)."""
        seconds = now - self.started
        took = f"{games_text(self.games, self.counts)} in {format_duration(seconds)}"
        if self.unit != "bytes":
            done = f"{self.done} {counted(self.done, self.unit)}"
            return [f"done: {done}, {took}", f"done: {took}"]
        whole = f"done: {format_bytes(self.done)}, {took}"
        speed = f" ({format_bytes(self.done / seconds)}/s)" if seconds > 0 else ""
        return [whole + speed, whole, f"done: {took}"]


LABEL_KEPT = 20
"""A plain line leaves out figures (`Piece.describe`'s shorter forms) before it cuts its label
below this many characters."""


def fit_line(head: str, label: str, tails: list[str], width: int) -> str:
    """`head label tail` in at most `width` columns: the fullest of `tails` that leaves the label
    `LABEL_KEPT` characters (or all of it), else the shortest with the label cut in the middle."""
    keep = min(cell_len(label), LABEL_KEPT)
    for tail in tails:
        room = width - cell_len(head) - cell_len(tail) - 2
        if room >= keep:
            return f"{head} {shorten_middle(label, room)} {tail}"
    tail = tails[-1]
    room = width - cell_len(head) - cell_len(tail) - 2
    return f"{head} {shorten_middle(label, max(room, LABEL_LEAST))} {tail}"


class TerminalConsole(Console):
    """A console writing to a terminal through its own file (a duplicate of the terminal's
    descriptor), sized from that descriptor: rich's own `Console.size` asks the process's
    stdin, stdout and stderr, which a Dagster step points at its log files."""

    @property
    def size(self) -> ConsoleDimensions:
        """The terminal's size as its descriptor reports it (rich's answer if it cannot), the
        width overridden by `COLUMNS` as rich does."""
        try:
            width, height = os.get_terminal_size(self.file.fileno())
        except (AttributeError, ValueError, OSError):
            return super().size
        columns = os.environ.get("COLUMNS", "")
        return ConsoleDimensions(int(columns) if columns.isdigit() else width or 80, height or 25)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]


def own_terminal(console: Console) -> Console | None:
    """A console of its own on the terminal `console` writes to (a duplicate of its file
    descriptor, so that later redirections of the process's fd 1 and 2 leave it on the
    terminal); None when `console` is not writing to a terminal through a descriptor."""
    file: IO[str] = console.file
    try:
        descriptor = file.fileno()
    except (AttributeError, ValueError, OSError):  # io.StringIO and the like: no descriptor
        return None
    if not console.is_terminal or not os.isatty(descriptor):
        return None
    stream = open(  # noqa: SIM115 - closed by the display that owns it
        os.dup(descriptor),
        "w",
        encoding=getattr(file, "encoding", None) or "utf-8",
        errors="replace",
        closefd=True,
    )
    return TerminalConsole(file=stream, force_terminal=True, stderr=console.stderr)


class ProgressDisplay:
    """The listener `ratings run` hands `rating_core.progress.listening`, and the run's spinner.

    On a terminal (`console.is_terminal`) it owns one rich live display while entered: the
    spinner line (`status`) and one bar per piece of work in progress; a piece that lasted at
    least `every` seconds leaves a line when it finishes. Elsewhere it prints, per piece, a
    timestamped line at most every `every` seconds (the first once the piece has lasted that
    long) and one when it finishes, if it printed any or lasted that long; the spinner is not
    shown. Off a terminal too, while a `status` is on, its `heartbeat` prints a timestamped line
    naming the status whenever nothing was printed for a few seconds (`pipelines.cli.ticker`):
    the one given (a command's, counting its lines from its start), else its own.
    `clock` and `stamp` are the monotonic clock and the UTC timestamp (tests fake them).
    """

    def __init__(
        self,
        console: Console | None = None,
        every: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        stamp: Callable[[], str] = utc_stamp,
        heartbeat: Heartbeat | None = None,
    ) -> None:
        self.console = console or err_console
        self.every = every_seconds() if every is None else every
        self.clock = clock
        self.stamp = stamp
        self.terminal = self.console.is_terminal
        self._lock = threading.Lock()
        self._pieces: dict[tuple[str, str], Piece] = {}
        self._status: str | None = None
        self._figures = 0
        """The widest figures of the live rows so far (`_table`; 0 once no row is left)."""
        self._spinner = Spinner("dots")
        """One spinner for the display's life: its frame follows the time since it was made."""
        self._live: Live | None = None
        self._shared: Console | None = None
        """The console given, while the live display writes to its own (`own_terminal`)."""
        self._own_heartbeat = heartbeat is None
        self.heartbeat = plain_heartbeat(self.console) if heartbeat is None else heartbeat

    def __enter__(self) -> ProgressDisplay:
        """Start the live display on a terminal (on a console of its own there, when the
        terminal has a descriptor), the heartbeat elsewhere (when its own)."""
        if self._own_heartbeat:
            self.heartbeat.__enter__()
        if self.terminal and self._live is None:
            own = own_terminal(self.console)
            if own is not None:
                self._shared, self.console = self.console, own
            self._live = Live(
                self,
                console=self.console,
                transient=True,
                refresh_per_second=4,
                redirect_stdout=False,  # stdout is the summary's, never the live display's
            )
            self._live.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Stop and clear the live display (the finished pieces' lines stay), or the heartbeat."""
        live, self._live = self._live, None
        if live is not None:
            live.stop()
        shared, self._shared = self._shared, None
        if shared is not None:
            own, self.console = self.console, shared
            own.file.close()
        if self._own_heartbeat:
            self.heartbeat.__exit__(kind, error, traceback)

    @contextmanager
    def status(self, text: str, plain: Work | None = None) -> Iterator[None]:
        """Show `text` beside a spinner for the block on a terminal (as rich's status); elsewhere
        the heartbeat names `plain` (default `text`: a shorter one keeps its line in 80
        columns, a function gives real progress)."""
        with self._lock:
            before, self._status = self._status, text
        try:
            with self.heartbeat.doing(text if plain is None else plain):
                yield
        finally:
            with self._lock:
                self._status = before

    def __call__(self, progress: Progress) -> None:
        """Take one report (from any thread) and print the line it calls for, if any: in the
        lock off a terminal (the lines of several threads stay in time order), after it on one
        (the live display renders under its own lock, then takes this one)."""
        with self._lock:
            line = self._take(progress, self.clock())
            if line is not None and not self.terminal:
                self.console.print(Text(line), highlight=False, soft_wrap=True)
                self.heartbeat.said()
        if line is not None and self.terminal:
            self.console.print(Text(line), highlight=False, soft_wrap=True)

    def _take(self, progress: Progress, now: float) -> str | None:
        """Record `progress`; the line to print, if any (called with the lock held)."""
        key = (progress.stage, progress.label)
        piece = self._pieces.get(key)
        if piece is None:
            piece = Piece(progress.stage, progress.label, progress.unit, now)
            self._pieces[key] = piece
        piece.update(progress, now)
        width = self.console.width
        if progress.finished:
            del self._pieces[key]  # a later report of the same label is a new piece
            if piece.last_line is None and now - piece.started < self.every:
                return None  # short work: nothing to remember
            head = progress.stage if self.terminal else f"{self.stamp()} {progress.stage}"
            return fit_line(head, piece.label, piece.summary(now), width)
        if self.terminal:
            return None  # the live display shows it
        since = piece.started if piece.last_line is None else piece.last_line
        if now - since < self.every:
            return None
        piece.last_line = now
        return fit_line(f"{self.stamp()} {progress.stage}", piece.label, piece.describe(), width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """The live display: the spinner line, then a row per piece in progress (label, bar,
        where it stands), fitted to the width."""
        with self._lock:
            status = self._status
            rows = [(p.label, p.done, p.total, p.describe()[1:]) for p in self._pieces.values()]
        if status is not None:
            self._spinner.update(text=Text(status))
            yield self._spinner
        if rows:
            yield self._table(rows, options.max_width)
        else:
            self._figures = 0

    def _table(self, rows: list[tuple[str, int, int | None, list[str]]], width: int) -> Table:
        """The pieces' rows in `width` columns: each row's fullest figures that leave its label
        `LABEL_LEAST` characters, then the bar and the label (cut in the middle) share what is
        left; the bar is left out when there is too little."""
        texts = []
        for name, _, _, shapes in rows:
            least = min(cell_len(name), LABEL_LEAST)
            fits = [text for text in shapes if 4 + cell_len(text) + least <= width]
            texts.append(fits[0] if fits else shapes[-1])
        stats = max(cell_len(text) for text in texts)
        # the widest figures shown since the rows appeared, as far as they fit: the labels and
        # bars keep their width while the figures' length wavers (`9.9 MB/s`, `10 MB/s`)
        stats = self._figures = max(stats, min(self._figures, width - 4 - LABEL_LEAST))
        label = max(cell_len(row[0]) for row in rows)
        room = width - 2 - stats - 2  # an indent, then a space after the label and the bar
        bar = min(BAR_WIDTH[1], room - min(label, room - BAR_WIDTH[0] - 1) - 1)
        if bar < BAR_WIDTH[0] or room - bar - 1 < min(label, LABEL_LEAST):
            bar = 0
        label = max(1, min(label, room - (bar + 1 if bar else 0)))
        grid = Table.grid(padding=(0, 1, 0, 0))
        grid.add_column(width=1)  # the indent under the spinner
        grid.add_column(width=label, no_wrap=True)
        if bar:
            grid.add_column(width=bar, no_wrap=True)
        grid.add_column(no_wrap=True, overflow="ellipsis")
        for (name, done, total, _), text in zip(rows, texts, strict=True):
            cells: list[Text | ProgressBar] = [Text(""), Text(shorten_middle(name, label))]
            if bar:
                cells.append(ProgressBar(total=total, completed=done, width=bar))
            cells.append(Text(text))
            grid.add_row(*cells)
        return grid
