"""Federation assets: FIDE (RULES §3), UKD (§4) and club (§6) lists, a range of periods per step.

Each `*_ratings` asset starts its range from the state after the period before it (its own
previous partition, a self-dependency); within the range `rating_core` carries the state from
period to period, an official starting list after P-1 replacing it, so a late result in an old
month is a backfill from that month on. Built by `assets.systems.system_assets`.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import polars as pl

from assets.period_io import read_period_range
from assets.systems import (
    CheckInput,
    PeriodCheck,
    Publishing,
    RangeInputs,
    SystemSpec,
    read_states,
    system_assets,
)
from rating_core.lake.storage import read_table, write_partitioned
from rating_core.lake.tables import applied_merges
from rating_core.schemas import GAMES_SCHEMA, RATING_LISTS
from rating_core.systems.federation import (
    CLUB_STATE,
    club_lists_periods,
    federation_state_tables,
    fide_lists_periods,
    ukd_lists_periods,
)
from rating_core.systems.fide.rules import FIDE_RULES
from rating_core.systems.merges import (
    APPLIED_SCHEMA,
    apply_merges,
    merge_causes,
    merge_reason,
    merges_in_force,
)
from rating_core.systems.ukd.rules import UKD_RULES


def _games(lake: Path, periods: list[str], source: str) -> pl.DataFrame:
    """The range's games from one kind of source (`federation` or `club`)."""
    games = read_table(lake, "games", periods, schema=GAMES_SCHEMA).collect()
    return games.filter(pl.col("source") == source)


def _registry(lake: Path) -> pl.DataFrame | None:
    registry = read_table(lake, "players").collect()
    return registry if registry.height else None


def _merges(lake: Path) -> pl.DataFrame | None:
    """The duplicate-player merges in force (`federation/merges.csv`), None when there are none."""
    merges = read_table(lake, "merges").collect()
    return merges if merges.height else None


def _load_federation(system: str):
    def load(lake: Path, periods: list[str]) -> RangeInputs:
        games, starting_lists = apply_merges(
            _games(lake, periods, "federation"),
            read_table(lake, "starting_lists").collect(),
            _merges(lake),
        )
        return {
            "games": games,
            "starting_lists": starting_lists,
            "players": _registry(lake) if system == "fide" else None,
            "states": read_states(lake, federation_state_tables(system), periods[0]),
        }

    return load


def _load_club(lake: Path, periods: list[str]) -> RangeInputs:
    games, _ = apply_merges(_games(lake, periods, "club"), None, _merges(lake))
    return {
        "games": games,
        "players": _registry(lake),
        "states": read_states(lake, [CLUB_STATE], periods[0]),
    }


def _rows(check: CheckInput) -> pl.DataFrame:
    return check.output.list_rows


