"""Our FIDE list against the list FIDE published for the same date (issue 32 item 9).

Every player whose rating, games or K differ between the two lists, or who is on one list only,
gets one explanation, the first that fits:

- `unknown to us`: on the official list only; `unknown to them`: on ours only;
- `tournament we do not have`: they counted games in the period, we none;
- `tournament they do not have`: we counted games, they none (our tournaments named);
- `different games count`: both counted games, not the same number;
- `different K`: the same games, another K;
- `rounding`: one point apart, and our exact rating lies within half a point of theirs (the
  period's change was a half, rounded the other way);
- `different starting rating`: the same games and K, and their start differs from ours (both
  played nothing and the ratings differ, or their previous list, when given, has another rating);
- `unexplained` otherwise: the command exits 1 while any is left.

A player with the same rating, games and K on both lists is no difference. Pure: frames in,
frames out.
"""

from __future__ import annotations

import polars as pl

from rating_core.rounding import FLOAT_TOLERANCE
from rating_core.text import format_text

EXPLANATIONS = (
    "unknown to us",
    "unknown to them",
    "tournament we do not have",
    "tournament they do not have",
    "different games count",
    "different K",
    "rounding",
    "different starting rating",
    "unexplained",
)
"""Every explanation, in the order they are tried (and counted)."""

UNEXPLAINED = "unexplained"

DIFFERENCE_SCHEMA: dict[str, pl.DataType] = {
    "player_id": pl.String(),
    "name": pl.String(),
    "ours": pl.Int64(),
    "theirs": pl.Int64(),
    "difference": pl.Int64(),
    "our_games": pl.Int64(),
    "their_games": pl.Int64(),
    "our_k": pl.Int64(),
    "their_k": pl.Int64(),
    "explanation": pl.String(),
    "detail": pl.String(),
}
"""One row per player whose lines differ."""


