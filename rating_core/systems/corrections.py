"""Applying a rating officer's corrections to a computed FIDE or UKD period (issue 11 item 5).

A correction of list L for period P sets a value on the list of L after P; the state the next
period starts from is the corrected one, so the correction carries on. What each field means:

- `rating`: the player's rating on the list; `change` (and `change_exact`, `rating_exact`)
  become the corrected rating minus the rating at period start, so the list still adds up. On a
  FIDE list the peak becomes the higher of the period-start peak and the corrected rating.
- `k` (FIDE): the K of that period's list. The period's change is recomputed with it, from the
  player's own sum of ΔR (the K x n cap of the rules still applies): a K the player should have
  had, not one for the next period (which the rules derive again from the list).
- `rated_games`, `peak_rating` (FIDE): the career count and the peak on the list, which the
  next period's K reads.
- `birth_date` (FIDE): the birth year the junior K rule reads, from period P on (P's lists are
  computed with it), on every FIDE list: FIDE knows one birth date per person.

A correction whose player is not on that list of that period, or that cannot hold (a K for a
player without a rated game, a peak below the rating...), is not applied: its log row says why
and it goes to the quarantine. `correct_fide` / `correct_ukd` return the corrected result and
one log row per correction (`CORRECTION_LOG_SCHEMA`).
"""

from __future__ import annotations

import dataclasses

import polars as pl

from rating_core.rounding import round_half_away_expr, round_hundredths_half_away_expr
from rating_core.schemas import CORRECTIONS_SCHEMA, QUARANTINE_SCHEMA, TableSchema, empty
from rating_core.systems.fide.period import FidePeriodResult
from rating_core.systems.fide.rules import FIDE_RULES, FIDE_STATE_SCHEMA, FideRules
from rating_core.systems.fide.steps import k_capped_expr
from rating_core.systems.ukd.period import UkdPeriodResult
from rating_core.systems.ukd.rules import UKD_STATE_SCHEMA
from rating_core.text import format_text

CORRECTION_LOG_SCHEMA: TableSchema = {
    "list": pl.String,
    "player_id": pl.String,
    "field": pl.String,
    "value": pl.String,  # as the file gave it
    "old": pl.String,  # the computed value (a birth date: the registry's year)
    "new": pl.String,  # the value on the list (null when not applied)
    "reason": pl.String,  # the rating officer's reason
    "applied": pl.Boolean,
    "not_applied": pl.String,  # why not, when not applied
    "source_file": pl.String,
    "source_line": pl.Int64,
}
"""`history/<system>-corrections`: every correction of a period, applied or not, and why."""

CAUSES_SCHEMA: TableSchema = {"list": pl.String, "player_id": pl.String, "cause": pl.String}
"""Per list and player, the diff cause of the applied corrections."""

KEY = "player_id"


def system_corrections(corrections: pl.DataFrame | None, system: str) -> pl.DataFrame:
    """The corrections of one system's lists (`fide-*` or `ukd-*`)."""
    if corrections is None or not corrections.height:
        return empty(CORRECTIONS_SCHEMA)
    return corrections.filter(pl.col("list").str.starts_with(f"{system}-"))


def _fix(fixes: pl.DataFrame, field: str) -> pl.DataFrame:
    """`player_id, _<field>`: the corrected number of `field` per player."""
    return fixes.filter(pl.col("field") == field).select(KEY, pl.col("number").alias(f"_{field}"))


def _log_rows(frame: pl.DataFrame, list_name: str) -> pl.DataFrame:
    """CORRECTION_LOG_SCHEMA rows from corrections with `old`, `new` and `not_applied` (null when
    the correction holds): a correction not applied shows no new value."""
    applied = pl.col("not_applied").is_null()
    return frame.select(
        pl.lit(list_name).alias("list"),
        KEY,
        "field",
        "value",
        "old",
        pl.when(applied).then(pl.col("new")).alias("new"),
        "reason",
        applied.alias("applied"),
        "not_applied",
        "source_file",
        "source_line",
    ).cast(CORRECTION_LOG_SCHEMA)


def _log(fixes: pl.DataFrame, outcome: pl.DataFrame, list_name: str, period: str) -> pl.DataFrame:
    """One log row per correction of `fixes`, from `outcome` (player_id, field, old, new,
    problem): a player missing from `outcome` is not on the list."""
    missing = format_text(
        "player {} is not on the {} list of {}", pl.col(KEY), pl.lit(list_name), pl.lit(period)
    )
    joined = fixes.join(outcome, on=[KEY, "field"], how="left").with_columns(
        pl.when(~pl.col("_on_list").fill_null(False))
        .then(missing)
        .otherwise(pl.col("problem"))
        .alias("not_applied")
    )
    return _log_rows(joined, list_name).sort("source_line")


