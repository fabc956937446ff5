"""A rating officer's corrections, `federation/corrections.csv` (issue 11 item 5).

Columns `list, period, player_id, field, value, reason`: the value of `field` for `player_id` on
the list of `list` after `period` is `value`, because of `reason`. What a file alone can tell is
checked here (the list, the period, the field, whether that list has the field, the value's
type and range, a second correction of the same value); whether the player is on that list is
known only once the period is computed (`rating_core.systems.corrections`).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from rating_core.ingest.common import IngestResult
from rating_core.ingest.csv_games import (
    LINE,
    Check,
    apply_checks,
    base_checks,
    empty_check,
    parse_int,
    read_csv_strings,
    require_columns,
)
from rating_core.ingest.registry import MAX_RATING, STARTING_LISTS
from rating_core.periods import PERIOD_SHAPE
from rating_core.schemas import CORRECTIONS_SCHEMA, conform
from rating_core.systems.fide.rules import FIDE_RULES
from rating_core.systems.ukd.rules import UKD_RULES
from rating_core.text import format_text

CORRECTIONS_FILE = "federation/corrections.csv"
"""Where the corrections are in the inbox (the only file of `federation/` that is not games)."""

CORRECTIONS_REQUIRED = ("list", "period", "player_id", "field", "value", "reason")

CORRECTION_FIELDS = ("rating", "rated_games", "peak_rating", "birth_date", "k")
"""Every field a correction may set."""

FIELDS_BY_SYSTEM: dict[str, tuple[str, ...]] = {
    "fide": CORRECTION_FIELDS,
    "ukd": ("rating",),  # a UKD list holds a rating only; its K follows from the rating's band
}
"""The fields each system's lists accept."""

FIDE_K_VALUES = (FIDE_RULES.k_established_top, FIDE_RULES.k_default, FIDE_RULES.k_new)
"""The K a FIDE correction may set (10, 20, 40); the K x n cap of the rules still applies."""

FLOORS = {"fide": FIDE_RULES.floor, "ukd": UKD_RULES.floor}
"""No correction sets a rating below its system's floor (a player below it is not listed)."""


def _system() -> pl.Expr:
    return pl.col("list").str.split("-").list.first()


def _birth_year() -> pl.Expr:
    """Year of a `YYYY` or a real `YYYY-MM-DD` value (as in `players.csv`); null otherwise."""
    text = pl.col("value")
    full = text.str.to_date(format="%Y-%m-%d", strict=False).dt.year()
    year_only = pl.when(text.str.contains(r"^[0-9]{4}$")).then(text.cast(pl.Int32, strict=False))
    return pl.when(text.str.len_chars() == 4).then(year_only).otherwise(full).cast(pl.Int32)


def _number() -> pl.Expr:
    """The value as the field's number; null where it is not one the field accepts."""
    field, value = pl.col("field"), parse_int("value")
    floor = pl.when(_system() == "ukd").then(FLOORS["ukd"]).otherwise(FLOORS["fide"])
    return (
        pl.when(field == "rating")
        .then(pl.when(value.is_between(floor, MAX_RATING)).then(value))
        .when(field == "rated_games")
        .then(pl.when(value.is_between(0, 100_000)).then(value))
        .when(field == "peak_rating")
        .then(pl.when(value.is_between(FLOORS["fide"], MAX_RATING)).then(value))
        .when(field == "k")
        .then(pl.when(value.is_in(list(FIDE_K_VALUES))).then(value))
        .when(field == "birth_date")
        .then(_birth_year())
        .cast(pl.Int32, strict=False)
    )


