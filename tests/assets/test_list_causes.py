"""`publish_rows` with causes that name their list: a correction of one list is the cause on
that list's diff only (issue 11 item 5)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from assets.period_io import publish_rows
from rating_core.lake import publishing as publish


def rows(standard: int, rapid: int) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "list": ["fide-standard", "fide-rapid"],
            "player_id": ["a", "a"],
            "rating": [standard, rapid],
        }
    )


def test_a_cause_with_a_list_column_names_only_its_list(tmp_path: Path) -> None:
    publish_rows(tmp_path, "2026-03", rows(1810, 1700), reason="rated")
    causes = pl.DataFrame(
        {"list": ["fide-standard"], "player_id": ["a"], "cause": ["correction: rating"]}
    )
    publish_rows(tmp_path, "2026-03", rows(1830, 1710), reason="rated", causes=causes)
    standard = publish.read_diff(tmp_path, "fide-standard", "2026-03")
    rapid = publish.read_diff(tmp_path, "fide-rapid", "2026-03")
    assert standard["cause"].to_list() == ["correction: rating"]
    (rapid_cause,) = rapid["cause"].to_list()
    assert "correction" not in rapid_cause and "rated" in rapid_cause