def _text(expr: pl.Expr) -> pl.Expr:
    return expr.cast(pl.String)


def not_computed(fixes: pl.DataFrame, list_name: str, period: str) -> pl.DataFrame:
    """The log of corrections for a list that was not computed for `period` (no player, no game)."""
    unapplied = fixes.with_columns(
        pl.lit(None, dtype=pl.String).alias("old"),
        pl.lit(None, dtype=pl.String).alias("new"),
        pl.lit(f"no {list_name} list was computed for {period}").alias("not_applied"),
    )
    return _log_rows(unapplied, list_name)


def correct_fide(
    result: FidePeriodResult,
    fixes: pl.DataFrame,
    start: pl.DataFrame | None,
    list_name: str,
    rules: FideRules = FIDE_RULES,
) -> tuple[FidePeriodResult, pl.DataFrame]:
    """Apply the `rating`, `k`, `rated_games` and `peak_rating` corrections of one FIDE list and
    period (`fixes`, CORRECTIONS_SCHEMA) to its computed `result`; `start` is the list's state
    at period start (its peaks). Returns the corrected result and the log of `fixes`."""
    fixes = fixes.filter(pl.col("field") != "birth_date")
    if not fixes.height:
        return result, empty(CORRECTION_LOG_SCHEMA)
    period = result.period
    rows = result.list_rows
    explained = result.player_explanations.select(KEY, "rating_before", "sum_delta_r")
    peaks = (
        start.select(KEY, pl.coalesce("peak_rating", "rating").alias("_peak_start"))
        if start is not None and start.height
        else pl.DataFrame(schema={KEY: pl.String, "_peak_start": pl.Int32})
    )
    x = rows.join(explained, on=KEY, how="left").join(peaks, on=KEY, how="left")
    for field in ("rating", "k", "rated_games", "peak_rating"):
        x = x.join(_fix(fixes, field), on=KEY, how="left")

    before = pl.col("rating_before")
    sum_h = round_half_away_expr(pl.col("sum_delta_r") * 100).cast(pl.Int64)
    k_used = k_capped_expr(pl.col("_k"), pl.col("games"), rules)
    change_h = k_used.cast(pl.Int64) * sum_h
    rating_k = before + round_hundredths_half_away_expr(change_h).cast(pl.Int32)
    x = x.with_columns(
        pl.when(pl.col("_k").is_null())
        .then(None)
        .when(pl.col("newcomer"))
        .then(pl.lit("a newcomer's first rating has no K"))
        .when(pl.col("games") == 0)
        .then(
            pl.lit(f"the player has no rated game on {list_name} in {period}: a K changes nothing")
        )
        .when(rating_k < rules.floor)
        .then(
            format_text(
                "K {} gives {}, below the FIDE floor {}",
                pl.col("_k"),
                rating_k,
                pl.lit(rules.floor),
            )
        )
        .alias("_k_problem"),
        k_used.alias("_k_used"),
        change_h.alias("_change_h"),
        rating_k.alias("_rating_k"),
    )
    k_ok = pl.col("_k").is_not_null() & pl.col("_k_problem").is_null()
    fixed = pl.col("_rating").is_not_null()
    x = x.with_columns(
        pl.when(fixed)
        .then(pl.col("_rating"))
        .when(k_ok)
        .then(pl.col("_rating_k"))
        .otherwise(pl.col("rating"))
        .alias("_rating_new"),
        (fixed | k_ok).alias("_moved"),
    )
    peak_moved = (
        pl.when(pl.col("_moved"))
        .then(pl.max_horizontal(pl.coalesce("_peak_start", "rating_before"), "_rating_new"))
        .otherwise(pl.col("peak_rating"))
    )
    x = x.with_columns(
        pl.when(pl.col("_peak_rating") < pl.col("_rating_new"))
        .then(
            format_text(
                "peak_rating {} is below the player's rating {} on the list",
                pl.col("_peak_rating"),
                pl.col("_rating_new"),
            )
        )
        .alias("_peak_problem"),
    ).with_columns(
        pl.when(pl.col("_peak_rating").is_not_null() & pl.col("_peak_problem").is_null())
        .then(pl.col("_peak_rating"))
        .otherwise(peak_moved)
        .alias("_peak_new")
    )
    corrected = x.with_columns(
        pl.col("_rating_new").alias("rating"),
        pl.when(fixed)
        .then(pl.col("_rating").cast(pl.Float64))
        .when(k_ok)
        .then(before.cast(pl.Float64) + pl.col("_change_h").cast(pl.Float64) / 100)
        .otherwise(pl.col("rating_exact"))
        .alias("rating_exact"),
        pl.when(k_ok).then(pl.col("_k_used")).otherwise(pl.col("k")).alias("k"),
        pl.when(k_ok).then(pl.lit("correction")).otherwise(pl.col("k_reason")).alias("k_reason"),
        pl.when(fixed)
        .then(pl.col("_rating") - before)
        .when(k_ok)
        .then(pl.col("_rating_k") - before)
        .otherwise(pl.col("change"))
        .alias("change"),
        pl.when(fixed)
        .then((pl.col("_rating") - before).cast(pl.Float64))
        .when(k_ok)
        .then(pl.col("_change_h").cast(pl.Float64) / 100)
        .otherwise(pl.col("change_exact"))
        .alias("change_exact"),
        pl.coalesce("_rated_games", "rated_games").alias("rated_games"),
        pl.col("_peak_new").alias("peak_rating"),
    )
    list_rows = corrected.select(rows.columns).cast(rows.schema)
    state = (
        result.state.drop("rating", "rated_games", "peak_rating")
        .join(list_rows.select(KEY, "rating", "rated_games", "peak_rating"), on=KEY, how="left")
        .select(list(FIDE_STATE_SCHEMA))
        .cast(FIDE_STATE_SCHEMA)
    )

    def outcome(field: str, old: str, new: str, problem: pl.Expr) -> pl.DataFrame:
        return x.filter(pl.col(f"_{field}").is_not_null()).select(
            KEY,
            pl.lit(field).alias("field"),
            _text(pl.col(old)).alias("old"),
            _text(pl.col(new)).alias("new"),
            problem.cast(pl.String).alias("problem"),
            pl.lit(True).alias("_on_list"),
        )

    none = pl.lit(None, dtype=pl.String)
    outcomes = pl.concat(
        [
            outcome("rating", "rating", "_rating_new", none),
            outcome("k", "k", "_k_used", pl.col("_k_problem")),
            outcome("rated_games", "rated_games", "_rated_games", none),
            outcome("peak_rating", "peak_rating", "_peak_new", pl.col("_peak_problem")),
        ]
    )
    log = _log(fixes, outcomes, list_name, period)
    return dataclasses.replace(result, list_rows=list_rows, state=state), log


