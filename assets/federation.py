"""Federation assets: FIDE (RULES §3), UKD (§4) and club (§6) lists, one period at a time.

Each `*_ratings` asset starts from the official starting list after P-1 when the inbox has one,
else from its own previous partition (self-dependency), so a late result in an old month is a
backfill from that month on.
"""

from collections.abc import Callable

import dagster as dg
import polars as pl

from assets.partitions import monthly_periods, previous_period
from assets.period_io import (
    CLUB_FOLDER,
    CODE_VERSION,
    INPUT_DIGEST,
    check_period,
    frame_metadata,
    input_digest,
    period_key,
    publish_period_lists,
    read_period,
    read_previous_state,
    with_names,
    write_period,
)
from assets.resources import PipelinePaths
from rating_core.lake.storage import read_table
from rating_core.schemas import GAMES_SCHEMA, RATING_LISTS
from rating_core.systems.club.folders import club_list_name
from rating_core.systems.federation import (
    club_lists_period,
    fide_lists_period,
    list_start,
    ukd_lists_period,
)
from rating_core.systems.fide.rules import FIDE_RULES
from rating_core.systems.ukd.rules import UKD_RULES


def _federation_games(paths: PipelinePaths, period: str, source: str) -> pl.DataFrame:
    games = read_period(paths.lake_path, "games", period, GAMES_SCHEMA)
    return games.filter(pl.col("source") == source)


def _registry(paths: PipelinePaths) -> pl.DataFrame | None:
    registry = read_table(paths.lake_path, "players").collect()
    return registry if registry.height else None


def _starts_and_pools(
    paths: PipelinePaths, system: str, period: str
) -> tuple[dict, dict, dict[str, str]]:
    lake = paths.lake_path
    starting_lists = read_table(lake, "starting_lists").collect()
    starts, pools, origins = {}, {}, {}
    for kind in RATING_LISTS:
        start = list_start(
            system,
            kind,
            period,
            starting_lists,
            read_previous_state(lake, f"{system}-{kind}", period),
        )
        starts[kind] = start.state
        origins[kind] = start.origin
        pools[kind] = read_previous_state(lake, f"{system}-{kind}-pool", period)
    return starts, pools, origins


def _tag(frame: pl.DataFrame, list_name: str) -> pl.DataFrame:
    return frame.with_columns(pl.lit(list_name).alias("list"))


def _write_results(
    paths: PipelinePaths,
    system: str,
    period: str,
    results: dict,
    digest: str,
    explanation_tables: tuple[str, ...],
) -> pl.DataFrame:
    """Write state, pool and explanations of each list; return the period's list rows."""
    lake = paths.lake_path
    rows = []
    for kind, result in results.items():
        name = f"{system}-{kind}"
        write_period(lake, f"state/{name}", period, result.state)
        write_period(lake, f"state/{name}-pool", period, result.pool)
        for table in explanation_tables:
            write_period(lake, f"history/{name}-{table}", period, getattr(result, table))
        rows.append(_tag(result.list_rows, name))
    frame = pl.concat(rows, how="diagonal_relaxed") if rows else pl.DataFrame()
    if frame.height:
        frame = with_names(lake, frame).with_columns(pl.lit(digest).alias(INPUT_DIGEST))
    write_period(lake, f"list_rows/{system}", period, frame)
    return frame


def _federation_ratings(
    system: str,
    rate: Callable[[PipelinePaths, pl.DataFrame, dict, dict, str], dict],
    explanation_tables: tuple[str, ...],
    extra_deps: list[str],
    description: str,
) -> dg.AssetsDefinition:
    """The monthly ratings asset of one federation system (FIDE or UKD, all three lists)."""

    @dg.asset(
        name=f"{system}_ratings",
        group_name="ratings",
        code_version=CODE_VERSION,
        partitions_def=monthly_periods,
        deps=[
            "games",
            "starting_lists",
            *extra_deps,
            dg.AssetDep(f"{system}_ratings", partition_mapping=previous_period),
        ],
        description=description,
    )
    def ratings(context: dg.AssetExecutionContext, paths: PipelinePaths) -> dg.MaterializeResult:
        period = period_key(context)
        games = _federation_games(paths, period, "federation")
        starts, pools, origins = _starts_and_pools(paths, system, period)
        results = rate(paths, games, starts, pools, period)
        digest = input_digest(games, *[starts[k] for k in RATING_LISTS])
        rows = _write_results(paths, system, period, results, digest, explanation_tables)
        return dg.MaterializeResult(
            data_version=dg.DataVersion(digest),
            metadata={**frame_metadata(rows), "started_from": dg.MetadataValue.json(origins)},
        )

    return ratings


fide_ratings = _federation_ratings(
    "fide",
    lambda paths, games, starts, pools, period: fide_lists_period(
        games, starts, pools, _registry(paths), period
    ),
    ("game_explanations", "player_explanations", "newcomers", "dropped"),
    ["players"],
    "FIDE standard, rapid and blitz ratings after the period, with explanations.",
)
ukd_ratings = _federation_ratings(
    "ukd",
    lambda paths, games, starts, pools, period: ukd_lists_period(games, starts, pools, period),
    ("game_explanations", "tournament_explanations", "player_explanations", "newcomers"),
    [],
    "UKD standard, rapid and blitz ratings after the period, with explanations.",
)


