"""FIDE period engine, tables and calculator against RULES §3 worked examples and hand computations."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rating_core.rounding import round_half_away
from rating_core.schemas import GAMES_SCHEMA, STARTING_LIST_SCHEMA, conform
from rating_core.systems.fide import steps as fide_steps
from rating_core.systems.fide.calculator import fide_calculator
from rating_core.systems.fide.period import (
    fide_game_explanations,
    fide_period,
    fide_state_from_starting_list,
)
from rating_core.systems.fide.rules import (
    FIDE_ERAS_BY_LIST,
    FIDE_POOL_SCHEMA,
    FIDE_RULES,
    FIDE_STATE_SCHEMA,
    FideRules,
)
from rating_core.systems.fide.steps import k_capped_expr
from rating_core.systems.fide.tables import (
    PD_HIGH_BY_ABS_D,
    dp_for_p_hundredths,
    pd_hundredths,
)


def fide_rules_of(standard: bool) -> FideRules:
    """Today's rules of the standard list, or of rapid (and blitz)."""
    return FIDE_ERAS_BY_LIST["standard" if standard else "rapid"][-1]


# RULES §3 as in force today, on periods of 2024 (the eras: tests/rating_core/systems/fide/test_eras.py).
pytestmark = pytest.mark.usefixtures("fide_rules_of_today")

UTC = dt.UTC


def games_frame(
    rows: list[tuple], period: str = "2024-01", rating_list: str = "standard"
) -> pl.DataFrame:
    """Rows: (game_id, tournament_id, day, white, black, white_score[, status])."""
    year, month = int(period[:4]), int(period[5:])
    data = []
    for r in rows:
        gid, tid, day, white, black, ws = r[:6]
        status = r[6] if len(r) > 6 else "finished"
        data.append(
            {
                "game_id": gid,
                "tournament_id": tid,
                "played_at": dt.datetime(year, month, day, 12, tzinfo=UTC),
                "period": period,
                "white_id": white,
                "black_id": black,
                "white_score": ws,
                "rating_list": rating_list,
                "status": status,
                "rated": True,
            }
        )
    return conform(pl.DataFrame(data), GAMES_SCHEMA)


def state_frame(rows: list[tuple], listed_since: str = "2023-12") -> pl.DataFrame:
    """Rows: (player_id, rating, rated_games, peak_rating[, last_played_period])."""
    data = [
        {
            "player_id": r[0],
            "rating": r[1],
            "rated_games": r[2],
            "peak_rating": r[3],
            "last_played_period": r[4] if len(r) > 4 else None,
            "listed_since": listed_since,
        }
        for r in rows
    ]
    return pl.DataFrame(data, schema=FIDE_STATE_SCHEMA)


def row(frame: pl.DataFrame, player: str) -> dict:
    hit = frame.filter(pl.col("player_id") == player)
    assert hit.height == 1, f"{player} rows: {hit.height}"
    return hit.row(0, named=True)


# --- tables ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("d", "expected"),
    [
        (0, 50),
        (3, 50),
        (-3, 50),
        (4, 49),  # lower side
        (-4, 51),  # higher side
        (-735, 99),
        (-736, 100),
        (735, 1),
        (736, 0),
        (-2000, 100),
        (-100, 64),
        (100, 36),
        (-400, 92),
        (-401, 92),
        (-412, 93),
    ],
)
def test_pd_table_edges(d: int, expected: int) -> None:
    assert pd_hundredths(d) == expected


def test_engine_pd_by_signed_difference_matches_the_table() -> None:
    # The numpy engine reads PD by signed D (higher side H, lower side L) from one array.
    from rating_core.systems.fide.steps import _PD_BY_D
    from rating_core.systems.fide.tables import PD_MAX_INDEX

    for d in range(-PD_MAX_INDEX - 5, PD_MAX_INDEX + 6):
        clipped = max(-PD_MAX_INDEX, min(PD_MAX_INDEX, d))
        assert _PD_BY_D[clipped + PD_MAX_INDEX] == pd_hundredths(d), d


def test_pd_table_monotone_and_complete() -> None:
    assert PD_HIGH_BY_ABS_D.min() == 50
    assert all(
        PD_HIGH_BY_ABS_D[i] <= PD_HIGH_BY_ABS_D[i + 1] for i in range(len(PD_HIGH_BY_ABS_D) - 1)
    )


@pytest.mark.parametrize(
    ("p", "dp"),
    [(50, 0), (57, 50), (43, -50), (100, 800), (0, -800), (99, 677), (1, -677), (92, 401)],
)
def test_dp_table(p: int, dp: int) -> None:
    assert dp_for_p_hundredths(p) == dp


# --- calculator (seed and RULES §3 examples) ------------------------------------------------------


def test_calculator_seed_example() -> None:
    out = fide_calculator(1800, 20, [(1900, 1.0), (1750, 0.5)])
    assert [g["PD"] for g in out["games"]] == [0.36, 0.57]
    assert [g["delta_r"] for g in out["games"]] == [0.64, -0.07]
    assert out["change_exact"] == pytest.approx(11.4)
    assert out["change"] == 11
    assert out["new_rating"] == 1811


def test_calculator_four_games() -> None:
    out = fide_calculator(2000, 20, [(2100, 1), (1950, 0.5), (1500, 1), (2500, 0)])
    assert out["sum_delta_r"] == pytest.approx(0.57)
    assert out["change"] == 11