def correct_ukd(
    result: UkdPeriodResult, fixes: pl.DataFrame, list_name: str
) -> tuple[UkdPeriodResult, pl.DataFrame]:
    """Apply the `rating` corrections of one UKD list and period to its computed `result`."""
    if not fixes.height:
        return result, empty(CORRECTION_LOG_SCHEMA)
    rows = result.list_rows
    explained = result.player_explanations.select(KEY, "rating_before")
    x = rows.join(explained, on=KEY, how="left").join(_fix(fixes, "rating"), on=KEY, how="left")
    fixed = pl.col("_rating").is_not_null()
    change = pl.col("_rating") - pl.col("rating_before")
    corrected = x.with_columns(
        pl.coalesce("_rating", "rating").alias("rating"),
        pl.when(fixed)
        .then(pl.col("_rating").cast(pl.Float64))
        .otherwise(pl.col("rating_exact"))
        .alias("rating_exact"),
        pl.when(fixed).then(change).otherwise(pl.col("change")).alias("change"),
        pl.when(fixed)
        .then(change.cast(pl.Float64))
        .otherwise(pl.col("change_exact"))
        .alias("change_exact"),
    )
    list_rows = corrected.select(rows.columns).cast(rows.schema)
    state = (
        result.state.drop("rating")
        .join(list_rows.select(KEY, "rating"), on=KEY, how="left")
        .select(list(UKD_STATE_SCHEMA))
        .cast(UKD_STATE_SCHEMA)
    )
    outcomes = x.filter(fixed).select(
        KEY,
        pl.lit("rating").alias("field"),
        _text(pl.col("rating")).alias("old"),
        _text(pl.col("_rating")).alias("new"),
        pl.lit(None, dtype=pl.String).alias("problem"),
        pl.lit(True).alias("_on_list"),
    )
    log = _log(fixes, outcomes, list_name, result.period)
    return dataclasses.replace(result, list_rows=list_rows, state=state), log


# --- birth dates (FIDE) -------------------------------------------------------------------------


