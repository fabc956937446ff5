"""`ratings run`: materialize the ingest assets in one run, then the range of periods from the
first whose inputs changed in one more run (each period asset takes the whole range in one step).

Runs embedded (in-process), so nothing needs to be started first, and records its runs in the
lake's own Dagster instance (`<lake>/.dagster`, or DAGSTER_HOME when set), which `ratings ui`
serves: the UI shows the command line's materializations, metadata and check results.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
import polars as pl
from rich.console import Console

from assets.ingest import INGEST_ASSETS, INGEST_CHECKS
from assets.partitions import partition_of_period, register_periods
from assets.resources import PipelinePaths, lake_instance
from assets.systems import FIRST_FAILING_PERIOD
from pipelines.cli.disk import without_dagster_log_failures
from pipelines.cli.errors import (
    USER_FACING,
    UserError,
    debug_enabled,
    explain,
    facts_of_error_info,
    is_internal,
)
from pipelines.cli.output import err_console
from pipelines.cli.prepare import WarmUp, preparing_lines, start_warm_up
from pipelines.cli.progress import ProgressDisplay
from pipelines.cli.ticker import Heartbeat
from pipelines.cli.timings import StepClock
from pipelines.incremental import period_input_digests, periods_to_run, record_run_inputs
from pipelines.jobs import (
    INGEST_JOB,
    PREVIEW_JOB,
    RANGE_JOB,
    job_environment,
    multiprocess_range_job,
    named_job,
    run_tags,
)
from pipelines.registry import PERIOD_ASSETS, SYSTEM_OF_RATINGS, SYSTEMS
from rating_core import tables
from rating_core.budget import MemoryBudget, players_refusal
from rating_core.lake import publishing as publish
from rating_core.lake.data_periods import data_periods
from rating_core.lake.lock import LockHolder, hold_lake
from rating_core.lake.run_size import run_size
from rating_core.lake.storage import clean_interrupted_writes, read_table
from rating_core.periods import previous_period
from rating_core.progress import listening
from rating_core.systems.late_results import LateResultsPolicy


@dataclass
class RunOutcome:
    """What a run did: per-file counts, notes, periods and every publishing outcome.

    `published` is what the materializations reported; `versions_before` is the lake's latest
    version of every list-period when the outcome was made (before any period ran), so that
    `on_disk()` can report every version this run published even when a step failed after
    publishing some lists and before reporting them.
    """

    inbox: Path
    lake: Path
    files: pl.DataFrame
    notes: list[str]
    periods: list[str]
    recomputed: list[str]
    published: list[dict] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    versions_before: pl.DataFrame | None = None
    stopped: Exception | None = None
    """The error that stopped the range mid-way (a full disk): the summary says what was
    published before it, then the command line says the error."""

    def __post_init__(self) -> None:
        if self.versions_before is None:
            self.versions_before = publish.current_versions(self.lake)

    @property
    def ok(self) -> bool:
        """True when every step and every blocking check passed."""
        return not self.failures and self.stopped is None

    def on_disk(self) -> list[dict]:
        """Every list version this run published, read from the lake (reported or not), then the
        reported outcomes that published nothing new (status `unchanged`)."""
        before = self.versions_before
        assert before is not None
        now = publish.current_versions(self.lake)
        grown = now.join(
            before.rename({"version": "before"}), on=["list", "period"], how="left"
        ).filter(pl.col("before").is_null() | (pl.col("version") > pl.col("before")))
        rows = []
        for name, period, version, first in grown.iter_rows():
            folder = self.lake / "lists" / name / period
            for number in range((first or 0) + 1, version + 1):
                path = folder / f"v{number}" / publish.MANIFEST_FILE  # complete: it has one
                if not path.is_file():
                    continue
                manifest = json.loads(path.read_text(encoding="utf-8"))
                rows.append(
                    {
                        "list": name,
                        "period": period,
                        "version": number,
                        "status": "published",
                        "row_count": manifest.get("row_count"),
                    }
                )
        reported_new = {(r["list"], r["period"]) for r in rows}
        rows.extend(
            r
            for r in self.published
            if r["status"] != "published" and (r["list"], r["period"]) not in reported_new
        )
        return rows


RunResult = dg.ExecuteInProcessResult | dg.JobExecutionResult
"""What a run of the ingest or of a range returns, in-process or on another executor."""

QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
"""Run config keeping Dagster's own log lines off the terminal (the CLI prints a summary)."""


