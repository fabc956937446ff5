"""One factory for the period assets of every rating system (issue 10 items 1 and 5).

`system_assets(spec)` builds, from a small `SystemSpec`, the `<system>_ratings` asset (its
blocking checks declared with it), the `<system>_lists_published` asset and nothing else. Both
take a range of monthly partitions in one step (`BackfillPolicy.single_run()`): the ratings asset
reads the state before the range's first period once, calls the system's rating_core range
function (every period in order, in memory, `PeriodOutput` per period), writes each lake table
once for the whole range and evaluates the checks on every period's output frames. A failing
check reports the first failing period in its metadata; Dagster then skips the publishing asset,
and `ratings run` publishes the periods before it (`pipelines.runner`).
"""

import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl

from assets.partitions import (
    monthly_periods,
    partition_of_period,
    period_of_partition,
    previous_period,
)
from assets.period_io import (
    CODE_VERSION,
    INPUT_DIGEST,
    ROW_PERIOD,
    frame_metadata,
    publish_releases,
    range_releases,
    read_state_before,
    with_names,
)
from assets.resources import PipelinePaths
from rating_core.lake.digests import digest_frames, digest_parts, period_input_digests
from rating_core.lake.publishing import drop_empty_staging
from rating_core.lake.storage import read_table, table_partitions, write_partitions
from rating_core.periods import period_range
from rating_core.progress import Progress, report
from rating_core.systems.contract import PeriodOutput, present

INPUT_DIGEST_METADATA = "input_digest"
"""Metadata key of each partition's materialization: the digest of that period's inputs (its
manifests' `input_digest`). Dagster gives every partition of a one-step range the same data
version, the digest over the range's periods."""

FIRST_FAILING_PERIOD = "first_failing_period"
"""Metadata key of a check result: the first period of the range whose output fails the check."""

WRITERS = 4
"""Threads writing a range's tables, and publishing its periods' lists, side by side: most of
that time is Parquet encoding (Polars releases the GIL) and waiting for fsync."""

RangeInputs = Mapping[str, Any]
"""What a system's `load` read from the lake for a range (games, registry, the state before)."""


def games_from(source: str) -> Callable[[Path], bool]:
    """Whether the lake's games table holds a game of `source` (platform, federation, club)."""

    def present(lake: Path) -> bool:
        games = read_table(lake, "games", schema={"source": pl.String})
        return games.filter(pl.col("source") == source).select(pl.len()).collect().item() > 0

    return present


@dataclass(frozen=True)
class CheckInput:
    """What a check sees of one period: its output, the states it started from, the range's
    inputs."""

    period: str
    output: PeriodOutput
    before: Mapping[str, pl.DataFrame | None]
    inputs: RangeInputs


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

    `load(lake, periods)` reads the range's inputs, with the state before its first period under
    `"states"` (the tables of `state_tables`); `rate(inputs, periods)` is the rating_core range
    function; `publishing(lake, periods)` how the range's lists are published.
    """

    name: str
    description: str
    deps: Sequence[str]
    state_tables: Sequence[str]
    load: Callable[[Path, list[str]], RangeInputs]
    rate: Callable[[RangeInputs, list[str]], dict[str, PeriodOutput]]
    publishing: Callable[[Path, list[str]], Publishing]
    checks: Sequence[PeriodCheck] = ()
    published_name: str = ""
    published_description: str = ""
    metadata: Callable[[dict[str, PeriodOutput]], dict[str, dg.MetadataValue]] = field(
        default=lambda outputs: {}
    )
    has_inputs: Callable[[Path], bool] = lambda lake: True
    """Whether the lake holds anything this system rates (its games, matches or starting lists):
    `ratings run` leaves a system without inputs, and without lists from earlier runs, out."""

    def to_rate(self, lake: Path) -> bool:
        """True when a range run must materialize this system: it has inputs, or lists rows
        from an earlier run (whose inputs may have gone: its lists are recomputed)."""
        return self.has_inputs(lake) or bool(table_partitions(lake, f"list_rows/{self.name}"))

    after_rating: Callable[[Path], None] = lambda lake: None
    """What to do once the range's tables are written (the federation systems quarantine the
    corrections that did not apply)."""

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


def read_states(lake: Path, tables: Sequence[str], period: str) -> dict[str, pl.DataFrame | None]:
    """The states of `tables` after the period before `period` (None where there is none)."""
    return {table: present(read_state_before(lake, table, period)) for table in tables}


def _states_before(
    spec: SystemSpec, inputs: RangeInputs, outputs: dict[str, PeriodOutput], periods: list[str]
) -> dict[str, dict[str, pl.DataFrame | None]]:
    """For each period, the states it started from: the range's starting states for the first,
    the previous period's output for the others."""
    before = {periods[0]: dict(inputs["states"])}
    for previous, period in zip(periods, periods[1:], strict=False):
        states = outputs[previous].states
        before[period] = {table: present(states.get(table)) for table in spec.state_tables}
    return before


