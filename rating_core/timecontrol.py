"""Time controls (RULES §1): parse PGN `TimeControl` strings, estimate durations, classify.

Time-control strings have very few distinct values even in millions of games, so each distinct
string is parsed once (`parse_time_control`) and the parsed table is joined back onto the games;
the classification itself is a set of Polars expressions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from rating_core.schemas import Category, RatingList, TableSchema


@dataclass(frozen=True)
class TimeControlRules:
    """Every number of RULES §1 in one place."""

    increment_moves: int = 40  # estimate = base + 40 x increment
    bullet_below_s: int = 180
    blitz_below_s: int = 480
    rapid_below_s: int = 1500
    day_s: int = 86_400
    correspondence_min_days: int = 1
    correspondence_max_days: int = 7
    fide_moves: int = 60  # FIDE list by the time for 60 moves
    fide_blitz_max_s: int = 600  # blitz if <= 10 min
    fide_standard_min_s: int = 3600  # standard if >= 60 min
    weights: tuple[tuple[str, float], ...] = (
        ("classical", 1.0),
        ("rapid", 1.0),
        ("blitz", 0.75),
        ("unlimited", 0.75),
        ("otb", 0.75),
        ("bullet", 0.5),
        ("correspondence", 0.5),
        ("bots", 0.5),
    )

    def weight(self, category: str) -> float:
        """The category's weight in the site Elo."""
        return dict(self.weights)[category]


TIME_CONTROL_RULES = TimeControlRules()

PARSED_SCHEMA: TableSchema = {
    "time_control": pl.String,
    "tc_valid": pl.Boolean,  # the string follows the PGN syntax
    "tc_no_clock": pl.Boolean,  # "-"
    "tc_unknown": pl.Boolean,  # "?" (or empty)
    "base_s": pl.Int64,
    "increment_s": pl.Int64,
    "estimate_s": pl.Int64,
    "tc_days_per_move": pl.Float64,  # a "1/86400"-style correspondence control
    "time_for_60_s": pl.Int64,
}

_PERIOD = re.compile(r"^(?:(\d+)/)?(\*)?(\d+)(?:\+(\d+))?$")


@dataclass(frozen=True)
class ParsedTimeControl:
    """One time-control string, parsed (PGN standard §9.6.1)."""

    valid: bool
    no_clock: bool = False
    unknown: bool = False
    base_s: int | None = None
    increment_s: int | None = None
    days_per_move: float | None = None
    time_for_60_s: int | None = None

    @property
    def estimate_s(self) -> int | None:
        """Base seconds of the first period plus 40 times its increment (RULES §1)."""
        if self.base_s is None:
            return None
        return self.base_s + TIME_CONTROL_RULES.increment_moves * (self.increment_s or 0)


def parse_time_control(
    text: str | None, rules: TimeControlRules = TIME_CONTROL_RULES
) -> ParsedTimeControl:
    """Parse one TimeControl string; an unparseable one comes back with valid=False."""
    if text is None or text.strip() in ("", "?"):
        return ParsedTimeControl(valid=True, unknown=True)
    text = text.strip()
    if text == "-":
        return ParsedTimeControl(valid=True, no_clock=True)
    periods = []
    for part in text.split(":"):
        m = _PERIOD.match(part)
        if m is None:
            return ParsedTimeControl(valid=False)
        moves = int(m.group(1)) if m.group(1) else None
        seconds = int(m.group(3))
        increment = int(m.group(4)) if m.group(4) else 0
        periods.append((moves, seconds, increment))
    first_moves, first_s, first_inc = periods[0]
    if first_moves == 1 and first_s >= rules.day_s and len(periods) == 1:
        return ParsedTimeControl(
            valid=True, base_s=first_s, increment_s=first_inc, days_per_move=first_s / rules.day_s
        )
    # Time for 60 moves: add each period's base while moves remain, and its increment per move.
    remaining, total = rules.fide_moves, 0
    for moves, seconds, increment in periods:
        if remaining <= 0:
            break
        played = remaining if moves is None else min(moves, remaining)
        total += seconds + increment * played
        remaining -= played
        if moves is None:
            break
    return ParsedTimeControl(valid=True, base_s=first_s, increment_s=first_inc, time_for_60_s=total)


def parse_time_controls(values: pl.Series) -> pl.DataFrame:
    """Parse each distinct string of `values` once; join the result back on `time_control`."""
    rows = []
    for text in values.unique().to_list():
        p = parse_time_control(text)
        rows.append(
            {
                "time_control": text,
                "tc_valid": p.valid,
                "tc_no_clock": p.no_clock,
                "tc_unknown": p.unknown,
                "base_s": p.base_s,
                "increment_s": p.increment_s,
                "estimate_s": p.estimate_s,
                "tc_days_per_move": p.days_per_move,
                "time_for_60_s": p.time_for_60_s,
            }
        )
    return pl.DataFrame(rows, schema=PARSED_SCHEMA)