def _failures(result: RunResult) -> list[str]:
    """One plain sentence per failed step (no class names, see `pipelines.cli.errors`) or failed
    blocking check; with RATINGS_DEBUG=1 each step's traceback goes to stderr as well."""
    return [*_step_failures(result), *_check_failures(result)]


BLOCKED_BY_CHECK = "DagsterAssetCheckFailedError"
"""Class of the error a step fails with after a blocking check of its asset failed: the check's
own sentence says it (`_check_failures`, `_stopped_publication`), not the step's."""


INGEST_STEPS = frozenset(key.path[-1] for asset in INGEST_ASSETS for key in asset.keys)
"""The ingest's steps (`games`, `players`, ...): each reads one kind of inbox file."""


def step_words(step: str | None) -> str:
    """A step as a sentence names it: `games` is "the ingest of the games",
    `site_lists_published` "the publication of the site lists", `site_ratings` "the site
    ratings step" (a step key is Dagster's name, not the user's)."""
    if not step:
        return "a step of the run"
    words = step.replace("_", " ").split()
    if step in INGEST_STEPS:
        return f"the ingest of the {' '.join(words)}"
    if words[-1] == "published" and len(words) > 1:
        return f"the publication of the {' '.join(words[:-1])}"
    return f"the {' '.join(words)} step"


def _step_failures(result: RunResult) -> list[str]:
    """One plain sentence per step that failed with an error (not one stopped by a check): a
    reader's own sentence (it names the file and what is wrong) as it is, a fault of the machine
    (a full disk) after the step it stopped, in words."""
    messages = []
    for event in result.all_events:
        if event.is_step_failure:
            step = step_words(event.step_key)
            error = event.step_failure_data.error
            if error is not None and error.cls_name == BLOCKED_BY_CHECK:
                continue
            if error is None:
                messages.append(f"{step} failed")
                continue
            if debug_enabled():
                print(error.to_string(), file=sys.stderr)
            facts = facts_of_error_info(error)
            sentence = explain(facts, step)
            if is_internal(sentence) or (facts and facts[0].cls_name in USER_FACING):
                messages.append(sentence)
            else:
                messages.append(f"{step} stopped: {sentence}")
    return messages


def _failed_checks(result: RunResult) -> list[dg.AssetCheckEvaluation]:
    """The blocking (ERROR severity) checks that failed in a run."""
    return [
        e
        for e in result.get_asset_check_evaluations()
        if not e.passed and e.severity == dg.AssetCheckSeverity.ERROR
    ]


def _check_failures(result: RunResult) -> list[str]:
    """One sentence per failed blocking check (the ingest checks: no period to name)."""
    return [
        f"check {e.check_name} on {e.asset_key.to_user_string()} failed"
        for e in _failed_checks(result)
    ]


def _published(result: RunResult) -> list[dict]:
    """The lists with nothing new to publish the materializations reported, of a failed run too
    (new versions are read from the lake itself, by `RunOutcome.on_disk`)."""
    rows, seen = [], set()
    for event in result.get_asset_materialization_events():
        metadata = event.materialization.metadata
        unchanged = metadata.get("unchanged")  # a range's outcomes, repeated on each partition
        if isinstance(unchanged, dg.JsonMetadataValue) and isinstance(unchanged.value, list):
            for row in unchanged.value:
                key = (row["list"], row["period"], row["version"], row["status"])
                if key not in seen:
                    seen.add(key)
                    rows.append(row)
    return rows


