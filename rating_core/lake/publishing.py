"""Versioned, immutable, atomic publication of rating lists (DESIGN §5).

`publish_list` writes `<lake>/lists/<list>/<period>/v<N>/` with `list.parquet`, `list.csv`,
`manifest.json` and, from v2 on, `diff.parquet` / `diff.csv`. Identical content publishes
nothing; a version is staged outside `lists/` (`<lake>/.staging/<list>/<period>/`) and renamed
into place, so readers, and the glob below, only ever see complete versions. Every `list.parquet` has one schema (`LIST_SCHEMA`) so that the single glob
`pl.scan_parquet("lake/lists/**/list.parquet")` reads every snapshot of every list.
Lakes are local folders (see `lake.as_local_path`).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import uuid
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Executor, wait
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import polars as pl

from rating_core.lake.digests import digest_bytes, sha256_file
from rating_core.lake.digests import digest_files as digest_files  # re-exported for older callers
from rating_core.lake.digests import digest_frame as digest_frame
from rating_core.lake.storage import (
    STAGING_DIR,
    as_local_path,
    check_name,
    flush_filesystem,
    is_safe_name,
)
from rating_core.periods import PERIOD_SHAPE

try:  # POSIX advisory lock; without it concurrent publishers of one list are not serialised
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

SNAPSHOT_COLUMNS: dict[str, pl.DataType] = {
    "list": pl.String(),
    "period": pl.String(),
    "version": pl.Int32(),
}
"""Columns that identify a snapshot; added to every `list.parquet` and `diff.parquet`."""

LIST_SCHEMA: dict[str, pl.DataType] = {
    "player_id": pl.String(),
    "name": pl.String(),
    "display_name": pl.String(),
    "federation": pl.String(),
    "title": pl.String(),
    "w_title": pl.String(),
    "o_title": pl.String(),
    "foa_title": pl.String(),
    "sex": pl.String(),
    "birth_year": pl.Int32(),
    "rank": pl.Int32(),  # federation lists: 1 for the highest rating (RULES: player_data)
    "club_id": pl.String(),
    "rating": pl.Float64(),  # integer lists and FIBS' one decimal share one Parquet type
    "rating_exact": pl.Float64(),
    "games": pl.Int32(),
    "rated_games": pl.Int32(),
    "peak_rating": pl.Int32(),
    "total_games": pl.Int32(),
    "total_matches": pl.Int32(),
    "experience": pl.Int32(),
    "k": pl.Int32(),
    "k_reason": pl.String(),
    "provisional": pl.Boolean(),
    "display": pl.String(),
    "leaderboard_eligible": pl.Boolean(),
    "flag": pl.String(),
    "change": pl.Float64(),
    "change_exact": pl.Float64(),
    "newcomer": pl.Boolean(),
}
"""Every column a published list may have, with its Parquet type. Each `list.parquet` holds all
of them (absent ones null) so the files of all lists share one schema; `list.csv` holds only the
columns the list was given, with their own types (an integer rating stays `1500`)."""

DIFF_SCHEMA: dict[str, pl.DataType] = {
    **SNAPSHOT_COLUMNS,
    "player_id": pl.String(),
    "name": pl.String(),
    "old": pl.Float64(),
    "new": pl.Float64(),
    "change": pl.Float64(),
    "cause": pl.String(),
}
"""`diff.parquet`: one row per player whose value changed, appeared (old null) or left (new
null). The key column is named after the list's key (`player_id` by default)."""

LIST_COMPRESSION: Final = "zstd"
"""The codec of published Parquet files (lists and diffs): Polars' default, smaller than the
lake tables' LZ4 for files kept for good."""

LIST_FILE = "list.parquet"
CSV_FILE = "list.csv"
DIFF_FILE = "diff.parquet"
DIFF_CSV_FILE = "diff.csv"
MANIFEST_FILE = "manifest.json"
TMP_PREFIX = ".tmp-"
"""Prefix of the staging folders of older releases, inside the period folder (cleaned on sight)."""
PARTIAL_SUFFIX = ".partial"

ORIGINAL: Final = "original"
REVISION: Final = "revision"
"""Values of a manifest's `publication`: a period's first publication, or a revision of the
version named in `revises` (`rating_core.lake.revisions` reads them, older manifests too)."""

_sha256_file = sha256_file

