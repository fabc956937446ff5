"""What `ratings report` draws, as Polars frames read from the lake (no chart code here).

Each function answers one chart's question from what was published (`lists/`) or ingested
(`games`, `matches`, `quarantine`): the rating distribution and the top movers of each list's
latest period, players and games per period, quarantine reasons by count, and one player's
rating on every list over time with the versions that revised it. The rendering lives in
`pipelines.cli.report_page`; this module only reads, so a notebook can use the same frames.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from rating_core import tables
from rating_core.lake import publishing as publish
from rating_core.lake.storage import read_table
from rating_core.rounding import round_half_away_expr

HISTOGRAM_BINS = 20
"""About how many bars a rating distribution has (the width is rounded to 1, 2 or 5 x 10^k)."""

TOP_MOVERS = 10
"""How many players the top movers chart shows each way (up and down)."""

BACKGAMMON = "backgammon"
"""The `source` given to backgammon matches beside the chess games' inbox folders."""

HISTOGRAM_SCHEMA: dict[str, pl.DataType] = {
    "bin_start": pl.Float64(),
    "bin_end": pl.Float64(),
    "players": pl.UInt32(),
}
MOVERS_SCHEMA: dict[str, pl.DataType] = {
    "player_id": pl.String(),
    "name": pl.String(),
    "before": pl.Float64(),
    "after": pl.Float64(),
    "change": pl.Float64(),
    "direction": pl.String(),
}
ACTIVITY_SCHEMA: dict[str, pl.DataType] = {
    "list": pl.String(),
    "period": pl.String(),
    "version": pl.Int32(),
    "players": pl.UInt32(),
    "active_players": pl.UInt32(),
    "rated_games": pl.Int64(),
}
GAMES_PER_PERIOD_SCHEMA: dict[str, pl.DataType] = {
    "period": pl.String(),
    "source": pl.String(),
    "games": pl.UInt32(),
}
QUARANTINE_REASONS_SCHEMA: dict[str, pl.DataType] = {
    "source": pl.String(),
    "reason": pl.String(),
    "records": pl.UInt32(),
    "example": pl.String(),
}
TIMELINE_SCHEMA: dict[str, pl.DataType] = {
    "list": pl.String(),
    "period": pl.String(),
    "version": pl.Int32(),
    "name": pl.String(),
    "rating": pl.Float64(),
    "current": pl.Boolean(),
    "old": pl.Float64(),
    "cause": pl.String(),
}


@dataclass(frozen=True)
class LatestList:
    """One list's latest period (its newest version) and the period before it, if any."""

    list: str
    period: str
    version: int
    previous_period: str | None
    previous_version: int | None
    players: int
    histogram: pl.DataFrame
    movers: pl.DataFrame


@dataclass(frozen=True)
class ReportData:
    """Everything the report page shows, gathered once from one lake."""

    lake: str
    latest: list[LatestList]
    activity: pl.DataFrame
    games_per_period: pl.DataFrame
    quarantine: pl.DataFrame
    player: str | None = None
    timeline: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=TIMELINE_SCHEMA))


def nice_bin_width(low: float, high: float, bins: int = HISTOGRAM_BINS) -> float:
    """A bin width of 1, 2 or 5 x 10^k giving at most about `bins` bars over [low, high].

    A readable width (25, 50, 100 rating points) makes the bars' edges round numbers.
    """
    span = high - low
    if span <= 0:
        return 1.0
    raw = span / bins
    power = 10.0 ** math.floor(math.log10(raw))
    for step in (1.0, 2.0, 5.0, 10.0):
        if step * power >= raw:
            return step * power
    return 10.0 * power  # pragma: no cover - the loop always returns


def rating_histogram(ratings: pl.Series, bins: int = HISTOGRAM_BINS) -> pl.DataFrame:
    """Players per rating bin (`bin_start` inclusive, `bin_end` exclusive), empty bins left out.

    Binned here rather than in the browser so that the page carries about `bins` rows per list,
    not one per player.
    """
    values = ratings.drop_nulls().cast(pl.Float64)
    if values.is_empty():
        return pl.DataFrame(schema=HISTOGRAM_SCHEMA)
    low, high = float(values.min()), float(values.max())  # type: ignore[arg-type]
    width = nice_bin_width(low, high, bins)
    start = (pl.col("rating") / width).floor() * width
    return (
        values.alias("rating")
        .to_frame()
        .group_by(start.alias("bin_start"))
        .agg(pl.len().alias("players"))
        .with_columns(bin_end=pl.col("bin_start") + width)
        .select(list(HISTOGRAM_SCHEMA))
        .sort("bin_start")
        .cast(HISTOGRAM_SCHEMA)  # type: ignore[arg-type]
    )