def clock_category_expr(
    estimate_s: pl.Expr, rules: TimeControlRules = TIME_CONTROL_RULES
) -> pl.Expr:
    """Clock class of an estimated duration: half-open intervals on the unrounded estimate."""
    return (
        pl.when(estimate_s < rules.bullet_below_s)
        .then(_category("bullet"))
        .when(estimate_s < rules.blitz_below_s)
        .then(_category("blitz"))
        .when(estimate_s < rules.rapid_below_s)
        .then(_category("rapid"))
        .otherwise(_category("classical"))
    )


def _category(name: str | None) -> pl.Expr:
    """A Category literal: the branches of a classification are Enum values from the start, so
    no string is built and looked up per game (a quarter of the cost on 1M games)."""
    return pl.lit(name, dtype=Category)


def _rating_list(name: str) -> pl.Expr:
    """A RatingList literal (see `_category`)."""
    return pl.lit(name, dtype=RatingList)


def fide_list_expr(time_for_60_s: pl.Expr, rules: TimeControlRules = TIME_CONTROL_RULES) -> pl.Expr:
    """FIDE/UKD list by the time for 60 moves; no time information at all means standard."""
    return (
        pl.when(time_for_60_s.is_null())
        .then(_rating_list("standard"))
        .when(time_for_60_s <= rules.fide_blitz_max_s)
        .then(_rating_list("blitz"))
        .when(time_for_60_s < rules.fide_standard_min_s)
        .then(_rating_list("rapid"))
        .otherwise(_rating_list("standard"))
    )


def site_category_expr(rules: TimeControlRules = TIME_CONTROL_RULES) -> pl.Expr:
    """Site category with the precedence of RULES §1: bots, otb, correspondence, unlimited, clock.

    Needs the parsed columns (`parse_time_controls` joined) and white/black_is_bot, kind,
    days_per_move. Null where the game cannot be classified (see `site_category_error_expr`).
    """
    days = pl.coalesce(pl.col("days_per_move").cast(pl.Float64), pl.col("tc_days_per_move"))
    is_corr = (pl.col("kind") == "correspondence") | days.is_not_null()
    return (
        pl.when(pl.col("white_is_bot").fill_null(False) | pl.col("black_is_bot").fill_null(False))
        .then(_category("bots"))
        .when(pl.col("kind") == "otb")
        .then(_category("otb"))
        .when(is_corr)
        .then(_category("correspondence"))
        .when((pl.col("kind") == "unlimited") | pl.col("tc_no_clock"))
        .then(_category("unlimited"))
        .when(pl.col("estimate_s").is_not_null())
        .then(clock_category_expr(pl.col("estimate_s"), rules))
        .otherwise(_category(None))
    )


def site_category_error_expr(rules: TimeControlRules = TIME_CONTROL_RULES) -> pl.Expr:
    """Why a platform game cannot be classified (a sentence), or null when it can."""
    days = pl.coalesce(pl.col("days_per_move").cast(pl.Float64), pl.col("tc_days_per_move"))
    is_bot = pl.col("white_is_bot").fill_null(False) | pl.col("black_is_bot").fill_null(False)
    needs_clock = ~is_bot & (pl.col("kind") == "live")
    tc = pl.col("time_control").fill_null("(missing)")
    return (
        pl.when(~pl.col("tc_valid").fill_null(True))
        .then(pl.lit("time control '") + tc + pl.lit("' is not in PGN TimeControl syntax"))
        .when(
            ~is_bot
            & (pl.col("kind") != "otb")
            & days.is_not_null()
            & ((days < rules.correspondence_min_days) | (days > rules.correspondence_max_days))
        )
        .then(
            pl.lit("correspondence control allows ")
            + days.round(2).cast(pl.String)
            + pl.lit(" days per move; the rules allow 1 to 7")
        )
        .when(needs_clock & pl.col("tc_unknown").fill_null(True) & days.is_null())
        .then(pl.lit("time control '") + tc + pl.lit("' is unknown; an online game needs a clock"))
        .otherwise(pl.lit(None, dtype=pl.String))
    )


def with_time_control_columns(games: pl.DataFrame) -> pl.DataFrame:
    """Add base_s, increment_s, estimate_s, category, the derived FIDE list and `tc_error`.

    `games` needs time_control, kind, days_per_move, white_is_bot, black_is_bot and rating_list
    (an explicit list wins over the derived one). Helper columns are dropped again.
    """
    parsed = parse_time_controls(games.get_column("time_control"))
    joined = games.drop(
        [c for c in ("base_s", "increment_s", "estimate_s") if c in games.columns]
    ).join(parsed, on="time_control", how="left", nulls_equal=True)
    return joined.with_columns(
        category=site_category_expr(),
        tc_error=site_category_error_expr(),
        rating_list=pl.coalesce(pl.col("rating_list"), fide_list_expr(pl.col("time_for_60_s"))),
    ).drop(["tc_valid", "tc_no_clock", "tc_unknown", "tc_days_per_move", "time_for_60_s"])