def reconcile(
    ours: pl.DataFrame,
    official: pl.DataFrame,
    tournaments: pl.DataFrame | None = None,
    previous: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """The players whose lines differ, each with its explanation (DIFFERENCE_SCHEMA), by id.

    `ours`: our list (player_id, name, rating, rating_exact, games, k). `official`: FIDE's
    (player_id, rating, games, k; games and k may be null). `tournaments`: player_id,
    tournament_id of our rated games in the period (named in the detail). `previous`: FIDE's
    list of the period before (player_id, rating), their starting ratings, when known; our start
    is `rating_exact − change_exact` when `ours` has those columns.
    """
    mine = ours.select(
        "player_id",
        "name",
        pl.col("rating").round(0).cast(pl.Int64).alias("ours"),
        pl.col("rating_exact").cast(pl.Float64).alias("_exact")
        if "rating_exact" in ours.columns
        else pl.col("rating").cast(pl.Float64).alias("_exact"),
        (pl.col("rating_exact") - pl.col("change_exact")).round(0).cast(pl.Int64).alias("_start")
        if {"rating_exact", "change_exact"} <= set(ours.columns)
        else pl.lit(None, pl.Int64).alias("_start"),
        pl.col("games").cast(pl.Int64).fill_null(0).alias("our_games"),
        pl.col("k").cast(pl.Int64).alias("our_k"),
        pl.lit(True).alias("_ours"),
    )
    theirs = official.select(
        "player_id",
        pl.col("rating").cast(pl.Int64).alias("theirs"),
        pl.col("games").cast(pl.Int64).alias("their_games"),
        pl.col("k").cast(pl.Int64).alias("their_k"),
        pl.lit(True).alias("_theirs"),
    )
    both = mine.join(theirs, on="player_id", how="full", coalesce=True).with_columns(
        pl.col("_ours").fill_null(False), pl.col("_theirs").fill_null(False)
    )
    if previous is not None:
        start = previous.select("player_id", pl.col("rating").cast(pl.Int64).alias("_their_start"))
        both = both.join(start, on="player_id", how="left")
    else:
        both = both.with_columns(pl.lit(None, pl.Int64).alias("_their_start"))
    played = (
        tournaments.group_by("player_id").agg(
            pl.col("tournament_id").unique().sort().str.join(", ").alias("_tournaments")
        )
        if tournaments is not None and tournaments.height
        else pl.DataFrame(schema={"player_id": pl.String, "_tournaments": pl.String})
    )
    both = both.join(played, on="player_id", how="left")
    differs = (
        ~pl.col("_ours")
        | ~pl.col("_theirs")
        | (pl.col("ours") != pl.col("theirs"))
        | (pl.col("our_games") != pl.col("their_games")).fill_null(False)
        | (pl.col("our_k") != pl.col("their_k")).fill_null(False)
    )
    rows = both.filter(differs).with_columns(
        (pl.col("theirs") - pl.col("ours")).alias("difference")
    )
    our_games, their_games = pl.col("our_games"), pl.col("their_games").fill_null(0)
    same_games = our_games == their_games
    same_k = (pl.col("our_k") == pl.col("their_k")).fill_null(True)
    rounding = (pl.col("difference").abs() == 1) & (
        (pl.col("theirs") - pl.col("_exact")).abs() <= 0.5 + FLOAT_TOLERANCE
    )
    start_differs = (pl.col("_their_start") != pl.col("_start")).fill_null(False) | (
        (our_games == 0) & (their_games == 0)
    )
    n = pl.col("our_games").cast(pl.String)
    m = pl.col("their_games").fill_null(0).cast(pl.String)
    explained = (
        pl.when(~pl.col("_ours"))
        .then(pl.lit("unknown to us"))
        .when(~pl.col("_theirs"))
        .then(pl.lit("unknown to them"))
        .when((our_games == 0) & (their_games > 0))
        .then(pl.lit("tournament we do not have"))
        .when((our_games > 0) & (their_games == 0))
        .then(pl.lit("tournament they do not have"))
        .when(~same_games)
        .then(pl.lit("different games count"))
        .when(~same_k)
        .then(pl.lit("different K"))
        .when(rounding)
        .then(pl.lit("rounding"))
        .when(start_differs & (pl.col("difference") != 0))
        .then(pl.lit("different starting rating"))
        .otherwise(pl.lit(UNEXPLAINED))
    )
    rows = rows.with_columns(explained.alias("explanation"))
    e = pl.col("explanation")
    their_start = pl.coalesce(
        pl.col("_their_start"), pl.when((our_games == 0) & (their_games == 0)).then("theirs")
    ).cast(pl.String)
    detail = (
        pl.when(e == "unknown to us")
        .then(format_text("on FIDE's list at {}, not on ours", pl.col("theirs")))
        .when(e == "unknown to them")
        .then(format_text("on our list at {}, not on FIDE's", pl.col("ours")))
        .when(e == "tournament we do not have")
        .then(format_text("FIDE counted {} games in the period, we none", m))
        .when(e == "tournament they do not have")
        .then(
            format_text(
                "we counted {} games ({}), FIDE none",
                n,
                pl.col("_tournaments").fill_null("no tournament named"),
            )
        )
        .when(e == "different games count")
        .then(format_text("we counted {} games, FIDE {}", n, m))
        .when(e == "different K")
        .then(format_text("our K {}, FIDE's {}", pl.col("our_k"), pl.col("their_k")))
        .when(e == "rounding")
        .then(
            format_text(
                "our exact rating {} rounds to {}, FIDE's to {}",
                pl.col("_exact").round(2),
                pl.col("ours"),
                pl.col("theirs"),
            )
        )
        .when(e == "different starting rating")
        .then(format_text("our start {}, FIDE's {}", pl.col("_start"), their_start))
        .otherwise(
            format_text("same games ({}) and K, {} against {}", n, pl.col("ours"), pl.col("theirs"))
        )
    )
    rows = rows.with_columns(detail.alias("detail")).sort("player_id")
    return rows.select([pl.col(c).cast(t) for c, t in DIFFERENCE_SCHEMA.items()])


def explanation_counts(differences: pl.DataFrame) -> pl.DataFrame:
    """How many players each explanation covers (explanation, players), in EXPLANATIONS order,
    only those that occur."""
    counts = differences.group_by("explanation").agg(pl.len().cast(pl.Int64).alias("players"))
    order = pl.DataFrame({"explanation": list(EXPLANATIONS)}).with_row_index("_order")
    return order.join(counts, on="explanation", how="inner").sort("_order").drop("_order")
