"""End-to-end benchmark: `ratings run` in a subprocess against baselines timed in the same run.

Usage: `.venv/bin/python benchmarks/end_to_end.py [--scale 0.05] [--only pgn|months|memory|cold]
[--workdir DIR] [--repeat N]` (or `make bench-e2e`). The machines are noisy, so each figure is a
ratio (or a difference) against a baseline measured in the same run (issue 10):

- pgn: 1M Lichess-style games of one month (about 650 MB) through `ratings run`, against a loop
  of python-chess `read_headers` over the same file: baseline time / ours, target >= 5x;
- months: 300k games among 2,000 players spread over 60 months, against the same games in one
  month: ours / one month, target <= 1.3x;
- memory: 300k games among 50,000 players spread over 60 months, a first run and a rerun after
  annulling the first game: the peak memory of each, target <= 1.5 GiB (issue 31 item 4);
- cold: a first run on a fresh clone (tracked files copied, bytecode compiled as `make setup`
  does, numba's cache empty) minus the next run on the same inbox (`data_samples/`), target
  <= 15 s;
- the peak memory (max RSS, from `os.wait4`) of every `ratings run`.

`--scale` multiplies the game counts (0.05: 50k and 15k games; the players stay 50k and 2,000).
Generated files go under `--workdir` (kept, and reused by the next run with the same scale) or a
temporary folder, never into the repository. Each `ratings run` gets a new lake, `DAGSTER_HOME`
and `NUMBA_CACHE_DIR` removed from its environment; before the timed runs one small run warms
numba's cache and the imports.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import polars as pl  # noqa: E402

from rating_core.ingest.pgn_synth import generate_pgn  # noqa: E402
from rating_core.periods import period_of_date, previous_period  # noqa: E402
from rating_core.rounding import round_half_away  # noqa: E402

PGN_GAMES, PGN_PLAYERS = 1_000_000, 50_000
MONTHS_GAMES, MONTHS_PLAYERS, MONTHS = 300_000, 2_000, 60
MEMORY_PLAYERS = 50_000  # the 60-month lake of issue 31's memory bound
MEMORY_TARGET_MIB = 1.5 * 1024
PLIES = (6, 14)  # short bodies: 1M games make about 650 MB, the size the issue measured
COMPILE = ["-m", "compileall", "-q", "rating_core", "assets", "pipelines"]  # if no Makefile line
WIDTHS = (25, 10, 10, 8, 8, 4)  # the table's columns: 75 characters with the gaps

READ_HEADERS = """
import sys
import chess.pgn

games = 0
with open(sys.argv[1], encoding="utf-8") as handle:
    while chess.pgn.read_headers(handle) is not None:
        games += 1
print(games)
"""
"""The baseline: a script that only reads the headers of every game, as the issue timed it."""

PROBE = """
import assets, pipelines, rating_core
import numba.core.config as config  # after the project, which may choose numba's cache folder
print(rating_core.__file__)
print(pipelines.__file__)
print(assets.__file__)
print(config.CACHE_DIR or "")
"""
"""Where a clone's run imports the project from, and numba's cache folder (empty: beside the
sources)."""


class BenchError(Exception):
    """A step of the benchmark could not be done; the message is one sentence."""


@dataclass(frozen=True)
class Measured:
    """One subprocess: wall and CPU seconds, peak resident memory, exit status, load before."""

    label: str
    seconds: float
    cpu_seconds: float
    max_rss_mb: float
    returncode: int
    load: str
    output: str

    def line(self) -> str:
        """One line of details for the log above the table."""
        return (
            f"  {self.label}: {self.seconds:.1f} s wall, {self.cpu_seconds:.1f} s CPU, "
            f"max RSS {self.max_rss_mb:,.0f} MiB (load before: {self.load})"
        )


@dataclass(frozen=True)
class Row:
    """One line of the table: a figure, our value, the baseline's, the ratio and the target."""

    figure: str
    ours: str
    baseline: str
    ratio: str = ""
    target: str = ""
    met: str = ""


