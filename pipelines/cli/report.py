"""`ratings report`: one self-contained HTML page of charts about a lake's published lists.

The frames come from `rating_core.lake.report_data`, the page from `pipelines.cli.report_page`;
this module checks the arguments, shows progress and writes the file (`pipelines.cli.outputs`:
atomically, never inside published data; a failed write leaves no half page behind).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from pipelines.cli.errors import UserError
from pipelines.cli.output import console, err_console
from pipelines.cli.outputs import check_output, write_atomically
from pipelines.cli.ticker import Heartbeat, plain_heartbeat


def add_report_parser(
    sub: argparse._SubParsersAction,
    add_lake: Callable[[argparse.ArgumentParser], None],
) -> None:
    """The `ratings report` subcommand (`add_lake` adds the shared `--lake` option)."""
    report = sub.add_parser(
        "report", help="write one self-contained HTML page of charts about the published lists"
    )
    report.add_argument(
        "--output",
        required=True,
        metavar="FILE.html",
        help="the HTML file to write, e.g. lake/report.html",
    )
    add_lake(report)
    report.add_argument("--list", help="only this list (default: every list)")
    report.add_argument(
        "--player", metavar="ID", help="add this player's rating over time on every list"
    )


def cmd_report(args: argparse.Namespace) -> int:
    """Gather the report's frames from the lake, draw the page and write it to `--output`; off a
    terminal (no bar), a heartbeat on stderr names each step that is silent for a few seconds."""
    heartbeat = plain_heartbeat(err_console)
    with heartbeat, heartbeat.doing("loading the report's modules"):
        return _write_report(args, heartbeat)


def _write_report(args: argparse.Namespace, heartbeat: Heartbeat) -> int:
    """`cmd_report`'s work, `heartbeat` running."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from pipelines.cli.report_page import build_page, vega_scripts
    from rating_core.lake import publishing as publish
    from rating_core.lake.report_data import gather_report, report_steps
    from rating_core.lake.storage import as_local_path

    lake = as_local_path(args.lake)
    output = Path(args.output)
    check_output(output)  # never inside any lake's published lists or on a lake's lock
    names = publish.list_names(lake) if lake.is_dir() else []
    if not names:
        raise UserError(f"no published lists in '{lake}' (run 'ratings run' first)")
    if args.list is not None and args.list not in names:
        raise UserError(f"no list named '{args.list}'; published lists: {', '.join(names)}")
    chosen = [args.list] if args.list is not None else names
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,  # a log or a pipe gets the closing line only
    )
    steps = report_steps(len(chosen), args.player)
    done = {"read": 0, "drawn": 0}
    with progress:
        task = progress.add_task("reading the lake", total=steps)

        def step(what: str) -> None:
            done["read"] += 1
            progress.update(task, advance=1, description=f"read {what}")

        with heartbeat.doing(lambda: f"reading the lake, {done['read']} of {steps} steps done"):
            data = gather_report(
                lake.resolve(), list_names=chosen, player=args.player, on_step=step
            )
        if args.player is not None and data.timeline.is_empty():
            raise UserError(f"no published list holds player '{args.player}'")
        drawing = progress.add_task("bundling the Vega scripts", total=None)
        with heartbeat.doing("bundling the Vega scripts"):
            scripts = vega_scripts()

        def drawn(kind: str) -> None:
            done["drawn"] += 1
            progress.update(drawing, advance=1, description=f"drew a {kind} chart")

        with heartbeat.doing(lambda: f"drawing the charts, {done['drawn']} drawn"):
            page, charts = build_page(
                data, generated_at=datetime.now(UTC), scripts=scripts, on_chart=drawn
            )
        progress.update(drawing, description=f"writing {output}")
        with heartbeat.doing(f"writing {output}"):
            write_atomically(output, page.encode("utf-8"))
    heartbeat.stop()  # the work is done: the closing line says the rest
    size = len(page.encode("utf-8")) / 1e6
    console.print(  # two lines: the path and the link each stay whole at 80 columns
        f"wrote {output} ({len(charts)} charts, {size:.1f} MB)\n"
        f"open it in a browser (no network needed):\n  {output.resolve().as_uri()}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    return 0