NOTHING_TO_RATE = "nothing to rate: the inbox holds no games and no matches"
"""The note of a run whose inbox has nothing to rate (an empty inbox, only `players.csv`)."""


def _waiting(lake: Path, holder: LockHolder) -> None:
    """Say, in one line on stderr, that this run waits for the one holding the lake."""
    pid = f" (pid {holder.pid})" if holder.pid is not None else ""
    err_console.print(
        f"ratings: waiting for the run holding lake '{lake}'{pid} to finish",
        highlight=False,
        soft_wrap=True,
    )


def run_pipeline(
    inbox: Path,
    lake: Path,
    console: Console | None = None,
    full: bool = False,
    executor: str = "in_process",
    warm_up: WarmUp | None = None,
    clock: StepClock | None = None,
    memory: int | None = None,
    late_results: LateResultsPolicy | None = None,
    heartbeat: Heartbeat | None = None,
) -> RunOutcome:
    """Ingest, then rate and publish in period order from the first period whose inputs changed
    (every period with `full`); a blocking failure stops the run. `executor` runs the range
    in-process (default) or on Dagster's multiprocess executor (`pipelines.jobs`). `warm_up`: a
    warm-up process the caller started (`pipelines.cli.prepare.start_warm_up`) before importing
    this module; without one, the run starts it when a first run needs one. `clock`, when
    given, gets a lap at the end of each step (`ratings run --timings`). `memory`: the run's
    budget in bytes (`--memory`). `late_results`: each list family's late-results policy
    (`ratings.toml`'s `[late_results]`; None: the defaults, RULES §3.4). `heartbeat`: the
    command's (`pipelines.cli.ticker`), which off a terminal names each step of the run in a
    line whenever nothing was printed for a few seconds; without one, the run's display has its
    own.

    The run holds the lake's lock throughout (a second run on the lake waits, saying so), and
    first removes what a killed run left half-written.
    """
    command = shlex.join(["ratings", *sys.argv[1:]])
    clock = clock or StepClock()
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(without_dagster_log_failures())
            stack.enter_context(
                hold_lake(lake, command, on_wait=lambda holder: _waiting(lake, holder))
            )
            with heartbeat.doing("opening the lake") if heartbeat else contextlib.nullcontext():
                clean_interrupted_writes(lake)
                instance = stack.enter_context(lake_instance(lake))
            clock.lap("lake lock, Dagster instance")
            return _run_holding_lock(
                inbox,
                lake,
                instance,
                console,
                full,
                executor,
                warm_up,
                clock,
                memory,
                late_results=late_results,
                heartbeat=heartbeat,
            )
    finally:
        if warm_up is not None:
            warm_up.stop()


def _run_holding_lock(
    inbox: Path,
    lake: Path,
    instance: dg.DagsterInstance,
    console: Console | None = None,
    full: bool = False,
    executor: str = "in_process",
    warm_up: WarmUp | None = None,
    clock: StepClock | None = None,
    memory: int | None = None,
    command: str = "run",
    late_results: LateResultsPolicy | None = None,
    heartbeat: Heartbeat | None = None,
) -> RunOutcome:
    """`run_pipeline`'s work, once the lake's lock is held, recorded in `instance` as runs of
    the jobs `ingest` and `rate_and_publish` (both `preview` for `command` preview), tagged with
    the command, the lake and the inbox; `heartbeat` as in `run_pipeline`."""
    console = console or Console()
    if warm_up is None:  # else the caller started it and said so (`ratings run`)
        for line in preparing_lines(inbox):  # numba compiles on a first run: never sit silent
            console.print(line, highlight=False)
        warm_up = start_warm_up(inbox)
    try:
        # on stderr: the spinner and long work's progress, or off a terminal plain lines
        with ProgressDisplay(heartbeat=heartbeat) as display:
            return _rate_and_publish(
                inbox,
                lake,
                instance,
                display,
                full,
                executor,
                warm_up,
                clock or StepClock(),
                MemoryBudget.for_run(memory),
                command,
                late_results,
            )
    finally:
        if warm_up is not None:
            warm_up.stop()