def load_average() -> str:
    """The 1, 5 and 15 minute load averages (other work slows both sides of a ratio)."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def measure(
    label: str, command: list[str], *, env: dict[str, str], cwd: Path, log: Path
) -> Measured:
    """Run `command` to completion, its output in `log`; `os.wait4` gives its own peak RSS."""
    load = load_average()
    with log.open("wb") as out:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return Measured(
        label=label,
        seconds=seconds,
        cpu_seconds=usage.ru_utime + usage.ru_stime,
        max_rss_mb=usage.ru_maxrss / 1024,  # KiB on Linux
        returncode=process.returncode,
        load=load,
        output=log.read_text(encoding="utf-8", errors="replace"),
    )


def checked(run: Measured) -> Measured:
    """`run` if it succeeded; else a BenchError with the end of its output."""
    if run.returncode != 0:
        tail = "\n".join(run.output.splitlines()[-15:])
        raise BenchError(
            f"{run.label} exited with status {run.returncode}; its output ends:\n{tail}"
        )
    return run


def run_env(**changes: str) -> dict[str, str]:
    """The environment of a `ratings run`: a lake's own Dagster instance and numba's default
    cache folder (so a user's `DAGSTER_HOME` or `NUMBA_CACHE_DIR` changes nothing), plus
    `changes`."""
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "NUMBA_CACHE_DIR")}
    env.update(changes)
    return env


class Bench:
    """The workdir, the `ratings` command and the runs made so far."""

    def __init__(self, workdir: Path, repeat: int) -> None:
        self.workdir = workdir
        self.repeat = repeat
        self.python = Path(sys.executable)
        self.ratings = self.python.parent / "ratings"
        if not self.ratings.exists():
            raise BenchError(
                f"no 'ratings' command beside {self.python}; run 'make setup' and use .venv/bin/python"
            )
        self.runs: list[Measured] = []
        self.count = 0
        self.kept: list[Measured] = []
        """The runs a figure was made from (their `--timings` tables are printed at the end)."""

    def ratings_run(
        self,
        label: str,
        inbox: Path,
        *,
        env: dict[str, str] | None = None,
        cwd: Path = REPO,
        lake: Path | None = None,
    ) -> Measured:
        """`ratings run --inbox inbox --lake <new lake>` (or `lake`, for a rerun), measured; the
        lakes are removed at the end of the benchmark, not between runs.

        ext4 without a journal (this machine's and CI's root filesystem) avoids reusing an inode
        freed in the last 60 seconds (360 while its inode table block waits to be written), and
        finds them by reading every such free inode ahead of a usable one, for every file or
        folder it creates: removing a 60-month lake (2,700 files and folders) just before the
        next run made that run's own 2,700 creations cost about 2.5 s of system time, 14 % of its
        CPU. A user's run seldom follows such a removal; the benchmark's need not either."""
        self.count += 1
        lake = lake or self.workdir / "lakes" / f"lake-{self.count}"
        lake.parent.mkdir(parents=True, exist_ok=True)
        command = [
            str(self.ratings),
            "run",
            "--inbox",
            str(inbox),
            "--lake",
            str(lake),
            "--timings",
        ]
        log = self.workdir / "logs" / f"{self.count:02d}-{label.replace(' ', '-')}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        run = checked(measure(label, command, env=env or run_env(), cwd=cwd, log=log))
        games = lake_games(lake)
        print(run.line() + (f", {games:,} games in the lake" if games is not None else ""))
        self.runs.append(run)
        return run

    def python_run(self, label: str, args: list[str], *, cwd: Path = REPO) -> Measured:
        """This Python on `args` (a `-c` script), measured like a `ratings run`."""
        self.count += 1
        log = self.workdir / "logs" / f"{self.count:02d}-{label.replace(' ', '-')}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        run = checked(measure(label, [str(self.python), *args], env=run_env(), cwd=cwd, log=log))
        print(run.line())
        return run

    def best(self, runs: Callable[[], tuple[Measured, ...]]) -> tuple[Measured, ...]:
        """`runs` made `repeat` times, interleaved; the fastest of each position is kept."""
        rounds = [runs() for _ in range(self.repeat)]
        return tuple(min(column, key=lambda m: m.seconds) for column in zip(*rounds, strict=True))

    def keep(self, *runs: Measured) -> None:
        """Remember the runs a figure is made from, for their step tables."""
        self.kept.extend(run for run in runs if step_table(run.output))


def step_table(output: str) -> str:
    """The `--timings` table a `ratings run` printed last ("" when there is none)."""
    start = output.rfind("Timings (")
    if start < 0:
        return ""
    lines = output[start:].splitlines()
    end = next((n for n, line in enumerate(lines) if line.startswith("└")), len(lines) - 1)
    return "\n".join(lines[: end + 1])


def lake_games(lake: Path) -> int | None:
    """How many games the run wrote into the lake's games table (None when it has none)."""
    files = list((lake / "games").rglob("*.parquet"))
    if not files:
        return None
    return pl.scan_parquet(files).select(pl.len()).collect().item()


def months_back(last: str, count: int) -> str:
    """The first of `count` periods ending with `last`."""
    first = last
    for _ in range(count - 1):
        first = previous_period(first)
    return first


def inbox_with(
    workdir: Path, kind: str, games: int, *, seed: int, players: int, months: int, last: str
) -> tuple[Path, Path]:
    """An inbox (DESIGN §2: the PGN under `platform/`) holding `games` generated games among
    `players`, spread over `months` months ending with `last`. The folder is named after every
    parameter, so a file generated by an earlier run with the same ones is reused."""
    first = months_back(last, months)
    name = f"{kind}-{games}g-{players}p-{first}+{months}m-s{seed}-{PLIES[0]}to{PLIES[1]}plies"
    inbox = workdir / "inboxes" / name
    path = inbox / "platform" / "lichess.pgn"
    took = None
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")  # a run interrupted while writing leaves no .pgn
        start = time.perf_counter()
        generate_pgn(
            partial, games, seed=seed, n_players=players, n_months=months, first_month=first,
            min_plies=PLIES[0], max_plies=PLIES[1],
        )  # fmt: skip
        partial.rename(path)
        took = time.perf_counter() - start
    size = path.stat().st_size / 1e6
    how = f"generated in {took:.0f} s" if took is not None else "reused"
    spread = f"{months} month{'s' if months > 1 else ''} from {first}"
    print(f"{kind}: {games:,} games, {players:,} players, {spread}, "
          f"{size:,.0f} MB ({how})")  # fmt: skip
    return inbox, path


def scaled(count: int, scale: float) -> int:
    """`count` times `scale`, rounded half away from zero, at least 100."""
    return max(100, int(round_half_away(count * scale)))


def fmt_s(seconds: float) -> str:
    return f"{seconds:,.1f} s"


def fmt_mb(mb: float) -> str:
    return f"{mb:,.0f} MiB"


def warm_up(bench: Bench, last: str) -> None:
    """One small run shaped like the measured ones, so numba's cache and the imports are warm."""
    # 30k games: past the scanner's 16 MB threshold, so its multi-chunk path is compiled too
    inbox, _ = inbox_with(
        bench.workdir, "warm-up", 30_000, seed=5, players=300, months=3, last=last
    )
    bench.ratings_run("warm-up run", inbox)


def bench_pgn(bench: Bench, scale: float, last: str) -> list[Row]:
    """`ratings run` on one month of Lichess-style games against python-chess `read_headers`."""
    games = scaled(PGN_GAMES, scale)
    inbox, path = inbox_with(
        bench.workdir, "pgn", games, seed=1, players=PGN_PLAYERS, months=1, last=last
    )
    ours, base = bench.best(
        lambda: (
            bench.ratings_run("ratings run, 1 month", inbox),
            bench.python_run("read_headers", ["-c", READ_HEADERS, str(path)]),
        )
    )
    read = int(base.output.split()[-1])
    if read != games:
        raise BenchError(f"read_headers read {read:,} games of {games:,}")
    bench.keep(ours)
    return figure_rows(f"{games:,} games, 1 month", ours, base, FASTER)


def bench_months(bench: Bench, scale: float, last: str) -> list[Row]:
    """The same games spread over 60 months against all of them in one month."""
    games = scaled(MONTHS_GAMES, scale)
    spread, _ = inbox_with(
        bench.workdir, "months", games, seed=2, players=MONTHS_PLAYERS, months=MONTHS, last=last
    )
    one, _ = inbox_with(
        bench.workdir, "months", games, seed=2, players=MONTHS_PLAYERS, months=1, last=last
    )
    ours, base = bench.best(
        lambda: (
            bench.ratings_run(f"ratings run, {MONTHS} months", spread),
            bench.ratings_run("ratings run, 1 month", one),
        )
    )
    bench.keep(ours, base)
    return figure_rows(f"{games:,} games, {MONTHS} months", ours, base, SLOWER)


def first_game(lake: Path) -> tuple[str, datetime]:
    """The id and time of the lake's first game (the earliest, ties broken by id)."""
    files = list((lake / "games").rglob("*.parquet"))
    if not files:
        raise BenchError(f"the run wrote no games into {lake}")
    row = (
        pl.scan_parquet(files)
        .select("game_id", "played_at")
        .sort("played_at", "game_id")
        .head(1)
        .collect()
    )
    return row["game_id"][0], row["played_at"][0]


def annul(inbox: Path, game_id: str, played_at: datetime, benchmark: str) -> Path:
    """`platform/moderation/<benchmark>.csv` with one decision: annul `game_id` (the first
    game), decided 40 days after it was played."""
    path = inbox / "platform" / "moderation" / f"{benchmark}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "game_id,decided_at,decision,reason\n"
        f"{game_id},{played_at + timedelta(days=40):%Y-%m-%dT%H:%M:%SZ},annul,"
        f"{benchmark}: the first game\n"
    )
    return path