_VERSION_DIR = re.compile(r"^v([1-9][0-9]*)$")
_CSV_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True)
class PublishOutcome:
    """What `publish_list` did: a new version, or nothing because the content is unchanged."""

    list: str
    period: str
    version: int
    status: Literal["published", "unchanged"]
    path: Path
    row_count: int
    changed_rows: int


# --- paths and readers -----------------------------------------------------------------------


def _lists_dir(lake: Path | str) -> Path:
    """`<lake>/lists`."""
    return as_local_path(lake) / "lists"


def _period_dir(lake: Path | str, list_name: str, period: str) -> Path:
    """`<lake>/lists/<list>/<period>`, validating both names."""
    check_name(list_name, "list name")
    if not PERIOD_SHAPE.match(period):
        raise ValueError(f"period {period!r} is not YYYY-MM")
    return _lists_dir(lake) / list_name / period


def _complete_versions(period_dir: Path) -> list[int]:
    """Version numbers of `v<N>` folders that have a manifest (the only ones readers see)."""
    if not period_dir.is_dir():
        return []
    found = []
    for child in period_dir.iterdir():
        match = _VERSION_DIR.match(child.name)
        if match and child.is_dir() and (child / MANIFEST_FILE).is_file():
            found.append(int(match.group(1)))
    return sorted(found)


def latest_version(lake: Path | str, list_name: str, period: str) -> int | None:
    """The highest complete version of a list for a period, or None if none was published."""
    versions = _complete_versions(_period_dir(lake, list_name, period))
    return versions[-1] if versions else None


def complete_versions(lake: Path | str, list_name: str, period: str) -> list[int]:
    """The complete versions of a list for a period, lowest first (empty if none was published)."""
    return _complete_versions(_period_dir(lake, list_name, period))


def version_dir(lake: Path | str, list_name: str, period: str, version: int | None = None) -> Path:
    """The folder of a complete version (the latest by default); FileNotFoundError otherwise."""
    folder = _period_dir(lake, list_name, period)
    versions = _complete_versions(folder)
    if version is None:
        if not versions:
            raise FileNotFoundError(f"no published version of {list_name} {period} in {folder}")
        version = versions[-1]
    if version not in versions:
        raise FileNotFoundError(f"{list_name} {period} has no published version v{version}")
    return folder / f"v{version}"


def read_manifest(
    lake: Path | str, list_name: str, period: str, version: int | None = None
) -> dict[str, Any]:
    """The manifest of a published version (the latest by default)."""
    path = version_dir(lake, list_name, period, version) / MANIFEST_FILE
    return json.loads(path.read_text(encoding="utf-8"))


def read_list(
    lake: Path | str, list_name: str, period: str, version: int | None = None
) -> pl.DataFrame:
    """A published list (the latest version by default): snapshot columns then its own columns."""
    folder = version_dir(lake, list_name, period, version)
    manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    frame = pl.read_parquet(folder / LIST_FILE, hive_partitioning=False)
    return frame.select([*SNAPSHOT_COLUMNS, *manifest["columns"]])


def read_diff(
    lake: Path | str, list_name: str, period: str, version: int | None = None
) -> pl.DataFrame:
    """The diff of a version against its parent; empty for a first version (nothing to diff)."""
    folder = version_dir(lake, list_name, period, version)
    if not (folder / DIFF_FILE).exists():
        return pl.DataFrame(schema=DIFF_SCHEMA)
    return pl.read_parquet(folder / DIFF_FILE, hive_partitioning=False)


def list_names(lake: Path | str) -> list[str]:
    """Names of the lists that have at least one published version, sorted."""
    base = _lists_dir(lake)
    if not base.is_dir():
        return []
    return sorted(
        child.name
        for child in base.iterdir()
        if child.is_dir() and not child.name.startswith(".") and list_periods(lake, child.name)
    )


def list_periods(lake: Path | str, list_name: str) -> list[str]:
    """Periods for which `list_name` has at least one published version, sorted."""
    base = _lists_dir(lake) / check_name(list_name, "list name")
    if not base.is_dir():
        return []
    return sorted(
        child.name
        for child in base.iterdir()
        if PERIOD_SHAPE.match(child.name) and _complete_versions(child)
    )


def _snapshot_files(lake: Path | str, file_name: str) -> list[Path]:
    """Every `file_name` of every complete version, in list, period, version order."""
    files = []
    for name in list_names(lake):
        for period in list_periods(lake, name):
            folder = _period_dir(lake, name, period)
            for version in _complete_versions(folder):
                path = folder / f"v{version}" / file_name
                if path.exists():
                    files.append(path)
    return files