@pytest.mark.parametrize(
    ("k", "n", "expected"),
    [(20, 39, 17), (40, 18, 38), (40, 17, 40), (40, 20, 35), (20, 36, 19), (20, 35, 20)],
)
def test_k_cap(k: int, n: int, expected: int) -> None:
    assert pl.select(k_capped_expr(pl.lit(k), pl.lit(n), FIDE_RULES)).item() == expected
    out = fide_calculator(1800, k, [(1800, 0.5)] * n)
    assert out["k"] == expected


def test_calculator_400_cap_below_2650_only() -> None:
    low = fide_calculator(2600, 10, [(2188, 1)])  # D -412 capped to -400 -> .92
    high = fide_calculator(2700, 10, [(2288, 1)])  # D -412 real -> .93
    assert low["games"][0]["PD"] == 0.92
    assert high["games"][0]["PD"] == 0.93
    assert fide_calculator(2200, 20, [(2601, 0)])["games"][0]["PD"] == 0.08  # 401 -> 400
    assert fide_calculator(2200, 20, [(2600, 0)])["games"][0]["PD"] == 0.08


# --- engine: worked examples ------------------------------------------------------------------------


def test_engine_seed_example() -> None:
    g = games_frame([("g1", "t", 5, "a", "b", 1.0), ("g2", "t", 6, "a", "c", 0.5)])
    st = state_frame([("a", 1800, 100, 1850), ("b", 1900, 100, 1900), ("c", 1750, 100, 1750)])
    r = fide_period(g, st, None, "2024-01", "standard")
    a = row(r.list_rows, "a")
    assert (a["rating"], a["change"], a["k"], a["games"]) == (1811, 11, 20, 2)
    assert a["change_exact"] == pytest.approx(11.4)
    assert row(r.list_rows, "b")["rating"] == 1887  # -12.8 -> -13
    assert row(r.list_rows, "c")["rating"] == 1751  # +1.4 -> +1
    ge = r.game_explanations.filter(pl.col("player_id") == "a").sort("game_id")
    assert ge["pd"].to_list() == [0.36, 0.57]
    assert ge["delta_r"].to_list() == [0.64, -0.07]


def test_engine_2700_vs_2200_per_side() -> None:
    g = games_frame([("g1", "t", 5, "top", "low", 1.0)])
    st = state_frame([("top", 2700, 500, 2750), ("low", 2200, 100, 2250)])
    r = fide_period(g, st, None, "2024-01", "standard")
    top = row(r.player_explanations, "top")
    low = row(r.player_explanations, "low")
    assert (top["k_used"], top["change_exact"], top["change"]) == (10, pytest.approx(0.4), 0)
    assert (low["k_used"], low["change_exact"], low["change"]) == (20, pytest.approx(-1.6), -2)
    ge = r.game_explanations
    assert row(ge, "top")["pd"] == 0.96 and row(ge, "top")["d_used"] == -500
    assert row(ge, "low")["pd"] == 0.08 and row(ge, "low")["d_used"] == 400


def test_engine_2800_draws_2000() -> None:
    g = games_frame([("g1", "t", 5, "gm", "x", 0.5)])
    st = state_frame([("gm", 2800, 900, 2850), ("x", 2000, 100, 2000)])
    r = fide_period(g, st, None, "2024-01", "standard")
    assert row(r.list_rows, "gm")["change"] == -5
    assert row(r.list_rows, "x")["change"] == 8  # L .08 -> +.42 x 20 = 8.4


def test_engine_half_changes_round_away() -> None:
    # 2589 (K10) draws 2400 (K10): D 189 -> .75/.25 -> -2.5 / +2.5.
    g = games_frame([("g1", "t", 5, "p", "q", 0.5)])
    st = state_frame([("p", 2589, 300, 2600), ("q", 2400, 300, 2400)])
    r = fide_period(g, st, None, "2024-01", "standard")
    assert row(r.list_rows, "p")["change_exact"] == pytest.approx(-2.5)
    assert row(r.list_rows, "p")["change"] == -3
    assert row(r.list_rows, "q")["change"] == 3


def test_engine_exact_minus_half_rounds_to_minus_one() -> None:
    # K 10, dR -0.92, +0.19, +0.68: float 10*sum is -0.49999999999999933, exact -0.5 -> -1.
    assert 10 * (-0.92 + 0.19 + 0.68) > -0.5
    g = games_frame(
        [
            ("g1", "t", 5, "p", "o1", 0.0),
            ("g2", "t", 6, "p", "o2", 1.0),
            ("g3", "t", 7, "p", "o3", 1.0),
        ]
    )
    st = state_frame(
        [
            ("p", 2400, 300, 2400),
            ("o1", 2000, 100, 2000),
            ("o2", 2150, 100, 2150),
            ("o3", 2533, 100, 2533),
        ]
    )
    r = fide_period(g, st, None, "2024-01", "standard")
    p = row(r.list_rows, "p")
    assert p["change_exact"] == pytest.approx(-0.5)
    assert p["change"] == -1
    assert p["rating"] == 2399
    assert row(r.state, "p")["peak_rating"] == 2400


