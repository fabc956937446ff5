"""One factory for the period assets of every rating system (issue 10 items 1 and 5).

`system_assets(spec)` builds, from a small `SystemSpec`, the `<system>_ratings` asset (its
blocking checks declared with it), the `<system>_lists_published` asset and nothing else. Both
take a range of monthly partitions in one step (`BackfillPolicy.single_run()`): the ratings asset
reads the state before the range's first period once and calls the system's rating_core range
function, which yields each period's `PeriodOutput` as it completes (and sends a platform's
per-game tables batch by batch to a sink). Each period's tables are staged as they come and its
checks evaluated, only its states kept for the next; the range's files become visible together
at the end. A failing check reports the first failing period in its metadata; Dagster then skips
the publishing asset, and `ratings run` publishes the periods before it (`pipelines.cli.run`).
The publishing asset publishes a few periods at a time, in order, within the run's budget.
"""

import contextlib
import functools
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl

from assets.partitions import partition_of_period, period_of_partition, periods_partitions
from assets.period_io import (
    CODE_VERSION,
    INPUT_DIGEST,
    frame_metadata,
    publish_releases,
    range_releases,
)
from assets.resources import PipelinePaths
from rating_core import tables
from rating_core.budget import MemoryBudget
from rating_core.lake.digests import digest_frames, digest_parts, period_input_digests
from rating_core.lake.publishing import drop_empty_staging
from rating_core.lake.storage import (
    StagedParts,
    read_state_before,
    read_table,
    restored_rows,
    stored_rows,
    table_partitions,
)
from rating_core.names import NAMES_SCHEMA, attach_names
from rating_core.periods import period_range
from rating_core.progress import Progress, report
from rating_core.systems.contract import (
    LIST_COLUMN,
    PeriodOutput,
    RangeOutputs,
    RowSink,
    present,
)
from rating_core.systems.late_results import LateResultsPolicy

INPUT_DIGEST_METADATA = "input_digest"
"""Metadata key of each partition's materialization: the digest of that period's inputs (its
manifests' `input_digest`). Dagster gives every partition of a one-step range the same data
version, the digest over the range's periods."""

FIRST_FAILING_PERIOD = "first_failing_period"
"""Metadata key of a check result: the first period of the range whose output fails the check."""

WRITERS = 4
"""Threads publishing a range's periods' lists side by side: most of that time is Parquet
encoding (Polars releases the GIL) and waiting for fsync."""

RangeInputs = Mapping[str, Any]
"""What a system's `load` read from the lake for a range (games, registry, the state before)."""


def games_from(source: str) -> Callable[[Path], bool]:
    """Whether the lake's games table holds a game of `source` (platform, federation, club)."""

    def present(lake: Path) -> bool:
        games = read_table(lake, tables.GAMES, schema={"source": pl.String})
        return games.filter(pl.col("source") == source).select(pl.len()).collect().item() > 0

    return present


@dataclass(frozen=True)
class CheckInput:
    """What a check sees of one period: its output, the states it started from, the range's
    inputs, and `table(name)`: a streamed table's rows for the period as staged."""

    period: str
    output: PeriodOutput
    before: Mapping[str, pl.DataFrame | None]
    inputs: RangeInputs
    table: Callable[[str], pl.LazyFrame] = lambda name: pl.LazyFrame()


@dataclass(frozen=True)
class PeriodCheck:
    """A blocking check on each period's output: `bad_rows` counts the rows breaking a rule."""

    name: str
    description: str
    metric: str
    bad_rows: Callable[[CheckInput], int]


@dataclass(frozen=True)
class Publishing:
    """How one range of a system's lists is published: the reason and causes of each period's
    versions, and what to record once the range is published."""

    reason: Callable[[str], str]
    causes: Callable[[str], pl.DataFrame | None] = lambda period: None
    after: Callable[[list[str]], None] = lambda periods: None


