"""Federation periods across the three lists: which state each list starts from, the order the
lists are computed in (standard first: rapid and blitz read its period-start list), and the range
functions that rate every period of a range in order (`*_lists_periods`), yielding each period's
output as it completes and keeping only what the next period starts from.

Pure functions over frames; the Dagster assets only read and write around them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import polars as pl

from rating_core import tables
from rating_core.periods import previous_period
from rating_core.schemas import RATING_LISTS, empty
from rating_core.systems.club.folders import club_list_name
from rating_core.systems.club.period import ClubPeriodResult, club_period
from rating_core.systems.club.rules import CLUB_STATE_SCHEMA
from rating_core.systems.contract import (
    CLUB_FOLDER,
    RULES_COLUMN,
    PeriodOutput,
    RangeOutputs,
    concat_rows,
    present,
    tag_list,
)
from rating_core.systems.corrections import (
    CORRECTION_LOG_SCHEMA,
    applied_birth_years,
    birth_date_log,
    correct_fide,
    correct_ukd,
    not_computed,
    system_corrections,
    with_birth_years,
)
from rating_core.systems.fide.period import (
    FidePeriodResult,
    fide_period,
    fide_state_from_starting_list,
)
from rating_core.systems.fide.rules import (
    FIDE_RULES,
    FIDE_STATE_SCHEMA,
    compression_for_list,
    fast_raise_for_list,
    rules_for_period,
)
from rating_core.systems.period_range import report_period
from rating_core.systems.player_data import (
    merged_data,
    registry_data,
    starting_list_data,
    starting_list_names,
    tournament_data,
    with_player_data,
)
from rating_core.systems.ukd.period import (
    UkdPeriodResult,
    ukd_period,
    ukd_state_from_starting_list,
)
from rating_core.systems.ukd.rules import UKD_STATE_SCHEMA


@dataclass(frozen=True)
class ListStart:
    """The state a list starts a period from, and where it came from (for the explanation)."""

    state: pl.DataFrame | None
    origin: str  # "official list <file>", "computed list of <P-1>", "none"


def list_start(
    system: str,
    rating_list: str,
    period: str,
    starting_lists: pl.DataFrame,
    computed_previous: pl.DataFrame | None,
) -> ListStart:
    """The official starting list after P-1 wins; else the list this pipeline computed for P-1."""
    name = f"{system}-{rating_list}"
    before = previous_period(period)
    official = (
        starting_lists.filter((pl.col("list") == name) & (pl.col("period") == before))
        if starting_lists.height
        else starting_lists
    )
    if official.height:
        convert = (
            fide_state_from_starting_list if system == "fide" else ukd_state_from_starting_list
        )
        return ListStart(convert(official), f"official list {name}@{before}")
    if computed_previous is not None:
        return ListStart(computed_previous, f"computed list of {before}")
    return ListStart(None, "none")


def seed_from_records(
    state: pl.DataFrame | None,
    games: pl.DataFrame,
    period: str,
    rating_list: str,
    min_rating: int = FIDE_RULES.floor,
) -> pl.DataFrame | None:
    """Add players the list does not hold at the FIDE rating their game record carries.

    Decision: a tournament report's own rating (TRF player record, PGN `WhiteElo` in a federation
    file) is the player's rating on the list in force when no list holds them, with an unknown
    career count (K 20 unless the peak or junior rule applies). Ratings below the floor are ignored.
    """
    g = games.filter((pl.col("period") == period) & (pl.col("rating_list") == rating_list))
    if not g.height:
        return state
    records = (
        pl.concat(
            [
                g.select(
                    pl.col("white_id").alias("player_id"),
                    pl.col("white_elo").alias("rating"),
                    "played_at",
                ),
                g.select(
                    pl.col("black_id").alias("player_id"),
                    pl.col("black_elo").alias("rating"),
                    "played_at",
                ),
            ]
        )
        .drop_nulls()
        .filter(pl.col("rating") >= min_rating)
        .sort("played_at")
        .unique("player_id", keep="first", maintain_order=True)
    )
    if state is not None and state.height:
        records = records.join(state.select("player_id"), on="player_id", how="anti")
    if not records.height:
        return state
    seeded = records.select(
        "player_id",
        pl.col("rating").cast(pl.Int32),
        pl.lit(None, dtype=pl.Int32).alias("rated_games"),
        pl.col("rating").cast(pl.Int32).alias("peak_rating"),
        pl.lit(None, dtype=pl.String).alias("last_played_period"),
        pl.lit(period).alias("listed_since"),
    )
    base = state if state is not None else pl.DataFrame(schema=FIDE_STATE_SCHEMA)
    return pl.concat([base.cast(FIDE_STATE_SCHEMA), seeded.cast(FIDE_STATE_SCHEMA)])


def fide_lists_period(
    games: pl.DataFrame,
    starts: dict[str, pl.DataFrame | None],
    pools: dict[str, pl.DataFrame | None],
    players: pl.DataFrame | None,
    period: str,
) -> dict[str, FidePeriodResult]:
    """Rate standard, then rapid and blitz (seeded from the period-start standard list), each
    by its own list's rules in force on the period's first day, with the one-time raises its
    era says are due on this period's list (the compression of 2024-02; on rapid and blitz, the
    raise of 2022-09 to the period's new standard list - 100)."""
    results: dict[str, FidePeriodResult] = {}
    standard_start = seed_from_records(
        starts.get("standard"),
        games,
        period,
        "standard",
        rules_for_period(period, "standard").floor,
    )
    for rating_list in RATING_LISTS:
        rules = rules_for_period(period, rating_list)
        start = (
            standard_start
            if rating_list == "standard"
            else seed_from_records(starts.get(rating_list), games, period, rating_list, rules.floor)
        )
        has_games = games.filter(pl.col("rating_list") == rating_list).height > 0
        if start is None and not has_games and pools.get(rating_list) is None:
            continue
        standard_after = results["standard"].state if "standard" in results else None
        results[rating_list] = fide_period(
            games,
            start if start is not None else pl.DataFrame(schema=FIDE_STATE_SCHEMA),
            players,
            period,
            rating_list,
            standard_state=standard_start if rating_list != "standard" else None,
            pool=pools.get(rating_list),
            rules=rules,
            compression=compression_for_list(period, rating_list),
            fast_raise=fast_raise_for_list(period, rating_list),
            standard_after=standard_after,
        )
    return results