def test_engine_k_cap_40_with_20_games() -> None:
    opponents = [f"o{i:02d}" for i in range(20)]
    g = games_frame([(f"g{i:02d}", "t", 5, "kid", o, 1.0) for i, o in enumerate(opponents)])
    st = state_frame([("kid", 1800, 10, 1800)] + [(o, 1800, 100, 1800) for o in opponents])
    r = fide_period(g, st, None, "2024-01", "standard")
    kid = row(r.player_explanations, "kid")
    assert (kid["k_base"], kid["n"], kid["k_used"]) == (40, 20, 35)
    assert kid["change"] == 350  # 35 x 20 x 0.5


# --- engine: K rules ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("birth_year", "rating", "rated_games", "peak", "k", "reason"),
    [
        (2006, 2000, 100, 2000, 40, "junior"),  # 18 in 2024: junior until the end of 2024
        (2005, 2000, 100, 2000, 20, "established"),  # 19 in 2024
        (2006, 2300, 100, 2300, 20, "established"),  # junior but not under 2300
        (None, 2000, 29, 2000, 40, "under 30 games"),
        (None, 2000, 30, 2000, 20, "established"),
        (None, 2350, 100, 2405, 10, "peak>=2400"),  # peak reached 2400 once
        (2010, 2350, 5, 2400, 10, "peak>=2400"),  # the peak rule comes first
    ],
)
def test_k_rules(birth_year, rating, rated_games, peak, k, reason) -> None:
    g = games_frame([("g1", "t", 5, "p", "o", 0.5)], period="2024-03")
    st = state_frame([("p", rating, rated_games, peak), ("o", rating, 100, rating)])
    players = pl.DataFrame(
        {"player_id": ["p"], "birth_year": [birth_year]},
        schema={"player_id": pl.String, "birth_year": pl.Int32},
    )
    r = fide_period(g, st, players, "2024-03", "standard")
    p = row(r.player_explanations, "p")
    assert (p["k_base"], p["k_reason"]) == (k, reason)


# --- engine: exclusions, floor, rapid, inactivity -------------------------------------------------


def test_forfeits_byes_and_unrated_opponents_count_nothing() -> None:
    g = games_frame(
        [
            ("g1", "t", 5, "a", "b", 1.0, "forfeit"),
            ("g2", "t", 5, "a", None, None, "bye"),
            ("g3", "t", 6, "a", "stranger", 1.0),
            ("g4", "t", 7, "a", "b", 1.0, "annulled"),
        ]
    )
    st = state_frame([("a", 1800, 100, 1800), ("b", 1800, 100, 1800)])
    r = fide_period(g, st, None, "2024-01", "standard")
    a = row(r.list_rows, "a")
    assert (a["games"], a["change"], a["rating"]) == (0, 0, 1800)
    ge = r.game_explanations
    assert ge.height == 1 and ge["counted"].to_list() == [False]
    assert ge["not_counted_reason"].to_list() == ["opponent unrated on this list"]


def test_drop_below_1400() -> None:
    g = games_frame([("g1", "t", 5, "weak", "eq", 0.0)])
    st = state_frame([("weak", 1405, 100, 1500), ("eq", 1405, 100, 1500)])
    r = fide_period(g, st, None, "2024-01", "standard")
    assert "weak" not in r.state["player_id"].to_list()
    assert "weak" not in r.list_rows["player_id"].to_list()
    d = row(r.dropped, "weak")
    assert (d["last_rating"], d["new_rating"]) == (1405, 1395)
    assert "1400" in d["reason"]
    assert row(r.player_explanations, "weak")["dropped"] is True
    assert row(r.state, "eq")["rating"] == 1415


def test_rapid_seeded_from_standard() -> None:
    g = games_frame([("g1", "t", 5, "s", "r", 1.0)], rating_list="rapid")
    rapid = state_frame([("r", 1800, 100, 1800)])
    standard = state_frame(
        [("s", 1800, 50, 1900), ("r", 2100, 100, 2100), ("idle", 2000, 10, 2000)]
    )
    r = fide_period(g, rapid, None, "2024-01", "rapid", standard_state=standard)
    s = row(r.list_rows, "s")
    assert (s["rating"], s["k"], s["games"]) == (1820, 40, 1)  # rated at 1800, 0 rapid games -> K40
    assert row(r.player_explanations, "s")["seeded_from_standard"] is True
    assert row(r.list_rows, "r")["rating"] == 1790  # uses the rapid rating, not standard
    assert "idle" not in r.state["player_id"].to_list()
    assert row(r.state, "s")["rated_games"] == 1


def test_600_point_rule_on_rapid_only() -> None:
    rows = [("g1", "t", 5, "gm", "club", 1.0), ("g2", "t", 6, "gm", "mid", 1.0)]
    st = state_frame([("gm", 2650, 500, 2700), ("club", 2000, 100, 2000), ("mid", 2100, 100, 2100)])
    rapid = fide_period(games_frame(rows, rating_list="rapid"), st, None, "2024-01", "rapid")
    ge = rapid.game_explanations
    g1 = ge.filter(pl.col("game_id") == "g1")
    assert g1["counted"].to_list() == [False, False]
    assert g1["not_counted_reason"].to_list() == ["600-point rule"] * 2
    assert row(rapid.list_rows, "club")["change"] == 0
    g2 = row(ge.filter(pl.col("game_id") == "g2"), "gm")
    assert (g2["counted"], g2["d_used"], g2["pd"]) == (True, -400, 0.92)  # plain cap on rapid
    assert row(rapid.list_rows, "gm")["games"] == 1
    standard = fide_period(games_frame(rows), st, None, "2024-01", "standard")
    assert row(standard.list_rows, "gm")["games"] == 2
    g2s = row(standard.game_explanations.filter(pl.col("game_id") == "g2"), "gm")
    assert (g2s["d_used"], g2s["pd"]) == (-550, 0.97)  # real difference at 2650 on standard