def all_snapshots(lake: Path | str) -> pl.LazyFrame:
    """Every published list version as one lazy frame (the `lists/**/list.parquet` glob).

    Scans the complete versions explicitly, so a crashed publish's leftovers are never read.
    """
    files = _snapshot_files(lake, LIST_FILE)
    if not files:
        return pl.LazyFrame(schema={**SNAPSHOT_COLUMNS, **LIST_SCHEMA})
    return pl.scan_parquet([str(p) for p in files], hive_partitioning=False)


def all_diffs(lake: Path | str) -> pl.LazyFrame:
    """Every published diff as one lazy frame: who changed, in which version, and why."""
    files = _snapshot_files(lake, DIFF_FILE)
    if not files:
        return pl.LazyFrame(schema=DIFF_SCHEMA)
    return pl.scan_parquet([str(p) for p in files], hive_partitioning=False)


def current_versions(lake: Path | str) -> pl.DataFrame:
    """The latest version of each list and period: columns list, period, version."""
    rows = []
    base = _lists_dir(lake)
    for name in sorted(c.name for c in base.iterdir()) if base.is_dir() else []:
        folder = base / name
        if name.startswith(".") or not folder.is_dir() or not is_safe_name(name):
            continue
        for child in sorted(folder.iterdir()):  # one listing per period folder
            versions = _complete_versions(child) if PERIOD_SHAPE.match(child.name) else []
            if versions:
                rows.append({"list": name, "period": child.name, "version": versions[-1]})
    return pl.DataFrame(rows, schema=SNAPSHOT_COLUMNS)


# --- writing ---------------------------------------------------------------------------------


def csv_safe(frame: pl.DataFrame) -> pl.DataFrame:
    """Prefix `'` to String cells starting with `=`, `+`, `-`, `@`, tab or CR (OWASP CSV injection).

    Only String columns change: numbers, negative ones included, stay numbers.
    """
    exprs = []
    for name, dtype in frame.schema.items():
        if isinstance(dtype, (pl.String, pl.Enum, pl.Categorical)):
            col = pl.col(name).cast(pl.String)
            risky = pl.any_horizontal([col.str.starts_with(t) for t in _CSV_TRIGGERS])
            exprs.append(pl.when(risky).then(pl.lit("'") + col).otherwise(col).alias(name))
    return frame.with_columns(exprs) if exprs else frame


@dataclass(frozen=True)
class _Prepared:
    """One release's rows ready to write: `given` (its own columns in LIST_SCHEMA order, sorted,
    CSV-safe: the `list.csv` content), `canonical` (cast to LIST_SCHEMA: what versions are
    compared on) and `snapshot` (the `list.parquet` content without its `version` column)."""

    given: pl.DataFrame
    canonical: pl.DataFrame
    snapshot: pl.DataFrame


_RELEASE = "_release"
"""A batch's column numbering its releases while they are prepared together."""