def birth_date_log(
    fixes: pl.DataFrame,
    known: pl.Series,
    players: pl.DataFrame | None,
    list_name: str,
    period: str,
) -> pl.DataFrame:
    """The log of one FIDE list's `birth_date` corrections for `period`: applied when the
    player is `known` to that list in the period (on its period-start list or playing on it),
    checked before the period is rated so that the answer does not depend on the K it changes."""
    births = fixes.filter(pl.col("field") == "birth_date")
    if not births.height:
        return empty(CORRECTION_LOG_SCHEMA)
    registry = (
        players.select(pl.col(KEY).cast(pl.String), pl.col("birth_year").cast(pl.Int32))
        .unique(KEY)
        .rename({"birth_year": "_registry_year"})
        if players is not None and players.height
        else pl.DataFrame(schema={KEY: pl.String, "_registry_year": pl.Int32})
    )
    outcome = births.join(registry, on=KEY, how="left").select(
        KEY,
        pl.lit("birth_date").alias("field"),
        _text(pl.col("_registry_year")).alias("old"),
        pl.col("value").alias("new"),
        pl.lit(None, dtype=pl.String).alias("problem"),
        pl.col(KEY).is_in(known.cast(pl.String).implode()).alias("_on_list"),
    )
    log = _log(births, outcome, list_name, period)
    # the player's not being on a list is said as it is: before rating, not after
    return log.with_columns(
        pl.col("not_applied").str.replace(
            " is not on the ", " is neither on nor playing on the ", literal=True
        )
    )


def with_birth_years(players: pl.DataFrame | None, years: pl.DataFrame) -> pl.DataFrame | None:
    """The registry's `player_id, birth_year` with the corrected years of `years` (player_id,
    birth_year) in place of the registry's (a corrected player missing from it is added)."""
    if not years.height:
        return players
    years = years.select(pl.col(KEY).cast(pl.String), pl.col("birth_year").cast(pl.Int32))
    if players is None or not players.height:
        return years
    base = players.select(pl.col(KEY).cast(pl.String), pl.col("birth_year").cast(pl.Int32))
    return pl.concat([base.join(years, on=KEY, how="anti"), years])


def applied_birth_years(log: pl.DataFrame) -> pl.DataFrame:
    """`player_id, birth_year` of the applied birth_date corrections of a log, in log order (the
    last one of a player wins)."""
    births = log.filter(pl.col("applied") & (pl.col("field") == "birth_date"))
    years = births.select(KEY, pl.col("new").str.slice(0, 4).cast(pl.Int32).alias("birth_year"))
    return years.unique(KEY, keep="last", maintain_order=True)


# --- what the corrections say to the publication and the quarantine -----------------------------


def correction_causes(log: pl.DataFrame) -> pl.DataFrame:
    """Per list and player, `correction: <field> <old> -> <new> (<reason>)` of the applied
    corrections (the diff's cause when the player's rating moved)."""
    applied = log.filter(pl.col("applied"))
    return applied.select(
        "list",
        KEY,
        format_text(
            "correction: {} {} -> {} ({})",
            "field",
            pl.col("old").fill_null("none"),
            "new",
            "reason",
        ).alias("cause"),
    ).cast(CAUSES_SCHEMA)


def correction_summary(log: pl.DataFrame, most: int = 5) -> str:
    """`N corrections applied (fide-standard p1 rating, ...)`, or '' when none was."""
    applied = log.filter(pl.col("applied"))
    if not applied.height:
        return ""
    named = [f"{row[0]} {row[1]} {row[2]}" for row in applied.select("list", KEY, "field").rows()]
    shown = ", ".join(named[:most]) + (
        f" and {len(named) - most} more" if len(named) > most else ""
    )
    plural = "s" if applied.height > 1 else ""
    return f"{applied.height} correction{plural} applied ({shown})"


def correction_quarantine(corrections: pl.DataFrame, logs: pl.DataFrame) -> pl.DataFrame:
    """Quarantine rows (QUARANTINE_SCHEMA) of one system's `corrections` that did not apply:
    those a period's log rejects (`logs`: every period's log) and those no log holds, of a
    period the system has not computed."""
    rejected = logs.filter(~pl.col("applied")).select(
        "source_file",
        pl.col("source_line").alias("line"),
        pl.col(KEY).alias("record"),
        "value",
        pl.col("not_applied").alias("reason"),
    )
    where = ["source_file", "source_line"]
    uncomputed = corrections.join(logs.select(where), on=where, how="anti").select(
        "source_file",
        pl.col("source_line").alias("line"),
        pl.col(KEY).alias("record"),
        "value",
        format_text(
            "no {} list has been computed for {} (outside the periods with games): the "
            "correction applies once that period is rated",
            "list",
            "period",
        ).alias("reason"),
    )
    return pl.concat([rejected.cast(QUARANTINE_SCHEMA), uncomputed.cast(QUARANTINE_SCHEMA)]).sort(
        "source_file", "line"
    )
