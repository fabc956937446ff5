"""Merge decisions for tests: `merges(("keep", "merge"), ...)` as the ingest's merges table
holds them (decided on 2026-03-01, from `federation/merges.csv`, one line each)."""

from __future__ import annotations

from datetime import date

import polars as pl

from rating_core.schemas import MERGES_SCHEMA, conform


def merges(*pairs: tuple[str, str]) -> pl.DataFrame:
    """The merges table of `pairs` (keep id, merged id), in order from line 2."""
    return conform(
        pl.DataFrame(
            {
                "keep_id": [k for k, _ in pairs],
                "merge_id": [m for _, m in pairs],
                "decided_at": [date(2026, 3, 1)] * len(pairs),
                "reason": ["same person"] * len(pairs),
                "source_file": ["federation/merges.csv"] * len(pairs),
                "source_line": list(range(2, 2 + len(pairs))),
            },
            schema_overrides={"keep_id": pl.String, "merge_id": pl.String},
        ),
        MERGES_SCHEMA,
    )