def top_movers(current: pl.DataFrame, previous: pl.DataFrame, n: int = TOP_MOVERS) -> pl.DataFrame:
    """The `n` largest rises and `n` largest falls between two lists of one kind.

    The change is the published rating in `current` minus the one in `previous` (players on
    both lists only: a newcomer has no earlier rating to move from), rounded to one decimal
    half away from zero (FIBS publishes one decimal). Rises come first, largest first, then
    falls, largest first; ties are broken by player id.
    """
    if current.is_empty() or previous.is_empty():
        return pl.DataFrame(schema=MOVERS_SCHEMA)
    name = pl.col("name") if "name" in current.columns else pl.lit(None, pl.String)
    joined = (
        current.select("player_id", name.alias("name"), pl.col("rating").alias("after"))
        .join(
            previous.select("player_id", pl.col("rating").alias("before")),
            on="player_id",
            how="inner",
        )
        .with_columns(change=round_half_away_expr(pl.col("after") - pl.col("before"), 1))
    )
    ups = (
        joined.filter(pl.col("change") > 0)
        .sort(["change", "player_id"], descending=[True, False])
        .head(n)
        .with_columns(direction=pl.lit("up"))
    )
    downs = (
        joined.filter(pl.col("change") < 0)
        .sort(["change", "player_id"], descending=[False, False])
        .head(n)
        .with_columns(direction=pl.lit("down"))
    )
    return pl.concat([ups, downs]).select(list(MOVERS_SCHEMA)).cast(MOVERS_SCHEMA)  # type: ignore[arg-type]


def latest_lists(
    lake: Path | str,
    list_names: Sequence[str] | None = None,
    *,
    on_list: Callable[[str], None] | None = None,
) -> list[LatestList]:
    """For each list (or only `list_names`), its latest period's newest version with that
    version's rating histogram and its top movers against the period before.

    `on_list(name)` is called after each list is read (for a progress bar).
    """
    current = publish.current_versions(lake).sort("list", "period")
    if list_names is not None:
        current = current.filter(pl.col("list").is_in(list(list_names)))
    found = []
    for (name,), versions in current.group_by("list", maintain_order=True):
        name = str(name)
        period, version = versions.row(-1)[1:]
        rows = publish.read_list(lake, name, period, version)
        previous_period = previous_version = None
        previous = pl.DataFrame(schema={"player_id": pl.String, "rating": pl.Float64})
        if versions.height > 1:
            previous_period, previous_version = versions.row(-2)[1:]
            previous = publish.read_list(lake, name, previous_period, previous_version)
        found.append(
            LatestList(
                list=name,
                period=period,
                version=version,
                previous_period=previous_period,
                previous_version=previous_version,
                players=rows.height,
                histogram=rating_histogram(rows.get_column("rating")),
                movers=top_movers(rows, previous),
            )
        )
        if on_list is not None:
            on_list(name)
    return found


def list_activity(lake: Path | str, list_names: Sequence[str] | None = None) -> pl.DataFrame:
    """Per list and period (its newest version): players listed, players who played in the
    period (`games` > 0) and the sum of their rated games (each game between two listed players
    counts once for each of them)."""
    current = publish.current_versions(lake)
    if list_names is not None:
        current = current.filter(pl.col("list").is_in(list(list_names)))
    if current.is_empty():
        return pl.DataFrame(schema=ACTIVITY_SCHEMA)
    games = pl.col("games").fill_null(0)
    return (
        publish.all_snapshots(lake)
        .join(current.lazy(), on=["list", "period", "version"], how="inner")
        .group_by("list", "period", "version")
        .agg(
            pl.len().alias("players"),
            (games > 0).sum().alias("active_players"),
            games.cast(pl.Int64).sum().alias("rated_games"),
        )
        .sort("list", "period")
        .collect()
        .cast(ACTIVITY_SCHEMA)  # type: ignore[arg-type]
    )