def _prepare_all(releases: Sequence[ListRelease]) -> list[_Prepared]:
    """Validate and prepare every release. Releases with the same schema, key and value (a
    system's lists over a range) are prepared together: one concat, sort, cast and CSV escaping
    for the batch instead of one per list, then zero-copy slices of it."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for number, release in enumerate(releases):
        shape = (tuple(release.rows.schema.items()), release.key, release.value)
        groups.setdefault(shape, []).append(number)
    prepared: dict[int, _Prepared] = {}
    for numbers in groups.values():
        prepared.update(zip(numbers, _prepare_group([releases[n] for n in numbers]), strict=True))
    return [prepared[n] for n in range(len(releases))]


def _prepare_group(releases: list[ListRelease]) -> list[_Prepared]:
    """`_prepare_all` for releases sharing one schema, key and value."""
    first = releases[0]
    rows, key, value = first.rows, first.key, first.value
    unknown = [c for c in rows.columns if c not in LIST_SCHEMA]
    if unknown:
        raise ValueError(
            f"columns {unknown} are not in publish.LIST_SCHEMA; add them there so that every "
            "list.parquet keeps one schema"
        )
    for needed in (key, value):
        if needed not in rows.columns:
            raise ValueError(f"the list has no {needed!r} column")
    data = pl.concat(
        [r.rows.with_columns(pl.lit(n, pl.Int32).alias(_RELEASE)) for n, r in enumerate(releases)]
    )
    _check_keys(data, key)
    ordered = [c for c in LIST_SCHEMA if c in rows.columns]
    given = data.select(_RELEASE, *ordered)
    if not _in_list_order(given, value, key):
        given = given.sort(
            [_RELEASE, value, key],
            descending=[False, True, False],
            nulls_last=True,
            maintain_order=True,
        )
    try:
        canonical = given.select(pl.col(c).cast(LIST_SCHEMA[c], strict=True) for c in ordered)
    except pl.exceptions.PolarsError as exc:
        raise ValueError(f"a list column does not fit publish.LIST_SCHEMA: {exc}") from exc
    safe = csv_safe(given.drop(_RELEASE))
    names = pl.Series([r.list_name for r in releases], dtype=pl.String)
    periods = pl.Series([r.period for r in releases], dtype=pl.String)
    numbers = given.get_column(_RELEASE)
    snapshot = canonical.select(
        names.gather(numbers).alias("list"),
        periods.gather(numbers).alias("period"),
        *[
            pl.col(c) if c in canonical.columns else pl.lit(None, dtype).alias(c)
            for c, dtype in LIST_SCHEMA.items()
        ],
    )
    out, offset = [], 0
    for height in (r.rows.height for r in releases):  # sorted by release first: in order
        out.append(
            _Prepared(
                safe.slice(offset, height),
                canonical.slice(offset, height),
                snapshot.slice(offset, height),
            )
        )
        offset += height
    return out


def _in_list_order(data: pl.DataFrame, value: str, key: str) -> bool:
    """Whether `data` is in list order already: by release, then `value` descending, then `key`
    (each row after the one before it, no null, no NaN), what the stable sort would leave as it
    is. One pass over neighbouring rows, where sorting a site's lists (2.5M rows, by an id
    string last) cost a second of CPU; a system giving its rows in that order saves it."""
    if data.height < 2:
        return True
    values, keys = data.get_column(value), data.get_column(key)
    if not values.dtype.is_numeric() or not (keys.dtype == pl.String or keys.dtype.is_integer()):
        return False  # compared as the sort compares them: numbers, and strings byte by byte
    if values.null_count() or keys.null_count():
        return False
    if values.dtype.is_float() and values.is_nan().any():
        return False
    release, v, k = pl.col(_RELEASE), pl.col(value), pl.col(key)
    after = (release > release.shift()) | (
        (release == release.shift()) & ((v < v.shift()) | ((v == v.shift()) & (k > k.shift())))
    )
    return bool(data.select(after.slice(1).all()).item())


def _check_keys(data: pl.DataFrame, key: str) -> None:
    """Refuse a batch where a release has a row without `key`, or a `key` twice (the first such
    release, in batch order, is named by its counts and up to five of its duplicates)."""
    keys = pl.col(key)
    per_release = (
        data.group_by(_RELEASE)
        .agg(keys.null_count().alias("nulls"), (pl.len() - keys.n_unique()).alias("extra"))
        .filter((pl.col("nulls") > 0) | (pl.col("extra") > 0))
        .sort(_RELEASE)
    )
    if not per_release.height:
        return
    number, nulls = per_release[_RELEASE][0], per_release["nulls"][0]
    if nulls:
        raise ValueError(f"{nulls} rows have no {key!r}")
    mine = data.filter(pl.col(_RELEASE) == number).get_column(key)
    dupes = mine.filter(mine.is_duplicated()).unique().sort().head(5).to_list()
    raise ValueError(f"duplicate {key!r} values in the list, e.g. {dupes}")


def _with_version(snapshot: pl.DataFrame, version: int) -> pl.DataFrame:
    """The `list.parquet` content: a prepared snapshot with its version as third column."""
    column = pl.Series("version", np.full(snapshot.height, version, dtype=np.int32))
    return snapshot.clone().insert_column(2, column)  # a copy of the columns list, not data


def _make_diff(
    old: pl.DataFrame,
    new: pl.DataFrame,
    *,
    key: str,
    value: str,
    causes: pl.DataFrame | None,
    reason: str,
    list_name: str,
    period: str,
    version: int,
) -> pl.DataFrame:
    """One row per key whose value changed, appeared or disappeared, with its cause: the causes
    of its key, else the causes with a null key (what moved everyone else: a change carried from
    an earlier period), else the version's `reason`."""

    def side(frame: pl.DataFrame, label: str) -> pl.DataFrame:
        name = pl.col("name") if "name" in frame.columns else pl.lit(None, pl.String)
        return frame.select(
            pl.col(key).cast(pl.String),
            name.cast(pl.String).alias(f"name_{label}"),
            pl.col(value).cast(pl.Float64).alias(label),
        )

    before, after = _moved(side(old, "old"), side(new, "new"), key)
    joined = before.join(after, on=key, how="full", coalesce=True)
    joined = joined.filter(
        pl.col("old").is_null() | pl.col("new").is_null() | (pl.col("old") != pl.col("new"))
    )
    fallback = reason
    if causes is not None:
        if key not in causes.columns or "cause" not in causes.columns:
            raise ValueError(f"the causes frame needs columns {key!r} and 'cause'")
        everyone = causes.filter(pl.col(key).is_null()).get_column("cause").drop_nulls()
        if everyone.len():
            fallback = "; ".join(dict.fromkeys(str(c) for c in everyone.to_list()))
        per_key = (
            causes.select(pl.col(key).cast(pl.String), pl.col("cause").cast(pl.String))
            .drop_nulls()
            .unique(maintain_order=True)
            .group_by(key, maintain_order=True)
            .agg(pl.col("cause").str.join("; "))
        )
        joined = joined.join(per_key, on=key, how="left")
    else:
        joined = joined.with_columns(pl.lit(None, pl.String).alias("cause"))
    diff = joined.select(
        pl.lit(list_name, pl.String).alias("list"),
        pl.lit(period, pl.String).alias("period"),
        pl.lit(version, pl.Int32).alias("version"),
        pl.col(key),
        pl.coalesce("name_new", "name_old").alias("name"),
        pl.col("old"),
        pl.col("new"),
        (pl.col("new") - pl.col("old")).alias("change"),
        pl.col("cause").fill_null(fallback),
    )
    return diff.sort([pl.col("change").abs(), key], descending=[True, False], nulls_last=False)