def _write_range(lake: Path, table: str, frames: dict[str, pl.DataFrame], periods: list[str]):
    """Replace the range's partitions of `table` in one write; a frame's own `period` column is
    kept as `row_period`."""
    present_frames = {}
    for period, frame in frames.items():
        if frame.width:
            renamed = "period" in frame.columns
            present_frames[period] = frame.rename({"period": ROW_PERIOD}) if renamed else frame
    # a period without rows gets an empty file only where an earlier run left one to replace:
    # a system without data writes nothing, rather than an empty file per period and table
    # (an empty state and no state start a period alike: `present`)
    written = {period for period, frame in frames.items() if frame.height}
    stale = set(table_partitions(lake, table)) & set(periods)
    if not present_frames and not stale:
        return
    # one schema for every partition (the frames of a range may differ in null-typed columns):
    # a relaxed concat, then zero-copy slices of it, one per period
    data = (
        pl.concat(list(present_frames.values()), how="diagonal_relaxed")
        if present_frames
        else pl.DataFrame()
    )
    parts, offset = {}, 0
    for period, frame in present_frames.items():
        parts[period] = data.slice(offset, frame.height)
        offset += frame.height
    wanted = written | stale
    write_partitions(
        lake,
        table,
        {p: parts.get(p, data.clear()) for p in sorted(wanted)},
        "period",
    )


def _list_rows(
    lake: Path, outputs: dict[str, PeriodOutput], digests: dict[str, str]
) -> dict[str, pl.DataFrame]:
    """Each period's list rows with the players' names and the period's input digest."""
    rows = {}
    for period, output in outputs.items():
        frame = output.list_rows
        if frame.height:
            frame = frame.with_columns(pl.lit(digests[period]).alias(INPUT_DIGEST))
        rows[period] = frame
    present_rows = [f.with_columns(pl.lit(p).alias("_p")) for p, f in rows.items() if f.height]
    if not present_rows:
        return rows
    named = with_names(lake, pl.concat(present_rows, how="diagonal_relaxed"))
    by_period = named.partition_by("_p", as_dict=True, include_key=False, maintain_order=True)
    return {p: by_period.get((p,), rows[p]) for p in rows}


def _evaluate(
    check: PeriodCheck,
    outputs: dict[str, PeriodOutput],
    before: dict[str, dict[str, pl.DataFrame | None]],
    inputs: RangeInputs,
    asset_key: str,
) -> dg.AssetCheckResult:
    """One check over every period of the range: passed when no period has a bad row."""
    counts = {
        period: check.bad_rows(CheckInput(period, output, before[period], inputs))
        for period, output in outputs.items()
    }
    failing = [period for period, count in counts.items() if count]
    return dg.AssetCheckResult(
        check_name=check.name,
        asset_key=asset_key,
        passed=not failing,
        metadata={
            check.metric: sum(counts.values()),
            FIRST_FAILING_PERIOD: failing[0] if failing else "",
            "failing_periods": dg.MetadataValue.json({p: counts[p] for p in failing}),
        },
    )