def test_inactive_flag() -> None:
    g = games_frame([("g1", "t", 5, "a", "b", 0.5)], period="2024-01")
    st = pl.concat(
        [
            state_frame([("a", 1800, 100, 1800, "2022-01"), ("b", 1800, 100, 1800, "2022-01")]),
            state_frame(
                [("old", 1800, 100, 1800, "2023-01"), ("recent", 1800, 100, 1800, "2023-02")]
            ),
            state_frame([("unknown_old", 1800, 100, 1800)], listed_since="2023-01"),
            state_frame([("unknown_new", 1800, 100, 1800)], listed_since="2023-06"),
        ]
    )
    r = fide_period(g, st, None, "2024-01", "standard")
    flags = dict(zip(r.list_rows["player_id"], r.list_rows["flag"], strict=True))
    assert flags == {
        "a": None,
        "b": None,
        "old": "i",
        "recent": None,
        "unknown_old": "i",
        "unknown_new": None,
    }
    assert row(r.state, "a")["last_played_period"] == "2024-01"
    assert row(r.list_rows, "old")["rating"] == 1800


# --- newcomers --------------------------------------------------------------------------------------------


def test_newcomer_rules_example_1922() -> None:
    opp = [("o1", 1900), ("o2", 1900), ("o3", 1900), ("o4", 1900), ("o5", 1907)]  # sum 9507
    scores = [1.0, 1.0, 1.0, 0.0, 0.0]
    g = games_frame(
        [
            (f"g{i}", "t", 5 + i, "new", o, s)
            for i, ((o, _), s) in enumerate(zip(opp, scores, strict=True))
        ]
    )
    st = state_frame([(o, r, 100, r) for o, r in opp])
    r = fide_period(g, st, None, "2024-01", "standard")
    nc = row(r.newcomers, "new")
    assert (nc["n"], nc["opponents_sum"], nc["ra"], nc["p"], nc["dp"], nc["ru"]) == (
        5,
        9507,
        1872.43,
        0.57,
        50,
        1922,
    )
    assert nc["published"] is True
    s = row(r.state, "new")
    assert (s["rating"], s["rated_games"]) == (1922, 5)
    lr = row(r.list_rows, "new")
    assert lr["newcomer"] is True and lr["rating"] == 1922
    assert r.pool.height == 0
    for o, rating in opp:  # opponents of an unrated player earn nothing
        assert row(r.list_rows, o)["rating"] == rating


def test_newcomer_capped_at_2200_and_needs_1400() -> None:
    opp = [(f"o{i}", 2400) for i in range(5)]
    g = games_frame([(f"g{i}", "t", 5, "strong", o, 1.0) for i, (o, _) in enumerate(opp)])
    g = pl.concat(
        [g, games_frame([(f"h{i}", "u", 5, "weak", o, 0.0) for i, (o, _) in enumerate(opp)])]
    )
    st = state_frame([(o, r, 100, r) for o, r in opp])
    r = fide_period(g, st, None, "2024-01", "standard")
    assert row(r.newcomers, "strong")["ru"] == 2200
    assert row(r.state, "strong")["rating"] == 2200
    weak = row(r.newcomers, "weak")
    # zero score in the first event: disregarded, so nothing counts
    assert weak["first_event_disregarded"] == "u"
    assert weak["published"] is False
    assert weak["n"] == 0
    assert r.pool.filter(pl.col("player_id") == "weak").height == 5


def test_newcomer_below_1400_not_published() -> None:
    # 5 games vs 1500, 0.5 points: Ra 11100/7, p 1.5/7 -> .21 -> dp -230, Ru 9490/7 -> 1356
    opp = [(f"o{i}", 1500) for i in range(5)]
    scores = [0.5, 0.0, 0.0, 0.0, 0.0]
    g = games_frame(
        [
            (f"g{i}", "t", 5, "weak", o, s)
            for i, ((o, _), s) in enumerate(zip(opp, scores, strict=True))
        ]
    )
    st = state_frame([(o, r, 100, r) for o, r in opp])
    r = fide_period(g, st, None, "2024-01", "standard")
    weak = row(r.newcomers, "weak")
    assert (weak["n"], weak["p"], weak["dp"], weak["ru"], weak["published"]) == (
        5,
        0.21,
        -230,
        1356,
        False,
    )
    assert "weak" not in r.state["player_id"].to_list()
    assert r.pool.height == 5


def pool_frame(rows: list[tuple]) -> pl.DataFrame:
    """Rows: (player, game_id, event_id, end (date), period, opponent_rating, score)."""
    return pl.DataFrame(
        [
            {
                "player_id": p,
                "game_id": gid,
                "event_id": ev,
                "event_end": dt.datetime(end.year, end.month, end.day, tzinfo=UTC),
                "period": per,
                "opponent_id": f"opp-{gid}",
                "opponent_rating": rating,
                "score": s,
            }
            for p, gid, ev, end, per, rating, s in rows
        ],
        schema=FIDE_POOL_SCHEMA,
    )


