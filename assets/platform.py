"""Platform assets: site ratings (RULES §2) and FIBS backgammon (RULES §5), a range of periods
per step.

Each `*_ratings` asset starts its range from its own previous partition's state (read from
the lake), so a moderation decision or a late result in an old month is a backfill from
that month on; each publishing asset publishes what changed as new versions. Built by
`assets.systems.system_assets`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl

from assets.systems import (
    CheckInput,
    PeriodCheck,
    Publishing,
    RangeInputs,
    SystemSpec,
    games_from,
    read_states,
    system_assets,
)
from rating_core import tables
from rating_core.budget import MemoryBudget
from rating_core.lake.file_inputs import backgammon_match_files, platform_game_files
from rating_core.lake.game_batches import PlatformGames, PlatformMatches
from rating_core.lake.storage import (
    read_period_range,
    read_table,
    table_partitions,
    write_partitioned,
)
from rating_core.rounding import FLOAT_TOLERANCE
from rating_core.schemas import APPLIED_ANNULMENTS_SCHEMA, APPLIED_INPUTS_SCHEMA, GAMES_SCHEMA
from rating_core.systems.contract import RangeOutputs, RowSink
from rating_core.systems.fibs.classification import FIBS_MATCH_COLUMNS
from rating_core.systems.input_causes import (
    carried_causes,
    file_causes,
    file_inputs,
    joined_causes,
)
from rating_core.systems.platform import (
    FIBS_PAIRS,
    FIBS_STATE,
    SITE_HISTORY,
    SITE_STATE,
    fibs_lists_periods,
    site_lists_periods,
)
from rating_core.systems.site.classification import SITE_RATED_COLUMNS
from rating_core.systems.site.moderation import (
    annulled_games_until,
    annulment_causes,
    annulment_reason,
)
from rating_core.systems.site.rules import SITE_RULES


def _registry(lake: Path) -> pl.DataFrame | None:
    registry = read_table(lake, tables.PLAYERS).collect()
    return registry if registry.height else None


def _load_site(lake: Path, periods: list[str], budget: MemoryBudget) -> RangeInputs:
    """The range's platform games as a source streamed from the lake in replay order (only
    what the site rating reads of them: ids, time, period and the site rules' decisions the
    ingest kept with them), the registry, the decisions and the state before."""
    games = PlatformGames(lake, periods, SITE_RATED_COLUMNS, budget.batch_games, budget.sort_memory)
    return {
        "source": games,
        "flagged_bots": flagged_bots(
            read_table(lake, tables.GAMES, periods, schema=GAMES_SCHEMA).filter(
                pl.col("source") == "platform"
            )
        ),
        "players": _registry(lake),
        "decisions": read_table(lake, tables.MODERATION).collect(),
        "states": read_states(lake, [SITE_STATE], periods[0]),
    }


def _rate_site(inputs: RangeInputs, periods: list[str], sink: RowSink) -> RangeOutputs:
    decisions = inputs["decisions"]
    return site_lists_periods(
        inputs["source"],
        inputs["players"],
        decisions.get_column("game_id") if decisions.height else None,
        inputs["states"][SITE_STATE],
        periods,
        sink,
    )


def _site_publishing(lake: Path, periods: list[str]) -> Publishing:
    """Each version names only the annulments new (or withdrawn) since the last publication."""
    decisions = read_table(lake, tables.MODERATION).collect()
    annulled_games = (
        read_table(lake, tables.GAMES, schema=GAMES_SCHEMA)
        .select("game_id", "period", "white_id", "black_id")
        .filter(pl.col("game_id").is_in(decisions["game_id"].implode()))
        .collect()
        if decisions.height
        else pl.DataFrame(schema={"game_id": pl.String, "period": pl.String})
    )
    applied = read_period_range(
        lake, tables.APPLIED_SITE_ANNULMENTS, periods, APPLIED_ANNULMENTS_SCHEMA
    )

    def after(periods: list[str]) -> None:
        frames = [
            annulled_games_until(decisions, annulled_games, period).with_columns(
                pl.lit(period).alias("period")
            )
            for period in periods
        ]
        applied_now = pl.concat(frames, how="diagonal_relaxed")
        # a period with no annulment gets an empty file only where one exists to replace
        stale = set(table_partitions(lake, tables.APPLIED_SITE_ANNULMENTS)) & set(periods)
        if applied_now.height or stale:
            write_partitioned(
                lake, tables.APPLIED_SITE_ANNULMENTS, applied_now, partitions=sorted(stale)
            )

    return Publishing(
        reason=lambda period: annulment_reason(decisions, annulled_games, period, applied[period]),
        causes=lambda period: annulment_causes(decisions, annulled_games, period, applied[period]),
        after=after,
    )


def _with_file_causes(
    inner: Callable[[Path, list[str]], Publishing],
    system: str,
    kind: str,
    files_of: Callable[[Path, list[str]], pl.DataFrame],
) -> Callable[[Path, list[str]], Publishing]:
    """`inner`'s publishing, where a version also names the inbox files whose records of its
    period are new, changed or gone since the period's last publication (`withdrawn: games file
    platform/lichess-2026-03.pgn`, `input_causes.file_causes`), in its reason and as the diff's
    cause of every player no other cause names, and a later period of the same publication
    where they came from (`carried from 2026-03: ...`). The files published are recorded in
    `applied/<system>-inputs` afterwards. `files_of` finds each period's files and digests
    without reading the records (`lake.file_inputs`)."""
    table = tables.applied_inputs(system)

    def publishing(lake: Path, periods: list[str]) -> Publishing:
        base = inner(lake, periods)
        found = files_of(lake, periods)
        current = {
            period: file_inputs(found.filter(pl.col("period") == period), kind)
            for period in periods
        }
        recorded = set(table_partitions(lake, table))
        before = read_period_range(lake, table.name, periods, APPLIED_INPUTS_SCHEMA)
        own = {
            period: file_causes(current[period], before[period] if period in recorded else None)
            for period in periods
        }

        def named(period: str) -> pl.DataFrame | None:
            earlier = [(p, own[p]) for p in periods if p < period]
            return joined_causes([own[period], carried_causes(earlier)])

        def reason(period: str) -> str:
            text, files = base.reason(period), named(period)
            if files is None:
                return text
            return "; ".join([text, *dict.fromkeys(files.get_column("cause").to_list())])

        def causes(period: str) -> pl.DataFrame | None:
            return joined_causes([base.causes(period), named(period)])

        def after(done: list[str]) -> None:
            base.after(done)
            frames = [current[p].with_columns(period=pl.lit(p)) for p in done]
            if frames:
                write_partitioned(lake, table, pl.concat(frames), partitions=done)

        return Publishing(reason=reason, causes=causes, after=after)

    return publishing


def site_below_floor(check: CheckInput) -> int:
    """Site numbers below the floor (100)."""
    state = check.output.states[SITE_STATE]
    return state.filter(pl.col("rating") < SITE_RULES.floor - FLOAT_TOLERANCE).height


def flagged_bots(games: pl.LazyFrame | pl.DataFrame) -> pl.DataFrame:
    """(period, player_id) of every player flagged as a bot in a game of the period: read once
    per range (ids and flags only, streamed), so that `site_bot_rows` does not scan the games
    per period."""
    return (
        pl.concat(
            [
                games.lazy()
                .filter(pl.col(f"{side}_is_bot"))
                .select("period", pl.col(f"{side}_id").cast(pl.String).alias("player_id"))
                for side in ("white", "black")
            ]
        )
        .unique()
        .collect(engine="streaming")
    )


def site_bot_rows(check: CheckInput) -> int:
    """List rows of bots (the registry's, or flagged as bots in the period's games; the range's
    flags are `flagged_bots` of its games, in the inputs)."""
    rows = check.output.list_rows
    if not rows.height:
        return 0
    registry, flagged = check.inputs["players"], check.inputs["flagged_bots"]
    bots = pl.Series("player_id", [], dtype=pl.String)
    if registry is not None:
        bots = registry.filter(pl.col("is_bot").fill_null(False)).get_column("player_id")
    mine = flagged.filter(pl.col("period") == check.period).get_column("player_id")
    bots = pl.concat([bots.cast(pl.String), mine])
    return rows.filter(pl.col("player_id").is_in(bots.implode())).height


def site_inconsistent_provisional(check: CheckInput) -> int:
    """Rows provisional when the number has 10 rated games or more, or not when fewer."""
    rows = check.output.list_rows
    if not rows.height:
        return 0
    expected = pl.col("total_games") < SITE_RULES.provisional_below
    return rows.filter(pl.col("provisional") != expected).height


def site_annulled_rows(check: CheckInput) -> int:
    """History rows of games annulled by moderation (read from the period's history as it was
    written, streamed)."""
    decisions = check.inputs["decisions"]
    if not decisions.height:
        return 0
    history = check.table(SITE_HISTORY)
    if "game_id" not in history.collect_schema():
        return 0
    annulled = history.filter(pl.col("game_id").is_in(decisions["game_id"].implode()))
    return int(annulled.select(pl.len()).collect(engine="streaming").item())


SITE = SystemSpec(
    name="site",
    description="Site Elo and category ratings after the period (state, per-game history).",
    deps=["games", "players", "moderation_decisions"],
    state_tables=[SITE_STATE],
    load=_load_site,
    rate=_rate_site,
    publishing=_with_file_causes(_site_publishing, "site", "games", platform_game_files),
    published_description="Publish site-elo and every site-<category> list of the period.",
    has_inputs=games_from("platform"),
    checks=[
        PeriodCheck(
            "site_floor_respected", "No site rating below 100.", "below_floor", site_below_floor
        ),
        PeriodCheck(
            "site_no_bots_on_lists", "Bots never appear on a list.", "bot_rows", site_bot_rows
        ),
        PeriodCheck(
            "site_provisional_consistent",
            "Provisional exactly when a number has fewer than 10 rated games.",
            "inconsistent",
            site_inconsistent_provisional,
        ),
        PeriodCheck(
            "site_no_annulled_game_rated",
            "No game annulled by moderation was rated.",
            "annulled_rows",
            site_annulled_rows,
        ),
    ],
)


def _load_fibs(lake: Path, periods: list[str], budget: MemoryBudget) -> RangeInputs:
    """The range's matches as a source streamed from the lake in replay order (only what the
    FIBS rules read of them), the registry and the states before."""
    matches = PlatformMatches(
        lake, periods, FIBS_MATCH_COLUMNS, budget.batch_games, budget.sort_memory
    )
    return {
        "source": matches,
        "players": _registry(lake),
        "states": read_states(lake, [FIBS_STATE, FIBS_PAIRS], periods[0]),
    }


def fibs_decreased_experience(check: CheckInput) -> int:
    """Players whose experience is lower than before the period."""
    state, before = check.output.states[FIBS_STATE], check.before[FIBS_STATE]
    if not state.height or before is None:
        return 0
    joined = state.join(before, on="player_id", suffix="_before")
    return joined.filter(pl.col("experience") < pl.col("experience_before")).height


FIBS = SystemSpec(
    name="fibs",
    description="FIBS backgammon ratings after the period (state, fair-play pairs, history).",
    deps=["backgammon_matches", "players"],
    state_tables=[FIBS_STATE, FIBS_PAIRS],
    load=_load_fibs,
    rate=lambda i, periods, sink: fibs_lists_periods(
        i["source"], i["players"], i["states"][FIBS_STATE], i["states"][FIBS_PAIRS], periods, sink
    ),
    publishing=_with_file_causes(
        lambda lake, periods: Publishing(reason=lambda period: "computed from the inbox's matches"),
        "fibs",
        "matches",
        backgammon_match_files,
    ),
    published_name="fibs_list_published",
    has_inputs=lambda lake: read_table(lake, tables.MATCHES).select(pl.len()).collect().item() > 0,
    published_description="Publish the fibs list of the period.",
    checks=[
        PeriodCheck(
            "fibs_experience_monotonic",
            "Experience never decreases.",
            "decreased",
            fibs_decreased_experience,
        )
    ],
)

site_ratings, site_lists_published = system_assets(SITE)
fibs_ratings, fibs_list_published = system_assets(FIBS)

PLATFORM_SPECS = [SITE, FIBS]
PLATFORM_ASSETS = [site_ratings, site_lists_published, fibs_ratings, fibs_list_published]
