"""`ratings run`'s sentences read as English: a failed step is named in words, never by its
Dagster key (`games: platform/x.pgn.zst: ...`), and a single period is not a range
(`periods: 2024-01 to 2024-01`)."""

from __future__ import annotations

import errno
import io
import os
from pathlib import Path
from types import SimpleNamespace

import dagster as dg
import pytest
from rich.console import Console

from pipelines.cli import summary
from pipelines.cli.run import _step_failures, step_words
from rating_core.ingest.common import UnreadableFileError
from tests.support.inbox import ingest, write_inbox

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _failed_step(step: str, exc: BaseException) -> SimpleNamespace:
    """A run result holding one failed step named `step` that raised `exc`, as Dagster records
    it (its serialized error)."""

    @dg.asset(name=step)
    def failing() -> None:
        raise exc

    result = dg.materialize(
        [failing], instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
    )
    return SimpleNamespace(all_events=result.all_events)


@pytest.mark.e2e
def test_an_unreadable_archive_is_its_own_sentence_without_the_step_name(tmp_path: Path) -> None:
    """Before: `games: platform/x.pgn.zst: truncated or corrupt zstd data ...`."""
    inbox = write_inbox(tmp_path, {"platform/x.pgn.zst": ZSTD_MAGIC + b"\x00" * 40})
    ingested = ingest(inbox)
    (sentence,) = _step_failures(ingested.result)
    assert sentence.startswith("platform/x.pgn.zst: "), sentence
    assert "zstd" in sentence and "games" not in sentence


def test_a_readers_sentence_stands_alone() -> None:
    result = _failed_step("games", UnreadableFileError("platform/g.pgn.gz: truncated gzip data"))
    assert _step_failures(result) == ["platform/g.pgn.gz: truncated gzip data"]  # type: ignore[arg-type]


def test_a_fault_of_the_machine_names_the_step_in_words() -> None:
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/lake/games/part-0.parquet")
    (sentence,) = _step_failures(_failed_step("games", full))  # type: ignore[arg-type]
    assert sentence.startswith("the ingest of the games stopped: the disk is full"), sentence
    (sentence,) = _step_failures(_failed_step("site_ratings", full))  # type: ignore[arg-type]
    assert sentence.startswith("the site ratings step stopped: the disk is full"), sentence


def test_a_bug_names_the_step_in_words() -> None:
    (sentence,) = _step_failures(_failed_step("players", KeyError("site")))  # type: ignore[arg-type]
    assert sentence.startswith("internal error in the ingest of the players: 'site'"), sentence


def test_step_words() -> None:
    assert step_words("games") == "the ingest of the games"
    assert step_words("moderation_decisions") == "the ingest of the moderation decisions"
    assert step_words("site_ratings") == "the site ratings step"
    assert step_words("fibs_list_published") == "the publication of the fibs list"
    assert step_words("site_lists_published") == "the publication of the site lists"
    assert step_words(None) == "a step of the run"


def _periods_line(periods: list[str], recomputed: list[str]) -> str:
    out = io.StringIO()
    outcome = SimpleNamespace(periods=periods, recomputed=recomputed)
    summary.print_periods(outcome, Console(file=out, width=200))  # type: ignore[arg-type]
    return out.getvalue().strip()


def test_one_period_is_not_a_range() -> None:
    """Before: `periods: 2024-01 to 2024-01; all recomputed`."""
    assert _periods_line(["2024-01"], ["2024-01"]) == "period: 2024-01; recomputed"
    assert _periods_line(["2024-01"], []) == (
        "period: 2024-01; no input changed since the last run: nothing to recompute"
    )
    assert _periods_line(["2026-01", "2026-02", "2026-03"], ["2026-02", "2026-03"]) == (
        "periods: 2026-01 to 2026-03; recomputed from 2026-02 on (inputs of earlier periods "
        "unchanged)"
    )
    assert _periods_line(["2026-01", "2026-02"], ["2026-01", "2026-02"]) == (
        "periods: 2026-01 to 2026-02; all recomputed"
    )