def test_newcomer_pool_window_26_periods() -> None:
    # period 2024-03: the window is 2022-02 .. 2024-03; 2022-01 leaves the pool.
    old = [("x", f"x{i}", "e0", dt.date(2022, 1, 20), "2022-01", 1800, 0.5) for i in range(4)]
    kept = [("y", f"y{i}", "e1", dt.date(2022, 2, 20), "2022-02", 1800, 0.5) for i in range(4)]
    kept += [("x", "x9", "e1", dt.date(2022, 2, 20), "2022-02", 1800, 0.5)]
    pool = pool_frame(old + kept)
    g = games_frame(
        [("gx", "t", 5, "x", "o", 0.5), ("gy", "t", 6, "y", "o", 0.5)], period="2024-03"
    )
    st = state_frame([("o", 1800, 100, 1800)])
    r = fide_period(g, st, None, "2024-03", "standard", pool=pool)
    assert row(r.newcomers, "x")["n"] == 2 and row(r.newcomers, "x")["published"] is False
    assert row(r.newcomers, "y")["n"] == 5 and row(r.state, "y")["rating"] == 1800
    assert sorted(r.pool["game_id"].to_list()) == ["gx", "x9"]


def test_newcomer_zero_score_first_event_disregarded() -> None:
    first = [("z", f"a{i}", "first", dt.date(2023, 11, 10), "2023-11", 2000, 0.0) for i in range(2)]
    later = [
        ("z", f"b{i}", "second", dt.date(2023, 12, 10), "2023-12", 1800, 1.0) for i in range(4)
    ]
    g = games_frame([("gz", "t", 5, "z", "o", 1.0)], period="2024-01")
    st = state_frame([("o", 1800, 100, 1800)])
    r = fide_period(g, st, None, "2024-01", "standard", pool=pool_frame(first + later))
    z = row(r.newcomers, "z")
    assert z["first_event_disregarded"] == "first"
    # 5 wins vs 1800: Ra = (9000 + 3600) / 7 = 1800, p = 6/7 -> .86 -> dp 309 -> 2109
    assert (z["n"], z["ru"]) == (5, 2109)
    # same pool but half a point in the first event: nothing disregarded
    first_half = [("z", "a0", "first", dt.date(2023, 11, 10), "2023-11", 2000, 0.5)] + first[1:]
    r2 = fide_period(g, st, None, "2024-01", "standard", pool=pool_frame(first_half + later))
    z2 = row(r2.newcomers, "z")
    assert z2["first_event_disregarded"] is None and z2["n"] == 7


def test_state_from_starting_list() -> None:
    sl = conform(
        pl.DataFrame(
            {
                "list": ["fide-standard"] * 2,
                "period": ["2023-12"] * 2,
                "player_id": ["b", "a"],
                "rating": [2000, 2100],
                "rated_games": [40, None],
                "peak_rating": [None, 2200],
            }
        ),
        STARTING_LIST_SCHEMA,
    )
    st = fide_state_from_starting_list(sl)
    assert st.schema == pl.Schema(FIDE_STATE_SCHEMA)
    assert st["player_id"].to_list() == ["a", "b"]
    assert st["peak_rating"].to_list() == [2200, 2000]
    assert st["listed_since"].to_list() == ["2023-12", "2023-12"]


def test_bad_rating_list_or_period() -> None:
    st = state_frame([])
    with pytest.raises(ValueError):
        fide_period(games_frame([]), st, None, "2024-01", "classical")
    with pytest.raises(ValueError):
        fide_period(games_frame([]), st, None, "2024-13", "standard")


# --- three-month scenario ----------------------------------------------------------------------------