@dataclass(frozen=True)
class SystemSpec:
    """A rating system as the factory needs it.

    `load(lake, periods, budget)` reads the range's inputs (or the sources to stream them from
    within the run's memory `budget`), with
    the state before its first period under `"states"` (the tables of `state_tables`);
    `rate(inputs, periods, sink)` is the rating_core range function, yielding each period's
    output as it completes; `publishing(lake, periods)` how the range's lists are published.
    """

    name: str
    description: str
    deps: Sequence[str]
    state_tables: Sequence[str]
    load: Callable[[Path, list[str], MemoryBudget], RangeInputs]
    rate: Callable[[RangeInputs, list[str], RowSink], RangeOutputs]
    publishing: Callable[[Path, list[str]], Publishing]
    checks: Sequence[PeriodCheck] = ()
    published_name: str = ""
    published_description: str = ""
    metadata: Callable[[dict[str, dict[str, object]]], dict[str, dg.MetadataValue]] = field(
        default=lambda facts: {}
    )
    """The range's metadata from each period's `PeriodOutput.facts`."""
    has_inputs: Callable[[Path], bool] = lambda lake: True
    """Whether the lake holds anything this system rates (its games, matches or starting lists):
    `ratings run` leaves a system without inputs, and without lists from earlier runs, out."""

    def to_rate(self, lake: Path) -> bool:
        """True when a range run must materialize this system: it has inputs, or lists rows
        from an earlier run (whose inputs may have gone: its lists are recomputed)."""
        return self.has_inputs(lake) or bool(table_partitions(lake, tables.list_rows(self.name)))

    after_rating: Callable[[Path], None] = lambda lake: None
    """What to do once the range's tables are written (the federation systems quarantine the
    corrections that did not apply)."""
    for_policy: Callable[[LateResultsPolicy], "SystemSpec"] | None = None
    """The system under a run's late-results policy (RULES §3.4; FIDE's `next_list` places late
    tournaments), None when the policy changes nothing in how it is rated."""

    def under(self, policy: LateResultsPolicy) -> "SystemSpec":
        """This system as the run's late-results `policy` rates and publishes it."""
        return self.for_policy(policy) if self.for_policy is not None else self

    @property
    def ratings_key(self) -> str:
        """`<system>_ratings`."""
        return f"{self.name}_ratings"

    @property
    def published_key(self) -> str:
        """`<system>_lists_published` unless the spec names it otherwise (`fibs_list_published`)."""
        return self.published_name or f"{self.name}_lists_published"


def range_periods(context: dg.AssetExecutionContext) -> list[str]:
    """Every period (YYYY-MM) of the partition range being materialized, in order."""
    window = context.partition_key_range
    return period_range(period_of_partition(window.start), period_of_partition(window.end))


def read_states(lake: Path, names: Sequence[str], period: str) -> dict[str, pl.DataFrame | None]:
    """The states of the tables `names` after the period before `period` (None where there is
    none)."""
    return {table: present(read_state_before(lake, table, period)) for table in names}


def _check_result(
    check: PeriodCheck, failing: dict[str, int], asset_key: str
) -> dg.AssetCheckResult:
    """One check over every period of the range (`failing`: bad rows of each period that had
    any): passed when no period has a bad row."""
    return dg.AssetCheckResult(
        check_name=check.name,
        asset_key=asset_key,
        passed=not failing,
        metadata={
            check.metric: sum(failing.values()),
            FIRST_FAILING_PERIOD: min(failing) if failing else "",
            "failing_periods": dg.MetadataValue.json(dict(sorted(failing.items()))),
        },
    )


def _staged_of(writer: "_RangeWriter", period: str, table: str) -> pl.LazyFrame:
    return writer.staged(table, period)


def _handled(inputs: RangeInputs, facts: dict[str, dict[str, object]]) -> int:
    """The games (or matches) of the range: the frames loaded, or what the periods' facts say
    a streamed engine read (`games`)."""
    loaded = [inputs[k] for k in ("games", "matches") if isinstance(inputs.get(k), pl.DataFrame)]
    streamed = [games for f in facts.values() if isinstance(games := f.get("games"), int)]
    return sum(frame.height for frame in loaded) + sum(streamed)