def _wanted() -> pl.Expr:
    """What the field's value should be, completing "value '<v>' is not ..."."""
    field = pl.col("field")
    return (
        pl.when(field == "rating")
        .then(
            pl.when(_system() == "ukd")
            .then(pl.lit(f"a whole number from {FLOORS['ukd']} (the UKD floor) to {MAX_RATING}"))
            .otherwise(
                pl.lit(f"a whole number from {FLOORS['fide']} (the FIDE floor) to {MAX_RATING}")
            )
        )
        .when(field == "rated_games")
        .then(pl.lit("a whole number of games (0 or more)"))
        .when(field == "peak_rating")
        .then(pl.lit(f"a whole number from {FLOORS['fide']} to {MAX_RATING}"))
        .when(field == "k")
        .then(pl.lit(f"a FIDE K ({', '.join(str(k) for k in FIDE_K_VALUES)})"))
        .otherwise(pl.lit("a date YYYY or YYYY-MM-DD"))
    )


def read_corrections(path: Path, source_file: str | None = None) -> IngestResult:
    """Read `federation/corrections.csv` into CORRECTIONS_SCHEMA rows; a bad row is quarantined
    with its line, value and reason, and the rows around it still land."""
    src = str(path) if source_file is None else source_file
    table = read_csv_strings(path, src)
    require_columns(table, CORRECTIONS_REQUIRED)
    frame = table.frame.with_columns(
        pl.col("list").str.to_lowercase(),
        pl.col("field").str.to_lowercase(),
        pl.concat_str(["list", "period", "player_id", "field"], separator="\x1f").alias("_key"),
    )
    system = _system()
    accepted = pl.lit(False)
    for name, fields in FIELDS_BY_SYSTEM.items():
        accepted = accepted | ((system == name) & pl.col("field").is_in(list(fields)))
    first_line = pl.col(LINE).min().over("_key")
    checks = [
        *base_checks(table),
        Check(
            ~pl.col("list").is_in(list(STARTING_LISTS)),
            pl.col("list"),
            format_text(f"list '{{}}' is not one of {', '.join(STARTING_LISTS)}", pl.col("list")),
        ),
        Check(
            ~pl.col("period").str.contains(PERIOD_SHAPE.pattern),
            pl.col("period"),
            format_text("period '{}' is not a month YYYY-MM", pl.col("period")),
        ),
        empty_check("player_id", "the player id"),
        Check(
            ~pl.col("field").is_in(list(CORRECTION_FIELDS)),
            pl.col("field"),
            format_text(
                f"field '{{}}' is not one of {', '.join(CORRECTION_FIELDS)}", pl.col("field")
            ),
        ),
        Check(
            ~accepted,
            pl.col("field"),
            format_text(
                "a {} list has no {} (UKD lists accept rating only)",
                pl.col("list"),
                pl.col("field"),
            ),
        ),
        Check(
            _number().is_null(),
            pl.col("value"),
            format_text("{} '{}' is not {}", pl.col("field"), pl.col("value"), _wanted()),
        ),
        Check(
            (pl.col("field") == "birth_date")
            & (_number() > pl.col("period").str.slice(0, 4).cast(pl.Int32, strict=False)),
            pl.col("value"),
            format_text(
                "birth_date '{}' is after the period {}", pl.col("value"), pl.col("period")
            ),
        ),
        Check(
            pl.col("reason") == "",
            pl.col("reason"),
            pl.lit("the reason is empty: a correction must say why"),
        ),
        Check(
            pl.col(LINE) != first_line,
            pl.col("value"),
            format_text(
                "a second correction of {} for {} on {} {} (first on line {})",
                pl.col("field"),
                pl.col("player_id"),
                pl.col("list"),
                pl.col("period"),
                first_line,
            ),
        ),
    ]
    good, quarantine = apply_checks(frame, checks, "player_id", src)
    rows = good.select(
        "list",
        "period",
        "player_id",
        "field",
        "value",
        _number().alias("number"),
        "reason",
        pl.lit(src).alias("source_file"),
        pl.col(LINE).alias("source_line"),
    )
    return IngestResult(rows=conform(rows, CORRECTIONS_SCHEMA), quarantine=quarantine)