def test_three_month_scenario() -> None:
    players = pl.DataFrame(
        {"player_id": ["j1"], "birth_year": [2008]},
        schema={"player_id": pl.String, "birth_year": pl.Int32},
    )
    st = state_frame(
        [
            ("a", 2200, 100, 2200),
            ("b", 2300, 100, 2300),
            ("c", 2390, 100, 2390),
            ("low", 1405, 40, 1500),
            ("j1", 1600, 50, 1600),
        ]
    )
    jan = games_frame(
        [
            ("g01", "T1", 10, "c", "a", 1.0),
            ("g02", "T1", 11, "c", "b", 1.0),
            ("g03", "T1", 10, "low", "j1", 0.0),
            ("g04", "T1", 11, "low", "a", 0.0),
            ("g05", "T1", 12, "n", "a", 0.5),
            ("g06", "T1", 12, "b", "n", 1.0),
            ("g07", "T1", 12, "n", "j1", 1.0),
            ("g08", "T1", 12, "c", "b", 1.0, "forfeit"),
            ("g09", "T1", 12, "j1", None, None, "bye"),
        ],
        period="2024-01",
    )
    r1 = fide_period(jan, st, players, "2024-01", "standard")
    ratings1 = dict(zip(r1.state["player_id"], r1.state["rating"], strict=True))
    assert ratings1 == {"a": 2197, "b": 2292, "c": 2403, "j1": 1610}
    assert row(r1.player_explanations, "j1")["k_used"] == 40
    assert row(r1.dropped, "low")["new_rating"] == 1398
    assert row(r1.newcomers, "n")["n"] == 3 and row(r1.newcomers, "n")["published"] is False
    assert r1.pool.height == 3
    assert row(r1.state, "c")["peak_rating"] == 2403

    feb = games_frame(
        [
            ("g10", "T2", 10, "c", "b", 0.0),
            ("g11", "T2", 11, "n", "c", 0.0),
            ("g12", "T2", 12, "j1", "n", 0.5),
            ("g13", "T2", 12, "low", "j1", 1.0),
            ("g14", "T2", 13, "a", "b", 1.0, "forfeit"),
        ],
        period="2024-02",
    )
    r2 = fide_period(feb, r1.state, players, "2024-02", "standard", pool=r1.pool)
    c2 = row(r2.player_explanations, "c")
    assert (c2["k_used"], c2["change_exact"], c2["change"]) == (10, pytest.approx(-6.5), -7)
    nc = row(r2.newcomers, "n")
    assert (nc["n"], nc["opponents_sum"], nc["ra"], nc["p"], nc["dp"], nc["ru"]) == (
        5,
        10113,
        1959.0,
        0.43,
        -50,
        1909,
    )
    ratings2 = dict(zip(r2.state["player_id"], r2.state["rating"], strict=True))
    assert ratings2 == {"a": 2197, "b": 2305, "c": 2396, "j1": 1610, "n": 1909}
    assert row(r2.state, "n")["rated_games"] == 5
    assert r2.pool["player_id"].to_list() == ["low"]  # the dropped player now pools games

    mar = games_frame(
        [("g20", "T3", 10, "n", "a", 1.0), ("g21", "T3", 11, "c", "j1", 0.5)], period="2024-03"
    )
    r3 = fide_period(mar, r2.state, players, "2024-03", "standard", pool=r2.pool)
    ratings3 = dict(zip(r3.state["player_id"], r3.state["rating"], strict=True))
    assert ratings3 == {"a": 2180, "b": 2305, "c": 2392, "j1": 1627, "n": 1943}
    c3 = row(r3.state, "c")
    assert (c3["peak_rating"], c3["rated_games"]) == (2403, 104)
    assert row(r3.player_explanations, "n")["k_used"] == 40
    assert row(r3.state, "b")["last_played_period"] == "2024-02"


# --- integer id codes and the explain switch --------------------------------------------------------


def sides(white: Sequence[str | None], black: Sequence[str | None]) -> pl.DataFrame:
    """A frame of game sides for `side_codes` (white_id, black_id)."""
    return pl.DataFrame(
        {"white_id": white, "black_id": black},
        schema={"white_id": pl.String, "black_id": pl.String},
    )


def test_side_codes_match_ids_exactly_and_refuse_duplicate_keys() -> None:
    keys = pl.Series("player_id", ["a", "b", None, "dd", "e" * 40])
    g = sides(["dd", "x", "a", "e" * 40], ["b", "a", "e" * 39, None])
    # Side-major: the four white players, then the four black players.
    assert fide_steps.side_codes(g, keys).tolist() == [3, -1, 0, 4, 1, 0, -1, -1]
    with pytest.raises(ValueError, match="duplicate player_id"):
        fide_steps.side_codes(sides(["a"], ["b"]), pl.Series("player_id", ["a", "b", "a"]))


def test_explain_false_same_lists_without_game_explanations() -> None:
    g = games_frame(
        [("g1", "t", 5, "a", "b", 1.0), ("g2", "t", 6, "a", "c", 0.5), ("g3", "u", 7, "n", "a", 1)]
    )
    st = state_frame([("a", 1800, 100, 1850), ("b", 1900, 10, 1900), ("c", 1750, 100, 1750)])
    full = fide_period(g, st, None, "2024-01", "standard")
    lean = fide_period(g, st, None, "2024-01", "standard", explain=False)
    assert full.game_explanations.height == 5
    assert lean.game_explanations.height == 0
    assert lean.game_explanations.schema == full.game_explanations.schema
    for name in ("state", "list_rows", "player_explanations", "newcomers", "pool", "dropped"):
        assert getattr(lean, name).equals(getattr(full, name)), name
    alone = fide_game_explanations(g, st, "2024-01", "standard")
    assert alone.equals(full.game_explanations)


def test_newcomer_games_event_end_and_null_rated_state_player() -> None:
    # z: 4 pooled games from 2023-12 and 2 this period -> published, `games` counts this period.
    pooled = [("z", f"p{i}", "old", dt.date(2023, 12, 10), "2023-12", 1800, 0.5) for i in range(4)]
    g = games_frame(
        [
            ("g1", "t", 5, "z", "o", 0.5),
            ("g2", "t", 9, "o", "z", 0.5),
            ("g3", "t", 6, "w", "o", 0.0),  # w: pooled, event t ends on day 9 (g2)
            ("g4", "u", 7, "nr", "o", 1.0),  # nr: listed with a null rating, never pooled
        ]
    )
    st = state_frame([("o", 1800, 100, 1800), ("nr", None, 0, None)])
    r = fide_period(g, st, None, "2024-01", "standard", pool=pool_frame(pooled))
    z = row(r.list_rows, "z")
    assert (z["newcomer"], z["games"], z["rated_games"], z["rating"]) == (True, 2, 6, 1800)
    assert set(r.newcomers["player_id"]) == {"w", "z"}
    w = row(r.pool, "w")
    assert w["event_end"] == dt.datetime(2024, 1, 9, 12, tzinfo=UTC)
    assert r.pool["player_id"].to_list() == ["w"]