class _RangeWriter:
    """A range's tables staged period by period (`StagedParts`), made visible together at the
    end: each period's states, explanations and list rows as they come, and the streamed tables'
    batches (the engine's `RowSink`) while the period is rated. A frame's own `period` column is
    kept as `row_period`. A period without rows gets an empty file only where an earlier run
    left one to replace: a system without data writes nothing."""

    def __init__(self, lake: Path) -> None:
        self.lake = lake
        self.stage = StagedParts(lake)
        self.columns: dict[str, pl.DataFrame] = {}  # an empty frame of each table's columns
        # a batch is encoded on this thread while the engine rates the next (Arrow's Parquet
        # writer releases the GIL); one in flight, so memory holds two batches at most
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="ratings-write")
        self._writing: Future[None] | None = None

    def _written(self) -> None:
        """Wait for the batch in flight (its error is raised here)."""
        if self._writing is not None:
            writing, self._writing = self._writing, None
            writing.result()

    def sink(self, table: str, period: str, rows: pl.DataFrame) -> None:
        """The engine's `RowSink`: append a batch to the period's file of `table`."""
        if not rows.width:
            return
        rows = stored_rows(rows)
        self.columns.setdefault(table, rows.clear())
        if rows.height:
            self._written()
            self._writing = self._writer.submit(self.stage.append, table, period, rows)

    def put(self, table: str, period: str, frame: pl.DataFrame) -> None:
        """Stage a period's whole frame of `table`."""
        if not frame.width:
            return
        frame = stored_rows(frame)
        self.columns.setdefault(table, frame.clear())
        if frame.height:
            self._written()
            self.stage.put(table, period, frame)

    def staged(self, table: str, period: str) -> pl.LazyFrame:
        """What was staged for `table` in `period`, as written (an empty frame: nothing)."""
        self._written()
        self.stage.close()
        path = self.stage.staged(table, period)
        if path is None:
            return self.columns.get(table, pl.DataFrame()).lazy()
        return restored_rows(pl.scan_parquet(path))

    def commit(self, periods: list[str]) -> None:
        """Stage the empty files that replace stale ones, then make every file visible."""
        self._written()
        self._writer.shutdown()
        for table, columns in self.columns.items():
            for period in sorted(set(table_partitions(self.lake, table)) & set(periods)):
                if self.stage.staged(table, period) is None:
                    self.stage.put(table, period, columns)
        self.stage.commit()

    def discard(self) -> None:
        """Remove everything staged (the range failed)."""
        with contextlib.suppress(Exception):  # the batch in flight goes with the rest
            self._written()
        self._writer.shutdown()
        self.stage.discard()


def _ratings_asset(spec: SystemSpec) -> dg.AssetsDefinition:
    @dg.asset(
        name=spec.ratings_key,
        group_name="ratings",
        code_version=CODE_VERSION,
        partitions_def=periods_partitions,
        backfill_policy=dg.BackfillPolicy.single_run(),
        # a period's lists start from the state after the period before (read from the lake);
        # Dagster allows that self-dependency only on time partitions, not on these dynamic ones
        deps=spec.deps,
        check_specs=[
            dg.AssetCheckSpec(
                c.name, asset=spec.ratings_key, description=c.description, blocking=True
            )
            for c in spec.checks
        ],
        description=spec.description,
    )
    def ratings(context: dg.AssetExecutionContext, paths: PipelinePaths) -> dg.MaterializeResult:
        lake, periods = paths.lake_path, range_periods(context)
        run = spec.under(paths.late_results_policy)
        # progress (`ratings run` shows it): the range starts, rating_core reports each period
        # rated, and the step is finished once its tables are written and checked
        report(Progress("rating", spec.name, 0, len(periods), "periods"))
        inputs = run.load(lake, periods, paths.rating_budget())
        files = dict(period_input_digests(lake, periods, CODE_VERSION).iter_rows())
        names = read_table(lake, tables.PLAYER_NAMES).collect()
        if not names.columns:
            names = pl.DataFrame(schema=NAMES_SCHEMA)
        writer = _RangeWriter(lake)
        before: dict[str, pl.DataFrame | None] = dict(inputs["states"])
        digests: dict[str, str] = {}
        row_counts: dict[str, int] = {}
        facts: dict[str, dict[str, object]] = {}
        failing: dict[str, dict[str, int]] = {c.name: {} for c in spec.checks}
        columns = pl.DataFrame()

        def stage(period: str, output: PeriodOutput) -> None:
            """Stage a period's tables (its large tables were staged while it was rated), name
            its list rows, evaluate its checks, and keep its states as `before`: a function of
            its own, so that nothing else of the period outlives it."""
            nonlocal before, columns
            for table, frame in {**output.states, **output.explanations}.items():
                writer.put(table, period, frame)
            digests[period] = digest_parts(
                [files[period], digest_frames(*(before[t] for t in spec.state_tables))]
            )
            rows = output.list_rows
            if rows.height:
                with_digest = rows.with_columns(pl.lit(digests[period]).alias(INPUT_DIGEST))
                rows = attach_names(with_digest, names)
                columns = columns if columns.width else rows.clear()
            writer.put(tables.list_rows(spec.name).name, period, rows)
            row_counts[period], facts[period] = rows.height, output.facts
            staged = functools.partial(_staged_of, writer, period)
            check_input = CheckInput(period, output, before, inputs, staged)
            for check in spec.checks:
                if bad := check.bad_rows(check_input):
                    failing[check.name][period] = bad
            before = {t: present(output.states.get(t)) for t in spec.state_tables}

        try:
            # one period at a time: its tables staged, its list rows named and its checks
            # evaluated, then only its states are kept while the next period is rated
            for period, output in run.rate(inputs, periods, writer.sink):
                stage(period, output)
                del output
            writer.commit(periods)
        except BaseException:
            writer.discard()
            raise
        run.after_rating(lake)
        handled = _handled(inputs, facts)
        report(Progress("rating", spec.name, len(periods), len(periods), "periods", handled, True))
        checks = [_check_result(c, failing[c.name], spec.ratings_key) for c in spec.checks]
        for period in periods:  # each partition's own figures (the data version is the range's)
            own: dict[str, Any] = {
                INPUT_DIGEST_METADATA: digests[period],
                "dagster/row_count": row_counts[period],
            }
            # the columns of the rows written, on the range's last partition only: the metadata
            # of a range is stored once per partition, and this was half of it
            if period == periods[-1]:
                own["dagster/column_schema"] = frame_metadata(columns)["dagster/column_schema"]
            context.add_asset_metadata(own, partition_key=partition_of_period(period))
        return dg.MaterializeResult(
            data_version=dg.DataVersion(digest_parts(digests.values())),
            metadata={
                "periods": dg.MetadataValue.text(f"{periods[0]} to {periods[-1]}"),
                **spec.metadata(facts),
            },
            check_results=checks,
        )

    return ratings