def _moved(old: pl.DataFrame, new: pl.DataFrame, key: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The rows of `old` and `new` (key, name, value) that may differ: all but those holding the
    same key with the same value at the same position of both. Two versions of a list come in
    one order (value, then key), so a revision moving a few players leaves most rows where they
    were; a key is at one position of each list, so whatever is left out is unchanged, and the
    join of what remains finds every change (a rerun's diffs joined a whole list each)."""
    shared = min(old.height, new.height)
    if not shared:
        return old, new
    same = (
        (old.get_column(key).head(shared) == new.get_column(key).head(shared))
        & (old.get_column("old").head(shared) == new.get_column("new").head(shared))
    ).fill_null(False)
    if not same.any():
        return old, new

    def left(frame: pl.DataFrame) -> pl.DataFrame:  # the rows past the other's end stay
        rest = pl.Series(np.ones(frame.height - shared, dtype=np.bool_))
        return frame.filter(pl.concat([~same, rest]))

    return left(old), left(new)


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on `<folder>/.lock` so one publisher at a time works on a period."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a+") as handle:
        if fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _staging_dir(lake: Path | str, list_name: str, period: str) -> Path:
    """`<lake>/.staging/<list>/<period>`: where a version of one list and period is written before
    it is renamed into `lists/`; outside `lists/`, so `lists/**/list.parquet` never matches it."""
    return as_local_path(lake) / STAGING_DIR / list_name / period


def _drop_empty_staging(staging_root: Path) -> None:
    """Remove the staging folders of a list and period, and `.staging` itself, once empty."""
    for folder in (staging_root, staging_root.parent, staging_root.parent.parent):
        if folder.is_dir():
            try:
                folder.rmdir()
            except OSError:  # not empty: another list or period is being staged
                return


def drop_empty_staging(lake: Path | str, lists: Iterable[str] | None = None) -> None:
    """Remove the empty folders left under `<lake>/.staging/` (only those of `lists` when given),
    and `.staging` itself once empty: the tidying a batch of `publish_list(..., tidy_staging=False)`
    calls leaves to the end. Naming the lists keeps a batch off the folders another process is
    staging at the same moment (the systems publish side by side on the multiprocess executor)."""
    root = as_local_path(lake) / STAGING_DIR
    tops = [root / name for name in lists] if lists is not None else [root]
    for top in tops:
        folders = [Path(here) for here, _, _ in os.walk(top)]  # vanished folders are skipped
        for folder in sorted(folders, reverse=True):
            with contextlib.suppress(OSError):  # not empty (a version being staged), or gone
                folder.rmdir()
    with contextlib.suppress(OSError):
        root.rmdir()


STAGING_MKDIR_ATTEMPTS = 5


def _make_staging(staging: Path) -> None:
    """Create a version's staging folder and its parents. Another process's tidy-up may remove
    an empty parent (`.staging` itself) between the creation of the parent and of the child:
    creating again closes that window (it never removes a folder holding anything)."""
    for attempt in range(STAGING_MKDIR_ATTEMPTS):
        try:
            staging.mkdir(parents=True)
            return
        except FileNotFoundError:
            if attempt == STAGING_MKDIR_ATTEMPTS - 1:
                raise


def _clean_leftovers(folder: Path, staging_root: Path, tidy_staging: bool = True) -> None:
    """Remove a crashed publish's staged versions, old-style `.tmp-*` folders and `v<N>` folders
    without a manifest.

    None was ever a complete version, so the run that follows simply publishes again.
    """
    if staging_root.is_dir():
        shutil.rmtree(staging_root)
    if tidy_staging:
        _drop_empty_staging(staging_root)
    for child in folder.iterdir():
        if not child.is_dir():
            continue
        incomplete = _VERSION_DIR.match(child.name) and not (child / MANIFEST_FILE).is_file()
        if child.name.startswith(TMP_PREFIX) or incomplete:
            shutil.rmtree(child)


def _frame_bytes(write: Any) -> bytes:
    """The bytes `write(buffer)` produces (a frame's `write_parquet` or `write_csv`)."""
    buffer = io.BytesIO()
    write(buffer)
    return buffer.getvalue()


def _write_file(target: Path, data: bytes | pl.DataFrame, digest: str | None = None) -> str:
    """Write `data` (bytes, or a frame written as Parquet) to `<target>.partial`; return its
    SHA-256 (`digest`, when the caller has hashed the bytes already). Not flushed to disk here:
    a batch flushes every staged file at once (`publish_lists`).

    Files keep the `.partial` name until every one is written, so an interrupted run never
    leaves a `list.parquet` for the `lists/**/list.parquet` glob to find.
    """
    partial = target.with_name(target.name + PARTIAL_SUFFIX)
    if isinstance(data, pl.DataFrame):
        buffer = io.BytesIO()
        data.write_parquet(buffer, compression=LIST_COMPRESSION)
        data = buffer.getvalue()
    partial.write_bytes(data)
    return digest if digest is not None else digest_bytes(data)


def _finish_files(staging: Path) -> None:
    """Give every staged `.partial` file its final name (the step just before the commit)."""
    for partial in sorted(staging.glob(f"*{PARTIAL_SUFFIX}")):
        os.replace(partial, partial.with_name(partial.name[: -len(PARTIAL_SUFFIX)]))


def version_reason(
    parent: int | None,
    parent_manifest: dict[str, Any] | None,
    period: str,
    input_digest: str,
    code_version: str,
    computed_from: str,
) -> str:
    """The manifest reason of a new version: what the list is computed from and, for v<N+1>,
    whether its inputs changed since v<N> (else the code that computes it did)."""
    if parent is None or parent_manifest is None:
        return f"first publication: {computed_from}"
    if parent_manifest.get("input_digest") != input_digest:
        return (
            f"inputs of {period} or an earlier period changed since v{parent} (a late or "
            f"corrected result, a moderation decision or a new starting list): {computed_from}"
        )
    return f"same inputs as v{parent}, recomputed by code version {code_version}: {computed_from}"


@dataclass(frozen=True)
class ListRelease:
    """One list of one period to publish: its rows and what its manifest records (see
    `publish_list` for each field)."""

    list_name: str
    period: str
    rows: pl.DataFrame
    reason: str
    input_digest: str
    code_version: str
    causes: pl.DataFrame | None = None
    key: str = "player_id"
    value: str = "rating"
    extra_manifest: dict[str, Any] | None = None


@dataclass(frozen=True)
class _Staged:
    """A release after staging: its outcome and, for a new version, the staged folder to rename
    to `target`."""

    outcome: PublishOutcome
    staging: Path | None = None
    target: Path | None = None


def publish_list(
    lake: Path | str,
    list_name: str,
    period: str,
    rows: pl.DataFrame,
    *,
    reason: str,
    input_digest: str,
    code_version: str,
    causes: pl.DataFrame | None = None,
    key: str = "player_id",
    value: str = "rating",
    extra_manifest: dict[str, Any] | None = None,
    tidy_staging: bool = True,
) -> PublishOutcome:
    """Publish `rows` as the next version of `list_name` for `period`, unless nothing changed.

    `reason` says what the list is computed from; the manifest's reason adds what made this
    version (`version_reason`, from the parent manifest, read once). The content digest is the
    SHA-256 of the `list.csv` bytes. The parent's `list.parquet` is compared first: rows equal to
    it are unchanged without their CSV text being made; otherwise a content digest equal to the
    parent's is unchanged too (manifests of older releases typed their columns differently).
    The version is staged under `<lake>/.staging/` and renamed to `lists/.../v<N>` in one step, so
    a crash never leaves a visible half-written version, nor a staged file the `lists/**` glob
    could read; the next call cleans the leftovers and publishes. `extra_manifest` adds fields to
    the manifest (a club list records the folder it comes from). The manifest says whether the
    version is the period's original publication or a revision of its parent (`publication`,
    `revises`; `rating_core.lake.revisions`). `tidy_staging=False` leaves the
    emptied staging folders for one `drop_empty_staging(lake)` after a batch of publications
    (each removal and re-creation of `.staging/<list>/<period>` costs two folder updates).
    """
    release = ListRelease(
        list_name, period, rows, reason, input_digest, code_version, causes, key, value,
        extra_manifest,
    )  # fmt: skip
    return publish_lists(lake, [release], tidy_staging=tidy_staging)[0]


def publish_lists(
    lake: Path | str,
    releases: Sequence[ListRelease],
    *,
    tidy_staging: bool = True,
    pool: Executor | None = None,
) -> list[PublishOutcome]:
    """Publish a batch of lists (each as `publish_list` would), one outcome per release in order.

    Every release is staged first (side by side on `pool`), then all staged files are flushed
    to disk at once, then each new version is renamed into `lists/` in the batch's order and the
    renames are flushed: two flushes per batch instead of an fsync per file and folder, and a
    crash still leaves only complete versions, the first ones of the batch. When a release
    cannot be staged (a file where its folder belongs, a full disk), the releases before it are
    published and its error is raised: a batch in period order publishes a prefix of its range.
    Each list and period may appear once; their `.lock` files are held from staging to renaming.
    """
    folders = [_period_dir(lake, r.list_name, r.period) for r in releases]
    if len(set(folders)) < len(folders):
        raise ValueError("a batch publishes each list and period once")
    if not releases:
        return []
    prepared = _prepare_all(releases)
    with contextlib.ExitStack() as locks:
        failed: dict[int, BaseException] = {}
        for number in sorted(range(len(folders)), key=folders.__getitem__):  # one order for
            try:  # every publisher: no deadlock
                locks.enter_context(_locked(folders[number]))
            except OSError as error:
                failed[number] = error
        first_failure = min(failed, default=len(releases))
        work = list(zip(releases[:first_failure], prepared[:first_failure], strict=True))
        staged, staging_error = _stage_all(lake, work, tidy_staging, pool)
        if staging_error is not None:
            first_failure = len(staged)
            failed[first_failure] = staging_error
        moves = [s for s in staged if s.staging is not None]
        try:
            if moves:
                flush_filesystem(as_local_path(lake))  # the staged files, before any rename
            for number, move in enumerate(moves):
                assert move.staging is not None and move.target is not None
                try:
                    os.rename(move.staging, move.target)
                except BaseException:
                    for left in moves[number:]:  # not renamed: nothing anybody could see
                        shutil.rmtree(left.staging or "", ignore_errors=True)
                    raise
        finally:
            if moves:
                flush_filesystem(as_local_path(lake))  # the renames done, all or a prefix
        if tidy_staging:
            for release in releases:
                _drop_empty_staging(_staging_dir(lake, release.list_name, release.period))
        if first_failure < len(releases):
            raise failed[first_failure]
    return [s.outcome for s in staged]


def _stage_all(
    lake: Path | str,
    work: list[tuple[ListRelease, _Prepared]],
    tidy_staging: bool,
    pool: Executor | None,
) -> tuple[list[_Staged], BaseException | None]:
    """Stage every release (on `pool` when given): the releases staged before the first that
    failed, in order, and its error (None when none failed). What was staged after it is
    removed: nothing after a failure is published."""
    if pool is None or len(work) < 2:
        done: list[_Staged] = []
        for release, prepared in work:
            try:
                done.append(_stage(lake, release, prepared, tidy_staging))
            except BaseException as failure:
                return done, failure
        return done, None
    futures = [pool.submit(_stage, lake, r, p, tidy_staging) for r, p in work]
    wait(futures)
    errors = [f.exception() for f in futures]
    first = next((n for n, e in enumerate(errors) if e is not None), len(futures))
    for future, later in zip(futures[first + 1 :], errors[first + 1 :], strict=True):
        if later is None:
            shutil.rmtree(future.result().staging or "", ignore_errors=True)
    return [f.result() for f in futures[:first]], errors[first] if first < len(futures) else None


def _stage(
    lake: Path | str, release: ListRelease, prepared: _Prepared, tidy_staging: bool
) -> _Staged:
    """Write one release's next version into a staging folder (not flushed, not visible), or
    find it unchanged against the latest version. The caller holds the period's lock."""
    r, canonical = release, prepared.canonical
    folder = _period_dir(lake, r.list_name, r.period)
    staging_root = _staging_dir(lake, r.list_name, r.period)
    _clean_leftovers(folder, staging_root, tidy_staging)
    versions = _complete_versions(folder)
    parent = versions[-1] if versions else None
    parent_manifest: dict[str, Any] | None = None
    old: pl.DataFrame | None = None
    csv_bytes: bytes | None = None
    content_digest = ""
    if parent is not None:
        # the parent's rows are read first: a list equal to them needs no CSV text (writing
        # and hashing it was most of a rerun's publishing of its unchanged lists); one that
        # differs is unchanged still when its CSV text is the parent's (`content_digest`)
        parent_dir = folder / f"v{parent}"
        parent_manifest = json.loads((parent_dir / MANIFEST_FILE).read_text(encoding="utf-8"))
        same_columns = parent_manifest["columns"] == canonical.columns
        old = pl.read_parquet(  # only the list's own columns: a third of LIST_SCHEMA's
            parent_dir / LIST_FILE, columns=parent_manifest["columns"], hive_partitioning=False
        ).select(parent_manifest["columns"])
        if not (same_columns and old.equals(canonical)):
            csv_bytes = _frame_bytes(prepared.given.write_csv)
            content_digest = digest_bytes(csv_bytes)
        if same_columns and (
            csv_bytes is None or parent_manifest.get("content_digest") == content_digest
        ):
            return _Staged(
                PublishOutcome(
                    list=r.list_name,
                    period=r.period,
                    version=parent,
                    status="unchanged",
                    path=parent_dir,
                    row_count=canonical.height,
                    changed_rows=0,
                )
            )
    if csv_bytes is None:  # a first version
        csv_bytes = _frame_bytes(prepared.given.write_csv)
        content_digest = digest_bytes(csv_bytes)
    full_reason = version_reason(
        parent, parent_manifest, r.period, r.input_digest, r.code_version, r.reason
    )
    version = (parent or 0) + 1
    diff = None
    if old is not None:
        diff = _make_diff(
            old,
            canonical,
            key=r.key,
            value=r.value,
            causes=r.causes,
            reason=full_reason,
            list_name=r.list_name,
            period=r.period,
            version=version,
        )
    staging = staging_root / f"v{version}-{uuid.uuid4().hex}"
    _make_staging(staging)
    try:
        snapshot = _with_version(prepared.snapshot, version)
        checksums = {
            LIST_FILE: _write_file(staging / LIST_FILE, snapshot),
            CSV_FILE: _write_file(staging / CSV_FILE, csv_bytes, content_digest),
        }
        if diff is not None:
            checksums[DIFF_FILE] = _write_file(staging / DIFF_FILE, diff)
            checksums[DIFF_CSV_FILE] = _write_file(
                staging / DIFF_CSV_FILE, _frame_bytes(csv_safe(diff).write_csv)
            )
        manifest = {
            "list": r.list_name,
            "period": r.period,
            "version": version,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "input_digest": r.input_digest,
            "code_version": r.code_version,
            "row_count": canonical.height,
            "changed_rows": 0 if diff is None else diff.height,
            "checksums": checksums,
            "parent_version": parent,
            "reason": full_reason,
            "publication": ORIGINAL if parent is None else REVISION,
            "revises": parent,
            "key": r.key,
            "value": r.value,
            "columns": canonical.columns,
            "content_digest": content_digest,
            **(r.extra_manifest or {}),
        }
        _write_file(
            staging / MANIFEST_FILE, (json.dumps(manifest, indent=2) + "\n").encode("utf-8")
        )
        _finish_files(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    outcome = PublishOutcome(
        list=r.list_name,
        period=r.period,
        version=version,
        status="published",
        path=folder / f"v{version}",
        row_count=canonical.height,
        changed_rows=0 if diff is None else diff.height,
    )
    return _Staged(outcome, staging, folder / f"v{version}")