def _check_players_fit(lake: Path, budget: MemoryBudget) -> None:
    """Refuse, before rating, a lake whose players and games would not fit the budget beside
    what every run holds; the players are those the summary counts as seen. (The ingest
    refuses as soon as a file's players so far cannot fit: `ingest_store`.)"""
    if budget.total is None:
        return
    players, games = run_size(lake)
    if not budget.fits(players, games):
        counted = f"the lake's {players:,} players and {games:,} games need"
        raise UserError(players_refusal(counted, players, games, budget.total, least=False))


def _rate_and_publish(
    inbox: Path,
    lake: Path,
    instance: dg.DagsterInstance,
    display: ProgressDisplay,
    full: bool,
    executor: str,
    warm_up: WarmUp | None,
    clock: StepClock,
    budget: MemoryBudget,
    command: str = "run",
    late_results: LateResultsPolicy | None = None,
) -> RunOutcome:
    """Ingest, then rate and publish the range (after the warm-up processes, when some compile
    kernels beside this run: the ingest already calls the scanner, the id coder and the site
    classification). `display` shows what is being done and, from both runs, the progress
    `rating_core.progress` reports (rating progress only from steps run in this process)."""
    paths = PipelinePaths(
        inbox=str(inbox),
        lake=str(lake),
        memory=budget.total or 0,
        late_results=late_results.as_json() if late_results is not None else "",
    )
    resources = {"paths": paths}
    if warm_up is not None:  # off a terminal the heartbeat counts the kernels compiled so far
        with display.status("preparing the kernels", plain=warm_up.progress):
            warm_up.finish()
        clock.lap("kernels compiling")
    tags = run_tags(command, str(inbox.resolve()), str(lake.resolve()))
    preview = command == PREVIEW_JOB
    ingest_job = named_job(
        PREVIEW_JOB if preview else INGEST_JOB, [*INGEST_ASSETS, *INGEST_CHECKS], resources
    )
    with display.status("ingesting the inbox"), listening(display):
        ingest = ingest_job.execute_in_process(
            run_config=QUIET, instance=instance, tags=tags, raise_on_error=False
        )
    clock.lap("ingest run")
    failures = _failures(ingest)
    if failures and not ingest.success:
        raise UserError(failures[0])
    with display.status("choosing the periods to rate"):
        _check_players_fit(lake, budget)
        files = read_table(lake, tables.INGEST_SUMMARY).collect()
        notes_frame = read_table(lake, tables.INGEST_NOTES).collect()
        notes = notes_frame.get_column("note").to_list() if notes_frame.height else []
        periods = data_periods(lake)
        register_periods(instance, periods)  # the partitions end at the last period with data
        digests = period_input_digests(lake, periods)
        to_run = periods if full else periods_to_run(lake, periods, digests)
        if not periods:
            notes.append(NOTHING_TO_RATE)
        outcome = RunOutcome(inbox, lake, files, notes, periods, to_run, failures=failures)
    clock.lap("choosing the periods")
    if not to_run:
        return outcome
    name = PREVIEW_JOB if preview else RANGE_JOB
    launch = _RangeLauncher(name, tags, resources, instance, executor, systems(lake))
    try:
        _publish_range(outcome, launch, display, to_run)
    except Exception as error:  # the machine failed mid-range (a full disk): the summary says
        outcome.stopped = error  # what was published before it, then the command line the error
    if outcome.ok:
        record_run_inputs(lake, digests)
    clock.lap("rating and publishing run")
    return outcome


