"""Original and revised publications of a period's list (issue 11 item 3).

A period's first published version is its *original* list and never changes; every later version
is a *revision* of the one before it (the ECF's original beside its revised list). Manifests say
so in `publication` (`"original"` or `"revision"`) and `revises` (the parent version, null for
an original). Manifests written before those fields existed are read by the rule the publisher
has always followed: v1 is the original, v<N> revises v<N-1>.

`original_versions(lake)` and `original_lists(lake)` are what an `original_lists` view or query
reuses; `diff_between` compares any two versions of a period (the original against the latest
revision), with the causes of every version in between.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl

from rating_core.lake import publishing as publish


@dataclass(frozen=True)
class Publication:
    """What a version is: the period's original, or a revision of version `revises`."""

    kind: Literal["original", "revision"]
    revises: int | None


def publication_of(manifest: Mapping[str, Any]) -> Publication:
    """The publication a manifest records; for a manifest without the fields (older releases),
    v1 is the original and v<N> a revision of v<N-1>."""
    kind = manifest.get("publication")
    if kind == publish.ORIGINAL:
        return Publication(publish.ORIGINAL, None)
    if kind == publish.REVISION:
        revises = manifest.get("revises")
        return Publication(publish.REVISION, int(revises) if revises is not None else None)
    version = int(manifest["version"])
    if version == 1:
        return Publication(publish.ORIGINAL, None)
    return Publication(publish.REVISION, version - 1)


def original_version(lake: Path | str, list_name: str, period: str) -> int | None:
    """The version that is the period's original publication (None if nothing was published).

    The lowest complete version whose manifest says `original` (v1 in every lake this code
    wrote); the lowest complete version when none says so.
    """
    versions = publish._complete_versions(publish._period_dir(lake, list_name, period))
    for version in versions:
        manifest = publish.read_manifest(lake, list_name, period, version)
        if publication_of(manifest).kind == publish.ORIGINAL:
            return version
    return versions[0] if versions else None


def original_versions(lake: Path | str) -> pl.DataFrame:
    """The original version of each list and period: columns list, period, version (the shape
    of `publishing.current_versions`)."""
    rows = [
        {"list": name, "period": period, "version": original_version(lake, name, period)}
        for name in publish.list_names(lake)
        for period in publish.list_periods(lake, name)
    ]
    return pl.DataFrame(rows, schema=publish.SNAPSHOT_COLUMNS)


def original_lists(lake: Path | str) -> pl.LazyFrame:
    """Every period's original list as one lazy frame (the `list.parquet` schema of
    `publishing.all_snapshots`, only the original versions)."""
    files = [
        str(publish.version_dir(lake, name, period, version) / publish.LIST_FILE)
        for name, period, version in original_versions(lake).iter_rows()
    ]
    if not files:
        return pl.LazyFrame(schema={**publish.SNAPSHOT_COLUMNS, **publish.LIST_SCHEMA})
    return pl.scan_parquet(files, hive_partitioning=False)


def diff_between(lake: Path | str, list_name: str, period: str, old: int, new: int) -> pl.DataFrame:
    """Who differs between versions `old` and `new` of a period's list (`DIFF_SCHEMA`, `version`
    is `new`): old and new values, and as cause the causes of every version after `old` up to
    `new` that changed the player, each prefixed with its version (`v2: ...; v3: ...`)."""
    if not 1 <= old < new:
        raise ValueError(f"diff_between needs 1 <= old < new, not v{old} and v{new}")
    manifest = publish.read_manifest(lake, list_name, period, new)
    key, value = manifest.get("key", "player_id"), manifest.get("value", "rating")
    before = publish.read_list(lake, list_name, period, old)
    after = publish.read_list(lake, list_name, period, new)
    steps = [publish.read_diff(lake, list_name, period, v) for v in range(old + 1, new + 1)]
    causes = pl.concat(
        [
            step.select(
                pl.col(key).cast(pl.String),
                (
                    pl.lit("v") + pl.col("version").cast(pl.String) + pl.lit(": ") + pl.col("cause")
                ).alias("cause"),
            )
            for step in steps
            if step.height
        ]
        or [pl.DataFrame(schema={key: pl.String, "cause": pl.String})]
    )
    return publish._make_diff(
        before.drop(list(publish.SNAPSHOT_COLUMNS)),
        after.drop(list(publish.SNAPSHOT_COLUMNS)),
        key=key,
        value=value,
        causes=causes,
        reason=f"changed between v{old} and v{new}",
        list_name=list_name,
        period=period,
        version=new,
    )