def bench_memory(bench: Bench, scale: float, last: str) -> list[Row]:
    """Peak memory of a 60-month lake among 50,000 players: its first run, then a rerun after a
    moderation decision annuls its first game (so every period is rated again)."""
    games = scaled(MONTHS_GAMES, scale)
    inbox, _ = inbox_with(
        bench.workdir, "memory", games, seed=3, players=MEMORY_PLAYERS, months=MONTHS, last=last
    )
    decision = inbox / "platform" / "moderation"
    shutil.rmtree(decision, ignore_errors=True)  # an interrupted benchmark's
    try:
        lake = bench.workdir / "lakes" / "memory"
        first = bench.ratings_run(f"ratings run, {MONTHS} months, 50k players", inbox, lake=lake)
        game_id, played_at = first_game(lake)
        annul(inbox, game_id, played_at, "end-to-end-benchmark")
        rerun = bench.ratings_run("rerun, first game annulled", inbox, lake=lake)
    finally:
        shutil.rmtree(decision, ignore_errors=True)
    bench.keep(first, rerun)
    name = f"{games:,} games, {MONTHS} mo, 50k pl."
    return [
        Row(name, fmt_s(first.seconds), "", "", "", ""),
        memory_row("  max RSS, first run", first),
        Row("  rerun, 1st game annulled", fmt_s(rerun.seconds), "", "", "", ""),
        memory_row("  max RSS, rerun", rerun),
    ]