def _publish_range(
    outcome: RunOutcome, launch: _RangeLauncher, display: ProgressDisplay, to_run: list[str]
) -> None:
    """Rate and publish the periods `to_run`, adding what was published and every failure to
    `outcome`; a system whose blocking check failed publishes up to the period before."""
    first, last = to_run[0], to_run[-1]
    span = first if first == last else f"{first} to {last} ({len(to_run)} periods)"
    plain = f"rating and publishing {first}" + ("" if first == last else f" to {last}")
    with display.status(f"rating and publishing {span}", plain=plain), listening(display):
        result = launch(first, last)
        outcome.published.extend(_published(result))
        outcome.failures.extend(_step_failures(result))
        for system, (period, checks) in _stopped_publication(result).items():
            spec = SYSTEM_OF_RATINGS[system]
            names = ", ".join(checks)
            if period == first:
                outcome.failures.append(
                    f"{spec.name} lists not published from {period} on: "
                    f"check {names} failed in {period}"
                )
                continue
            # the checks passed up to P-1: publish those periods, and only those
            upto = previous_period(period)
            again = launch(first, upto, selection=[spec.published_key])
            outcome.published.extend(_published(again))
            outcome.failures.extend(_step_failures(again))
            outcome.failures.append(
                f"{spec.name} lists published up to {upto} only: check {names} failed in {period}"
            )


def systems(lake: Path) -> list[str] | None:
    """The period assets a range run materializes: those of the systems with something to rate
    (or lists to recompute); None when that is every system. A platform's lake then records no
    empty FIDE, UKD, club or FIBS materialization per period (each is an event-log write)."""
    chosen = [spec for spec in SYSTEMS if spec.to_rate(lake)]
    if not chosen or len(chosen) == len(SYSTEMS):
        return None
    return [key for spec in chosen for key in (spec.ratings_key, spec.published_key)]


RANGE_START = "dagster/asset_partition_range_start"
RANGE_END = "dagster/asset_partition_range_end"
"""Run tags giving the partition range every period asset of the run takes in one step."""


@dataclass
class _RangeLauncher:
    """Launches one run of the period assets over a range of periods, on the chosen executor."""

    job_name: str
    tags: dict[str, str]
    resources: dict
    instance: dg.DagsterInstance
    executor: str = "in_process"
    rated: list[str] | None = None
    """The period assets of the systems to rate (None: every system's)."""

    def __call__(self, first: str, last: str, selection: list[str] | None = None) -> RunResult:
        """One run materializing the periods `first` to `last` (of `selection`, default the
        systems to rate)."""
        tags = {
            **self.tags,
            RANGE_START: partition_of_period(first),
            RANGE_END: partition_of_period(last),
        }
        selection = selection if selection is not None else self.rated
        if self.executor == "in_process":
            job = named_job(self.job_name, PERIOD_ASSETS, self.resources, selection)
            return job.execute_in_process(
                run_config=QUIET, instance=self.instance, tags=tags, raise_on_error=False
            )
        paths = self.resources["paths"]
        inbox, lake = str(paths.inbox_path.resolve()), str(paths.lake_path.resolve())
        keys = [dg.AssetKey.from_user_string(k) for k in selection] if selection else None
        with job_environment(inbox, lake, paths.late_results):
            return dg.execute_job(
                dg.reconstructable(multiprocess_range_job),
                instance=self.instance,
                run_config=QUIET,
                tags=tags,
                asset_selection=keys,
                raise_on_error=False,
            )


def _stopped_publication(result: RunResult) -> dict[str, tuple[str, list[str]]]:
    """Per ratings asset whose blocking check failed: the first failing period and the checks
    failing in it (each check's metadata names its first failing period)."""
    stops: dict[str, tuple[str, list[str]]] = {}
    for evaluation in _failed_checks(result):
        asset = evaluation.asset_key.to_user_string()
        found = evaluation.metadata.get(FIRST_FAILING_PERIOD)
        period = str(found.value) if found is not None else ""
        if asset not in SYSTEM_OF_RATINGS or not period:
            continue
        before = stops.get(asset)
        if before is None or period < before[0]:
            stops[asset] = (period, [evaluation.check_name])
        elif period == before[0]:
            before[1].append(evaluation.check_name)
    return stops
