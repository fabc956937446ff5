"""The catalogue of published list versions, read from their manifests (DESIGN §5).

One row per complete version (`lists/<list>/<period>/v<N>/` with a manifest): when it was
published (`created_at`), its parent and reason, and where its files are. `ratings query` shows it
as the `versions` view and picks the files of `lists`, `current_lists` and `original_lists` from
it; the as-of lookups (`rating_core.lake.as_of`) choose a version by its `created_at`.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from datetime import datetime
from pathlib import Path

import polars as pl

from rating_core.lake import publishing as publish
from rating_core.lake.revisions import publication_of
from rating_core.schemas import UTC_TIME

VERSIONS_SCHEMA: dict[str, pl.DataType] = {
    "list": pl.String(),
    "period": pl.String(),
    "version": pl.Int32(),
    "created_at": UTC_TIME,
    "parent_version": pl.Int32(),
    "row_count": pl.Int64(),
    "changed_rows": pl.Int64(),
    "reason": pl.String(),
    "publication": pl.String(),
    "revises": pl.Int32(),
    "code_version": pl.String(),
    "input_digest": pl.String(),
    "folder": pl.String(),
}
"""The `versions` frame: the manifest facts of each published version, and its folder."""

MANIFEST_FIELDS = ("parent_version", "row_count", "changed_rows", "reason", "code_version")
"""Manifest fields copied as they are (the others are the snapshot key, the date and the folder)."""


def _created_at(text: str) -> datetime:
    """A manifest's `created_at` (ISO 8601 with an offset, as `publish_list` writes it)."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"created_at {text!r} has no time zone")
    return moment


def published_versions(lake: Path | str, lists: Collection[str] | None = None) -> pl.DataFrame:
    """Every complete version of every list (of `lists` only, when given), sorted by list,
    period and version.

    Reads one small manifest per version (the lists' data files are not opened), so a lake of
    years of monthly lists answers in a fraction of a second.
    """
    rows = []
    for name in publish.list_names(lake):
        if lists is not None and name not in lists:
            continue
        for period in publish.list_periods(lake, name):
            versions = publish.complete_versions(lake, name, period)
            period_folder = publish.version_dir(lake, name, period, versions[0]).parent
            for version in versions:
                folder = period_folder / f"v{version}"
                manifest = json.loads((folder / publish.MANIFEST_FILE).read_text("utf-8"))
                publication = publication_of(manifest)  # older manifests: v1 original, else N-1
                rows.append(
                    {
                        "list": name,
                        "period": period,
                        "version": version,
                        "created_at": _created_at(manifest["created_at"]),
                        **{field: manifest.get(field) for field in MANIFEST_FIELDS},
                        "publication": publication.kind,
                        "revises": publication.revises,
                        "input_digest": manifest.get("input_digest"),
                        "folder": str(folder),
                    }
                )
    return pl.DataFrame(rows, schema=VERSIONS_SCHEMA)
