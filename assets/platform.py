"""Platform assets: site ratings (RULES §2) and FIBS backgammon (RULES §5), one period at a time.

Each `*_ratings` asset starts from its own previous partition's state (self-dependency), so a
moderation decision or a late result in an old month is a backfill from that month on; each
`*_lists` asset publishes what changed as new versions.
"""

import dagster as dg
import polars as pl

from assets.partitions import monthly_periods, previous_period
from assets.period_io import (
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
from rating_core.rounding import FLOAT_TOLERANCE
from rating_core.schemas import GAMES_SCHEMA, MATCHES_SCHEMA
from rating_core.systems.fibs.replay import fibs_list, fibs_replay
from rating_core.systems.site.moderation import (
    APPLIED_SCHEMA,
    annulled_games_until,
    annulment_causes,
    annulment_reason,
)
from rating_core.systems.site.replay import SITE_RULES, site_lists, site_replay

APPLIED_ANNULMENTS = "applied/site_annulments"
"""Lake table: per period, the annulments the last publication of the site lists applied."""


def _annulled(paths: PipelinePaths) -> pl.DataFrame:
    return read_table(paths.lake_path, "moderation").collect()


@dg.asset(
    group_name="ratings",
    code_version=CODE_VERSION,
    partitions_def=monthly_periods,
    deps=[
        "games",
        "players",
        "moderation_decisions",
        dg.AssetDep("site_ratings", partition_mapping=previous_period),
    ],
    description="Site Elo and category ratings after the period (state, per-game history).",
)
def site_ratings(context: dg.AssetExecutionContext, paths: PipelinePaths) -> dg.MaterializeResult:
    lake, period = paths.lake_path, period_key(context)
    games = read_period(lake, "games", period, GAMES_SCHEMA)
    games = games.filter(pl.col("source") == "platform")
    registry = read_table(lake, "players").collect()
    decisions = _annulled(paths)
    previous = read_previous_state(lake, "site", period)
    result = site_replay(
        games,
        registry if registry.height else None,
        decisions.get_column("game_id") if decisions.height else None,
        previous,
    )
    write_period(lake, "state/site", period, result.state)
    write_period(lake, "history/site", period, result.history)
    write_period(lake, "excluded/site", period, result.excluded)
    rows = site_lists(result.state, period, previous).drop("period")
    digest = input_digest(games, previous, decisions)
    rows = with_names(lake, rows).with_columns(pl.lit(digest).alias(INPUT_DIGEST))
    write_period(lake, "list_rows/site", period, rows)
    return dg.MaterializeResult(
        data_version=dg.DataVersion(digest),
        metadata={
            **frame_metadata(result.history),
            "rated_games": dg.MetadataValue.int(result.rated_games),
            "excluded_games": dg.MetadataValue.int(result.excluded.height),
            "players": dg.MetadataValue.int(result.state.get_column("player_id").n_unique()),
        },
    )


@dg.asset(
    group_name="publish",
    code_version=CODE_VERSION,
    partitions_def=monthly_periods,
    deps=[site_ratings],
    description="Publish site-elo and every site-<category> list of the period.",
)
def site_lists_published(
    context: dg.AssetExecutionContext, paths: PipelinePaths
) -> dg.MaterializeResult:
    lake, period = paths.lake_path, period_key(context)
    decisions = _annulled(paths)
    annulled_games = (
        read_table(lake, "games", schema=GAMES_SCHEMA)
        .select("game_id", "period", "white_id", "black_id")
        .filter(pl.col("game_id").is_in(decisions["game_id"].implode()))
        .collect()
        if decisions.height
        else pl.DataFrame(schema={"game_id": pl.String, "period": pl.String})
    )
    # a version names only the annulments new (or withdrawn) since the last publication
    applied = read_period(lake, APPLIED_ANNULMENTS, period, APPLIED_SCHEMA)
    published = publish_period_lists(
        lake,
        "site",
        period,
        reason=annulment_reason(decisions, annulled_games, period, applied),
        causes=annulment_causes(decisions, annulled_games, period, applied),
    )
    write_period(
        lake, APPLIED_ANNULMENTS, period, annulled_games_until(decisions, annulled_games, period)
    )
    return published


@dg.asset_check(
    asset=site_ratings,
    blocking=True,
    description="No site rating below 100.",
)
def site_floor_respected(
    context: dg.AssetCheckExecutionContext, paths: PipelinePaths
) -> dg.AssetCheckResult:
    period = check_period(context)
    state = read_period(paths.lake_path, "state/site", period)
    below = (
        state.filter(pl.col("rating") < SITE_RULES.floor - FLOAT_TOLERANCE).height
        if state.height
        else 0
    )
    return dg.AssetCheckResult(passed=below == 0, metadata={"below_floor": below})


@dg.asset_check(
    asset=site_ratings,
    blocking=True,
    description="Bots never appear on a list.",
)
def site_no_bots_on_lists(
    context: dg.AssetCheckExecutionContext, paths: PipelinePaths
) -> dg.AssetCheckResult:
    period = check_period(context)
    rows = read_period(paths.lake_path, "list_rows/site", period)
    registry = read_table(paths.lake_path, "players").collect()
    games = read_period(paths.lake_path, "games", period)
    bots = set()
    if registry.height:
        bots |= set(registry.filter(pl.col("is_bot").fill_null(False))["player_id"].to_list())
    if games.height:
        bots |= set(games.filter(pl.col("white_is_bot"))["white_id"].to_list())
        bots |= set(games.filter(pl.col("black_is_bot"))["black_id"].to_list())
    found = rows.filter(pl.col("player_id").is_in(list(bots))).height if rows.height else 0
    return dg.AssetCheckResult(passed=found == 0, metadata={"bot_rows": found})


@dg.asset_check(
    asset=site_ratings,
    blocking=True,
    description="Provisional exactly when a number has fewer than 10 rated games.",
)
def site_provisional_consistent(
    context: dg.AssetCheckExecutionContext, paths: PipelinePaths
) -> dg.AssetCheckResult:
    rows = read_period(paths.lake_path, "list_rows/site", check_period(context))
    wrong = (
        rows.filter(
            pl.col("provisional") != (pl.col("total_games") < SITE_RULES.provisional_below)
        ).height
        if rows.height
        else 0
    )
    return dg.AssetCheckResult(passed=wrong == 0, metadata={"inconsistent": wrong})


@dg.asset_check(
    asset=site_ratings,
    blocking=True,
    description="No game annulled by moderation was rated.",
)
def site_no_annulled_game_rated(
    context: dg.AssetCheckExecutionContext, paths: PipelinePaths
) -> dg.AssetCheckResult:
    history = read_period(paths.lake_path, "history/site", check_period(context))
    decisions = _annulled(paths)
    found = 0
    if history.height and decisions.height:
        found = history.filter(pl.col("game_id").is_in(decisions["game_id"].implode())).height
    return dg.AssetCheckResult(passed=found == 0, metadata={"annulled_rows": found})


@dg.asset(
    group_name="ratings",
    code_version=CODE_VERSION,
    partitions_def=monthly_periods,
    deps=[
        "backgammon_matches",
        "players",
        dg.AssetDep("fibs_ratings", partition_mapping=previous_period),
    ],
    description="FIBS backgammon ratings after the period (state, fair-play pairs, history).",
)
def fibs_ratings(context: dg.AssetExecutionContext, paths: PipelinePaths) -> dg.MaterializeResult:
    lake, period = paths.lake_path, period_key(context)
    matches = read_period(lake, "matches", period, MATCHES_SCHEMA)
    previous = read_previous_state(lake, "fibs", period)
    pairs = read_previous_state(lake, "fibs_pairs", period)
    result = fibs_replay(matches, previous, pairs)
    write_period(lake, "state/fibs", period, result.state)
    write_period(lake, "state/fibs_pairs", period, result.pairs)
    write_period(lake, "history/fibs", period, result.history)
    registry = read_table(lake, "players").collect()
    rows = fibs_list(result.state, period, registry if registry.height else None, previous)
    rows = with_names(lake, rows.drop("period", strict=False))
    digest = input_digest(matches, previous)
    rows = rows.with_columns(pl.lit("fibs").alias("list"), pl.lit(digest).alias(INPUT_DIGEST))
    write_period(lake, "list_rows/fibs", period, rows)
    return dg.MaterializeResult(
        data_version=dg.DataVersion(digest), metadata=frame_metadata(result.history)
    )


@dg.asset(
    group_name="publish",
    code_version=CODE_VERSION,
    partitions_def=monthly_periods,
    deps=[fibs_ratings],
    description="Publish the fibs list of the period.",
)
def fibs_list_published(
    context: dg.AssetExecutionContext, paths: PipelinePaths
) -> dg.MaterializeResult:
    return publish_period_lists(
        paths.lake_path, "fibs", period_key(context), reason="computed from the inbox's matches"
    )


@dg.asset_check(
    asset=fibs_ratings,
    blocking=True,
    description="Experience never decreases.",
)
def fibs_experience_monotonic(
    context: dg.AssetCheckExecutionContext, paths: PipelinePaths
) -> dg.AssetCheckResult:
    period = check_period(context)
    state = read_period(paths.lake_path, "state/fibs", period)
    previous = read_previous_state(paths.lake_path, "fibs", period)
    lower = 0
    if state.height and previous is not None and previous.height:
        joined = state.join(previous, on="player_id", suffix="_before")
        lower = joined.filter(pl.col("experience") < pl.col("experience_before")).height
    return dg.AssetCheckResult(passed=lower == 0, metadata={"decreased": lower})


PLATFORM_ASSETS = [site_ratings, site_lists_published, fibs_ratings, fibs_list_published]
PLATFORM_CHECKS = [
    site_floor_respected,
    site_no_bots_on_lists,
    site_provisional_consistent,
    site_no_annulled_game_rated,
    fibs_experience_monotonic,
]
