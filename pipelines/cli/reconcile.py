"""`ratings reconcile LIST --period P --official FILE`: our FIDE list against FIDE's own.

FILE is the list FIDE published for the same date (its TXT or XML download, one list or the
combined file), read by the starting-list reader. Every player whose line differs is explained
(`rating_core.systems.fide.reconcile`); the counts per explanation come first. Exit status 1
while any difference is unexplained, else 0. `--previous FILE` (FIDE's list of the period
before) tells their starting ratings, so a different start can be told from an unexplained
difference.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable
from pathlib import Path

import polars as pl

from pipelines.cli.errors import UserError
from pipelines.cli.output import console, print_json
from rating_core.lake.location import as_local_path

WIDTH = 80


def add_reconcile_parser(sub: argparse._SubParsersAction, add_lake: Callable[..., None]) -> None:
    """Register `ratings reconcile`."""
    parser = sub.add_parser(
        "reconcile", help="our FIDE list against FIDE's official one, every difference explained"
    )
    parser.add_argument("list", metavar="LIST", help="fide-standard, fide-rapid or fide-blitz")
    parser.add_argument("--period", required=True, help="YYYY-MM, the period of both lists")
    parser.add_argument(
        "--official", required=True, metavar="FILE", help="FIDE's TXT or XML list of that date"
    )
    parser.add_argument(
        "--previous", metavar="FILE", help="FIDE's list of the period before (their start)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_lake(parser)


def _official(path: Path, list_name: str, period: str) -> pl.DataFrame:
    """FIDE's list read by the starting-list reader, or one `ratings:` sentence."""
    from rating_core.ingest.common import UnreadableFileError
    from rating_core.ingest.fide_lists import read_fide_list, read_fide_list_lines

    if not path.is_file():
        raise UserError(f"reconcile: the official list '{path}' does not exist")
    if path.suffix.lower() not in (".txt", ".xml"):
        raise UserError(f"reconcile: '{path}' is not FIDE's TXT or XML list")
    try:
        read_fide_list(path, list_name, period, path.name)  # FIDE's format, the right month
        return read_fide_list_lines(path, list_name, period, path.name)
    except UnreadableFileError as error:
        raise UserError(f"reconcile: {error}") from None


def _our_tournaments(lake: Path, list_name: str, period: str) -> pl.DataFrame:
    """player_id, tournament_id of the games we counted for `list_name` in `period`."""
    from rating_core import tables
    from rating_core.lake.storage import read_table

    rows = read_table(lake, tables.history(list_name, "game_explanations"), [period])
    if "counted" not in rows.collect_schema().names():
        return pl.DataFrame(schema={"player_id": pl.String, "tournament_id": pl.String})
    counted = rows.filter(pl.col("counted")).select("game_id", "player_id").collect()
    ids = counted.get_column("game_id").unique().implode()
    games = (  # only the counted games' tournaments: never every game's id (a platform's month)
        read_table(lake, tables.GAMES)
        .select("game_id", "tournament_id")
        .filter(pl.col("game_id").is_in(ids))
        .collect()
    )
    return counted.join(games, on="game_id", how="left").select("player_id", "tournament_id")


def cmd_reconcile(args: argparse.Namespace) -> int:
    """Print every difference between our list and FIDE's, explained; 1 if any is not."""
    from rating_core.lake import publishing as publish
    from rating_core.systems.fide.reconcile import UNEXPLAINED, explanation_counts, reconcile

    lake = as_local_path(args.lake)
    if not args.list.startswith("fide-"):
        raise UserError(
            f"reconcile: {args.list} is not a FIDE list (fide-standard, -rapid, -blitz)"
        )
    if args.list not in publish.list_names(lake):
        raise UserError(f"reconcile: no published list '{args.list}' in '{lake}'")
    if args.period not in publish.list_periods(lake, args.list):
        raise UserError(f"reconcile: list '{args.list}' has no period {args.period}")
    official = _official(Path(args.official), args.list, args.period)
    previous = None
    if args.previous:
        from rating_core.periods import previous_period

        previous = _official(Path(args.previous), args.list, previous_period(args.period))
    ours = publish.read_list(lake, args.list, args.period)
    version = int(ours.get_column("version")[0]) if "version" in ours.columns and ours.height else 0
    differences = reconcile(
        ours, official, _our_tournaments(lake, args.list, args.period), previous
    )
    counts = explanation_counts(differences)
    unexplained = differences.filter(pl.col("explanation") == UNEXPLAINED).height
    if args.json:
        print_json(
            {
                "list": args.list,
                "period": args.period,
                "version": version,
                "official": str(args.official),
                "players_ours": ours.height,
                "players_official": official.height,
                "counts": counts.to_dicts(),
                "differences": differences.to_dicts(),
                "unexplained": unexplained,
            }
        )
        return 1 if unexplained else 0
    say = lambda text: console.print(text, highlight=False, markup=False, soft_wrap=True)  # noqa: E731
    say(f"{args.list} {args.period} v{version}: {ours.height} players")
    say(f"{Path(args.official).name}: {official.height} players")  # the file's name whole
    say(f"{differences.height} players differ:")
    for row in counts.iter_rows(named=True):
        say(f"  {row['players']:>6}  {row['explanation']}")
    for row in differences.iter_rows(named=True):
        ours_text = "-" if row["ours"] is None else str(row["ours"])
        theirs_text = "-" if row["theirs"] is None else str(row["theirs"])
        name = row["name"] or ""
        name = name if len(name) <= 22 else name[:21] + "…"  # said cut, the id beside it whole
        say(
            f"{row['player_id']:<10} {name:<22} {ours_text:>5} {theirs_text:>5}  "
            f"{row['explanation']}"
        )
        for line in textwrap.wrap(  # wrapped at spaces: a tournament id in it stays whole
            row["detail"] or "",
            WIDTH,
            initial_indent=" " * 12,
            subsequent_indent=" " * 12,
            break_long_words=False,
            break_on_hyphens=False,
        ):
            say(line)
    if unexplained:
        say(f"{unexplained} difference{'s' if unexplained > 1 else ''} unexplained")
    return 1 if unexplained else 0