def games_per_period(lake: Path | str) -> pl.DataFrame:
    """Games recorded per period and inbox folder (`platform`, `federation`, `club`), and
    backgammon matches as `backgammon`: every record ingest kept, rated or not."""
    chess = (
        read_table(lake, tables.GAMES)
        .group_by("period", pl.col("source").cast(pl.String))
        .agg(pl.len().alias("games"))
    )
    matches = (
        read_table(lake, tables.MATCHES)
        .group_by("period")
        .agg(pl.lit(BACKGAMMON).alias("source"), pl.len().alias("games"))
    )
    return (
        pl.concat(
            [
                chess.select(list(GAMES_PER_PERIOD_SCHEMA)),
                matches.select(list(GAMES_PER_PERIOD_SCHEMA)),
            ]
        )
        .collect()
        .cast(GAMES_PER_PERIOD_SCHEMA)  # type: ignore[arg-type]
        .sort("period", "source")
    )


QUOTED_VALUE = r"'[^']*'"
"""A value a quarantine reason quotes (`result '2-0' is not ...`)."""
LINE_NUMBER = r"\bline \d+"
"""A line a quarantine reason points at (`appears again (first on line 132)`)."""


def reason_kind() -> pl.Expr:
    """The quarantine `reason` without the values it quotes or the line it points at, so that the same mistake
    on different rows is counted as one reason (`result '…' is not one of …`)."""
    return (
        pl.col("reason")
        .fill_null("no reason given")
        .str.replace_all(QUOTED_VALUE, "'…'")
        .str.replace_all(LINE_NUMBER, "line N")
    )


def quarantine_reasons(lake: Path | str) -> pl.DataFrame:
    """Quarantined records per ingest table and kind of reason, most frequent first, each with
    one full reason as an example."""
    return (
        read_table(lake, tables.QUARANTINE)
        .group_by(pl.col(tables.SOURCE).alias("source"), reason_kind().alias("kind"))
        .agg(pl.len().alias("records"), pl.col("reason").sort().first().alias("example"))
        .rename({"kind": "reason"})
        .select(list(QUARANTINE_REASONS_SCHEMA))
        .collect()
        .cast(QUARANTINE_REASONS_SCHEMA)  # type: ignore[arg-type]
        .sort(["records", "source", "reason"], descending=[True, False, False])
    )


def player_timeline(lake: Path | str, player_id: str) -> pl.DataFrame:
    """`player_id`'s rating in every published version of every list, oldest period first.

    `current` marks each period's newest version (the line a chart draws); a revised version
    (v2 on) where the player's rating changed carries the rating it replaced (`old`) and the
    diff's cause. Empty when no published list holds the player.
    """
    rows = (
        publish.all_snapshots(lake)
        .filter(pl.col("player_id") == player_id)
        .select("list", "period", "version", "name", "rating")
        .collect()
    )
    if rows.is_empty():
        return pl.DataFrame(schema=TIMELINE_SCHEMA)
    newest = rows.group_by("list", "period").agg(pl.col("version").max().alias("newest"))
    diffs = (
        publish.all_diffs(lake)
        .filter(pl.col("player_id") == player_id)
        .select("list", "period", "version", "old", "cause")
        .collect()
    )
    return (
        rows.join(newest, on=["list", "period"])
        .with_columns(current=pl.col("version") == pl.col("newest"))
        .join(diffs, on=["list", "period", "version"], how="left")
        .select(list(TIMELINE_SCHEMA))
        .cast(TIMELINE_SCHEMA)  # type: ignore[arg-type]
        .sort("list", "period", "version")
    )


def gather_report(
    lake: Path | str,
    *,
    list_names: Sequence[str] | None = None,
    player: str | None = None,
    on_step: Callable[[str], None] | None = None,
) -> ReportData:
    """Read everything the report shows. `on_step(what)` is called after each list and each
    other read (one call per step: `report_steps` says how many there are)."""

    def step(what: str) -> None:
        if on_step is not None:
            on_step(what)

    latest = latest_lists(lake, list_names, on_list=step)
    activity = list_activity(lake, list_names)
    step("players per period")
    per_period = games_per_period(lake)
    step("games per period")
    quarantine = quarantine_reasons(lake)
    step("quarantine")
    timeline = pl.DataFrame(schema=TIMELINE_SCHEMA)
    if player is not None:
        timeline = player_timeline(lake, player)
        step("player")
    return ReportData(
        lake=str(lake),
        latest=latest,
        activity=activity,
        games_per_period=per_period,
        quarantine=quarantine,
        player=player,
        timeline=timeline,
    )


def report_steps(list_count: int, player: str | None) -> int:
    """How many times `gather_report` calls `on_step` for `list_count` lists."""
    return list_count + 3 + (1 if player is not None else 0)