def memory_row(name: str, run: Measured) -> Row:
    """A peak memory against the 1.5 GiB bound."""
    met = run.max_rss_mb <= MEMORY_TARGET_MIB
    return Row(name, fmt_mb(run.max_rss_mb), "", "", "<= 1.5 GiB", "yes" if met else "no")


def fresh_clone(bench: Bench, number: int) -> tuple[Path, Path]:
    """A copy of the tracked files (a clone without the network), its bytecode compiled as
    `make setup` does, and an empty home folder for its runs' user-level caches."""
    root = bench.workdir / f"clone-{number}"
    shutil.rmtree(root, ignore_errors=True)
    clone, home = root / "repo", root / "home"
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True
    ).stdout.decode()
    names = [name for name in listed.split("\0") if name]
    for name in names:
        source, target = REPO / name, clone / name
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the working tree, not yet committed
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copyfile(source, target)
    home.mkdir(parents=True)
    start = time.perf_counter()
    subprocess.run([str(bench.python), *compile_args()], cwd=clone, check=True)
    print(
        f"clone {clone}: {len(names)} tracked files, bytecode compiled in "
        f"{time.perf_counter() - start:.1f} s"
    )
    return clone, home


def compile_args() -> list[str]:
    """The arguments `make setup` gives Python to compile the project's bytecode (its
    `compileall` line), so that the clone is prepared as the Makefile prepares a checkout."""
    for line in (REPO / "Makefile").read_text().splitlines():
        words = line.split()
        if len(words) > 2 and words[0].endswith("python") and words[1:3] == ["-m", "compileall"]:
            return words[1:]
    return COMPILE