def fide_bad_k(check: CheckInput) -> int:
    """Rows whose K is not one the rules allow (10, 20, 40 or a K x n cap) or K x n > 700."""
    rows = _rows(check)
    if not rows.height:
        return 0
    played = rows.filter(pl.col("games") > 0)
    allowed = pl.col("k").is_in(
        [FIDE_RULES.k_established_top, FIDE_RULES.k_default, FIDE_RULES.k_new, FIDE_RULES.k_junior]
    ) | (pl.col("k") == FIDE_RULES.k_times_n_max // pl.col("games"))
    over = pl.col("k") * pl.col("games") > FIDE_RULES.k_times_n_max
    return played.filter(~allowed | over).height


def fide_below_floor(check: CheckInput) -> int:
    """Rows rated below the FIDE floor (1400)."""
    rows = _rows(check)
    return rows.filter(pl.col("rating") < FIDE_RULES.floor).height if rows.height else 0


def fide_one_sided_games(check: CheckInput) -> int:
    """Games between two rated players counted for one side only.

    A game counted for one side only must be explained by a per-side rule (none for two rated
    players in the same list), so every such game has 0 or 2 counted sides.
    """
    missing = 0
    for kind in RATING_LISTS:
        expl = check.output.explanations.get(f"history/fide-{kind}-game_explanations")
        if expl is None or not expl.height:
            continue
        both = expl.filter(pl.col("opponent_rating").is_not_null())
        sides = both.group_by("game_id").agg(pl.col("counted").sum().alias("n"))
        missing += sides.filter(pl.col("n") == 1).height
    return missing


def ukd_below_floor(check: CheckInput) -> int:
    """Rows rated below the UKD floor (1000)."""
    rows = _rows(check)
    return rows.filter(pl.col("rating") < UKD_RULES.floor).height if rows.height else 0


def _publishing(system: str, reason: str):
    """Each version names the merges new since the last publication of its period as the cause
    of the players they moved, and records the merges it applied."""

    def publishing(lake: Path, periods: list[str]) -> Publishing:
        merges = _merges(lake)
        table = applied_merges(system)
        applied = read_period_range(lake, table.name, periods, APPLIED_SCHEMA)

        def after(periods: list[str]) -> None:
            frames = [
                merges_in_force(merges, period)
                .select("keep_id", "merge_id")
                .with_columns(pl.lit(period).alias("period"))
                for period in periods
            ]
            if merges is None and not any(applied[p].height for p in periods):
                return  # no merge now nor at the last publication: nothing to record
            write_partitioned(lake, table, pl.concat(frames), partitions=periods)

        return Publishing(
            reason=lambda period: merge_reason(reason, merges, period, applied[period]),
            causes=lambda period: merge_causes(merges, period, applied[period]),
            after=after,
        )

    return publishing


def _started_from(outputs: dict) -> dict:
    return {
        "started_from": dg.MetadataValue.json(
            {period: out.facts.get("started_from") for period, out in outputs.items()}
        )
    }


FIDE = SystemSpec(
    name="fide",
    description="FIDE standard, rapid and blitz ratings after the period, with explanations.",
    deps=["games", "starting_lists", "players", "merges"],
    state_tables=federation_state_tables("fide"),
    load=_load_federation("fide"),
    rate=lambda i, periods: fide_lists_periods(
        i["games"], i["starting_lists"], i["states"], i["players"], periods
    ),
    publishing=_publishing("fide", "rated from the period's federation games"),
    checks=[
        PeriodCheck(
            "fide_k_allowed",
            "K is one the rules allow (10, 20, 40 or a K x n cap) and K x n <= 700.",
            "bad_k",
            fide_bad_k,
        ),
        PeriodCheck(
            "fide_floor_respected", "No FIDE rating below 1400.", "below_1400", fide_below_floor
        ),
        PeriodCheck(
            "fide_games_counted_both_sides",
            "Every rated game between two rated players is counted for both sides.",
            "one_sided_games",
            fide_one_sided_games,
        ),
    ],
    metadata=_started_from,
)
UKD = SystemSpec(
    name="ukd",
    description="UKD standard, rapid and blitz ratings after the period, with explanations.",
    deps=["games", "starting_lists", "merges"],
    state_tables=federation_state_tables("ukd"),
    load=_load_federation("ukd"),
    rate=lambda i, periods: ukd_lists_periods(
        i["games"], i["starting_lists"], i["states"], periods
    ),
    publishing=_publishing("ukd", "rated from the period's federation games"),
    checks=[
        PeriodCheck("ukd_floor_respected", "No UKD below 1000.", "below_1000", ukd_below_floor)
    ],
    metadata=_started_from,
)
CLUB = SystemSpec(
    name="club",
    description="Club ratings per club and list after the period's closed tournaments.",
    deps=["games", "players", "merges"],
    state_tables=[CLUB_STATE],
    load=_load_club,
    rate=lambda i, periods: club_lists_periods(
        i["games"], i["states"][CLUB_STATE], i["players"], periods
    ),
    publishing=_publishing("club", "rated from the period's closed club tournaments"),
)

fide_ratings, fide_lists_published = system_assets(FIDE)
ukd_ratings, ukd_lists_published = system_assets(UKD)
club_ratings, club_lists_published = system_assets(CLUB)

FEDERATION_SPECS = [FIDE, UKD, CLUB]
FEDERATION_ASSETS = [
    fide_ratings,
    ukd_ratings,
    club_ratings,
    fide_lists_published,
    ukd_lists_published,
    club_lists_published,
]
