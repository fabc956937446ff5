"""A FIDE tournament's rating report, as FIDE's calculation pages show it (issue 32 item 7).

For each player of a rated tournament: Ro (the rating at the start of the period the tournament
was rated in), each game (opponent, the opponent's rating, D, PD, ΔR = S − PD, K × ΔR), W (the
points scored against rated opponents), We (ΣPD), K and the change K × (W − We), with the
performance rating Rp = Ra + dp (RULES §3.2). The lake keeps these facts in three tables (the
games, with their tournament; the per-game explanations; the per-period player explanations with
K); `tournament_report` joins them, a pure function of frames, and `read_tournament_report`
reads what it needs from the lake.

Decisions where the rules are silent: the change of a tournament is K × (W − We) unrounded
(FIDE rounds the change of a whole period once, RULES §3 step 3; the period's rounded change is
shown beside it); the performance rating uses the games counted for the rating (rated opponents,
rated games): Ra is the opponents' average rounded half away from zero, p = W / n rounded half
away to two decimals, and dp from table 8.1.1 (1.0 → +800, 0 → −800), as FIDE's title
regulations compute a performance.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from rating_core import tables
from rating_core.lake.storage import read_table
from rating_core.rounding import div_round_half_away_expr
from rating_core.systems.fide.tables import dp_expr
from rating_core.text import format_text

FIDE_LISTS = ("standard", "rapid", "blitz")
"""The FIDE lists a federation tournament is rated on (the games' `rating_list`)."""

GAME_COLUMNS: dict[str, pl.DataType] = {
    "player_id": pl.String(),
    "name": pl.String(),
    "round": pl.Int32(),
    "game_id": pl.String(),
    "opponent_id": pl.String(),
    "opponent_name": pl.String(),
    "ro": pl.Int64(),
    "opponent_rating": pl.Int64(),
    "d": pl.Int64(),
    "pd": pl.Float64(),
    "score": pl.Float64(),
    "delta_r": pl.Float64(),
    "k_delta_r": pl.Float64(),
    "counted": pl.Boolean(),
    "not_counted_reason": pl.String(),
}
"""One row per player per game of the tournament (`TournamentReport.games`)."""

PLAYER_COLUMNS: dict[str, pl.DataType] = {
    "player_id": pl.String(),
    "name": pl.String(),
    "ro": pl.Int64(),
    "k": pl.Int64(),
    "k_reason": pl.String(),
    "games": pl.Int64(),
    "rated_games": pl.Int64(),
    "w": pl.Float64(),
    "we": pl.Float64(),
    "w_minus_we": pl.Float64(),
    "change": pl.Float64(),
    "ra": pl.Int64(),
    "performance": pl.Int64(),
    "period": pl.String(),
    "period_change": pl.Int64(),
    "rating_after": pl.Int64(),
}
"""One row per player of the tournament (`TournamentReport.players`)."""


@dataclass(frozen=True)
class TournamentReport:
    """A tournament's report: its list and rating period, one row per player, one per game."""

    tournament_id: str
    list_name: str
    period: str | None
    players: pl.DataFrame
    games: pl.DataFrame


def performance_exprs(points: pl.Expr, n: pl.Expr, opponents_sum: pl.Expr) -> tuple[pl.Expr, ...]:
    """(Ra, Rp) for `n` games against opponents whose ratings sum to `opponents_sum`, scoring
    `points`: Ra = average rounded half away from zero, p in hundredths rounded the same way, Rp =
    Ra + dp(p) (table 8.1.1); null without games. Exact: points are halves, so 2 × points is an
    integer and no float is rounded."""
    has_games = n > 0
    ra = div_round_half_away_expr(opponents_sum.cast(pl.Int64), n.cast(pl.Int64))
    halves = (points * 2).round(0).cast(pl.Int64)
    p = div_round_half_away_expr(halves * 100, n.cast(pl.Int64) * 2)
    return (
        pl.when(has_games).then(ra),
        pl.when(has_games).then(ra + dp_expr(p)),
    )


def tournament_report(
    tournament_id: str,
    list_name: str,
    games: pl.DataFrame,
    explanations: pl.DataFrame,
    player_explanations: pl.DataFrame,
    names: pl.DataFrame,
) -> TournamentReport:
    """The report of one tournament from frames.

    `games`: the tournament's games (game_id, round, white_id, black_id, white_score; rated and
    status name a bye or a forfeit). `explanations`: the list's per-game rows (game_id,
    player_id, opponent_id, own_rating, opponent_rating, counted, not_counted_reason, d_used,
    pd, score, delta_r, period), any games. `player_explanations`: the list's per-period rows (player_id, period, rating_before,
    k_used, k_reason, change, rating_after). `names`: player_id, name.
    """
    ids = games.select("game_id", pl.col("round").cast(pl.Int32))
    rows = explanations.join(ids, on="game_id", how="inner")
    rows = pl.concat([rows, _unrated_rows(games, rows)], how="diagonal_relaxed")
    period_of = rows.get_column("period").drop_nulls().unique().sort() if rows.height else None
    period = period_of[0] if period_of is not None and len(period_of) else None
    per_period = player_explanations.select(
        "player_id",
        "period",
        pl.col("rating_before").cast(pl.Int64),
        pl.col("k_used").cast(pl.Int64).alias("k"),
        "k_reason",
        pl.col("change").cast(pl.Int64).alias("period_change"),
        pl.col("rating_after").cast(pl.Int64),
    )
    named = names.select("player_id", "name").unique("player_id", keep="first")
    opponent_named = named.rename({"player_id": "opponent_id", "name": "opponent_name"})
    detailed = (
        rows.join(per_period, on=["player_id", "period"], how="left")
        .join(named, on="player_id", how="left")
        .join(opponent_named, on="opponent_id", how="left")
        .with_columns(
            pl.col("counted").fill_null(False),
            pl.coalesce(pl.col("rating_before"), pl.col("own_rating")).cast(pl.Int64).alias("ro"),
        )
    )
    counted = pl.col("counted")
    game_rows = detailed.with_columns(
        pl.col("opponent_rating").cast(pl.Int64),
        pl.when(counted).then(pl.col("d_used")).cast(pl.Int64).alias("d"),
        pl.when(counted).then(pl.col("pd")).alias("pd"),
        pl.when(counted).then(pl.col("delta_r")).alias("delta_r"),
        pl.when(counted).then(pl.col("delta_r") * pl.col("k")).round(2).alias("k_delta_r"),
    )
    players = (
        game_rows.group_by("player_id")
        .agg(
            pl.col("name").first(),
            pl.col("ro").first(),
            pl.col("k").first(),
            pl.col("k_reason").first(),
            pl.len().alias("games"),
            counted.sum().cast(pl.Int64).alias("rated_games"),
            pl.col("score").filter(counted).sum().alias("w"),
            pl.col("pd").filter(counted).sum().round(2).alias("we"),
            pl.col("opponent_rating").filter(counted).sum().alias("_opponents"),
            pl.col("period").first(),
            pl.col("period_change").first(),
            pl.col("rating_after").first(),
        )
        .with_columns((pl.col("w") - pl.col("we")).round(2).alias("w_minus_we"))
        .with_columns((pl.col("w_minus_we") * pl.col("k")).round(2).alias("change"))
    )
    ra, rp = performance_exprs(pl.col("w"), pl.col("rated_games"), pl.col("_opponents"))
    players = players.with_columns(ra.alias("ra"), rp.alias("performance"))
    order = [pl.col("ro").is_null(), pl.col("ro"), pl.col("player_id")]
    players = players.sort(order, descending=[False, True, False]).select(
        [pl.col(c).cast(t) for c, t in PLAYER_COLUMNS.items()]
    )
    position = players.select("player_id").with_row_index("_seat")
    their_ro = players.select(pl.col("player_id").alias("opponent_id"), pl.col("ro").alias("_rc"))
    game_rows = (
        game_rows.join(position, on="player_id", how="left")
        .join(their_ro, on="opponent_id", how="left")
        .with_columns(pl.coalesce("opponent_rating", "_rc").alias("opponent_rating"))
        .sort("_seat", "round", "game_id")
        .select([pl.col(c).cast(t) for c, t in GAME_COLUMNS.items()])
    )
    return TournamentReport(tournament_id, list_name, period, players, game_rows)


UNRATED_REASON = "player unrated on this list"
"""Why a game of a player without a rating on the list earns no change."""


def _unrated_rows(games: pl.DataFrame, rows: pl.DataFrame) -> pl.DataFrame:
    """The sides of the tournament's games that the explanations do not hold, one row each, not
    counted: a game not rated at all (a bye, a forfeit: its `status`), or the games of a player
    unrated on the list at the period start (they pool towards a first rating, RULES §3)."""
    if not {"white_id", "black_id", "white_score"} <= set(games.columns):
        return rows.clear()
    rated = pl.col("rated").fill_null(True) if "rated" in games.columns else pl.lit(True)
    status = pl.col("status") if "status" in games.columns else pl.lit(None, pl.String)
    sides = [
        games.select(
            "game_id",
            pl.col("round").cast(pl.Int32),
            pl.col(own).alias("player_id"),
            pl.col(other).alias("opponent_id"),
            (pl.col("white_score") if own == "white_id" else 1 - pl.col("white_score")).alias(
                "score"
            ),
            rated.alias("_rated"),
            status.cast(pl.String).alias("_status"),
        )
        for own, other in (("white_id", "black_id"), ("black_id", "white_id"))
    ]
    both = pl.concat(sides).filter(pl.col("player_id").is_not_null())
    explained = rows.select("game_id", "player_id")
    missing = both.join(explained, on=["game_id", "player_id"], how="anti")
    period = rows.get_column("period").drop_nulls()
    reason = (
        pl.when(~pl.col("_rated"))
        .then(format_text("{}, not rated", pl.col("_status").fill_null("no result")))
        .otherwise(pl.lit(UNRATED_REASON))
    )
    return missing.with_columns(
        pl.lit(False).alias("counted"),
        reason.alias("not_counted_reason"),
        pl.lit(period[0] if len(period) else None, pl.String).alias("period"),
    ).drop("_rated", "_status")


class UnknownTournamentError(LookupError):
    """No FIDE-rated tournament of that id; the message names the ones there are."""


def fide_tournaments(lake: Path | str) -> pl.DataFrame:
    """The lake's FIDE-rated tournaments: tournament_id, list, period (of its games), games."""
    games = read_table(lake, tables.GAMES)
    if "tournament_id" not in games.collect_schema().names():
        return pl.DataFrame(schema={"tournament_id": pl.String, "list": pl.String})
    return (
        games.filter(
            (pl.col("source") == "federation")
            & pl.col("tournament_id").is_not_null()
            & pl.col("rating_list").is_in(FIDE_LISTS)
        )
        .group_by("tournament_id", "rating_list")
        .agg(pl.col("period").max(), pl.len().alias("games"))
        .select(
            "tournament_id",
            format_text("fide-{}", "rating_list").alias("list"),
            "period",
            "games",
        )
        .sort("period", "tournament_id")
        .collect()
    )


def read_tournament_report(lake: Path | str, tournament_id: str) -> TournamentReport:
    """The report of `tournament_id` read from the lake (UnknownTournamentError if the lake has
    no FIDE-rated tournament of that id)."""
    known = fide_tournaments(lake)
    match = known.filter(pl.col("tournament_id") == tournament_id)
    if match.is_empty():
        folded = known.filter(pl.col("tournament_id").str.to_lowercase() == tournament_id.lower())
        if folded.height:
            match = folded
    if match.is_empty():
        listed = ", ".join(known.get_column("tournament_id").to_list()) or "none"
        raise UnknownTournamentError(
            f"no FIDE-rated tournament '{tournament_id}' in the lake; the tournaments are: {listed}"
        )
    row = match.row(0, named=True)
    list_name = row["list"]
    games = (
        read_table(lake, tables.GAMES)
        .filter(pl.col("tournament_id") == row["tournament_id"])
        .filter(pl.col("rating_list") == list_name.removeprefix("fide-"))
        .select("game_id", "round", "white_id", "black_id", "white_score", "rated", "status")
        .collect()
    )
    ids = games.get_column("game_id")
    explanations = (
        read_table(lake, tables.history(list_name, "game_explanations"))
        .filter(pl.col("game_id").is_in(ids.implode()))
        .collect()
    )
    players = explanations.get_column("player_id").unique() if explanations.height else None
    per_period = read_table(lake, tables.history(list_name, "player_explanations"))
    if players is not None:
        per_period = per_period.filter(pl.col("player_id").is_in(players.implode()))
    names = read_table(lake, tables.PLAYER_NAMES).collect()
    if explanations.is_empty():
        explanations = pl.DataFrame(schema=_EXPLANATION_SCHEMA)
    return tournament_report(
        row["tournament_id"], list_name, games, explanations, per_period.collect(), names
    )


_EXPLANATION_SCHEMA = {
    "game_id": pl.String,
    "player_id": pl.String,
    "opponent_id": pl.String,
    "own_rating": pl.Int32,
    "opponent_rating": pl.Int32,
    "counted": pl.Boolean,
    "not_counted_reason": pl.String,
    "d_used": pl.Int64,
    "pd": pl.Float64,
    "score": pl.Float64,
    "delta_r": pl.Float64,
    "period": pl.String,
}
"""The per-game explanation columns the report reads (a tournament not rated yet has none)."""


def link_tournaments(history: pl.DataFrame, games: pl.DataFrame) -> pl.DataFrame:
    """`ratings history`'s rows with the tournament of each change: a game row gets its game's
    `tournament_id`; a per-period row (no game) gets `tournaments`, the tournaments of that
    player's games in the same table and period (`tournament_ids`), so every change names where it came from.
    `games`: game_id, tournament_id."""
    if history.is_empty() or "game_id" not in history.columns:
        return history
    of_game = games.select("game_id", pl.col("tournament_id").alias("_tournament")).unique(
        "game_id"
    )
    linked = history.join(of_game, on="game_id", how="left")
    if "tournament_id" in linked.columns:
        linked = linked.with_columns(pl.coalesce("tournament_id", "_tournament").alias("_t"))
        linked = linked.drop("tournament_id", "_tournament").rename({"_t": "tournament_id"})
    else:
        linked = linked.rename({"_tournament": "tournament_id"})
    if "period" not in linked.columns or "system" not in linked.columns:
        return linked
    listed = (
        linked.filter(pl.col("tournament_id").is_not_null())
        .group_by("system", "period")
        .agg(pl.col("tournament_id").unique().sort().str.join(", ").alias("tournament_ids"))
        .with_columns(pl.col("system").str.replace(r"-game_explanations$", "-player_explanations"))
    )
    return linked.join(listed, on=["system", "period"], how="left").with_columns(
        pl.when(pl.col("game_id").is_null()).then(pl.col("tournament_ids")).alias("tournament_ids")
    )
