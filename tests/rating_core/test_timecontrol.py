"""RULES §1: every time-control example and the category boundaries."""

from __future__ import annotations

import polars as pl
import pytest

from rating_core.timecontrol import (
    TIME_CONTROL_RULES,
    parse_time_control,
    with_time_control_columns,
)


def classify(
    time_control: str | None,
    kind: str = "live",
    days_per_move: int | None = None,
    bot: bool = False,
    rating_list: str | None = None,
) -> dict:
    frame = pl.DataFrame(
        {
            "time_control": [time_control],
            "kind": [kind],
            "days_per_move": [days_per_move],
            "white_is_bot": [bot],
            "black_is_bot": [False],
            "rating_list": [rating_list],
        },
        schema={
            "time_control": pl.String,
            "kind": pl.String,
            "days_per_move": pl.Int32,
            "white_is_bot": pl.Boolean,
            "black_is_bot": pl.Boolean,
            "rating_list": pl.Enum(["standard", "rapid", "blitz"]),
        },
    )
    return with_time_control_columns(frame).row(0, named=True)


@pytest.mark.parametrize(
    ("tc", "category", "estimate"),
    [
        ("60", "bullet", 60),
        ("120+1", "bullet", 160),
        ("180", "blitz", 180),
        ("300+3", "blitz", 420),
        ("480", "rapid", 480),
        ("900+10", "rapid", 1300),
        ("1500", "classical", 1500),
        ("40/5400+30:1800+30", "classical", 6600),
        ("179", "bullet", 179),
        ("479", "blitz", 479),
        ("1499", "rapid", 1499),
        ("*60", "bullet", 60),
    ],
)
def test_rules_examples_and_boundaries(tc: str, category: str, estimate: int) -> None:
    row = classify(tc)
    assert row["category"] == category
    assert row["estimate_s"] == estimate
    assert row["tc_error"] is None


def test_seed_five_plus_three_is_seven_minutes_blitz() -> None:
    assert parse_time_control("300+3").estimate_s == 420


def test_lichess_reading_of_half_open_interval() -> None:
    # 7.67 minutes (460 s) is still blitz: the seed's "3 to 7" is half-open on the estimate.
    assert classify("420+1")["category"] == "blitz"


def test_no_clock_is_unlimited() -> None:
    assert classify("-")["category"] == "unlimited"


def test_correspondence_one_day() -> None:
    row = classify("1/86400")
    assert row["category"] == "correspondence"
    assert row["tc_error"] is None


def test_correspondence_fourteen_days_is_an_error() -> None:
    row = classify("1/1209600")
    assert "1 to 7" in row["tc_error"]


@pytest.mark.parametrize(("days", "ok"), [(0, False), (1, True), (7, True), (8, False)])
def test_days_per_move_column(days: int, ok: bool) -> None:
    row = classify(None, kind="correspondence", days_per_move=days)
    assert row["category"] == "correspondence"
    assert (row["tc_error"] is None) is ok


@pytest.mark.parametrize("tc", ["?", None])
def test_unknown_control_on_online_game_is_an_error(tc: str | None) -> None:
    assert "unknown" in classify(tc)["tc_error"]


def test_garbage_control_is_an_error() -> None:
    assert "syntax" in classify("5 min")["tc_error"]


def test_precedence_bots_before_everything() -> None:
    assert classify("60", bot=True)["category"] == "bots"
    assert classify(None, bot=True)["tc_error"] is None
    assert classify("1/86400", kind="otb")["category"] == "otb"
    assert classify("-", kind="correspondence")["category"] == "correspondence"


@pytest.mark.parametrize(
    ("tc", "fide_list"),
    [
        ("600", "blitz"),  # 10 minutes for 60 moves: blitz
        ("180+2", "blitz"),  # 180 + 120 = 300 s
        ("601", "rapid"),
        ("900+10", "rapid"),  # 900 + 600 = 1500 s
        ("3599", "rapid"),
        ("3600", "standard"),
        ("5400+30", "standard"),
        ("40/5400+30:1800+30", "standard"),
        (None, "standard"),  # no time information at all (over-the-board PGN)
    ],
)
def test_fide_list_by_time_for_sixty_moves(tc: str | None, fide_list: str) -> None:
    assert classify(tc, kind="otb")["rating_list"] == fide_list


def test_explicit_rating_list_wins() -> None:
    assert classify("5400+30", kind="otb", rating_list="blitz")["rating_list"] == "blitz"


def test_weights_follow_the_table() -> None:
    w = TIME_CONTROL_RULES.weight
    assert (w("classical"), w("rapid"), w("blitz"), w("bullet")) == (1.0, 1.0, 0.75, 0.5)
    assert (w("unlimited"), w("otb"), w("correspondence"), w("bots")) == (0.75, 0.75, 0.5, 0.5)
