"""`ratings export LIST`: a published list written as CSV or in FIDE's TXT / XML download formats
(DESIGN §7), so Swiss-Manager, Vega and other tools that import FIDE lists can read ours.

Reads only; the output file is written atomically and never inside published data
(`pipelines.cli.outputs`), so a reader never sees half a list and no published list is touched.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipelines.cli.errors import UserError
from pipelines.cli.output import console
from pipelines.cli.outputs import check_output, write_atomically
from pipelines.cli.reading import _check_positive, _lake, _pick
from rating_core import tables
from rating_core.lake import publishing as publish
from rating_core.lake.storage import read_table

if TYPE_CHECKING:
    import polars as pl

    from rating_core.systems.fide.export import Format
    from rating_core.systems.fide.rules import FideRules

EXPORT_FORMATS = ("csv", "fide-txt", "fide-xml", "fide-txt-combined", "fide-xml-combined")


def add_export_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The `export` subcommand's parser (the caller adds `--lake`)."""
    export = sub.add_parser(
        "export",
        help="write a published list as CSV or in FIDE's TXT or XML download formats (one list, "
        "or the combined standard, rapid and blitz file)",
    )
    export.add_argument("list", help="list name, e.g. fide-standard")
    export.add_argument("--period", help="YYYY-MM (default: the latest)")
    export.add_argument("--version", type=int, help="version number, 1 or more (default: latest)")
    export.add_argument(
        "--format",
        required=True,
        choices=EXPORT_FORMATS,
        metavar="FORMAT",  # the forms, listed in the help: one line of {...} overflowed 80
        help="csv: the published list.csv; fide-txt, fide-xml: FIDE's file of one list; "
        "fide-txt-combined, fide-xml-combined: FIDE's players_list_foa.txt and "
        "players_list_xml_foa.xml (standard, rapid and blitz of the period)",
    )
    export.add_argument("--output", required=True, help="file to write (replaced if it exists)")
    return export


@dataclass(frozen=True)
class Exported:
    """An export: the file's bytes, the players in it, those left out, and the other published
    lists it holds (the combined file's rapid and blitz lists, as `name period vN`)."""

    data: bytes
    players: int
    left_out: int
    with_lists: tuple[str, ...] = ()


FIDE_LISTS = {"standard": "fide-standard", "rapid": "fide-rapid", "blitz": "fide-blitz"}


def _next_rules(name: str, period: str) -> FideRules:
    """The rules of a FIDE list's next period (RULES §3.3: each list its own), whose K the
    export shows."""
    from rating_core.periods import next_period
    from rating_core.systems.fide.rules import rules_for_period

    return rules_for_period(next_period(period), name.removeprefix("fide-"))


def export_bytes(lake: Path, name: str, period: str, version: int, fmt: str) -> Exported:
    """A published list in `fmt`.

    `csv` is the published `list.csv` byte for byte. The FIDE formats (`fide-txt`, `fide-xml`:
    FIDE's per-list files; `fide-txt-combined`, `fide-xml-combined`: FIDE's
    `players_list_foa.txt` and `players_list_xml_foa.xml`) are written by
    `rating_core.systems.fide.export` from the list, the registry (`players`) filling a person
    field the list leaves empty; players whose id is not a FIDE number are left out. The
    combined file holds `name` at `version` and the other two FIDE lists of `period` at their
    latest version (a list without that period: zeros).
    """
    if fmt == "csv":
        folder = publish.version_dir(lake, name, period, version)
        data = (folder / publish.CSV_FILE).read_bytes()
        return Exported(data, publish.read_manifest(lake, name, period, version)["row_count"], 0)
    if name not in FIDE_LISTS.values():
        raise UserError(
            f"the FIDE formats hold FIDE lists; export '{name}' with --format csv instead"
        )
    from rating_core.systems.fide.export import (  # numba-compiled K rules: only when needed
        combined_file,
        per_list_file,
    )

    kind: Format = "xml" if fmt.startswith("fide-xml") else "txt"
    players = read_table(lake, tables.PLAYERS).collect()
    if not fmt.endswith("-combined"):
        listed = publish.read_list(lake, name, period, version)
        out = per_list_file(listed, period, kind, players, _next_rules(name, period))
        return Exported(out.data, out.players, out.left_out)
    lists: dict[str, pl.DataFrame | None] = {}
    others = []
    for list_kind, list_name in FIDE_LISTS.items():
        chosen = version if list_name == name else publish.latest_version(lake, list_name, period)
        lists[list_kind] = (
            None if chosen is None else publish.read_list(lake, list_name, period, chosen)
        )
        if list_name != name:
            others.append(f"{list_name} v{chosen}" if chosen else f"no {list_name}")
    out = combined_file(lists, period, kind, players)
    return Exported(out.data, out.players, out.left_out, tuple(others))


def cmd_export(args: argparse.Namespace) -> int:
    """Write a published list (the latest period and version by default) to `--output`."""
    _check_positive(args.version, "--version")
    target = Path(args.output)
    check_output(target)  # before any work: never inside published lists or on a lake's lock
    lake = _lake(args)
    period, version = _pick(lake, args.list, args.period, args.version)
    exported = export_bytes(lake, args.list, period, version, args.format)
    write_atomically(target, exported.data)
    with_lists = f" with {' and '.join(exported.with_lists)}" if exported.with_lists else ""
    console.print(
        f"wrote {args.list} {period} v{version}{with_lists} ({exported.players} players) as "
        f"{args.format} to {target}",
        highlight=False,
        soft_wrap=True,
    )
    if exported.left_out:
        left_out = exported.left_out
        console.print(
            f"{left_out} player{'s' if left_out > 1 else ''} left out: FIDE's formats need a "
            "player id that is a FIDE number (digits only)",
            highlight=False,
            soft_wrap=True,
        )
    return 0