def ukd_lists_period(
    games: pl.DataFrame,
    starts: dict[str, pl.DataFrame | None],
    pools: dict[str, pl.DataFrame | None],
    period: str,
) -> dict[str, UkdPeriodResult]:
    """Rate the three UKD lists of a period, each from its own period-start state."""
    results: dict[str, UkdPeriodResult] = {}
    for rating_list in RATING_LISTS:
        start = starts.get(rating_list)
        has_games = games.filter(pl.col("rating_list") == rating_list).height > 0
        if start is None and not has_games and pools.get(rating_list) is None:
            continue
        results[rating_list] = ukd_period(
            games,
            start if start is not None else pl.DataFrame(schema=UKD_STATE_SCHEMA),
            period,
            rating_list,
            pool=pools.get(rating_list),
        )
    return results


def club_lists_period(
    games: pl.DataFrame, state: pl.DataFrame | None, players: pl.DataFrame | None
) -> dict[tuple[str, str], ClubPeriodResult]:
    """Every (club, list) pool with a state or games this period, rated tournament by tournament.

    `state` holds every pool's players with `club_id` and `rating_list` columns.
    """
    keys: set[tuple[str, str]] = set()
    if state is not None and state.height:
        keys |= set(state.select("club_id", "rating_list").unique().iter_rows())
    if games.height:
        keys |= set(
            games.select("club_id", pl.col("rating_list").cast(pl.String)).unique().iter_rows()
        )
    results: dict[tuple[str, str], ClubPeriodResult] = {}
    for club_id, rating_list in sorted(k for k in keys if k[0] and k[1]):
        pool_games = games.filter(
            (pl.col("club_id") == club_id) & (pl.col("rating_list") == rating_list)
        )
        pool_state = (
            state.filter(
                (pl.col("club_id") == club_id) & (pl.col("rating_list") == rating_list)
            ).select(list(CLUB_STATE_SCHEMA))
            if state is not None and state.height
            else pl.DataFrame(schema=CLUB_STATE_SCHEMA)
        )
        results[(club_id, rating_list)] = club_period(pool_games, pool_state, players, rating_list)
    return results


# --- ranges of periods ---------------------------------------------------------------------------