def numba_indexes(*folders: Path) -> list[Path]:
    """numba's cache index files (one per cached kernel) under `folders`."""
    return [index for folder in folders for index in folder.rglob("*.nbi")]


def probe_clone(bench: Bench, clone: Path, env: dict[str, str]) -> list[Path]:
    """Check that a run in `clone` imports the clone's modules and that numba's cache starts empty
    (beside the clone's sources, or in an empty folder); return the folders it would be in."""
    out = subprocess.run(
        [str(bench.python), "-c", PROBE], cwd=clone, env=env, check=True, capture_output=True
    ).stdout.decode()
    *modules, cache_dir = out.splitlines()
    for module in modules:
        if not Path(module).resolve().is_relative_to(clone.resolve()):
            raise BenchError(f"the clone's run imports {module}, not the clone's copy")
    print(f"probe: rating_core imported from {modules[0]}")
    folders = [clone, *([Path(cache_dir)] if cache_dir else [])]
    cached = numba_indexes(*folders)
    if cached:
        raise BenchError(f"numba's cache is not empty for the clone: {cached[0]}")
    print(f"probe: numba cache {cache_dir or 'beside the sources'}, empty")
    return folders


def bench_cold(bench: Bench) -> list[Row]:
    """A fresh clone's first run minus its second (warm) run, both on its `data_samples/`."""
    firsts, warms = [], []
    for number in range(1, bench.repeat + 1):
        clone, home = fresh_clone(bench, number)
        env = run_env(PYTHONPATH=str(clone), HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"))
        cache_folders = [*probe_clone(bench, clone, env), home]
        inbox = clone / "data_samples"
        first = bench.ratings_run("first run, fresh clone", inbox, env=env, cwd=clone)
        warm = bench.ratings_run("warm run, same clone", inbox, env=env, cwd=clone)
        compiled = len(numba_indexes(*cache_folders))
        print(f"  numba cache index files after the runs: {compiled} (none before)")
        if not compiled:
            print(
                "  warning: no numba cache in the clone, its home or NUMBA_CACHE_DIR: was it cold?"
            )
        preparing = [line for line in first.output.splitlines() if line.startswith("preparing")]
        for line in preparing:
            print(f"  first run said: {line}")
        firsts.append(first)
        warms.append(warm)
        if number < bench.repeat:
            shutil.rmtree(clone.parent, ignore_errors=True)
    first = min(firsts, key=lambda m: m.seconds)
    warm = min(warms, key=lambda m: m.seconds)
    bench.keep(first, warm)
    return figure_rows("cold start: first - warm", first, warm, EXTRA)


@dataclass(frozen=True)
class Target:
    """How a figure is made from our seconds and the baseline's, how it is shown, its target."""

    figure: Callable[[float, float], float]
    shown: str  # a format for the figure
    text: str
    met: Callable[[float], bool]


FASTER = Target(lambda ours, base: base / ours, "{:.2f}x", ">= 5x", lambda x: x >= 5)
SLOWER = Target(lambda ours, base: ours / base, "{:.2f}x", "<= 1.3x", lambda x: x <= 1.3)
EXTRA = Target(lambda ours, base: ours - base, "{:+.1f} s", "<= 15 s", lambda x: x <= 15)


def figure_rows(name: str, ours: Measured, base: Measured, target: Target) -> list[Row]:
    """A figure's rows: wall time against its target, CPU time (less sensitive to other work on
    the machine) made into the same figure, and the peak memory of both runs."""
    wall = target.figure(ours.seconds, base.seconds)
    cpu = target.figure(ours.cpu_seconds, base.cpu_seconds)
    return [
        Row(name, fmt_s(ours.seconds), fmt_s(base.seconds), target.shown.format(wall),
            target.text, "yes" if target.met(wall) else "no"),
        Row("  CPU time", fmt_s(ours.cpu_seconds), fmt_s(base.cpu_seconds),
            target.shown.format(cpu)),
        Row("  max RSS", fmt_mb(ours.max_rss_mb), fmt_mb(base.max_rss_mb)),
    ]  # fmt: skip


def table(rows: list[Row]) -> str:
    """The rows as a table of at most 80 columns, numbers right-aligned."""
    head = Row("figure", "ours", "baseline", "ratio", "target", "met?")
    lines = []
    for row in [head, *rows]:
        cells = [row.figure, row.ours, row.baseline, row.ratio, row.target, row.met]
        first, *rest = zip(cells, WIDTHS, strict=True)
        cells = [first[0].ljust(first[1])] + [c.rjust(w) for c, w in rest]
        lines.append("  ".join(cells).rstrip())
    rule = "-" * (sum(WIDTHS) + 2 * (len(WIDTHS) - 1))
    return "\n".join([lines[0], rule, *lines[1:]])


def machine() -> str:
    """Cores, CPU model, memory and Python: what the figures were measured on."""
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = ", " + line.split(":", 1)[1].strip()
                break
    memory = ""
    if hasattr(os, "sysconf") and "SC_PHYS_PAGES" in os.sysconf_names:
        memory = f", {os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') / 2**30:.0f} GiB RAM"
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (
        f"machine: {os.cpu_count()} cores ({usable} usable){model}{memory}; "
        f"Python {platform.python_version()}"
    )


def revision() -> str:
    """The commit measured, `+changes` when the working tree differs from it."""
    try:
        commit = (
            subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, check=True, capture_output=True
            )
            .stdout.decode()
            .strip()
        )
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=REPO).returncode != 0
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + (" +changes" if dirty else "")


