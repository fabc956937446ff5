"""Raw game rows from every reader → the canonical `games` table (DESIGN §3).

Adds scores, status, time-control columns and the period; sends records that cannot be
classified, and game ids seen twice, to the quarantine with a reason.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import polars as pl

from rating_core.ingest.common import IngestResult, repeats
from rating_core.periods import TOURNAMENT_SPREAD_DAYS, date_range_reason
from rating_core.schemas import (
    GAMES_SCHEMA,
    QUARANTINE_SCHEMA,
    RAW_GAMES_SCHEMA,
    SCORE_BY_RESULT,
    UTC_TIME,
    TableSchema,
    conform,
    empty,
)
from rating_core.text import format_text
from rating_core.timecontrol import with_time_control_columns


def _quarantine_from(frame: pl.DataFrame, value: pl.Expr, reason: pl.Expr) -> pl.DataFrame:
    """Quarantine rows for every record of `frame`, with the given value and reason."""
    return frame.select(
        source_file=pl.col("source_file"),
        line=pl.col("source_line"),
        record=pl.col("game_id"),
        value=value.cast(pl.String),
        reason=reason.cast(pl.String),
    ).cast(QUARANTINE_SCHEMA)


DAY_US = 86_400_000_000
"""Microseconds in a day (the unit of UTC_TIME)."""


def _with_period(games: pl.DataFrame, ts: pl.Expr, **more: pl.Expr | None) -> pl.DataFrame:
    """`games` with `period`, the `YYYY-MM` of the UTC_TIME `ts`, and the columns `more`.

    Each distinct day is formatted once and looked up by its number: a month of games has some
    thirty days, and formatting a million timestamps cost four times as much.
    """
    day = ts.cast(UTC_TIME).cast(pl.Int64) // DAY_US  # floor: days before 1970 too
    days = games.select(day.unique().drop_nulls().alias("day")).get_column("day")
    names = (days * DAY_US).cast(UTC_TIME).dt.strftime("%Y-%m")
    period = day.replace_strict(days, names, default=None, return_dtype=pl.String)
    return games.with_columns(period=period, **more)


def canonical_games(
    raw: pl.DataFrame,
    source: str,
    players: pl.DataFrame | None = None,
    club_id: str | None = None,
    today: date | None = None,
) -> IngestResult:
    """Classify raw games of one source ("platform", "federation" or "club").

    Platform games with an unknown or impossible time control are quarantined; federation and
    club games without time information go to the standard list (counted in the notes). Games
    dated after `today` (default: today in UTC) or before 1850, and tournament games dated far
    from their tournament, are quarantined before the period is computed (see `date_reason`).
    """
    raw = conform(raw, RAW_GAMES_SCHEMA)
    if players is not None and players.height:
        bots = players.filter(pl.col("is_bot").fill_null(False)).select("player_id")
        bot_ids = bots.get_column("player_id")
        raw = raw.with_columns(
            white_is_bot=pl.col("white_is_bot").fill_null(False)
            | pl.col("white_id").is_in(bot_ids.implode()),
            black_is_bot=pl.col("black_is_bot").fill_null(False)
            | pl.col("black_id").is_in(bot_ids.implode()),
        )
    games = with_time_control_columns(raw)
    online = source == "platform"
    error = (
        pl.col("tc_error")
        if online
        else pl.when(pl.col("tc_error").str.contains("syntax")).then(pl.col("tc_error"))
    )
    self_game = pl.col("black_id").is_not_null() & (pl.col("white_id") == pl.col("black_id"))
    error = (
        pl.when(self_game)
        .then(
            pl.lit("a player cannot play themself ('")
            + pl.col("white_id")
            + pl.lit("' on both sides)")
        )
        .otherwise(error)
    )
    games = games.with_columns(_tc=error, _dated=date_reason(online, today))
    games = games.with_columns(_error=pl.coalesce("_tc", "_dated"))
    bad = games.filter(pl.col("_error").is_not_null())
    value = (  # of the rejected records only (formatting every game's date cost a fifth)
        pl.when(self_game)
        .then(pl.col("white_id"))
        .when(pl.col("_tc").is_null() & pl.col("_dated").str.starts_with("tournament end"))
        .then(pl.col("tournament_end").cast(pl.String))
        .when(pl.col("_tc").is_null() & pl.col("_dated").is_not_null())
        .then(pl.col("played_at").dt.strftime("%Y-%m-%d"))
        .otherwise(pl.col("time_control"))
    )
    quarantine = _quarantine_from(bad, value, pl.col("_error"))
    games = games.filter(pl.col("_error").is_null()).drop("_tc", "_dated")

    notes: list[str] = []
    if not online:
        no_tc = raw.filter(pl.col("time_control").is_null() & pl.col("rating_list").is_null())
        if no_tc.height:
            for file, n in no_tc.group_by("source_file").len().sort("source_file").iter_rows():
                notes.append(f"{file}: {n} games have no time control; rated on the standard list")

    result = pl.col("result").cast(pl.String)
    status = (
        pl.when(result.is_in(["+-", "-+", "--"]))
        .then(pl.lit("forfeit"))
        .when(result == "bye")
        .then(pl.lit("bye"))
        .when(
            pl.lit(online)
            & ((pl.col("plies").fill_null(2) < 2) | (pl.col("termination") == "abort"))
        )
        .then(pl.lit("aborted"))
        .otherwise(pl.lit("finished"))
    )
    games = games.with_columns(
        source=pl.lit(source),
        club_id=pl.lit(club_id, dtype=pl.String),
        white_score=result.replace_strict(SCORE_BY_RESULT, default=None, return_dtype=pl.Float64),
        status=status,
    )
    # a game a reader kept but marked unratable (a chess variant, a set-up position) never counts
    unratable = pl.col("unrated_reason").is_not_null()
    games = games.with_columns(rated=pl.when(unratable).then(False).otherwise(pl.col("rated")))
    if online:
        games = _with_period(games, pl.col("played_at"), rating_list=None)
    else:
        end = pl.coalesce(
            pl.col("tournament_end").cast(pl.Datetime("us", "UTC")),
            pl.col("played_at").max().over(pl.col("tournament_id")),
        )
        games = _with_period(
            games,
            end,
            rated=pl.col("rated").fill_null(True) & (pl.col("status") == "finished"),
            category=None,
        )
    games, dup_quarantine = drop_duplicate_game_ids(games)
    return IngestResult(
        rows=conform(games, GAMES_SCHEMA),
        quarantine=pl.concat([quarantine, dup_quarantine]),
        notes=tuple(notes),
    )


def date_reason(online: bool, today: date | None = None) -> pl.Expr:
    """Why a game's date cannot be rated, else null (RULES §0, issue 9).

    Every game: dated after `today` or before 1850. Tournament games also: the tournament's end
    (TRF 052) out of that range, or a game more than `TOURNAMENT_SPREAD_DAYS` from the median
    date of its tournament's other in-range games (a 1990 game inside a 2026 event), so one typo
    never moves the tournament's period.
    """
    played = pl.col("played_at")
    reason = date_range_reason(played, today)
    if online:
        return reason
    end = pl.col("tournament_end")
    end_reason = format_text("tournament end (TRF 052) {}", date_range_reason(end, today))
    in_range = played.is_not_null() & reason.is_null()
    median = played.filter(in_range).median().over("tournament_id")
    far = (played - median).abs() > pl.duration(days=TOURNAMENT_SPREAD_DAYS)
    spread_reason = format_text(
        "dated {}, more than {} days from the other games of tournament '{}' (median {})",
        played.dt.strftime("%Y-%m-%d"),
        pl.lit(TOURNAMENT_SPREAD_DAYS),
        pl.col("tournament_id"),
        median.dt.strftime("%Y-%m-%d"),
    )
    return (
        pl.when(reason.is_not_null())
        .then(reason)
        .when(end.is_not_null() & date_range_reason(end, today).is_not_null())
        .then(end_reason)
        .when(pl.col("tournament_id").is_not_null() & in_range & far)
        .then(spread_reason)
        .otherwise(pl.lit(None, dtype=pl.String))
    )


def check_match_dates(result: IngestResult, today: date | None = None) -> IngestResult:
    """Quarantine backgammon matches dated after `today` or before 1850 (the games' rule)."""
    rows = result.rows
    if rows.is_empty():
        return result
    reason = date_range_reason(pl.col("ended_at"), today)
    marked = rows.with_columns(_reason=reason)
    bad = marked.filter(pl.col("_reason").is_not_null()).select(
        source_file=pl.col("source_file"),
        line=pl.col("source_line"),
        record=pl.col("match_id"),
        value=pl.col("ended_at").dt.strftime("%Y-%m-%dT%H:%M:%SZ"),
        reason=pl.col("_reason"),
    )
    if bad.is_empty():
        return result
    kept = marked.filter(pl.col("_reason").is_null()).drop("_reason")
    return replace(
        result,
        rows=kept,
        quarantine=pl.concat([result.quarantine, bad.cast(QUARANTINE_SCHEMA)]),
    )


TAKEN_SCHEMA: TableSchema = {"game_id": pl.String, "first_file": pl.String, "first_line": pl.Int64}
"""Game ids already held, with the file and line of the record that holds them."""


def drop_duplicate_game_ids(games: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Keep the first record of each game id (file order); quarantine the later ones."""
    first = repeats(games.get_column("game_id"))
    if first is None:  # the common case: one pass over the ids' hashes, no join
        return games, empty(QUARANTINE_SCHEMA)
    dups = games.filter(~first)
    firsts = games.filter(first & pl.col("game_id").is_in(dups.get_column("game_id").implode()))
    taken = firsts.select(
        "game_id", first_file=pl.col("source_file"), first_line=pl.col("source_line")
    )
    _, quarantine = drop_taken_game_ids(dups, taken)
    return games.filter(first), quarantine


def drop_taken_game_ids(
    games: pl.DataFrame, taken: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """`games` without the ids `taken` holds (TAKEN_SCHEMA: ids an earlier record keeps), and
    those records quarantined, naming the record that keeps the id."""
    again = pl.col("game_id").is_in(taken.get_column("game_id").implode(), nulls_equal=True)
    dups = games.filter(again).join(taken, on="game_id", how="left", nulls_equal=True)
    if not dups.height:
        return games, empty(QUARANTINE_SCHEMA)
    reason = (
        pl.lit("game id '")
        + pl.col("game_id")
        + pl.lit("' appears again (first in ")
        + pl.col("first_file")
        + pl.lit(" line ")
        + pl.col("first_line").cast(pl.String)
        + pl.lit(")")
    )
    return games.filter(~again), _quarantine_from(dups, pl.col("game_id"), reason)