FIDE_EXPLANATIONS = tables.EXPLANATION_TABLES["fide"]
"""The explanation tables of each FIDE list (`history/fide-<list>-<table>`)."""
UKD_EXPLANATIONS = tables.EXPLANATION_TABLES["ukd"]
"""The explanation tables of each UKD list (`history/ukd-<list>-<table>`)."""
CLUB_STATE = tables.state("club").name
CLUB_EXPLANATIONS = tables.EXPLANATION_TABLES["club"]
"""The explanation tables of the club lists (`history/club-<table>`, every pool in one)."""


def federation_state_tables(system: str) -> list[str]:
    """The lake tables holding what a FIDE or UKD period starts from (state and newcomer pool)."""
    return [
        t
        for kind in RATING_LISTS
        for t in (tables.state(f"{system}-{kind}").name, tables.pool(f"{system}-{kind}").name)
    ]


def games_by_period(games: pl.DataFrame, periods: list[str]) -> Iterator[tuple[str, pl.DataFrame]]:
    """Each period of `periods` with its rows, in their order in `games` (an empty frame of the
    same schema when none), one period at a time, so the range's games are never copied whole:
    zero-copy slices when each period's rows lie together (the lake reads a range partition by
    partition), else the period's rows filtered out when it comes."""
    if not games.height:
        for period in periods:
            yield period, games
        return
    runs = games.get_column("period").rle().struct.unnest()  # one row per run of a period
    if runs.get_column("value").n_unique() == runs.height:
        starts = runs.get_column("len").cum_sum() - runs.get_column("len")
        where = {
            value: (int(start), int(length))
            for value, start, length in zip(runs["value"], starts, runs["len"], strict=True)
        }
        for period in periods:
            yield period, games.slice(*where[period]) if period in where else games.clear()
    else:
        for period in periods:
            yield period, games.filter(pl.col("period") == period)


def corrections_table(system: str) -> str:
    """`history/<system>-corrections`: every correction of each period, applied or not."""
    return tables.history(system, "corrections").name


def _known_ids(start: pl.DataFrame | None, games: pl.DataFrame, rating_list: str) -> pl.Series:
    """Ids on a list's period-start state or playing a game of that list in the period."""
    mine = games.filter(pl.col("rating_list") == rating_list) if games.height else games
    parts = [mine.get_column(c).cast(pl.String) for c in ("white_id", "black_id") if mine.height]
    if start is not None and start.height:
        parts.append(start.get_column("player_id").cast(pl.String))
    return pl.concat(parts).unique() if parts else pl.Series("player_id", [], dtype=pl.String)


@dataclass(frozen=True)
class _FederationSystem:
    """What `_federation_periods` rates a FIDE or UKD period by: the system, its period function
    (`rate(games, starts, pools, period, players)`), its explanation tables and the name of the
    rules of a period (None: one era)."""

    system: str
    rate: Callable[..., dict[str, Any]]
    explanation_tables: tuple[str, ...]
    rules_name: Callable[[str], str] | None = None


