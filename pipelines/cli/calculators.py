"""`ratings calc elo|fide|ukd|fibs|site`: the seed pages' calculators on the engines' own functions.

Argument forms are a contract (scripts depend on them), e.g.
`ratings calc fide --rating 1800 --k 20 --game 1900:1 --game 1750:0.5 --json`.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from datetime import date

from pipelines.cli.errors import UserError
from pipelines.cli.output import print_json, print_table
from rating_core.schemas import CATEGORIES

RESULT_WORDS = {
    "1": 1.0,
    "1.0": 1.0,
    "win": 1.0,
    "0.5": 0.5,
    "½": 0.5,
    "draw": 0.5,
    "0": 0.0,
    "0.0": 0.0,
    "loss": 0.0,
}


def parse_result(text: str) -> float:
    """A result given as 1, 0.5 or 0 (or win/draw/loss)."""
    value = RESULT_WORDS.get(str(text).strip().lower())
    if value is None:
        raise UserError(f"result '{text}' is not 1, 0.5 or 0")
    return value


RATING_RANGE = (0.0, 4000.0)
"""Every rating a calculator takes (own, opponent, site Elo), inclusive: no rating system here
has a negative rating or one above 4000 (a mistyped 1e9 is refused, not computed)."""
K_RANGE = (0.0, 100.0)
"""`calc elo --k`: more than 0, at most 100 (FIDE's largest K is 40)."""
MATCH_LENGTH_RANGE = (1, 99)
"""`calc fibs --length`: a match of 1 to 99 points."""


def _finite(text: str, whole: bool) -> float:
    """`text` as a finite number (a whole one when `whole`), or ArgumentTypeError."""
    try:
        value = float(text)
    except ValueError:
        kind = "a whole number" if whole else "a number"
        raise argparse.ArgumentTypeError(f"takes {kind}, not '{text}'") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"takes a finite number, not '{text}'")
    if whole and value != int(value):
        raise argparse.ArgumentTypeError(f"takes a whole number, not '{text}'")
    return value


def number_in(
    low: float, high: float | None, *, whole: bool = False, above_low: bool = False
) -> Callable[[str], float]:
    """An argparse type: a finite number from `low` (excluded with `above_low`) to `high`
    (None: no upper bound), so NaN, infinities, negative counts and absurd ratings are one
    sentence before any computation."""

    def parse(text: str) -> float:
        value = _finite(text.strip(), whole)
        too_low = value <= low if above_low else value < low
        if too_low or (high is not None and value > high):
            if high is None:
                bounds = f"more than {low:g}" if above_low else f"{low:g} or more"
            elif above_low:
                bounds = f"more than {low:g} and at most {high:g}"
            else:
                bounds = f"from {low:g} to {high:g}"
            raise argparse.ArgumentTypeError(f"must be {bounds}, not {text.strip()}")
        return value

    return parse