def test_side_codes_null_keys_are_not_duplicates() -> None:
    keys = pl.Series("player_id", ["a", None, None, "b"])
    assert fide_steps.side_codes(sides(["b", None], ["a", "b"]), keys).tolist() == [3, -1, 0, 3]


def test_side_codes_keep_game_order_at_scale() -> None:
    # Enough rows for the joins to run in parallel (their output order is free).
    n = 200_000
    keys = pl.Series("player_id", [f"p{i}" for i in range(0, n, 2)])  # even players only
    white = [f"p{i}" for i in range(n)]
    black = [f"p{(i * 7919) % n}" for i in range(n)]
    codes = fide_steps.side_codes(sides(white, black), keys)
    expected = [i // 2 if i % 2 == 0 else -1 for i in range(n)]
    expected += [(j // 2 if j % 2 == 0 else -1) for j in ((i * 7919) % n for i in range(n))]
    assert codes.tolist() == expected


# --- the per-game explanation table on its own (fide_game_explanations) ---------------------------


def test_game_explanations_seed_example_rows() -> None:
    g = games_frame([("g1", "t", 5, "a", "b", 1.0), ("g2", "t", 6, "a", "c", 0.5)])
    st = state_frame([("a", 1800, 100, 1850), ("b", 1900, 100, 1900), ("c", 1750, 100, 1750)])
    ge = fide_game_explanations(g, st, "2024-01", "standard")
    cols = ["game_id", "player_id", "opponent_id", "own_rating", "opponent_rating", "d_used"]
    assert ge.select(*cols, "pd", "score", "delta_r", "counted").rows() == [
        ("g1", "a", "b", 1800, 1900, 100, 0.36, 1.0, 0.64, True),
        ("g1", "b", "a", 1900, 1800, -100, 0.64, 0.0, -0.64, True),
        ("g2", "a", "c", 1800, 1750, -50, 0.57, 0.5, -0.07, True),
        ("g2", "c", "a", 1750, 1800, 50, 0.43, 0.5, 0.07, True),
    ]


def _worked_cases() -> dict[str, tuple[pl.DataFrame, pl.DataFrame, str, pl.DataFrame | None]]:
    """RULES §3 worked examples (and the rapid rules) as (games, state, list, standard state)."""
    rapid_rows = [
        ("g1", "t", 5, "gm", "club", 1.0),  # 600-point rule: not rated for either side
        ("g2", "t", 6, "gm", "mid", 1.0),
        ("g3", "t", 7, "s", "mid", 0.5),  # s: unrated on rapid, seeded from standard
        ("g4", "t", 8, "mid", "x", 1.0),  # x: unrated everywhere
    ]
    rapid_state = state_frame(
        [("gm", 2650, 500, 2700), ("club", 2000, 100, 2000), ("mid", 2100, 100, 2100)]
    )
    return {
        "seed": (
            games_frame([("g1", "t", 5, "a", "b", 1.0), ("g2", "t", 6, "a", "c", 0.5)]),
            state_frame([("a", 1800, 100, 1850), ("b", 1900, 100, 1900), ("c", 1750, 100, 1750)]),
            "standard",
            None,
        ),
        "2000 four games": (
            games_frame(
                [
                    ("g1", "t", 5, "p", "o1", 1.0),
                    ("g2", "t", 6, "o2", "p", 0.5),
                    ("g3", "t", 7, "p", "o3", 1.0),
                    ("g4", "t", 8, "o4", "p", 1.0),
                ]
            ),
            state_frame(
                [
                    ("p", 2000, 100, 2000),
                    ("o1", 2100, 100, 2100),
                    ("o2", 1950, 100, 1950),
                    ("o3", 1500, 100, 1500),
                    ("o4", 2500, 100, 2500),
                ]
            ),
            "standard",
            None,
        ),
        "2700 vs 2200": (
            games_frame([("g1", "t", 5, "top", "low", 1.0)]),
            state_frame([("top", 2700, 500, 2750), ("low", 2200, 100, 2250)]),
            "standard",
            None,
        ),
        "exact -0.5": (
            games_frame(
                [
                    ("g1", "t", 5, "p", "o1", 0.0),
                    ("g2", "t", 6, "p", "o2", 1.0),
                    ("g3", "t", 7, "p", "o3", 1.0),
                ]
            ),
            state_frame(
                [
                    ("p", 2400, 300, 2400),
                    ("o1", 2000, 100, 2000),
                    ("o2", 2150, 100, 2150),
                    ("o3", 2533, 100, 2533),
                ]
            ),
            "standard",
            None,
        ),
        "rapid": (
            games_frame(rapid_rows, rating_list="rapid"),
            rapid_state,
            "rapid",
            state_frame([("s", 1800, 50, 1900), ("mid", 2300, 100, 2300)]),
        ),
    }


@pytest.mark.parametrize("case", list(_worked_cases()))
def test_game_explanations_add_up_to_the_published_change(case: str) -> None:
    games, state, rating_list, standard_state = _worked_cases()[case]
    alone = fide_game_explanations(games, state, "2024-01", rating_list, standard_state)
    r = fide_period(games, state, None, "2024-01", rating_list, standard_state=standard_state)
    assert alone.equals(r.game_explanations)
    # Per player: the counted rows are the n games and their dR sum to sum_delta_r; K x that sum
    # is the unrounded change, rounded once half away from zero to the published change.
    per_game = (
        alone.filter(pl.col("counted"))
        .group_by("player_id")
        .agg(
            pl.len().alias("rows"),
            (pl.col("delta_r") * 100).round(0).cast(pl.Int64).sum().alias("sum_h"),
        )
    )
    rated = r.player_explanations.filter(~pl.col("newcomer"))
    joined = rated.join(per_game, on="player_id", how="left").fill_null(0)
    assert joined.height == rated.height > 0
    for p in joined.iter_rows(named=True):
        assert p["rows"] == p["n"], p
        assert p["sum_delta_r"] == pytest.approx(p["sum_h"] / 100), p
        change_h = p["k_used"] * p["sum_h"]
        assert p["change_exact"] == pytest.approx(change_h / 100), p
        assert p["change"] == round_half_away(Fraction(change_h, 100)), p
        listed = r.list_rows.filter(pl.col("player_id") == p["player_id"])
        if listed.height:
            assert listed["rating"].item() == p["rating_before"] + p["change"]


def test_game_explanations_worked_values() -> None:
    cases = _worked_cases()
    r = fide_period(*cases["2000 four games"][:2], None, "2024-01", "standard")
    assert row(r.player_explanations, "p")["sum_delta_r"] == pytest.approx(0.57)
    assert row(r.list_rows, "p")["change"] == 11
    g, st, _, _ = cases["2700 vs 2200"]
    ge = fide_game_explanations(g, st, "2024-01", "standard")
    assert (row(ge, "top")["d_used"], row(ge, "top")["pd"]) == (-500, 0.96)  # not capped
    assert (row(ge, "low")["d_used"], row(ge, "low")["pd"]) == (400, 0.08)  # capped
    g, st, _, standard = cases["rapid"]
    ge = fide_game_explanations(g, st, "2024-01", "rapid", standard)
    g1 = ge.filter(pl.col("game_id") == "g1")
    assert g1["not_counted_reason"].to_list() == ["600-point rule"] * 2
    s = row(ge, "s")  # seeded at the standard rating
    assert (s["own_rating"], s["opponent_rating"], s["counted"]) == (1800, 2100, True)
    x = row(ge.filter(pl.col("game_id") == "g4"), "mid")
    assert (x["counted"], x["not_counted_reason"]) == (False, "opponent unrated on this list")
    assert ge.filter(pl.col("player_id") == "x").height == 0  # unrated: no row of their own


def test_game_explanations_reject_a_bad_list_or_period() -> None:
    g, st, _, _ = _worked_cases()["seed"]
    with pytest.raises(ValueError, match="rating_list"):
        fide_game_explanations(g, st, "2024-01", "classical")
    with pytest.raises(ValueError, match="YYYY-MM"):
        fide_game_explanations(g, st, "2024-13", "standard")


# --- the compiled per-player sums of the list against the numpy steps of the explanations --------


@given(seed=st.integers(0, 2**32 - 1), standard=st.booleans())
@settings(max_examples=60, deadline=None)
def test_counted_sums_match_the_explanation_steps(seed: int, standard: bool) -> None:
    """`counted_sums` (one compiled pass, used by the list) gives the same n and ΣΔR per player
    as `rate_sides` (the steps the per-game explanations show) summed per player: ratings on
    the rules' edges (400 cap, real D, the 600-point rule), unknown and unrated players."""
    rng = np.random.default_rng(seed)
    players, n_games = int(rng.integers(1, 40)), int(rng.integers(0, 300))
    rating = rng.integers(1000, 3000, players).astype(np.int32)
    # Half the players sit on an edge: the 400 cap, real D from 2650, the 600-point rule.
    edges = [2000, 2001, 2200, 2249, 2250, 2251, 2600, 2601, 2649, 2650, 2651]
    on_edge = rng.random(players) < 0.5
    rating[on_edge] = rng.choice(edges, int(on_edge.sum()))
    start = pl.DataFrame(
        {
            "player_id": [f"p{i}" for i in range(players)],
            "rating": pl.Series(rating).scatter(np.flatnonzero(rng.random(players) < 0.1), None),
        }
    )
    ids = [f"p{i}" for i in range(players + 5)]  # five players are not on the list
    g = pl.DataFrame(
        {
            "white_id": [ids[i] for i in rng.integers(0, len(ids), n_games)],
            "black_id": [ids[i] for i in rng.integers(0, len(ids), n_games)],
            "white_score": rng.choice([0.0, 0.25, 0.5, 1.0], n_games),
        },
        schema={"white_id": pl.String, "black_id": pl.String, "white_score": pl.Float64},
    )
    coded = fide_steps.code_sides(g, start)
    rules = fide_rules_of(standard)
    n, total = fide_steps.counted_sums(coded, standard, players, rules)
    s = fide_steps.rate_sides(coded, standard, rules)
    counted = np.concatenate((s.counted, s.counted))
    expected_n = np.bincount(s.own_code[counted], minlength=players)
    expected_sum = np.zeros(players, dtype=np.int64)
    np.add.at(expected_sum, s.own_code[counted], s.delta_h[counted].astype(np.int64))
    assert n.tolist() == expected_n.tolist()
    assert total.tolist() == expected_sum.tolist()