def _federation_period(
    spec: _FederationSystem,
    period: str,
    period_games: pl.DataFrame,
    starting_lists: pl.DataFrame,
    carried: dict[str, pl.DataFrame | None],
    period_fixes: pl.DataFrame,
    players: pl.DataFrame | None,
    years: pl.DataFrame,
    tournaments: pl.DataFrame | None = None,
) -> tuple[PeriodOutput, pl.DataFrame]:
    """One period of `_federation_periods` from the states `carried` from the period before:
    its output, and the birth years corrected up to it. A function of its own so that nothing
    of the period but its output outlives it."""
    system = spec.system
    starts, pools, origins = {}, {}, {}
    for kind in RATING_LISTS:
        name = f"{system}-{kind}"
        start = list_start(
            system, kind, period, starting_lists, carried.get(tables.state(name).name)
        )
        starts[kind], origins[kind] = start.state, start.origin
        pools[kind] = carried.get(tables.pool(name).name)
    logs = []
    if period_fixes.filter(pl.col("field") == "birth_date").height:
        for kind in RATING_LISTS:
            name = f"{system}-{kind}"
            known = _known_ids(starts[kind], period_games, kind)
            mine = period_fixes.filter(pl.col("list") == name)
            logs.append(birth_date_log(mine, known, players, name, period))
        applied = applied_birth_years(pl.concat(logs))
        years = pl.concat([years.join(applied, on="player_id", how="anti"), applied])
    people = with_birth_years(players, years)
    results = spec.rate(period_games, starts, pools, period, people)
    data = merged_data(
        [
            registry_data(people),
            starting_list_data(starting_lists, period),
            tournament_data(tournaments),
        ]
    )
    listed_names = starting_list_names(starting_lists, period)
    out_states: dict[str, pl.DataFrame] = {}
    explanations: dict[str, pl.DataFrame] = {}
    rows = []
    facts: dict[str, object] = {"started_from": origins}
    era = spec.rules_name(period) if spec.rules_name is not None else None
    for kind in RATING_LISTS:
        name = f"{system}-{kind}"
        mine = period_fixes.filter((pl.col("list") == name) & (pl.col("field") != "birth_date"))
        if kind not in results:
            logs.append(not_computed(mine, name, period))
            continue
        result: Any  # FidePeriodResult or UkdPeriodResult
        if system == "fide":
            result, log = correct_fide(results[kind], mine, starts[kind], name)
        else:
            result, log = correct_ukd(results[kind], mine, name)
        logs.append(log)
        out_states[tables.state(name).name] = result.state
        out_states[tables.pool(name).name] = result.pool
        for table in spec.explanation_tables:
            explanations[tables.history(name, table).name] = getattr(result, table)
        listed = with_player_data(result.list_rows, data, fide=system == "fide")
        if "name" not in listed.columns:  # the official list's name for a player nothing names
            listed = listed.join(listed_names, on="player_id", how="left")
        tagged = tag_list(listed, name)
        if era is not None:
            tagged = tagged.with_columns(pl.lit(era, dtype=pl.String).alias(RULES_COLUMN))
        rows.append(tagged)
    if era is not None:
        facts["rules"] = era
    logs = [log for log in logs if log.height]
    if logs or results:  # an empty log replaces what an earlier run wrote for the period
        explanations[corrections_table(system)] = (
            pl.concat(logs) if logs else empty(CORRECTION_LOG_SCHEMA)
        )
    return PeriodOutput(out_states, concat_rows(rows), explanations, facts), years


def _federation_periods(
    spec: _FederationSystem,
    games: pl.DataFrame,
    starting_lists: pl.DataFrame,
    states: dict[str, pl.DataFrame | None],
    periods: list[str],
    corrections: pl.DataFrame | None = None,
    players: pl.DataFrame | None = None,
    birth_years: pl.DataFrame | None = None,
    tournaments: pl.DataFrame | None = None,
) -> RangeOutputs:
    """Rate the periods in order, yielding each as it completes: each starts from the previous
    one's states, except that an official starting list after P-1 replaces the carried state of
    its list (`list_start`). `spec.rules_name(period)` names the rules a period is rated by, on
    its list rows (RULES_COLUMN) and in its facts.

    The rating officer's `corrections` of a period are applied to its computed lists
    (`rating_core.systems.corrections`), so the next period starts from the corrected state;
    FIDE birth-date corrections change the registry's birth years (`players`) from their period
    on, `birth_years` being those applied before the range.

    Between periods only the states (and pools) and the corrected birth years are kept: a
    period's explanations and list rows are the consumer's once yielded.
    """
    carried = {table: present(frame) for table, frame in states.items()}
    fixes = system_corrections(corrections, spec.system)
    years = (
        birth_years
        if birth_years is not None
        else pl.DataFrame(schema={"player_id": pl.String, "birth_year": pl.Int32})
    )
    handled = 0
    for done, (period, period_games) in enumerate(games_by_period(games, periods), 1):
        output, years = _federation_period(
            spec,
            period,
            period_games,
            starting_lists,
            carried,
            fixes.filter(pl.col("period") == period),
            players,
            years,
            tournaments,
        )
        carried = {table: present(output.states.get(table)) for table in carried | output.states}
        handled += period_games.height
        yield period, output
        del output  # the next period starts from `carried` alone
        report_period(spec.system, done, periods, handled)


