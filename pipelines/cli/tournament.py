"""`ratings tournament ID` and `ratings find NAME`: the rating officer's reports (issue 32 item 7).

The tournament report is printed as FIDE's calculation pages show it, at 80 columns: per player
Ro, K, each game (round, opponent, Rc, D, PD, score, ΔR, K × ΔR), then W, We, the change K × (W −
We), the performance rating and the period's rounded change; `--json` gives the same frames.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable

import polars as pl

from pipelines.cli.errors import UserError
from pipelines.cli.output import console, print_json
from rating_core.lake.location import as_local_path

WIDTH = 80
"""The report's width in characters."""


def add_parsers(sub: argparse._SubParsersAction, add_lake: Callable[..., None]) -> None:
    """Register `ratings tournament` and `ratings find`."""
    tournament = sub.add_parser(
        "tournament", help="a FIDE tournament's rating report: Ro, games, W, We, K, change"
    )
    tournament.add_argument("tournament_id", metavar="ID", help="the tournament's id")
    tournament.add_argument("--json", action="store_true", help="print JSON")
    add_lake(tournament)
    find = sub.add_parser("find", help="players by name (accents and case ignored)")
    find.add_argument("name", metavar="NAME", help="a name or part of one")
    find.add_argument("--json", action="store_true", help="print JSON")
    add_lake(find)


def _number(value: float | int | None, digits: int = 2, sign: bool = True) -> str:
    """`value` with `digits` decimals and a sign ('-' when absent)."""
    if value is None:
        return "-"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def _whole(value: int | None) -> str:
    return "-" if value is None else str(value)


def _cut(text: str, width: int) -> str:
    """`text` in at most `width` characters (an ellipsis where it was cut)."""
    return text if len(text) <= width else text[: width - 1] + "…"


def _who(name: str | None, player_id: str, width: int) -> str:
    """`name (id)` in at most `width` characters: the name is cut, never the id."""
    tail = f" ({player_id})"
    return _cut(name or "", max(width - len(tail), 1)) + tail


def _wrapped(text: str, indent: str = "") -> list[str]:
    """`text` as lines of at most WIDTH characters, broken at spaces only (an id or a name with
    hyphens stays whole; one longer than a line is printed whole on its own line)."""
    return textwrap.wrap(
        text,
        WIDTH,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [""]


def _score(value: float | None) -> str:
    if value is None:
        return "-"
    return {0.0: "0", 0.5: "½", 1.0: "1"}.get(value, f"{value:g}")


def report_lines(report: object) -> list[str]:
    """The report as lines of at most WIDTH characters."""
    from rating_core.lake.tournament_report import TournamentReport

    assert isinstance(report, TournamentReport)
    lines = [
        *_wrapped(f"{report.tournament_id}: {report.list_name}, rated in period {report.period}"),
        "",
        f"{'player':<30} {'Ro':>5} {'K':>3} {'n':>3} {'W':>4} {'We':>6} {'change':>7} {'Rp':>5}",
    ]
    for row in report.players.iter_rows(named=True):
        who = _who(row["name"], row["player_id"], 30)
        lines.append(
            f"{who:<30} {_whole(row['ro']):>5} {_whole(row['k']):>3} {row['rated_games']:>3} "
            f"{row['w']:>4g} {_number(row['we'], sign=False):>6} {_number(row['change']):>7} "
            f"{_whole(row['performance']):>5}"
        )
    games = report.games.partition_by("player_id", as_dict=True, maintain_order=True)
    for row in report.players.iter_rows(named=True):
        lines += ["", _who(row["name"], row["player_id"], WIDTH)]
        if row["ro"] is None:
            lines.append("  unrated on this list at the period start: no change")
        else:
            lines.append(f"  Ro {row['ro']}  K {row['k']} ({row['k_reason']})")
        lines.append(
            f"  {'rd':>2} {'opponent':<26} {'Rc':>5} {'D':>5} {'PD':>5} {'S':>2} {'ΔR':>6} "
            f"{'K×ΔR':>7}"
        )
        for game in games[(row["player_id"],)].iter_rows(named=True):
            opponent = (  # a name is cut to its column, an id never
                _cut(game["opponent_name"], 26)
                if game["opponent_name"]
                else game["opponent_id"] or "(no opponent)"
            )
            head = (
                f"  {_whole(game['round']):>2} {opponent:<26} {_whole(game['opponent_rating']):>5} "
            )
            if game["counted"]:
                lines.append(
                    head + f"{game['d']:>5} {game['pd']:>5.2f} {_score(game['score']):>2} "
                    f"{_number(game['delta_r']):>6} {_number(game['k_delta_r']):>7}"
                )
            else:
                note = f"{_score(game['score'])}  {game['not_counted_reason']}"
                lines += _wrapped(head + note, " " * 6)  # under the opponent's name
        if row["ro"] is not None:
            lines.append(
                f"  W {row['w']:g}  We {_number(row['we'], sign=False)}  "
                f"W−We {_number(row['w_minus_we'])}  K {row['k']}  "
                f"change {_number(row['change'])}"
            )
            period = (
                f"period {row['period']}: {row['period_change']:+d} → {row['rating_after']}"
                if row["period_change"] is not None
                else ""
            )
            lines += _wrapped(
                f"  Ra {_whole(row['ra'])}  Rp {_whole(row['performance'])}  {period}", "  "
            )
    return lines


def cmd_tournament(args: argparse.Namespace) -> int:
    """Print a tournament's rating report (or its JSON)."""
    from rating_core.lake.tournament_report import UnknownTournamentError, read_tournament_report

    lake = as_local_path(args.lake)
    if not lake.is_dir():
        raise UserError(f"no lake at '{lake}' (run 'ratings run' first)")
    try:
        report = read_tournament_report(lake, args.tournament_id)
    except UnknownTournamentError as error:
        raise UserError(str(error)) from None
    if args.json:
        print_json(
            {
                "tournament_id": report.tournament_id,
                "list": report.list_name,
                "period": report.period,
                "players": report.players.to_dicts(),
                "games": report.games.to_dicts(),
            }
        )
        return 0
    for line in report_lines(report):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    return 0


def cmd_find(args: argparse.Namespace) -> int:
    """Print the players whose name holds NAME (accents and case ignored), with their lists."""
    from rating_core.lake.players import read_players_found

    lake = as_local_path(args.lake)
    if not lake.is_dir():
        raise UserError(f"no lake at '{lake}' (run 'ratings run' first)")
    if not args.name.strip():
        raise UserError("find: NAME is empty")
    found = read_players_found(lake, args.name)
    if args.json:
        print_json(found.to_dicts())
        return 0
    if found.is_empty():
        console.print(f"no player's name holds '{args.name}'", highlight=False, markup=False)
        return 1
    for (player_id, name), rows in found.group_by("player_id", "name", maintain_order=True):
        console.print(_who(name, player_id, WIDTH), highlight=False, markup=False)
        for row in rows.filter(pl.col("list").is_not_null()).iter_rows(named=True):
            rating = row["rating"]
            shown = "-" if rating is None else f"{rating:g}"
            console.print(  # a list name is never cut
                f"  {row['list']:<24} {row['period']}  {shown:>7}",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
        if rows.filter(pl.col("list").is_not_null()).is_empty():
            console.print("  on no published list", highlight=False, markup=False)
    return 0
