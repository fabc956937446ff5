"""Backgammon months rated in batches (issue 31 item 3): the lake a run writes when the FIBS
replay takes each month a few hundred matches at a time is the lake it writes when it takes
each month whole, table for table."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from assets import systems
from pipelines.cli.run import run_pipeline
from rating_core import budget
from rating_core.lake.storage import read_table
from rating_core.progress import Progress

pytestmark = pytest.mark.e2e

MATCHES = 6_000


def _table(lake: Path, name: str) -> pl.DataFrame:
    frame = read_table(lake, name).collect()
    return frame.sort(frame.columns, nulls_last=True)


def _matches_csv(path: Path) -> None:
    """Two months of matches among 150 players, a few pairs playing every few hours (the
    fair-play window at work), some unranked or against the AI."""
    rng = random.Random(3)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    lines = ["match_id,ended_at,winner_id,loser_id,length,ranked,vs_ai"]
    for i in range(MATCHES):
        at = start + timedelta(minutes=rng.randrange(59 * 24 * 60))
        a, b = ("u-1", "u-2") if i % 5 == 0 else rng.sample(range(150), 2)
        ranked = "false" if i % 17 == 0 else "true"
        vs_ai = "true" if i % 29 == 0 else "false"
        lines.append(
            f"bg-{i:05d},{at:%Y-%m-%dT%H:%M:%SZ},u-{a},u-{b},{rng.choice([1, 3, 5, 7])},"
            f"{ranked},{vs_ai}"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_matches_rated_in_batches_equal_months_rated_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inbox = tmp_path / "inbox"
    (inbox / "backgammon").mkdir(parents=True)
    _matches_csv(inbox / "backgammon" / "matches.csv")
    small, whole = tmp_path / "small", tmp_path / "whole"
    monkeypatch.setattr(budget, "BATCH_GAMES", 400)  # several batches a month
    reports: list[Progress] = []
    monkeypatch.setattr(systems, "report", reports.append)  # the ratings steps' own reports
    assert run_pipeline(inbox, small).ok
    # the step's last report counts the matches the streamed replay read (its `games` facts)
    done = [p for p in reports if p.stage == "rating" and p.label == "fibs" and p.finished]
    assert [p.games for p in done] == [MATCHES]
    monkeypatch.setattr(budget, "BATCH_GAMES", MATCHES)  # one
    assert run_pipeline(inbox, whole).ok
    for name in ("history/fibs", "state/fibs", "state/fibs_pairs", "list_rows/fibs"):
        assert _table(small, name).equals(_table(whole, name)), name
    history = _table(small, "history/fibs")
    assert history.height > MATCHES and not history["counted"].all()
