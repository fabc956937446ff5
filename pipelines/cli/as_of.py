"""`--as-of YYYY-MM-DD` and `--original` of `ratings show` and `ratings history`.

Which version was in force on a day is `rating_core.lake.as_of`'s rule: of the versions published
by the end of the day (UTC), those of the latest period on or before its month; the newest of
them, or with `--original` the period's first publication. This module adds the options to the
parsers and answers for the two commands, so `pipelines.cli.reading` changes by a few lines only.
"""

from __future__ import annotations

import argparse
import contextlib
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from pipelines.cli.errors import UserError
from pipelines.cli.output import print_json, print_table

if TYPE_CHECKING:
    import polars as pl

PUBLISHED_FORMAT = "%Y-%m-%d %H:%M UTC"
"""How a version's `created_at` is printed."""


def _as_of_date(text: str) -> date:
    """argparse type of `--as-of`: a calendar date, refused in one sentence otherwise."""
    from rating_core.lake import as_of as lake_as_of

    try:
        return lake_as_of.parse_date(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_as_of_options(parser: argparse.ArgumentParser) -> None:
    """Add `--as-of` and `--original` (unless the parser has `--original` already: `ratings
    show --original` may come from the original/revised lists too, with the same meaning)."""
    parser.add_argument(
        "--as-of",
        type=_as_of_date,
        metavar="YYYY-MM-DD",
        help="the version in force on that day: the newest published by then, of the latest "
        "period on or before it",
    )
    with contextlib.suppress(argparse.ArgumentError):  # already there, with the same meaning
        parser.add_argument(
            "--original",
            action="store_true",
            help="the version first published for the period (with --as-of: of the period in force)",
        )


def requested(args: argparse.Namespace) -> bool:
    """Whether the command was given `--as-of`."""
    return getattr(args, "as_of", None) is not None


def _published(moment: object) -> str:
    """A `created_at` as printed."""
    return format(moment, PUBLISHED_FORMAT) if moment is not None else ""


def _rating(value: float | None) -> str:
    """A published rating as the lists show it: `1512`, FIBS `1517.2`."""
    return "" if value is None else f"{value:g}"


def _json_rating(row: dict) -> dict:
    """A row of `ratings_as_of` for JSON, its rating as its list publishes it (`2389` on a
    FIDE, UKD or club list, never `2389.0`; FIBS keeps its decimal)."""
    from rating_core.systems.contract import publishes_whole_numbers

    value = row.get("rating")
    if isinstance(value, float) and value.is_integer() and publishes_whole_numbers(row["list"]):
        return {**row, "rating": int(value)}
    return row


def show_choice(lake: Path, args: argparse.Namespace) -> tuple[str | None, int | None, str | None]:
    """The period and version `ratings show LIST` reads, given `--as-of` / `--original`, and a
    line saying which version that is (None: the command's own defaults, nothing to say)."""
    from rating_core.lake import as_of as lake_as_of
    from rating_core.lake import publishing as publish

    original = bool(getattr(args, "original", False))
    if not requested(args):
        if original and args.version is not None:
            raise UserError("--original and --version both choose a version; give one of them")
        if not original or args.list not in publish.list_names(lake):
            return args.period, args.version, None  # `show` reports an unknown list itself
        periods = publish.list_periods(lake, args.list)
        period = args.period or periods[-1]
        if period not in periods:
            return period, None, None
        return period, publish.complete_versions(lake, args.list, period)[0], None
    if args.period is not None or args.version is not None:
        raise UserError(
            "--as-of chooses the period and version itself; leave out --period/--version"
        )
    names = publish.list_names(lake)
    if args.list not in names:
        raise UserError(
            f"no list named '{args.list}'; published lists: {', '.join(names) or 'none'}"
        )
    day: date = args.as_of
    chosen = lake_as_of.list_in_force(lake, args.list, day, original=original)
    if chosen is None:
        why = lake_as_of.why_none_in_force(lake, args.list, day)
        raise UserError(f"no version of '{args.list}' was in force on {day}: {why}")
    which = "the period's first publication" if original else "the newest published by then"
    note = (
        f"in force on {day}: {chosen.list} {chosen.period} v{chosen.version}, published "
        f"{_published(chosen.created_at)} ({which})"
    )
    return chosen.period, chosen.version, note


def cmd_lists_in_force(lake: Path, args: argparse.Namespace) -> int:
    """`ratings show --as-of D` without a list: the version of every list in force on D."""
    import polars as pl

    from rating_core.lake import as_of as lake_as_of
    from rating_core.lake.versions import published_versions

    day: date = args.as_of
    original = bool(getattr(args, "original", False))
    chosen = lake_as_of.versions_in_force(published_versions(lake), day, original=original)
    if args.json:
        print_json(
            chosen.select("list", "period", "version", "created_at", "row_count")
            .with_columns(pl.col("created_at").dt.strftime("%Y-%m-%dT%H:%M:%S%:z"))
            .to_dicts()
        )
        return 0
    if chosen.is_empty():
        raise UserError(f"no list was in force on {day} in '{lake}' (none was published by then)")
    print_table(
        f"Lists in force on {day}",
        ["list", "period", "version", "published", "players"],
        [
            (
                row["list"],
                row["period"],
                row["version"],
                _published(row["created_at"]),
                row["row_count"],
            )
            for row in chosen.iter_rows(named=True)
        ],
    )
    return 0


def _family(system: str) -> str:
    """The lists an explanation table is about, as a name or a prefix ending in `-`:
    `fide-standard-game_explanations` -> `fide-standard`, `site-not-rated` -> `site-`."""
    head = system.split("-")
    if head[0] in ("fide", "ukd") and len(head) > 1:
        return f"{head[0]}-{head[1]}"
    return "fibs" if head[0] == "fibs" else f"{head[0]}-"


def history_as_of(
    lake: Path, args: argparse.Namespace, history: pl.DataFrame
) -> pl.DataFrame | None:
    """`ratings history PLAYER --as-of D`: print the player's ratings on every list in force on
    D, then give back the explanation rows of the periods up to the one in force for each
    system (None: everything was printed, as JSON)."""
    import polars as pl

    from rating_core.lake import as_of as lake_as_of
    from rating_core.lake.versions import published_versions

    day: date = args.as_of
    original = bool(getattr(args, "original", False))
    in_force = lake_as_of.versions_in_force(published_versions(lake), day, original=original)
    ratings = lake_as_of.ratings_as_of(lake, args.player, day, original=original)
    last_period: dict[str, str] = {}
    for system in history["system"].unique().to_list():
        family = _family(system)
        mine = (
            pl.col("list").str.starts_with(family)
            if family.endswith("-")
            else pl.col("list") == family
        )
        periods = in_force.filter(mine)["period"]
        if periods.len():
            last_period[system] = str(periods.max())
    kept = history.filter(
        pl.col("period")
        <= pl.col("system").replace_strict(last_period, default=None, return_dtype=pl.String)
    )
    if args.json:
        print_json(
            {
                "player": args.player,
                "as_of": day.isoformat(),
                "ratings": [
                    _json_rating(row)
                    for row in ratings.with_columns(
                        pl.col("created_at").dt.strftime("%Y-%m-%dT%H:%M:%S%:z")
                    ).to_dicts()
                ],
                "history": kept.to_dicts(),
            }
        )
        return None
    if ratings.is_empty() and kept.is_empty():
        raise UserError(f"player '{args.player}' had no rating in force on {day} in '{lake}'")
    print_table(
        f"{args.player}: ratings in force on {day}",
        ["list", "period", "version", "published", "rating", "games"],
        [
            (
                r["list"],
                r["period"],
                r["version"],
                _published(r["created_at"]),
                _rating(r["rating"]),
                r["games"],
            )
            for r in ratings.iter_rows(named=True)
        ],
        right=("rating", "games", "version"),
    )
    return kept