def positive(text: str) -> float:
    """`--scale`: a number above 0."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"--scale takes a number above 0, not {text!r}")
    return value


def main(argv: list[str] | None = None) -> int:
    """Measure the chosen figures and print them beside their baselines in one table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=positive, default=1.0, help="multiplies the game counts")
    parser.add_argument(
        "--only", choices=["pgn", "months", "memory", "cold"], help="one figure only"
    )
    parser.add_argument("--workdir", type=Path, help="keep generated files here (reused)")
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs of each side")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat takes a whole number of at least 1, not {args.repeat}")
    python = (
        os.path.relpath(sys.executable)
        if Path(sys.executable).is_relative_to(Path.cwd())
        else sys.executable
    )
    command = shlex.join([python, *(sys.argv if argv is None else ["end_to_end.py", *argv])])
    print(machine())
    print(f"command: {command}  (at {REPO}, commit {revision()})")
    print(f"started {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load average {load_average()}")
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("PYTHONDONTWRITEBYTECODE is set: runs use the bytecode compiled at install")
    last = previous_period(period_of_date(datetime.now(UTC).date()))  # the last whole month
    with tempfile.TemporaryDirectory(prefix="end_to_end-") as tmp:
        workdir = (args.workdir or Path(tmp)).resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        rows: list[Row] = []
        kept: list[Measured] = []
        shutil.rmtree(workdir / "lakes", ignore_errors=True)  # an interrupted benchmark's
        try:
            bench = Bench(workdir, args.repeat)
            if args.only in (None, "pgn", "months", "memory"):
                warm_up(bench, last)
            if args.only in (None, "pgn"):
                rows += bench_pgn(bench, args.scale, last)
            if args.only in (None, "months"):
                rows += bench_months(bench, args.scale, last)
            if args.only in (None, "memory"):
                rows += bench_memory(bench, args.scale, last)
            if args.only in (None, "cold"):
                rows += bench_cold(bench)
            kept = bench.kept
        except BenchError as error:
            print(f"end_to_end: {error}", file=sys.stderr)
            return 1
        finally:
            shutil.rmtree(workdir / "lakes", ignore_errors=True)
            for clone in workdir.glob("clone-*"):
                shutil.rmtree(clone, ignore_errors=True)
    best = f", best of {args.repeat} runs of each" if args.repeat > 1 else ""
    print()
    print(f"`ratings run` in a subprocess, warm caches unless said{best}:")
    print(table(rows))
    print("pgn: baseline python-chess read_headers over the same file, ratio baseline/ours;")
    print("months: baseline the same games in one month, ratio ours/baseline; memory: the peak")
    print("of a 60-month lake's first run and of its rerun after a moderation decision; cold:")
    print("baseline the next run of the fresh clone, ratio the difference; CPU time: user +")
    print("system of the process and its children; max RSS: each process's peak resident memory.")
    for run in kept:  # where each run behind a figure spent its time (`ratings run --timings`)
        print()
        print(f"{run.label}, {run.seconds:.1f} s (the run's own steps):")
        print(step_table(run.output))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
