"""The end-of-run summary: what was ingested, quarantined and published where."""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
from rich.console import Console
from rich.table import Table

from pipelines.runner import RunOutcome
from rating_core.lake import read_table


def print_summary(outcome: RunOutcome, console: Console) -> None:
    """Print per-file counts, notes, quarantine reasons and the publishing outcomes."""
    files = Table(title=f"Inbox {outcome.inbox}", title_justify="left")
    for column in ("file", "kind", "ingested", "quarantined"):
        files.add_column(
            column, justify="right" if column in ("ingested", "quarantined") else "left"
        )
    for row in outcome.files.sort("source_file").iter_rows(named=True):
        files.add_row(
            row["source_file"], row["kind"], str(row["ingested"]), str(row["quarantined"])
        )
    if outcome.files.height:
        total_in = outcome.files.get_column("ingested").sum()
        total_q = outcome.files.get_column("quarantined").sum()
        files.add_row("[bold]total", "", f"[bold]{total_in}", f"[bold]{total_q}")
    console.print(files)
    for note in outcome.notes:
        console.print(f"note: {note}")
    quarantine = read_table(outcome.lake, "quarantine", partition_col="source").collect()
    if quarantine.height:
        reasons = (
            quarantine.group_by("reason").len().sort(["len", "reason"], descending=[True, False])
        )
        console.print(
            f"{quarantine.height} records quarantined in {outcome.lake / 'quarantine'}; "
            "most frequent reasons:"
        )
        for reason, count in reasons.head(20).iter_rows():
            console.print(f"  {count:>6}  {reason}")
    registry_missing = _players_not_in_registry(outcome)
    if registry_missing is not None:
        console.print(registry_missing)
    if outcome.periods:
        done = outcome.recomputed
        if not done:
            what = "no input changed since the last run: nothing to recompute"
        elif done == outcome.periods:
            what = "all recomputed"
        else:
            what = f"recomputed from {done[0]} on (inputs of earlier periods unchanged)"
        console.print(f"periods: {outcome.periods[0]} to {outcome.periods[-1]}; {what}")
    published = [p for p in outcome.published if p["status"] == "published"]
    unchanged = len(outcome.published) - len(published)
    if published:
        table = Table(title=f"Published in {outcome.lake / 'lists'}", title_justify="left")
        for column in ("list", "periods", "new versions", "latest"):
            table.add_column(column)
        by_list: dict[str, list[dict]] = {}
        for p in published:
            by_list.setdefault(p["list"], []).append(p)
        for name in sorted(by_list):
            rows = sorted(by_list[name], key=lambda p: p["period"])
            periods = (
                rows[0]["period"]
                if len(rows) == 1
                else f"{rows[0]['period']} to {rows[-1]['period']}"
            )
            last = rows[-1]
            table.add_row(
                name,
                periods,
                str(len(rows)),
                f"{last['period']}/v{last['version']} ({last['row_count']} players)",
            )
        console.print(table)
    if outcome.recomputed:
        console.print(
            f"{len(published)} list versions published, {unchanged} lists unchanged "
            f"(nothing new to publish)."
        )
    for failure in outcome.failures:
        console.print(f"[red]failed: {failure}")
    if outcome.published:
        lake = "" if str(outcome.lake) == "lake" else f" --lake {outcome.lake}"
        me = program_name()
        console.print(
            f"next: {me} show{lake} · {me} show fide-standard{lake} · "
            f"{me} diff LIST PERIOD{lake} · {me} history PLAYER{lake} · {me} ui"
        )


def program_name() -> str:
    """How the user invoked the CLI (`.venv/bin/ratings` after `make run`), for the hints."""
    invoked = sys.argv[0] if sys.argv and sys.argv[0].endswith("ratings") else "ratings"
    return invoked if "/" not in invoked or not Path(invoked).is_absolute() else "ratings"


def _players_not_in_registry(outcome: RunOutcome) -> str | None:
    """Count players seen in games but missing from players.csv (not an error, DESIGN §4)."""
    games = read_table(outcome.lake, "games").collect()
    if not games.height:
        return None
    registry = read_table(outcome.lake, "players").collect()
    known = registry.get_column("player_id") if registry.height else pl.Series([], dtype=pl.String)
    seen = pl.concat([games.get_column("white_id"), games.get_column("black_id")]).drop_nulls()
    seen = seen.unique()
    missing = seen.filter(~seen.is_in(known.implode())).len()
    by_name = pl.concat(
        [
            games.filter(pl.col("white_id") == pl.col("white_name")).get_column("white_id"),
            games.filter(pl.col("black_id") == pl.col("black_name")).get_column("black_id"),
        ]
    ).n_unique()
    return (
        f"players: {seen.len()} seen, {missing} not in players.csv, "
        f"{by_name} identified by name only"
    )
