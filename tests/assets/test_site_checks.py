"""The site system's blocking checks on one period, fed frames directly."""

from __future__ import annotations

import polars as pl

from assets.platform import flagged_bots, site_bot_rows
from assets.systems import CheckInput
from rating_core.systems.contract import PeriodOutput


def _games(*rows: tuple[str, str, str, bool, bool]) -> pl.DataFrame:
    """Games as (period, white, black, white is a bot, black is a bot), plus a column the check
    has no use for."""
    columns = ["period", "white_id", "black_id", "white_is_bot", "black_is_bot"]
    frame = pl.DataFrame(list(rows), schema=columns, orient="row")
    return frame.with_columns(moves=pl.lit("1. e4 e5"))


def _check(
    period: str, listed: list[str], games: pl.DataFrame, registry: pl.DataFrame | None = None
) -> int:
    """The check's count for a list of `listed` players in `period`."""
    rows = pl.DataFrame({"list": ["site-elo"] * len(listed), "player_id": listed})
    output = PeriodOutput({}, rows, {})
    inputs = {"players": registry, "games": games, "flagged_bots": flagged_bots(games)}
    return site_bot_rows(CheckInput(period, output, {}, inputs))


def test_a_bot_flagged_in_the_periods_games_or_the_registry_is_a_bad_row() -> None:
    games = _games(
        ("2024-03", "ann", "engine", False, True),
        ("2024-03", "robo", "bob", True, False),
        ("2024-02", "cat", "ann", True, False),  # flagged as a bot in another period only
    )
    registry = pl.DataFrame({"player_id": ["dan", "eve"], "is_bot": [True, None]})
    listed = ["ann", "bob", "cat", "dan", "eve", "engine", "robo"]
    assert _check("2024-03", listed, games, registry) == 3  # engine, robo, dan
    assert _check("2024-02", listed, games) == 1  # cat
    assert _check("2024-03", ["ann", "bob"], games, registry) == 0
    assert _check("2024-03", [], games, registry) == 0
