"""`ratings show LIST --federation TUR --women --juniors --top N`: FIDE-style top lists.

Any of the three filters makes `show` print a top list (`rating_core.lake.players.top_list`):
active players only, by rating, with their place on it (`position`) and the list's own `rank`
when the list has that column.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import polars as pl

TOP_COLUMNS = ("position", "rank", "federation", "sex", "birth_year")
"""Columns a top list shows besides the list's compact ones."""


def add_top_options(show: argparse.ArgumentParser) -> None:
    """The top-list filters of `ratings show`."""
    show.add_argument("--federation", metavar="FED", help="top list of one federation (TUR)")
    show.add_argument("--women", action="store_true", help="top list of women (sex F)")
    show.add_argument(
        "--juniors", action="store_true", help="top list of juniors (born in or after year - 20)"
    )


def wanted(args: argparse.Namespace) -> bool:
    """Whether `show` prints a top list."""
    return bool(
        getattr(args, "federation", None)
        or getattr(args, "women", False)
        or getattr(args, "juniors", False)
    )


def filtered(args: argparse.Namespace, frame: pl.DataFrame, period: str) -> pl.DataFrame:
    """The list's rows, or its top list when a filter is given."""
    if not wanted(args):
        return frame
    from pipelines.cli.errors import UserError
    from rating_core.lake.players import MissingColumnError, top_list

    try:
        return top_list(
            frame, period, federation=args.federation, women=args.women, juniors=args.juniors
        )
    except MissingColumnError as error:
        raise UserError(f"show {args.list} {period}: {error}") from None


def columns(args: argparse.Namespace, compact: Sequence[str]) -> list[str]:
    """The columns `show` prints without --all: the top list's first when one is asked for."""
    if not wanted(args):
        return list(compact)
    return [*TOP_COLUMNS, *(c for c in compact if c not in TOP_COLUMNS)]
