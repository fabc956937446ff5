"""`ratings export LIST`: a published list written as CSV or in FIDE's TXT / XML download formats
(DESIGN §7), so Swiss-Manager, Vega and other tools that import FIDE lists can read ours.

Reads only; the output file is written atomically (a temporary file beside it, fsynced, renamed
over it), so a reader never sees half a list.
"""

from __future__ import annotations

import argparse
import errno
import os
import uuid
from pathlib import Path

from pipelines.cli.errors import UserError
from pipelines.cli.output import console
from pipelines.cli.reading import _check_positive, _lake, _pick
from rating_core.lake import publishing as publish
from rating_core.lake import tables
from rating_core.lake.storage import fsync_dir, read_table

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


def _write_atomically(target: Path, data: bytes) -> None:
    """Write `data` to `target` through a temporary file in the same folder and a rename; a
    missing folder, a folder given as the file or a denied permission is one sentence."""
    folder = target.parent
    if target.is_dir():
        raise UserError(f"cannot write '{target}': it is a folder")
    for above in (folder, *folder.parents):
        if above.exists() and not above.is_dir():
            raise UserError(f"cannot write '{target}': '{above}' is a file, not a folder")
    if not folder.is_dir():
        raise UserError(f"cannot write '{target}': the folder '{folder}' does not exist")
    temporary = folder / f".{target.name}.{uuid.uuid4().hex}.partial"
    try:
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except PermissionError as error:
        raise UserError(f"cannot write '{target}': permission denied") from error
    except OSError as error:
        if error.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
            raise  # a full disk is the machine's fault: the command line says so (exit 1)
        raise UserError(f"cannot write '{target}': {error.strerror or error}") from error
    finally:
        temporary.unlink(missing_ok=True)
    fsync_dir(folder)


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
    from rating_core.periods import next_period
    from rating_core.systems.fide.rules import rules_for_period

    rules = rules_for_period(next_period(period), name.removeprefix("fide-"))  # that list's K
    frame, left_out = numeric_ids(fide_export_frame(listed, players, period, rules))
    text = render_fide_txt(frame, period) if fmt == "fide-txt" else render_fide_xml(frame)
    return text.encode("utf-8"), left_out


def cmd_export(args: argparse.Namespace) -> int:
    """Write a published list (the latest period and version by default) to `--output`."""
    _check_positive(args.version, "--version")
    lake = _lake(args)
    period, version = _pick(lake, args.list, args.period, args.version)
    data, left_out = export_bytes(lake, args.list, period, version, args.format)
    target = Path(args.output)
    _write_atomically(target, data)
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
