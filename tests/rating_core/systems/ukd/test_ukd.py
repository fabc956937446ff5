"""UKD period engine and calculator against RULES §4 and hand computations."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from rating_core.schemas import GAMES_SCHEMA, conform
from rating_core.systems.ukd.calculator import ukd_calculator
from rating_core.systems.ukd.period import ukd_period
from rating_core.systems.ukd.rules import UKD_STATE_SCHEMA
from rating_core.systems.ukd.steps import ukd_k_expr


def games_frame(
    rows: list[tuple], period: str = "2024-01", rating_list: str = "standard"
) -> pl.DataFrame:
    """Rows: (game_id, tournament_id, day, white, black, white_score[, status])."""
    year, month = int(period[:4]), int(period[5:])
    data = [
        {
            "game_id": r[0],
            "tournament_id": r[1],
            "played_at": dt.datetime(year, month, r[2], 12, tzinfo=dt.UTC),
            "period": period,
            "white_id": r[3],
            "black_id": r[4],
            "white_score": r[5],
            "rating_list": rating_list,
            "status": r[6] if len(r) > 6 else "finished",
            "rated": True,
        }
        for r in rows
    ]
    return conform(pl.DataFrame(data), GAMES_SCHEMA)


def state(pairs: dict[str, int]) -> pl.DataFrame:
    return pl.DataFrame(
        {"player_id": list(pairs), "rating": list(pairs.values())}, schema=UKD_STATE_SCHEMA
    )


def row(frame: pl.DataFrame, player: str) -> dict:
    hit = frame.filter(pl.col("player_id") == player)
    assert hit.height == 1
    return hit.row(0, named=True)


def test_seed_example_calculator() -> None:
    out = ukd_calculator(1500, [(2000, 1.0)])
    assert out["k"] == 25
    assert out["games"][0]["counted_as"] == 1850
    assert (out["D"], out["PD"], out["We"], out["W"]) == (350, 0.11, 0.11, 1.0)
    assert out["change"] == pytest.approx(22.25)
    assert out["new_rating"] == 1522


def test_seed_example_engine() -> None:
    r = ukd_period(
        games_frame([("g1", "t", 5, "p", "o", 1.0)]),
        state({"p": 1500, "o": 2000}),
        "2024-01",
        "standard",
    )
    p = row(r.list_rows, "p")
    assert (p["rating"], p["k"], p["change"]) == (1522, 25, 22)
    assert p["rating_exact"] == pytest.approx(1522.25)
    t = row(r.tournament_explanations, "p")
    assert (t["d"], t["pd"], t["we"], t["delta_d"]) == (350, 0.11, 0.11, 22.25)
    assert row(r.game_explanations, "p")["opponent_capped"] == 1850
    # the 2000 side (k 15): opponent counts 1650, D -350 -> H .89 -> 15 x -.89 = -13.35 -> 1987
    assert row(r.list_rows, "o")["rating"] == 1987


@pytest.mark.parametrize(
    ("rating", "k"),
    [
        (1000, 30),
        (1299, 30),
        (1300, 25),
        (1599, 25),
        (1600, 20),
        (1999, 20),
        (2000, 15),
        (2399, 15),
        (2400, 10),
        (2800, 10),
    ],
)
def test_k_bands(rating: int, k: int) -> None:
    assert pl.select(ukd_k_expr(pl.lit(rating))).item() == k
    assert ukd_calculator(rating, [])["k"] == k


def test_opponent_without_ukd_tenth_of_k() -> None:
    g = games_frame(
        [
            ("g1", "t", 5, "p", "x", 1.0),
            ("g2", "t", 6, "q", "y", 0.0),
            ("g3", "t", 7, "r", "z", 0.5),
        ]
    )
    r = ukd_period(g, state({"p": 1500, "q": 1500, "r": 1500}), "2024-01", "standard")
    assert row(r.list_rows, "p")["change_exact"] == pytest.approx(2.5)
    assert row(r.list_rows, "p")["rating"] == 1503  # 1502.5 rounds away from zero
    # the new UKD is rounded (RULES §4, seed: "redondea el nuevo rating"), not the change
    assert row(r.list_rows, "q")["rating"] == 1498  # 1497.5 rounds away from zero
    assert row(r.list_rows, "r")["rating"] == 1500
    out = ukd_calculator(2400, [(None, 1.0), (None, 1.0), (None, 0.0)])
    assert out["change"] == pytest.approx(1.0)


def test_floor_1000() -> None:
    opponents = {f"o{i}": 1005 for i in range(5)}
    g = games_frame([(f"g{i}", "t", 5, "p", o, 0.0) for i, o in enumerate(opponents)])
    r = ukd_period(g, state({"p": 1005, **opponents}), "2024-01", "standard")
    p = row(r.player_explanations, "p")
    assert p["rating_unfloored"] == 930  # 30 x (0 - 5 x .5) = -75
    assert (p["rating_after"], p["floored"]) == (1000, True)
    assert ukd_calculator(1005, [(1005, 0.0)] * 5)["new_rating"] == 1000


def test_d_rounded_half_away_before_the_table() -> None:
    out = ukd_calculator(1500, [(1606, 0.5), (1607, 0.5)])  # average 1606.5, D 106.5 -> 107
    assert (out["D"], out["PD"]) == (107, 0.35)
    out = ukd_calculator(1500, [(1393, 0.5), (1394, 0.5)])  # D -106.5 -> -107, higher side
    assert (out["D"], out["PD"]) == (-107, 0.65)


def test_tournaments_from_period_start_and_summed() -> None:
    g = games_frame(
        [
            ("g1", "t1", 5, "p", "o", 1.0),
            ("g2", "t2", 20, "p", "o", 1.0),
            ("g3", "t2", 21, "p", "f", 1.0, "forfeit"),
        ]
    )
    r = ukd_period(g, state({"p": 1500, "o": 1500}), "2024-01", "standard")
    t = r.tournament_explanations.filter(pl.col("player_id") == "p")
    assert t["delta_d"].to_list() == [12.5, 12.5]  # both from 1500: 25 x (1 - .5)
    assert row(r.list_rows, "p")["rating"] == 1525
    assert row(r.list_rows, "p")["games"] == 2


def test_new_player_first_ukd() -> None:
    opp = {f"o{i}": 1500 for i in range(5)}
    g = games_frame([(f"g{i}", "t", 5, "n", o, 0.5) for i, o in enumerate(opp)])
    g = pl.concat([g, games_frame([(f"h{i}", "t", 6, "m", o, 0.0) for i, o in enumerate(opp)])])
    r = ukd_period(g, state(opp), "2024-01", "standard")
    n = row(r.newcomers, "n")
    assert (n["n"], n["ra"], n["p"], n["dp"], n["ru"], n["published"]) == (
        5,
        1500.0,
        0.5,
        0,
        1500,
        True,
    )
    assert row(r.state, "n")["rating"] == 1500
    m = row(r.newcomers, "m")  # 1500 - 800 = 700: not above 1000, games stay in the pool
    assert (m["ru"], m["published"]) == (700, False)
    assert "m" not in r.state["player_id"].to_list()
    assert r.pool["player_id"].unique().to_list() == ["m"]
    # opponents of a player without UKD: +-0.1k rule, draws give nothing
    assert row(r.list_rows, "o0")["rating"] == 1503


def test_new_player_pool_over_periods() -> None:
    g1 = games_frame([(f"g{i}", "t", 5, "n", "o", 1.0) for i in range(3)], period="2024-01")
    r1 = ukd_period(g1, state({"o": 1600}), "2024-01", "standard")
    assert r1.pool.height == 3 and "n" not in r1.state["player_id"].to_list()
    g2 = games_frame([(f"h{i}", "t", 5, "n", "o", 0.0) for i in range(2)], period="2024-02")
    r2 = ukd_period(g2, r1.state, "2024-02", "standard", pool=r1.pool)
    n = row(r2.newcomers, "n")
    # o lost 3 times to a player without UKD in January: 1600 - 3 x 2 = 1594
    assert row(r1.state, "o")["rating"] == 1594
    # opponents at each period's start: 3 x 1600 + 2 x 1594 = 7988, Ra 1597.6, p .60 -> dp 72
    assert (n["opponents_sum"], n["ra"], n["p"], n["dp"], n["ru"]) == (7988, 1597.6, 0.6, 72, 1670)
    assert r2.pool.height == 0
