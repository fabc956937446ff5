"""What every monthly rating asset shares: reading the previous period's state, writing this
period's state, explanations and list rows, and publishing the lists of a period.

Layout in the lake (hive partitions by period):
`state/<system>/period=P/`   the state the next period starts from,
`history/<system>/period=P/` one explanation row per player per game (or per period),
`list_rows/<system>/period=P/` the rows of every list of the system for P (a `list` column).
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Executor
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl

from rating_core import tables
from rating_core.lake.digests import digest_frame
from rating_core.lake.publishing import ListRelease, publish_lists
from rating_core.lake.storage import read_state_before, read_table
from rating_core.names import NAMES_SCHEMA, attach_names
from rating_core.systems.contract import CLUB_FOLDER, LIST_COLUMN, RULES_COLUMN
from rating_core.systems.late_results import FAMILIES, LateResultsPolicy

INPUT_DIGEST = "_input_digest"
"""Column of `list_rows` carrying the digest of the inputs the rows were computed from."""


def input_digest(*frames: pl.DataFrame | None) -> str:
    """One digest over the period's inputs (its games and the state it started from)."""
    return digest_frame(
        pl.DataFrame({"part": [digest_frame(f) if f is not None else "-" for f in frames]})
    )


def code_version() -> str:
    """The installed package version, recorded in every manifest."""
    try:
        return version("rating-lists")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "unknown"


CODE_VERSION = code_version()
"""Every asset's Dagster `code_version`: a new package version makes every asset stale in the
UI, as it changes every period's input digest (`pipelines.incremental`) for `ratings run`."""


def with_names(lake: Path, rows: pl.DataFrame) -> pl.DataFrame:
    """List rows with the players' display names (table `player_names`, written at ingest)."""
    names = read_table(lake, tables.PLAYER_NAMES).collect()
    return attach_names(rows, names if names.columns else pl.DataFrame(schema=NAMES_SCHEMA))


def read_previous_state(lake: Path, system: str, period: str) -> pl.DataFrame | None:
    """The state after P-1 written by this system's asset, or None when P is its first period."""
    return read_state_before(lake, tables.state(system).name, period)


def frame_metadata(frame: pl.DataFrame) -> dict[str, dg.MetadataValue]:
    """Row count and schema of a written frame, for the materialization."""
    return table_metadata(frame.height, frame.schema)


def table_metadata(rows: int, schema: Mapping[str, Any]) -> dict[str, dg.MetadataValue]:
    """Row count and column schema of a table written without being held whole (the games,
    streamed group by group), for the materialization."""
    columns = [dg.TableColumn(name, str(dtype)) for name, dtype in schema.items()]
    return {
        "dagster/row_count": dg.MetadataValue.int(rows),
        "dagster/column_schema": dg.MetadataValue.table_schema(dg.TableSchema(columns=columns)),
    }


def _causes_of(causes: pl.DataFrame | None, list_name: str) -> pl.DataFrame | None:
    """The causes of one list: those of a causes frame with a `list` column name their list (a
    null `list`, a merge's cause beside a correction's, holds on every list)."""
    if causes is None or LIST_COLUMN not in causes.columns:
        return causes
    mine = (pl.col(LIST_COLUMN) == list_name) | pl.col(LIST_COLUMN).is_null()
    return causes.filter(mine).drop(LIST_COLUMN)


def list_releases(
    period: str,
    rows: pl.DataFrame,
    *,
    reason: str,
    causes: pl.DataFrame | None = None,
    value: str = "rating",
) -> list[ListRelease]:
    """One release per list of one period's `list_rows` (a `list` column), in list order."""
    rows = rows.with_columns(pl.lit(period, pl.String).alias("period"))
    return range_releases(rows, {period: reason}, {period: causes}, value=value)