def whole_in(low: int, high: int | None) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` to `high` (None: no upper bound)."""
    check = number_in(low, high, whole=True)

    def parse(text: str) -> int:
        return int(check(text))

    return parse


rating = number_in(*RATING_RANGE)
whole_rating = whole_in(int(RATING_RANGE[0]), int(RATING_RANGE[1]))
count = whole_in(0, None)


def parse_game(text: str, allow_unrated: bool = False) -> tuple[int | None, float]:
    """`OPPONENT:RESULT`, e.g. `1900:1`; with allow_unrated, `-:1` for an opponent without rating."""
    opponent, sep, result = text.partition(":")
    if not sep:
        raise UserError(f"game '{text}' must be OPPONENT:RESULT, e.g. 1900:1 or 1750:0.5")
    if opponent.strip() == "-" and allow_unrated:
        return None, parse_result(result)
    try:
        opponent_rating = whole_rating(opponent)
    except argparse.ArgumentTypeError as error:
        raise UserError(f"the opponent rating in game '{text}' {error}") from None
    return opponent_rating, parse_result(result)


def _calc_date(text: str) -> date:
    """`--date YYYY-MM-DD` of `calc fide` (refused while parsing the arguments otherwise)."""
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a date YYYY-MM-DD") from None


def _add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON for machines")


def add_calc_parsers(sub: argparse._SubParsersAction) -> None:
    """Register the five calculators under `ratings calc`."""
    elo = sub.add_parser("elo", help="plain Elo for one game (seed elo-calculator)")
    elo.add_argument("--rating", type=rating, required=True, help="0 to 4000")
    elo.add_argument("--opponent", type=rating, required=True, help="0 to 4000")
    elo.add_argument("--result", required=True, help="1, 0.5 or 0")
    elo.add_argument(
        "--k", type=number_in(*K_RANGE, above_low=True), default=32, help="more than 0, up to 100"
    )
    _add_json(elo)

    fide = sub.add_parser("fide", help="FIDE change for one tournament (seed fide-ukd-calculator)")
    fide.add_argument("--rating", type=whole_rating, required=True, help="0 to 4000")
    fide.add_argument(
        "--k",
        type=whole_in(1, None),
        required=True,
        help="base K, one of the era's (10, 20, 40 today; 10, 15, 30 before 2014-07 on the "
        "standard list; 20 on rapid and blitz before 2022-10)",
    )
    fide.add_argument("--game", action="append", default=[], help="OPPONENT:RESULT, repeatable")
    fide.add_argument(
        "--date",
        type=_calc_date,
        default=None,
        help="YYYY-MM-DD: rate by the FIDE rules in force that day (default today, UTC)",
    )
    fide.add_argument(
        "--list",
        choices=("standard", "rapid", "blitz"),
        default="standard",
        help="the FIDE list whose rules apply (default standard)",
    )
    _add_json(fide)

    ukd = sub.add_parser("ukd", help="UKD change for one tournament (seed fide-ukd-calculator)")
    ukd.add_argument("--rating", type=whole_rating, required=True, help="0 to 4000")
    ukd.add_argument("--game", action="append", default=[], help="OPPONENT:RESULT or -:RESULT")
    _add_json(ukd)

    fibs = sub.add_parser("fibs", help="FIBS backgammon match (seed backgammon-fibs-rating)")
    fibs.add_argument("--rating", type=rating, required=True, help="0 to 4000")
    fibs.add_argument("--opponent", type=rating, required=True, help="0 to 4000")
    fibs.add_argument(
        "--length",
        type=whole_in(*MATCH_LENGTH_RANGE),
        required=True,
        help="match length N in points, 1 to 99",
    )
    fibs.add_argument("--experience", type=count, default=0, help="matches played, 0 or more")
    _add_json(fibs)

    site = sub.add_parser("site", help="site rating: one game's category and site-Elo change")
    site.add_argument(
        "--category",
        required=True,
        choices=CATEGORIES,
        metavar="CATEGORY",  # the {...} of every category overflowed 80 columns
        help=", ".join(CATEGORIES),
    )
    site.add_argument("--rating", type=rating, required=True, help="your category rating")
    site.add_argument("--opponent", type=rating, required=True, help="opponent's category rating")
    site.add_argument("--games", type=count, default=0, help="your rated games in the category")
    site.add_argument("--site-elo", type=rating, required=True, help="0 to 4000")
    site.add_argument("--opponent-site-elo", type=rating, required=True, help="0 to 4000")
    site.add_argument("--site-games", type=count, default=0, help="your rated games overall")
    site.add_argument("--result", required=True, help="1, 0.5 or 0")
    _add_json(site)


def _elo(args: argparse.Namespace) -> dict:
    from rating_core.systems.site.elo import elo_calculator

    return elo_calculator(args.rating, args.opponent, parse_result(args.result), args.k)


def _fide(args: argparse.Namespace) -> dict:
    from rating_core.periods import utc_today
    from rating_core.systems.fide.calculator import fide_calculator
    from rating_core.systems.fide.rules import rules_on

    day = args.date or utc_today()
    rules = rules_on(day, args.list)
    if args.k not in rules.k_values:
        allowed = ", ".join(str(k) for k in rules.k_values)
        raise UserError(
            f"calc fide: --k must be one of {allowed} under the {rules.name} rules of the "
            f"{args.list} list in force on {day.isoformat()}, not {args.k} "
            "(see 'ratings calc fide --help')"
        )
    if not args.game:
        raise UserError("give at least one --game OPPONENT:RESULT")
    games = [parse_game(g) for g in args.game]
    return {"date": day.isoformat(), **fide_calculator(args.rating, args.k, games, rules)}  # type: ignore[arg-type]


def _ukd(args: argparse.Namespace) -> dict:
    from rating_core.systems.ukd.calculator import ukd_calculator

    if not args.game:
        raise UserError("give at least one --game OPPONENT:RESULT (or -:RESULT)")
    return ukd_calculator(args.rating, [parse_game(g, allow_unrated=True) for g in args.game])


def _fibs(args: argparse.Namespace) -> dict:
    from rating_core.systems.fibs.calculator import fibs_calculator

    if args.length < 1:
        raise UserError(f"match length {args.length} must be at least 1 point")
    if args.experience < 0:
        raise UserError(f"experience {args.experience} cannot be negative")
    return fibs_calculator(args.rating, args.opponent, args.length, args.experience)


def _site(args: argparse.Namespace) -> dict:
    from rating_core.systems.site.calculator import site_calculator

    return site_calculator(
        args.category,
        args.rating,
        args.opponent,
        args.games,
        args.site_elo,
        args.opponent_site_elo,
        args.site_games,
        parse_result(args.result),
    )


CALCULATORS: dict[str, Callable[[argparse.Namespace], dict]] = {
    "elo": _elo,
    "fide": _fide,
    "ukd": _ukd,
    "fibs": _fibs,
    "site": _site,
}


def print_steps(title: str, payload: dict) -> None:
    """Every step as the seed pages show it: scalar values, then one table per list of rows."""
    scalars = [(k, v) for k, v in payload.items() if not isinstance(v, list | dict)]
    for key, value in payload.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            print_table(key, list(value[0]), [list(row.values()) for row in value])
    print_table(title, ["step", "value"], scalars)


def cmd_calc(args: argparse.Namespace) -> int:
    """Run one calculator and print its steps (or JSON)."""
    try:
        payload = CALCULATORS[args.system](args)
    except ValueError as error:  # a rule the inputs break, e.g. an unknown category
        raise UserError(str(error)) from None
    if args.json:
        print_json(payload)
    else:
        print_steps(f"{args.system} calculator", payload)
    return 0
