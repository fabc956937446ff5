"""`ratings export LIST`: a published list written as CSV or in FIDE's TXT / XML download formats
(DESIGN §7), so Swiss-Manager, Vega and other tools that import FIDE lists can read ours.

Reads only; the output file is written atomically and never inside published data
(`pipelines.cli.outputs`), so a reader never sees half a list and no published list is touched.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pipelines.cli.errors import UserError
from pipelines.cli.output import console
from pipelines.cli.outputs import check_output, write_atomically
from pipelines.cli.reading import _check_positive, _lake, _pick
from rating_core.lake import publishing as publish
from rating_core.lake import tables
from rating_core.lake.storage import read_table

EXPORT_FORMATS = ("csv", "fide-txt", "fide-xml")


def add_export_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The `export` subcommand's parser (the caller adds `--lake`)."""
    export = sub.add_parser(
        "export", help="write a published list as CSV or in FIDE's TXT or XML download format"
    )
    export.add_argument("list", help="list name, e.g. fide-standard")
    export.add_argument("--period", help="YYYY-MM (default: the latest)")
    export.add_argument("--version", type=int, help="version number, 1 or more (default: latest)")
    export.add_argument("--format", required=True, choices=EXPORT_FORMATS, help="file format")
    export.add_argument("--output", required=True, help="file to write (replaced if it exists)")
    return export


def export_bytes(lake: Path, name: str, period: str, version: int, fmt: str) -> tuple[bytes, int]:
    """(the file's bytes, players left out) of a published list in `fmt`.

    `csv` is the published `list.csv` byte for byte; `fide-txt` / `fide-xml` join the registry
    (`players`) for federation, sex, title and birth year, and leave out players whose id is not
    a FIDE number (`numeric_ids`).
    """
    if fmt == "csv":
        folder = publish.version_dir(lake, name, period, version)
        return (folder / publish.CSV_FILE).read_bytes(), 0
    if not name.startswith("fide-"):
        raise UserError(
            f"the FIDE formats hold FIDE lists; export '{name}' with --format csv instead"
        )
    from rating_core.systems.fide.formats import (  # numba-compiled K rules: only when needed
        fide_export_frame,
        numeric_ids,
        render_fide_txt,
        render_fide_xml,
    )

    listed = publish.read_list(lake, name, period, version)
    players = read_table(lake, tables.PLAYERS).collect()
    frame, left_out = numeric_ids(fide_export_frame(listed, players, period))
    text = render_fide_txt(frame, period) if fmt == "fide-txt" else render_fide_xml(frame)
    return text.encode("utf-8"), left_out


def cmd_export(args: argparse.Namespace) -> int:
    """Write a published list (the latest period and version by default) to `--output`."""
    _check_positive(args.version, "--version")
    target = Path(args.output)
    check_output(target)  # before any work: never inside published lists or on a lake's lock
    lake = _lake(args)
    period, version = _pick(lake, args.list, args.period, args.version)
    data, left_out = export_bytes(lake, args.list, period, version, args.format)
    write_atomically(target, data)
    rows = publish.read_manifest(lake, args.list, period, version)["row_count"] - left_out
    console.print(
        f"wrote {args.list} {period} v{version} ({rows} players) as {args.format} to {target}",
        highlight=False,
        soft_wrap=True,
    )
    if left_out:
        console.print(
            f"{left_out} player{'s' if left_out > 1 else ''} left out: FIDE's formats need a "
            "player id that is a FIDE number (digits only)",
            highlight=False,
            soft_wrap=True,
        )
    return 0