def _ratings_asset(spec: SystemSpec) -> dg.AssetsDefinition:
    @dg.asset(
        name=spec.ratings_key,
        group_name="ratings",
        code_version=CODE_VERSION,
        partitions_def=monthly_periods,
        backfill_policy=dg.BackfillPolicy.single_run(),
        deps=[*spec.deps, dg.AssetDep(spec.ratings_key, partition_mapping=previous_period)],
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
        # progress (`ratings run` shows it): the range starts, rating_core reports each period
        # rated, and the step is finished once its tables are written and checked
        report(Progress("rating", spec.name, 0, len(periods), "periods"))
        inputs = spec.load(lake, periods)
        outputs = spec.rate(inputs, periods)
        tables = sorted({t for o in outputs.values() for t in (*o.states, *o.explanations)})
        frames_of = {
            table: {
                p: f
                for p, o in outputs.items()
                if (f := {**o.states, **o.explanations}.get(table)) is not None
            }
            for table in tables
        }
        with ThreadPoolExecutor(max_workers=WRITERS) as pool:  # tables are independent files
            # the states and explanations (the large per-game tables) are written while this
            # thread digests the states and builds the list rows, then evaluates the checks on
            # the frames being written: Polars encodes without the GIL, so both cores work
            writes = [pool.submit(_write_range, lake, t, frames_of[t], periods) for t in tables]
            before = _states_before(spec, inputs, outputs, periods)
            files = period_input_digests(lake, periods, CODE_VERSION)
            digests = {
                period: digest_parts(
                    [file_digest, digest_frames(*(before[period][t] for t in spec.state_tables))]
                )
                for period, file_digest in files.iter_rows()
            }
            rows = _list_rows(lake, outputs, digests)
            writes.append(pool.submit(_write_range, lake, f"list_rows/{spec.name}", rows, periods))
            checks = [_evaluate(c, outputs, before, inputs, spec.ratings_key) for c in spec.checks]
            for write in writes:
                write.result()
        spec.after_rating(lake)
        handled = sum(inputs[key].height for key in ("games", "matches") if key in inputs)
        report(Progress("rating", spec.name, len(periods), len(periods), "periods", handled, True))
        # the columns of the rows written (one schema for the range), on its last partition
        # only: the metadata of a range is stored once per partition, and this was half of it
        empty_rows = [f.clear() for f in rows.values() if f.height]
        columns = pl.concat(empty_rows, how="diagonal_relaxed") if empty_rows else pl.DataFrame()
        for period in periods:  # each partition's own figures (the data version is the range's)
            own: dict[str, Any] = {
                INPUT_DIGEST_METADATA: digests[period],
                "dagster/row_count": rows[period].height,
            }
            if period == periods[-1]:
                own["dagster/column_schema"] = frame_metadata(columns)["dagster/column_schema"]
            context.add_asset_metadata(own, partition_key=partition_of_period(period))
        return dg.MaterializeResult(
            data_version=dg.DataVersion(digest_parts(digests.values())),
            metadata={
                "periods": dg.MetadataValue.text(f"{periods[0]} to {periods[-1]}"),
                **spec.metadata(outputs),
            },
            check_results=checks,
        )

    return ratings


def _published_asset(spec: SystemSpec) -> dg.AssetsDefinition:
    @dg.asset(
        name=spec.published_key,
        group_name="publish",
        code_version=CODE_VERSION,
        partitions_def=monthly_periods,
        backfill_policy=dg.BackfillPolicy.single_run(),
        deps=[spec.ratings_key],
        description=spec.published_description
        or f"Publish the {spec.name} lists of the period (new versions only on change).",
    )
    def publish(context: dg.AssetExecutionContext, paths: PipelinePaths) -> dg.MaterializeResult:
        lake, periods = paths.lake_path, range_periods(context)
        rows = read_table(lake, f"list_rows/{spec.name}", periods).collect()
        how = spec.publishing(lake, periods)
        with_rows = set(rows.get_column("period").unique()) if rows.height else set()
        mine = [period for period in periods if period in with_rows]
        releases = range_releases(
            rows,
            {period: how.reason(period) for period in mine},
            {period: how.causes(period) for period in mine},
        )
        try:  # the whole range in one batch: staged side by side, renamed in period order (a
            # killed run has published a prefix of the range)
            with ThreadPoolExecutor(max_workers=WRITERS) as pool:
                outcomes = publish_releases(lake, releases, pool)
        finally:  # only this system's lists: another system may be staging beside it
            lists = {str(name) for name in rows.get_column("list").unique()} if rows.height else ()
            drop_empty_staging(lake, lists)
        how.after(periods)
        digests = rows.select(pl.col(f"^{INPUT_DIGEST}$").unique().sort()) if rows.height else None
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
                "dagster/row_count": dg.MetadataValue.int(rows.height),
            },
        )

    return publish


def system_assets(spec: SystemSpec) -> tuple[dg.AssetsDefinition, dg.AssetsDefinition]:
    """The ratings asset (with its blocking checks) and the publishing asset of one system."""
    with warnings.catch_warnings():  # BackfillPolicy is marked beta in this Dagster version
        warnings.simplefilter("ignore", dg.BetaWarning)
        return _ratings_asset(spec), _published_asset(spec)
