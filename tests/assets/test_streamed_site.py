"""A platform month rated in batches (issue 31 item 3): the lake a run writes when the site
replay takes the month a few thousand games at a time is the lake it writes when it takes the
month whole, table for table."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from pipelines.cli.run import run_pipeline
from rating_core import budget
from rating_core.ingest.pgn_synth import generate_pgn
from rating_core.lake.storage import read_table

pytestmark = pytest.mark.e2e

GAMES = 24_000


def _table(lake: Path, name: str) -> pl.DataFrame:
    frame = read_table(lake, name).collect()
    return frame.sort(frame.columns, nulls_last=True)


def test_a_month_rated_in_batches_equals_one_rated_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inbox = tmp_path / "inbox"
    (inbox / "platform").mkdir(parents=True)
    generate_pgn(inbox / "platform" / "month.pgn", GAMES, seed=5, n_players=400)
    small, whole = tmp_path / "small", tmp_path / "whole"
    monkeypatch.setattr(budget, "BATCH_GAMES", 5_000)  # five batches
    assert run_pipeline(inbox, small).ok
    monkeypatch.setattr(budget, "BATCH_GAMES", GAMES)  # one
    assert run_pipeline(inbox, whole).ok
    for name in ("history/site", "excluded/site", "state/site", "list_rows/site"):
        assert _table(small, name).equals(_table(whole, name)), name
    assert _table(small, "history/site").height > GAMES  # rated, not all excluded


def _published(lake: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(lake)): path.read_bytes()
        for path in sorted((lake / "lists").rglob("list.*"))
    }


def test_lists_published_a_period_at_a_time_equal_a_range_published_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    samples = Path(__file__).parents[2] / "data_samples"
    monkeypatch.setattr(budget, "LIST_ROWS", 1)  # every period a publication of its own
    assert run_pipeline(samples, tmp_path / "apart").ok
    monkeypatch.setattr(budget, "LIST_ROWS", 10**9)  # the whole range at once
    assert run_pipeline(samples, tmp_path / "together").ok
    apart, together = _published(tmp_path / "apart"), _published(tmp_path / "together")
    assert len(apart) > 100 and apart == together