def fide_lists_periods(
    games: pl.DataFrame,
    starting_lists: pl.DataFrame,
    states: dict[str, pl.DataFrame | None],
    players: pl.DataFrame | None,
    periods: list[str],
    corrections: pl.DataFrame | None = None,
    birth_years: pl.DataFrame | None = None,
    tournaments: pl.DataFrame | None = None,
) -> RangeOutputs:
    """Every FIDE period of `periods` in order, yielded as it completes (`games`: their
    federation games; `states`: the tables of `federation_state_tables("fide")` after the period
    before the first), each by the rules of its own era (RULES §3.3), named on its list rows;
    `corrections`: the rating officer's, CORRECTIONS_SCHEMA; `birth_years`: player_id,
    birth_year of the birth-date corrections applied before the first period."""
    return _federation_periods(
        _FederationSystem(
            "fide",
            lambda g, starts, pools, period, people: fide_lists_period(
                g, starts, pools, people, period
            ),
            FIDE_EXPLANATIONS,
            rules_name=lambda period: rules_for_period(period).name,
        ),
        games,
        starting_lists,
        states,
        periods,
        corrections=corrections,
        players=players,
        birth_years=birth_years,
        tournaments=tournaments,
    )


def ukd_lists_periods(
    games: pl.DataFrame,
    starting_lists: pl.DataFrame,
    states: dict[str, pl.DataFrame | None],
    periods: list[str],
    corrections: pl.DataFrame | None = None,
    players: pl.DataFrame | None = None,
    tournaments: pl.DataFrame | None = None,
) -> RangeOutputs:
    """Every UKD period of `periods` in order, yielded as it completes, as `fide_lists_periods`
    (UKD has one era: RULES §4 gives no dates; UKD lists accept rating corrections only;
    `players`, the registry, gives only the lists' player data)."""
    return _federation_periods(
        _FederationSystem(
            "ukd",
            lambda g, starts, pools, period, _people: ukd_lists_period(g, starts, pools, period),
            UKD_EXPLANATIONS,
        ),
        games,
        starting_lists,
        states,
        periods,
        corrections=corrections,
        players=players,
        tournaments=tournaments,
    )


def _club_period(
    period_games: pl.DataFrame,
    carried: pl.DataFrame | None,
    players: pl.DataFrame | None,
    data: pl.DataFrame,
) -> PeriodOutput:
    """One club period from the pools `carried` from the period before: every pool's state,
    list rows (with the player `data`) and explanations in one frame each, tagged with its club
    and list."""
    results = club_lists_period(period_games, carried, players)
    states, rows, players_expl, games_expl = [], [], [], []
    for (club_id, kind), result in results.items():
        keys = [pl.lit(club_id).alias("club_id"), pl.lit(kind).alias("rating_list")]
        states.append(result.state.with_columns(keys))
        players_expl.append(result.player_explanations.with_columns(keys))
        games_expl.append(result.game_explanations.with_columns(keys))
        tagged = tag_list(
            with_player_data(result.list_rows, data, fide=False), club_list_name(club_id, kind)
        )
        rows.append(tagged.with_columns(pl.lit(club_id).alias(CLUB_FOLDER)))
    return PeriodOutput(
        {CLUB_STATE: pl.concat(states) if states else pl.DataFrame()},
        concat_rows(rows),
        {
            tables.history("club", "player_explanations").name: concat_rows(players_expl),
            tables.history("club", "game_explanations").name: concat_rows(games_expl),
        },
    )


def club_lists_periods(
    games: pl.DataFrame,
    state: pl.DataFrame | None,
    players: pl.DataFrame | None,
    periods: list[str],
    starting_lists: pl.DataFrame | None = None,
    tournaments: pl.DataFrame | None = None,
) -> RangeOutputs:
    """Every club period of `periods` in order, yielded as it completes, each from the previous
    one's pools (`state`: every pool's players after the period before the first, with
    `club_id` and `rating_list`); only those pools are kept between periods. The lists' player
    data come from the registry, then the `starting_lists` in force."""
    carried = present(state)
    handled = 0
    registry, trf = registry_data(players), tournament_data(tournaments)
    for done, (period, period_games) in enumerate(games_by_period(games, periods), 1):
        lists = starting_list_data(
            starting_lists if starting_lists is not None else pl.DataFrame(), period
        )
        data = merged_data([registry, lists, trf])
        output = _club_period(period_games, carried, players, data)
        carried = present(output.states[CLUB_STATE])
        handled += period_games.height
        yield period, output
        del output  # the next period starts from `carried` alone
        report_period("club", done, periods, handled)