@dg.asset(
    group_name="ratings",
    code_version=CODE_VERSION,
    partitions_def=monthly_periods,
    deps=["games", "players", dg.AssetDep("club_ratings", partition_mapping=previous_period)],
    description="Club ratings per club and list after the period's closed tournaments.",
)
def club_ratings(context: dg.AssetExecutionContext, paths: PipelinePaths) -> dg.MaterializeResult:
    lake, period = paths.lake_path, period_key(context)
    games = _federation_games(paths, period, "club")
    previous = read_previous_state(lake, "club", period)
    results = club_lists_period(games, previous, _registry(paths))
    states, rows, players_expl, games_expl = [], [], [], []
    for (club_id, kind), result in results.items():
        keys = [pl.lit(club_id).alias("club_id"), pl.lit(kind).alias("rating_list")]
        states.append(result.state.with_columns(keys))
        players_expl.append(result.player_explanations.with_columns(keys))
        games_expl.append(result.game_explanations.with_columns(keys))
        tagged = _tag(result.list_rows, club_list_name(club_id, kind))
        rows.append(tagged.with_columns(pl.lit(club_id).alias(CLUB_FOLDER)))
    for table, frames in (
        ("state/club", states),
        ("history/club-player_explanations", players_expl),
        ("history/club-game_explanations", games_expl),
    ):
        write_period(lake, table, period, pl.concat(frames) if frames else pl.DataFrame())
    frame = pl.concat(rows, how="diagonal_relaxed") if rows else pl.DataFrame()
    digest = input_digest(games, previous)
    if frame.height:
        frame = with_names(lake, frame).with_columns(pl.lit(digest).alias(INPUT_DIGEST))
    write_period(lake, "list_rows/club", period, frame)
    return dg.MaterializeResult(data_version=dg.DataVersion(digest), metadata=frame_metadata(frame))


def _published(system: str, reason: str):
    @dg.asset(
        name=f"{system}_lists_published",
        group_name="publish",
        code_version=CODE_VERSION,
        partitions_def=monthly_periods,
        deps=[f"{system}_ratings"],
        description=f"Publish the {system} lists of the period (new versions only on change).",
    )
    def publish(context: dg.AssetExecutionContext, paths: PipelinePaths) -> dg.MaterializeResult:
        return publish_period_lists(paths.lake_path, system, period_key(context), reason=reason)

    return publish


fide_lists_published = _published("fide", "rated from the period's federation games")
ukd_lists_published = _published("ukd", "rated from the period's federation games")
club_lists_published = _published("club", "rated from the period's closed club tournaments")


def _rows(
    context: dg.AssetCheckExecutionContext, paths: PipelinePaths, system: str
) -> pl.DataFrame:
    return read_period(paths.lake_path, f"list_rows/{system}", check_period(context))


@dg.asset_check(
    asset=fide_ratings,
    blocking=True,
    description="K is one the rules allow (10, 20, 40 or a K x n cap) and K x n <= 700.",
)
def fide_k_allowed(
    context: dg.AssetCheckExecutionContext, paths: PipelinePaths
) -> dg.AssetCheckResult:
    rows = _rows(context, paths, "fide")
    bad = 0
    if rows.height:
        played = rows.filter(pl.col("games") > 0)
        allowed = pl.col("k").is_in(
            [
                FIDE_RULES.k_established_top,
                FIDE_RULES.k_default,
                FIDE_RULES.k_new,
                FIDE_RULES.k_junior,
            ]
        ) | (pl.col("k") == FIDE_RULES.k_times_n_max // pl.col("games"))
        over = pl.col("k") * pl.col("games") > FIDE_RULES.k_times_n_max
        bad = played.filter(~allowed | over).height
    return dg.AssetCheckResult(passed=bad == 0, metadata={"bad_k": bad})


@dg.asset_check(
    asset=fide_ratings,
    blocking=True,
    description="No FIDE rating below 1400.",
)
def fide_floor_respected(
    context: dg.AssetCheckExecutionContext, paths: PipelinePaths
) -> dg.AssetCheckResult:
    rows = _rows(context, paths, "fide")
    below = rows.filter(pl.col("rating") < FIDE_RULES.floor).height if rows.height else 0
    return dg.AssetCheckResult(passed=below == 0, metadata={"below_1400": below})


@dg.asset_check(
    asset=fide_ratings,
    blocking=True,
    description="Every rated game between two rated players is counted for both sides.",
)
def fide_games_counted_both_sides(
    context: dg.AssetCheckExecutionContext, paths: PipelinePaths
) -> dg.AssetCheckResult:
    period = check_period(context)
    missing = 0
    for kind in RATING_LISTS:
        expl = read_period(paths.lake_path, f"history/fide-{kind}-game_explanations", period)
        if not expl.height:
            continue
        both = expl.filter(pl.col("opponent_rating").is_not_null())
        sides = both.group_by("game_id").agg(pl.col("counted").sum().alias("n"))
        # a game counted for one side only must be explained by a per-side rule (none for
        # two rated players in the same list), so every such game has 0 or 2 counted sides
        missing += sides.filter(pl.col("n") == 1).height
    return dg.AssetCheckResult(passed=missing == 0, metadata={"one_sided_games": missing})


@dg.asset_check(
    asset=ukd_ratings,
    blocking=True,
    description="No UKD below 1000.",
)
def ukd_floor_respected(
    context: dg.AssetCheckExecutionContext, paths: PipelinePaths
) -> dg.AssetCheckResult:
    rows = _rows(context, paths, "ukd")
    below = rows.filter(pl.col("rating") < UKD_RULES.floor).height if rows.height else 0
    return dg.AssetCheckResult(passed=below == 0, metadata={"below_1000": below})


FEDERATION_ASSETS = [
    fide_ratings,
    ukd_ratings,
    club_ratings,
    fide_lists_published,
    ukd_lists_published,
    club_lists_published,
]
FEDERATION_CHECKS = [
    fide_k_allowed,
    fide_floor_respected,
    fide_games_counted_both_sides,
    ukd_floor_respected,
]
