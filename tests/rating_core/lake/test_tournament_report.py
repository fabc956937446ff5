"""The tournament report from frames: RULES §3's seed example as FIDE's calculation page shows
it, the performance rating (table §3.2), unrated players, and the history's tournament links."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

from rating_core.lake.tournament_report import (
    UNRATED_REASON,
    link_tournaments,
    performance_exprs,
    tournament_report,
)

GAMES = pl.DataFrame(
    {
        "game_id": ["g1", "g2", "g3"],
        "round": [1, 2, 3],
        "white_id": ["a", "c", "a"],
        "black_id": ["b", "a", "u"],
        "white_score": [1.0, 0.5, 1.0],
    }
)
"""a (1800, K 20) beats b (1900), draws c (1750): RULES §3's seed example; then beats u, who is
not rated on the list."""


def _explanation(game: str, me: str, other: str, own: int, opp: int | None, **rest: Any) -> dict:
    return {
        "game_id": game,
        "player_id": me,
        "opponent_id": other,
        "own_rating": own,
        "opponent_rating": opp,
        "counted": rest.get("counted", True),
        "not_counted_reason": rest.get("reason"),
        "d_used": None if opp is None else opp - own,
        "pd": rest.get("pd"),
        "score": rest["score"],
        "delta_r": None if rest.get("pd") is None else rest["score"] - rest["pd"],
        "period": "2026-03",
    }


EXPLANATIONS = pl.DataFrame(
    [
        _explanation("g1", "a", "b", 1800, 1900, pd=0.36, score=1.0),
        _explanation("g1", "b", "a", 1900, 1800, pd=0.64, score=0.0),
        _explanation("g2", "a", "c", 1800, 1750, pd=0.57, score=0.5),
        _explanation("g2", "c", "a", 1750, 1800, pd=0.43, score=0.5),
        _explanation(
            "g3", "a", "u", 1800, None, score=1.0, counted=False, reason="opponent unrated"
        ),
        _explanation("other", "a", "z", 1800, 2000, pd=0.24, score=1.0),  # another tournament
    ]
)
PER_PERIOD = pl.DataFrame(
    {
        "player_id": ["a", "b", "c"],
        "period": ["2026-03"] * 3,
        "rating_before": [1800, 1900, 1750],
        "k_used": [20, 20, 40],
        "k_reason": ["established", "established", "new"],
        "change": [26, -13, 3],
        "rating_after": [1826, 1887, 1753],
    }
)
NAMES = pl.DataFrame({"player_id": ["a", "b", "c", "u"], "name": ["Ayşe", "Burak", "Can", "Ufuk"]})


@pytest.fixture(scope="module")
def report():  # noqa: ANN201
    return tournament_report("T", "fide-standard", GAMES, EXPLANATIONS, PER_PERIOD, NAMES)


def test_the_seed_example_as_a_calculation_page(report) -> None:  # noqa: ANN001
    a = report.players.filter(pl.col("player_id") == "a").row(0, named=True)
    assert (a["ro"], a["k"], a["games"], a["rated_games"]) == (1800, 20, 3, 2)
    assert a["w"] == 1.5
    assert a["we"] == pytest.approx(0.93)
    assert a["w_minus_we"] == pytest.approx(0.57)
    assert a["change"] == pytest.approx(11.4)  # 20 × .57, RULES §3's seed example
    assert (a["period"], a["period_change"], a["rating_after"]) == ("2026-03", 26, 1826)
    games = report.games.filter(pl.col("player_id") == "a")
    assert games["game_id"].to_list() == ["g1", "g2", "g3"]  # not the other tournament's game
    assert games["d"].to_list() == [100, -50, None]
    assert games["k_delta_r"].to_list() == pytest.approx([12.8, -1.4, None], nan_ok=True)
    assert games["opponent_name"].to_list() == ["Burak", "Can", "Ufuk"]


def test_performance_rating(report) -> None:  # noqa: ANN001
    a = report.players.filter(pl.col("player_id") == "a").row(0, named=True)
    # Ra = (1900 + 1750) / 2 = 1825, p = 1.5 / 2 = .75 → dp 193
    assert (a["ra"], a["performance"]) == (1825, 2018)
    b = report.players.filter(pl.col("player_id") == "b").row(0, named=True)
    assert b["performance"] == 1800 - 800  # 0 of 1: dp(0) = −800


@pytest.mark.parametrize(
    ("points", "n", "total", "ra", "rp"),
    [
        (3.0, 5, 9507, 1901, 1901 + 72),  # 1901.4 → 1901, p .60 → 72
        (2.5, 5, 10002, 2000, 2000),  # 2000.4, p .50 → 0
        (1.0, 3, 6001, 2000, 2000 - 125),  # 2000.33, p .333 → .33 → −125
        (2.0, 3, 6005, 2002, 2002 + 125),  # 2001.67 → 2002, p .667 → .67 → 125
        (0.5, 2, 3001, 1501, 1501 - 193),  # 1500.5 → 1501 (half away), p .25 → −193
    ],
)
def test_performance_rounds_half_away(points, n, total, ra, rp) -> None:  # noqa: ANN001
    frame = pl.DataFrame({"w": [points], "n": [n], "sum": [total]})
    ra_expr, rp_expr = performance_exprs(pl.col("w"), pl.col("n"), pl.col("sum"))
    got = frame.select(ra_expr.alias("ra"), rp_expr.alias("rp"))
    assert got.row(0) == (ra, rp)


def test_an_unrated_player_is_listed_without_a_change(report) -> None:  # noqa: ANN001
    u = report.players.filter(pl.col("player_id") == "u").row(0, named=True)
    assert (u["ro"], u["k"], u["change"], u["performance"], u["games"]) == (
        None,
        None,
        None,
        None,
        1,
    )
    game = report.games.filter(pl.col("player_id") == "u").row(0, named=True)
    assert (game["score"], game["counted"], game["not_counted_reason"]) == (
        0.0,
        False,
        UNRATED_REASON,
    )
    assert report.players["player_id"].to_list() == ["b", "a", "c", "u"]  # by Ro, unrated last


def test_history_links_each_change_to_its_tournament() -> None:
    history = pl.DataFrame(
        {
            "system": ["fide-standard-game_explanations"] * 2
            + ["fide-standard-player_explanations"],
            "period": ["2026-03"] * 3,
            "game_id": ["g1", "other", None],
            "change": [None, None, 26],
        }
    )
    games = pl.DataFrame({"game_id": ["g1", "other"], "tournament_id": ["T", "U"]})
    linked = link_tournaments(history, games)
    assert linked["tournament_id"].to_list() == ["T", "U", None]
    assert linked["tournament_ids"].to_list() == [None, None, "T, U"]


def test_a_bye_is_named_and_an_unrated_opponent_shows_its_ro() -> None:
    games = pl.concat(
        [
            GAMES.with_columns(rated=pl.lit(True), status=pl.lit("finished")),
            pl.DataFrame(
                {
                    "game_id": ["g4"],
                    "round": [4],
                    "white_id": ["a"],
                    "black_id": [None],
                    "white_score": [None],
                    "rated": [False],
                    "status": ["bye"],
                },
                schema_overrides={"black_id": pl.String, "white_score": pl.Float64},
            ),
        ]
    )
    report = tournament_report("T", "fide-standard", games, EXPLANATIONS, PER_PERIOD, NAMES)
    bye = report.games.filter(pl.col("game_id") == "g4").row(0, named=True)
    assert (bye["player_id"], bye["counted"], bye["not_counted_reason"]) == (
        "a",
        False,
        "bye, not rated",
    )
    u = report.games.filter(pl.col("player_id") == "u").row(0, named=True)
    assert u["opponent_rating"] == 1800  # a's Ro, though u earns nothing from it