def _period_chunks(periods: list[str], rows: Mapping[str, int], most: int) -> list[list[str]]:
    """`periods` in order, cut into runs of consecutive periods of at most `most` list rows
    together (a period with more is a run of its own): what publishing holds at a time."""
    chunks: list[list[str]] = []
    held = 0
    for period in periods:
        if not chunks or held + rows[period] > most:
            chunks.append([])
            held = 0
        chunks[-1].append(period)
        held += rows[period]
    return chunks


def _published_asset(spec: SystemSpec) -> dg.AssetsDefinition:
    @dg.asset(
        name=spec.published_key,
        group_name="publish",
        code_version=CODE_VERSION,
        partitions_def=periods_partitions,
        backfill_policy=dg.BackfillPolicy.single_run(),
        deps=[spec.ratings_key],
        description=spec.published_description
        or f"Publish the {spec.name} lists of the period (new versions only on change).",
    )
    def publish(context: dg.AssetExecutionContext, paths: PipelinePaths) -> dg.MaterializeResult:
        lake, periods = paths.lake_path, range_periods(context)
        table = tables.list_rows(spec.name).name
        scan = read_table(lake, table, periods)
        counts: dict[str, int] = {}
        if "period" in scan.collect_schema():
            counted = scan.group_by("period").len().collect(engine="streaming")
            counts = {str(period): int(n) for period, n in counted.iter_rows()}
        policy = paths.late_results_policy
        how = spec.under(policy).publishing(lake, periods)
        mine = [period for period in periods if counts.get(period)]
        outcomes: list[dict] = []
        lists: set[str] = set()
        try:  # a few periods at a time, in period order (a killed run has published a prefix
            # of the range): each batch staged side by side, renamed in period order
            with ThreadPoolExecutor(max_workers=WRITERS) as pool:
                most = paths.rating_budget().list_rows
                for chunk in _period_chunks(mine, counts, most):
                    rows = read_table(lake, table, chunk).collect()
                    lists |= {str(name) for name in rows.get_column(LIST_COLUMN).unique()}
                    releases = range_releases(
                        rows,
                        {period: how.reason(period) for period in chunk},
                        {period: how.causes(period) for period in chunk},
                        late_results=policy,
                    )
                    del rows
                    outcomes += publish_releases(lake, releases, pool)
        finally:  # only this system's lists: another system may be staging beside it
            drop_empty_staging(lake, lists)
        how.after(periods)
        digests = None
        if counts:  # the range's input digests, read alone
            digests = scan.select(pl.col(f"^{INPUT_DIGEST}$").unique().sort()).collect()
        new_versions = [o for o in outcomes if o["status"] == "published"]
        return dg.MaterializeResult(
            data_version=dg.DataVersion(digest_frames(digests)),
            metadata={
                # the new versions are in the lake (`ratings run` reads them there); the metadata
                # of a range repeats on each of its partitions, so it stays small: counts, and
                # the lists that had nothing new to publish
                "unchanged": dg.MetadataValue.json(
                    [o for o in outcomes if o["status"] != "published"]
                ),
                "new_versions": dg.MetadataValue.int(len(new_versions)),
                "lists": dg.MetadataValue.int(len({o["list"] for o in outcomes})),
                "dagster/row_count": dg.MetadataValue.int(sum(counts.values())),
            },
        )

    return publish


def system_assets(spec: SystemSpec) -> tuple[dg.AssetsDefinition, dg.AssetsDefinition]:
    """The ratings asset (with its blocking checks) and the publishing asset of one system."""
    with warnings.catch_warnings():  # BackfillPolicy is marked beta in this Dagster version
        warnings.simplefilter("ignore", dg.BetaWarning)
        return _ratings_asset(spec), _published_asset(spec)