def range_releases(
    rows: pl.DataFrame,
    reasons: Mapping[str, str],
    causes: Mapping[str, pl.DataFrame | None],
    *,
    value: str = "rating",
    late_results: LateResultsPolicy | None = None,
) -> list[ListRelease]:
    """One release per list and period of a range's `list_rows` (`period` and `list` columns),
    in period then list order, split in one pass. Only the periods of `reasons` are released.

    A list's club folder and rules (era) columns are recorded in its manifest (`club_folder`,
    `rules`), not in the list; so is the late-results policy it was rated under (RULES §3.4,
    `late_results`, `LateResultsPolicy.as_manifest`), when given. `causes[period]`
    (player_id, cause) name why a player's value moved; with a `list` column, each list takes
    its own rows.
    """
    if not rows.height or not reasons:  # an empty range may have no columns at all
        return []
    rows = rows.filter(pl.col("period").is_in(list(reasons)))
    keys = [pl.col("period").cast(pl.String), pl.col(LIST_COLUMN).cast(pl.String)]
    # each list's rows together: sliced, not split (the rating step writes them so already)
    ordered = rows if _grouped_in_order(rows, keys) else rows.sort(keys, maintain_order=True)
    known = [c for c in (INPUT_DIGEST, CLUB_FOLDER, RULES_COLUMN) if c in ordered.columns]
    firsts = (
        ordered.select(*keys, *known)
        .with_row_index("_start")
        .unique(subset=["period", LIST_COLUMN], keep="first", maintain_order=True)
    )
    starts = [*firsts.get_column("_start").to_list(), ordered.height]
    content = ordered.drop(["period", LIST_COLUMN, *known])
    releases = []
    for number, first in enumerate(firsts.iter_rows(named=True)):
        period, list_name = first["period"], first[LIST_COLUMN]
        frame = content.slice(starts[number], starts[number + 1] - starts[number])
        extra = {
            field: first[column]
            for field, column in (("club_folder", CLUB_FOLDER), ("rules", RULES_COLUMN))
            if first.get(column) is not None
        }
        if late_results is not None and list_name.split("-", 1)[0] in FAMILIES:
            extra |= late_results.as_manifest(list_name)
        releases.append(
            ListRelease(
                list_name=list_name,
                period=period,
                rows=frame,
                reason=reasons[period],
                input_digest=first.get(INPUT_DIGEST) or digest_frame(frame),
                code_version=CODE_VERSION,
                causes=_causes_of(causes.get(period), list_name),
                value=value,
                extra_manifest=extra or None,
            )
        )
    return releases


def _grouped_in_order(rows: pl.DataFrame, keys: list[pl.Expr]) -> bool:
    """Whether `rows` already hold each value of `keys` in one run, the runs in ascending order
    of `keys` (no null): what `sort(keys, maintain_order=True)` would leave as it is. One pass,
    where the stable sort of 2.5M rows by two strings cost half a second."""
    named = rows.select(*(key.alias(f"_k{n}") for n, key in enumerate(keys)))
    if named.null_count().sum_horizontal().item():
        return False
    starts = named.filter(
        pl.int_range(pl.len()).eq(0) | pl.any_horizontal(pl.all().ne(pl.all().shift()))
    )
    return starts.equals(starts.sort(pl.all())) and starts.unique().height == starts.height


def publish_releases(
    lake: Path, releases: list[ListRelease], pool: Executor | None = None
) -> list[dict]:
    """Publish a batch of releases (`publishing.publish_lists`: staged side by side on `pool`,
    flushed to disk once, renamed in order); unchanged lists stay. One outcome per release
    (list, period, version, status, row_count, changed_rows), in order. The publishing asset
    tidies `.staging` once, after its range."""
    outcomes = publish_lists(lake, releases, tidy_staging=False, pool=pool)
    return [
        {
            "list": outcome.list,
            "period": outcome.period,
            "version": outcome.version,
            "status": outcome.status,
            "row_count": outcome.row_count,
            "changed_rows": outcome.changed_rows,
        }
        for outcome in outcomes
    ]


def publish_rows(
    lake: Path,
    period: str,
    rows: pl.DataFrame,
    *,
    reason: str,
    causes: pl.DataFrame | None = None,
    value: str = "rating",
    pool: Executor | None = None,
) -> list[dict]:
    """Publish every list of one period's `list_rows` (`list_releases`, `publish_releases`)."""
    releases = list_releases(period, rows, reason=reason, causes=causes, value=value)
    return publish_releases(lake, releases, pool)
