"""`ratings report`: one self-contained HTML page of charts about a lake's published lists.

The frames come from `rating_core.lake.report_data`, the page from `pipelines.cli.report_page`;
this module checks the arguments, shows progress and writes the file (atomically: a failed
write leaves no half page behind).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from pipelines.cli.errors import UserError
from pipelines.cli.output import console


def add_report_parser(
    sub: argparse._SubParsersAction,  # type: ignore[type-arg]
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


def _check_output(path: Path) -> None:
    """Refuse, before any work, an output that cannot be an HTML file we may write."""
    if path.is_dir():
        raise UserError(f"--output '{path}' is a folder; give a file name such as report.html")
    folder = path.parent
    if not folder.is_dir():
        raise UserError(f"cannot write '{path}': the folder '{folder}' does not exist")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UserError(f"cannot write '{path}': permission denied")


def _write_atomically(path: Path, text: str) -> None:
    """Write `text` beside `path` and rename it into place, so a reader never sees half a page."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def cmd_report(args: argparse.Namespace) -> int:
    """Gather the report's frames from the lake, draw the page and write it to `--output`."""
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
    _check_output(output)
    if output.resolve().is_relative_to((lake / "lists").resolve()):
        raise UserError(
            f"--output '{output}' is inside the published lists, which are never modified; "
            f"write the report beside them, e.g. {lake / 'report.html'}"
        )
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
    with progress:
        task = progress.add_task("reading the lake", total=report_steps(len(chosen), args.player))

        def step(what: str) -> None:
            progress.update(task, advance=1, description=f"read {what}")

        data = gather_report(lake.resolve(), list_names=chosen, player=args.player, on_step=step)
        if args.player is not None and data.timeline.is_empty():
            raise UserError(f"no published list holds player '{args.player}'")
        drawing = progress.add_task("bundling the Vega scripts", total=None)
        scripts = vega_scripts()

        def drawn(kind: str) -> None:
            progress.update(drawing, advance=1, description=f"drew a {kind} chart")

        page, charts = build_page(
            data, generated_at=datetime.now(UTC), scripts=scripts, on_chart=drawn
        )
        progress.update(drawing, description=f"writing {output}")
        _write_atomically(output, page)
    size = len(page.encode("utf-8")) / 1e6
    console.print(
        f"wrote {output} ({len(charts)} charts, {size:.1f} MB): open {output.resolve().as_uri()} "
        "in a browser (no network needed)",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    return 0
