"""The malformed-input corpus (issue 9 item 20): helpers shared by every case file.

Each case writes a small inbox around one bad record, runs the ingest assets (asset tier) or the
`ratings` command (end-to-end tier) on temporary folders, and asserts three things: the reason a
person reads, the line it points at, and that the good records around it still landed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import polars as pl

from assets.ingest import INGEST_ASSETS, INGEST_CHECKS
from assets.resources import PipelinePaths
from rating_core import tables
from rating_core.lake.storage import TableRef, read_table

ROOT = Path(__file__).resolve().parents[2]

PLAYERS_HEADER = (
    "player_id,name,federation,sex,birth_date,title,fide_id,is_bot,bot_rating,"
    "email_verified,display_name\n"
)
PLATFORM_HEADER = (
    "game_id,played_at,white_id,black_id,result,time_control,rated,kind,plies,termination\n"
)
FEDERATION_HEADER = "game_id,tournament_id,round,played_on,white_id,black_id,result,rating_list\n"


@dataclass
class Ingested:
    """What the ingest assets wrote: the run result and the lake tables a case asserts on."""

    result: dg.ExecuteInProcessResult
    lake: Path

    def table(self, table: TableRef) -> pl.DataFrame:
        """A lake table, collected (empty frame when absent)."""
        return read_table(self.lake, table).collect()

    @property
    def quarantine(self) -> pl.DataFrame:
        """Every quarantined record (source_file, line, record, value, reason, source)."""
        return self.table(tables.QUARANTINE)

    @property
    def games(self) -> pl.DataFrame:
        """The canonical games table."""
        return self.table(tables.GAMES)

    @property
    def players(self) -> pl.DataFrame:
        """The registry as ingested."""
        return self.table(tables.PLAYERS)

    def reasons(self, source_file: str | None = None) -> list[str]:
        """Quarantine reasons, optionally of one file (inbox-relative name)."""
        frame = self.quarantine
        if not frame.height:
            return []
        if source_file is not None:
            frame = frame.filter(pl.col("source_file") == source_file)
        return frame.get_column("reason").to_list()

    def only_quarantined(self, source_file: str) -> dict:
        """The single quarantine row of `source_file` (fails when there is not exactly one)."""
        frame = self.quarantine.filter(pl.col("source_file") == source_file)
        assert frame.height == 1, frame
        return frame.row(0, named=True)


def write_inbox(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """An inbox under `root` holding exactly `files` (inbox-relative path -> text or bytes)."""
    inbox = root / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = inbox / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return inbox


def ingest(inbox: Path, lake: Path | None = None) -> Ingested:
    """Materialize the ingest assets and checks on `inbox` into `lake` (default beside it)."""
    lake = lake or inbox.parent / "lake"
    result = dg.materialize(
        [*INGEST_ASSETS, *INGEST_CHECKS],
        resources={"paths": PipelinePaths(inbox=str(inbox), lake=str(lake))},
        raise_on_error=False,
    )
    return Ingested(result, lake)


def ratings(*args: str, cwd: Path = ROOT, columns: int = 200) -> subprocess.CompletedProcess[str]:
    """Run the `ratings` command as a user would, in a fresh process (never raises)."""
    return subprocess.run(
        [sys.executable, "-m", "pipelines.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "COLUMNS": str(columns), "PYTHONPATH": str(ROOT)},
    )


def assert_one_sentence(proc: subprocess.CompletedProcess[str]) -> str:
    """The command failed with one `ratings:` sentence on stderr: no traceback, no class names."""
    assert proc.returncode != 0, proc.stdout
    err = proc.stderr.strip()
    assert err.startswith("ratings: "), err
    assert "Traceback" not in err and "Error:" not in err and "Exception" not in err, err
    assert len(err.splitlines()) == 1, err
    return err
