"""The end-of-run summary: what was ingested, quarantined and published where."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import polars as pl
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from pipelines.cli.output import print_table, span
from pipelines.cli.run import RunOutcome
from rating_core import tables
from rating_core.lake import players_seen
from rating_core.lake.storage import read_table, table_dir

RATING_QUARANTINE_PREFIX = "corrections-"
"""Quarantine sources written by the rating assets (corrections that did not apply to a list)."""


def _with_rating_quarantine(files: pl.DataFrame, quarantine: pl.DataFrame) -> pl.DataFrame:
    """Per-file counts with the rows a rating asset quarantined after ingest (a correction of a
    player not on the list) moved from `ingested` to `quarantined`."""
    if not files.height or not quarantine.height or tables.SOURCE not in quarantine.columns:
        return files
    late = (
        quarantine.filter(pl.col(tables.SOURCE).str.starts_with(RATING_QUARANTINE_PREFIX))
        .group_by("source_file")
        .len("_late")
    )
    if not late.height:
        return files
    moved = pl.col("_late").fill_null(0).cast(pl.Int64)
    return (
        files.join(late, on="source_file", how="left")
        .with_columns(pl.col("ingested") - moved, pl.col("quarantined") + moved)
        .drop("_late")
    )


def print_summary(outcome: RunOutcome, console: Console) -> None:
    """Print per-file counts, notes, quarantine reasons and the publishing outcomes.

    Every user-provided string (file names, notes, reasons) is printed as plain text, never as
    rich markup, and every table fits the terminal (long file names are cut in the middle).
    """
    quarantine = (  # the columns the summary shows, not every record's text
        read_table(outcome.lake, tables.QUARANTINE)
        .select("source_file", "reason", tables.SOURCE)
        .collect()
    )
    files = _with_rating_quarantine(outcome.files, quarantine)
    rows = [
        [row["source_file"], row["kind"], row["ingested"], row["quarantined"]]
        for row in files.sort("source_file").iter_rows(named=True)
    ]
    if files.height:
        total_in = files.get_column("ingested").sum()
        total_q = files.get_column("quarantined").sum()
        rows.append(["total", "", total_in, total_q])
    print_table(
        f"Inbox {outcome.inbox}",
        ["file", "kind", "ingested", "quarantined"],
        rows,
        shorten=("file",),
        right=("ingested", "quarantined"),
        out=console,
    )
    for note in outcome.notes:
        console.print(Text(f"note: {note}"))
    if quarantine.height:
        reasons = (
            quarantine.group_by("reason").len().sort(["len", "reason"], descending=[True, False])
        )
        folder = table_dir(outcome.lake, tables.QUARANTINE)
        console.print(
            Text(f"{quarantine.height} records quarantined in {folder}; most frequent reasons:")
        )
        grid = Table.grid(padding=(0, 2))
        grid.add_column(justify="right", no_wrap=True, min_width=6)
        grid.add_column(overflow="fold")
        for reason, count in reasons.head(20).iter_rows():
            grid.add_row(Text(str(count)), Text(str(reason)))
        console.print(Padding(grid, (0, 0, 0, 2)))
    registry_missing = _players_not_in_registry(outcome)
    if registry_missing is not None:
        console.print(registry_missing, highlight=False)
    print_periods(outcome, console)
    outcomes = outcome.on_disk()
    published = [p for p in outcomes if p["status"] == "published"]
    unchanged = len(outcomes) - len(published)
    if published:
        by_list: dict[str, list[dict]] = {}
        for p in published:
            by_list.setdefault(p["list"], []).append(p)
        table_rows = []
        for name in sorted(by_list):
            mine = sorted(by_list[name], key=lambda p: (p["period"], p["version"]))
            first, last = mine[0]["period"], mine[-1]["period"]
            table_rows.append(
                [
                    name,
                    first if first == last else f"{first} to {last}",
                    len(mine),
                    f"{last}/v{mine[-1]['version']} ({mine[-1]['row_count']})",
                ]
            )
        print_table(
            f"Published in {outcome.lake / 'lists'}",
            ["list", "periods", "new versions", "latest (players)"],
            table_rows,
            right=("new versions",),
            out=console,
        )
    if outcome.recomputed or published:
        console.print(
            f"{_count(len(published), 'list version')} published, "
            f"{_count(unchanged, 'list-period')} unchanged (nothing new to publish)."
        )
    for failure in outcome.failures:
        console.print(Text(f"failed: {failure}", style="red"))
    if outcomes:
        # named even when it is the default: `ratings ui` must open this run's instance, and
        # the hint says which lake that is (issue 10 item 2)
        lake = f" --lake {shlex.quote(str(outcome.lake))}"
        me = program_name()
        names = sorted({p["list"] for p in outcomes})
        example = "fide-standard" if "fide-standard" in names else names[0]
        hints = [
            f"{me} show{lake}",
            f"{me} show {example}{lake}",
            f"{me} diff LIST PERIOD{lake}",
            f"{me} history PLAYER{lake}",
            f"{me} ui{lake}",  # the UI reads the lake it is given, like the other commands
        ]
        line = "next: " + " · ".join(hints)
        if len(line) > console.width:  # one command a line rather than a command cut in two
            line = "next:\n" + "\n".join(f"  {hint}" for hint in hints)
        console.print(Text(line))


def _count(number: int, noun: str) -> str:
    """`1 list version`, `2 list versions`."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def program_name() -> str:
    """How the user invoked the CLI (`.venv/bin/ratings` after `make run`), for the hints."""
    invoked = sys.argv[0] if sys.argv and sys.argv[0].endswith("ratings") else "ratings"
    return invoked if "/" not in invoked or not Path(invoked).is_absolute() else "ratings"


def print_periods(outcome: RunOutcome, console: Console) -> None:
    """The periods line: the span of the lake's periods (`period: 2024-01` when there is one, not
    a range from a month to itself) and which were recomputed."""
    if not outcome.periods:
        return
    done = outcome.recomputed
    if not done:
        what = "no input changed since the last run: nothing to recompute"
    elif done == outcome.periods:
        what = "all recomputed" if len(done) > 1 else "recomputed"
    else:
        what = f"recomputed from {done[0]} on (inputs of earlier periods unchanged)"
    first, last = outcome.periods[0], outcome.periods[-1]
    label = "periods" if len(outcome.periods) > 1 else "period"
    console.print(f"{label}: {span(first, last)}; {what}")


def _players_not_in_registry(outcome: RunOutcome) -> str | None:
    """Count players seen in games, those missing from players.csv (not an error, DESIGN §4) and,
    of those, the ones a game file identified by name only (id equal to the name: as
    `rating_core.names.name_only_ids` tells them).

    From the players the ingest kept per inbox file group, not from the games again
    (`rating_core.lake.players_seen`), and counted again only when those or the registry
    changed since the counts were recorded: a run with nothing new reads neither."""
    total, not_registered, by_name = players_seen.counts(outcome.lake)
    if not total:
        return None
    return (
        f"players: {total} seen, {not_registered} not in players.csv, "
        f"{by_name} identified by name only"
    )
