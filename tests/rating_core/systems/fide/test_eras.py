"""FIDE rules by date (RULES §3.3): the era table, every worked example of §3.3, the switches of
each era computed by hand, and a replay of a random federation across the era boundaries.

Expected values are worked out by hand from the tables of RULES §3.1/§3.2 (the comments show
the arithmetic), never read back from the engine.
"""

from __future__ import annotations

import datetime as dt
from fractions import Fraction

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rating_core.periods import previous_period
from rating_core.rounding import round_half_away
from rating_core.schemas import GAMES_SCHEMA, STARTING_LIST_SCHEMA, conform
from rating_core.systems.contract import RULES_COLUMN
from rating_core.systems.federation import federation_state_tables, fide_lists_periods
from rating_core.systems.fide.calculator import fide_calculator
from rating_core.systems.fide.period import fide_game_explanations, fide_period
from rating_core.systems.fide.rules import (
    FIDE_ERAS,
    FIDE_ERAS_BY_LIST,
    FIDE_RULES,
    FIDE_STATE_SCHEMA,
    FastListRaise,
    FideRules,
    compression_for_list,
    fast_raise_for_list,
    rules_for_period,
    rules_on,
)

UTC = dt.UTC


def games_frame(rows: list[tuple], period: str, rating_list: str = "standard") -> pl.DataFrame:
    """Rows: (game_id, tournament_id, day, white, black, white_score)."""
    year, month = int(period[:4]), int(period[5:])
    data = [
        {
            "game_id": gid,
            "tournament_id": tid,
            "played_at": dt.datetime(year, month, day, 12, tzinfo=UTC),
            "period": period,
            "white_id": white,
            "black_id": black,
            "white_score": score,
            "rating_list": rating_list,
            "status": "finished",
            "rated": True,
        }
        for gid, tid, day, white, black, score in rows
    ]
    return conform(pl.DataFrame(data), GAMES_SCHEMA) if data else pl.DataFrame(schema=GAMES_SCHEMA)


def state_frame(rows: list[tuple[str, int, int, int]]) -> pl.DataFrame:
    """Rows: (player_id, rating, rated_games, peak_rating), listed since 2012-01."""
    return pl.DataFrame(
        [
            {
                "player_id": p,
                "rating": r,
                "rated_games": n,
                "peak_rating": peak,
                "last_played_period": None,
                "listed_since": "2012-01",
            }
            for p, r, n, peak in rows
        ],
        schema=FIDE_STATE_SCHEMA,
    )


def row(frame: pl.DataFrame, player: str) -> dict:
    hit = frame.filter(pl.col("player_id") == player)
    assert hit.height == 1, f"{player} rows: {hit.height}"
    return hit.row(0, named=True)


def compressed(rating: int) -> int:
    """RULES §3.3 by hand: below 2000, + 0.4 x (2000 - R), rounded half away from zero."""
    if rating >= 2000:
        return rating
    return rating + int(round_half_away(Fraction(2 * (2000 - rating), 5)))


# --- the era table --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("period", "era"),
    [
        ("1999-11", "2012-07"),  # before the earliest era: the earliest rules
        ("2014-06", "2012-07"),
        ("2014-07", "2014-07"),
        ("2021-12", "2014-07"),
        ("2022-01", "2022-01"),
        ("2022-09", "2022-01"),
        ("2022-10", "2022-10"),
        ("2024-02", "2022-10"),
        ("2024-03", "2024-03"),
        ("2024-11", "2024-03"),
        ("2024-12", "2024-12"),
        ("2025-09", "2024-12"),
        ("2025-10", "2025-10"),
        ("2031-05", "2025-10"),
    ],
)
def test_rules_of_a_period_are_those_of_its_first_day(period: str, era: str) -> None:
    for kind in ("standard", "rapid", "blitz"):  # every list on the same dates
        assert rules_for_period(period, kind).name == f"FIDE {era}"
        assert rules_for_period(period, kind).rating_list == kind
        first_day = dt.date(int(period[:4]), int(period[5:]), 1)
        assert rules_on(first_day, kind) == rules_for_period(period, kind)
        assert rules_on(first_day + dt.timedelta(days=27), kind) == rules_for_period(period, kind)
    assert rules_for_period(period) == rules_for_period(period, "standard")


def test_an_unknown_list_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="rating_list"):
        rules_for_period("2020-01", "bullet")


STARTS = ["2012-07", "2014-07", "2022-01", "2022-10", "2024-03", "2024-12", "2025-10"]


def test_standard_era_numbers_and_switches() -> None:
    """RULES §3.3, the standard column, row by row."""
    assert [e.starts for e in FIDE_ERAS] == STARTS
    ks = [(e.k_new, e.k_junior, e.k_default, e.k_established_top) for e in FIDE_ERAS]
    assert ks == [(30, None, 15, 10)] + [(40, 40, 20, 10)] * 6  # no junior rule before 2014-07
    assert [e.k_values for e in FIDE_ERAS] == [(10, 15, 30)] + [(10, 20, 40)] * 6
    assert [e.k_flat for e in FIDE_ERAS] == [None] * 7
    assert [e.k_times_n_max for e in FIDE_ERAS] == [None] + [700] * 6
    assert [e.floor for e in FIDE_ERAS] == [1000] * 4 + [1400] * 3
    assert [e.cap_one_game_per_event for e in FIDE_ERAS] == [0, 0, 1, 1, 0, 0, 0]
    assert [e.junior_until_year_end for e in FIDE_ERAS][1:] == [0, 1, 1, 1, 1, 1]
    assert [e.fast_excluded_gap for e in FIDE_ERAS] == [None] * 7  # a rapid and blitz rule
    assert [e.real_difference_from for e in FIDE_ERAS] == [None] * 6 + [2650]
    assert [e.newcomer_max for e in FIDE_ERAS] == [None] * 4 + [2200] * 3
    assert [e.newcomer_hypothetical_games for e in FIDE_ERAS] == [0] * 4 + [2] * 3
    assert [e.newcomer_bonus_per_half_point for e in FIDE_ERAS] == [20] * 4 + [None] * 3
    assert [e.compression is not None for e in FIDE_ERAS] == [0, 0, 0, 0, 1, 0, 0]
    assert [e.fast_raise for e in FIDE_ERAS] == [None] * 7
    assert FIDE_RULES is FIDE_ERAS[-1] and FideRules() == FIDE_RULES  # defaults: today's rules
    assert all(e.changes for e in FIDE_ERAS)
    assert FIDE_ERAS[3].changes == "unchanged on this list"  # 2022-10 is a rapid/blitz row


@pytest.mark.parametrize("kind", ["rapid", "blitz"])
def test_rapid_and_blitz_era_numbers_and_switches(kind: str) -> None:
    """RULES §3.3, the rapid and blitz column, row by row."""
    eras = FIDE_ERAS_BY_LIST[kind]
    assert [e.starts for e in eras] == STARTS
    assert {e.rating_list for e in eras} == {kind}
    # K 20 for everyone, with the K x n cap, until 2022-09; then the standard list's K
    assert [e.k_flat for e in eras] == [20, 20, 20] + [None] * 4
    assert [e.k_values for e in eras] == [(20,)] * 3 + [(10, 20, 40)] * 4
    ks = [(e.k_new, e.k_junior, e.k_default, e.k_established_top) for e in eras[3:]]
    assert ks == [(40, 40, 20, 10)] * 4
    assert all(e.junior_until_year_end for e in eras[3:])  # the 2022-01 wording
    assert [e.k_times_n_max for e in eras] == [700] * 7
    assert [e.floor for e in eras] == [1000] * 4 + [1400] * 3
    assert [e.cap_one_game_per_event for e in eras] == [0, 0, 1, 1, 0, 0, 0]
    assert [e.fast_excluded_gap for e in eras] == [None] * 5 + [600] * 2
    assert [e.real_difference_from for e in eras] == [None] * 7  # a standard rule
    assert [e.newcomer_max for e in eras] == [None] * 4 + [2200] * 3
    assert [e.compression is not None for e in eras] == [0, 0, 0, 0, 1, 0, 0]
    assert [e.fast_raise for e in eras] == [None] * 3 + [FastListRaise(gap=100)] + [None] * 3
    assert eras[1].changes == eras[6].changes == "unchanged on this list"


def test_the_compression_is_due_on_the_list_of_2024_02_only() -> None:
    for kind in ("standard", "rapid", "blitz"):
        assert compression_for_list("2024-02", kind) is not None
        for period in ("2024-01", "2024-03", "2023-02", "2025-02", "2014-06", "2022-09"):
            assert compression_for_list(period, kind) is None


def test_the_raise_is_due_on_the_rapid_and_blitz_lists_of_2022_09_only() -> None:
    for kind in ("rapid", "blitz"):
        assert fast_raise_for_list("2022-09", kind) == FastListRaise(gap=100)
        for period in ("2022-08", "2022-10", "2021-09", "2024-02", "2023-09"):
            assert fast_raise_for_list(period, kind) is None
    assert fast_raise_for_list("2022-09", "standard") is None


# --- RULES §3.3 worked examples ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("period", "top_exact", "top_change"),
    # 2025-09: capped D -400 -> PD .92 -> +0.08 x K 10 = +0.8 -> +1
    # 2025-10: 2700 uses the real D -500 -> PD .96 -> +0.04 x 10 = +0.4 -> 0
    [("2025-09", 0.8, 1), ("2025-10", 0.4, 0)],
)
def test_2650_exemption_from_2025_10(period: str, top_exact: float, top_change: int) -> None:
    g = games_frame([("g1", "t", 5, "top", "low", 1.0)], period)
    st_ = state_frame([("top", 2700, 500, 2750), ("low", 2200, 100, 2250)])
    r = fide_period(g, st_, None, period, "standard")
    top, low = row(r.player_explanations, "top"), row(r.player_explanations, "low")
    assert (top["k_used"], top["change_exact"], top["change"]) == (
        10,
        pytest.approx(top_exact),
        top_change,
    )
    # the 2200 side is capped in both: PD .08, loses: -0.08 x K 20 = -1.6 -> -2
    assert (low["k_used"], low["change_exact"], low["change"]) == (20, pytest.approx(-1.6), -2)
    assert r.rules == f"FIDE {period if period == '2025-10' else '2024-12'}"


def test_compression_examples_on_the_list_of_2024_02_only() -> None:
    players = [("a", 1500, 100, 1600), ("b", 1379, 100, 1450), ("c", 1950, 100, 1960)]
    players += [("d", 2000, 100, 2000), ("e", 2300, 100, 2350)]
    st_ = state_frame(players)
    # 1500 -> 1700; 1379 -> 1379 + 248.4 -> 1627; 1950 -> 1970; 2000 and above unchanged
    expected = {"a": 1700, "b": 1627, "c": 1970, "d": 2000, "e": 2300}
    feb = fide_period(games_frame([], "2024-02"), st_, None, "2024-02", "standard")
    assert dict(zip(feb.list_rows["player_id"], feb.list_rows["rating"], strict=True)) == expected
    assert dict(zip(feb.state["player_id"], feb.state["rating"], strict=True)) == expected
    assert row(feb.state, "b")["peak_rating"] == 1627  # a published rating: the new peak
    added = feb.player_explanations.select("player_id", "compression").rows()
    assert dict(added) == {"a": 200, "b": 248, "c": 20, "d": 0, "e": 0}
    jan = fide_period(games_frame([], "2024-01"), st_, None, "2024-01", "standard")
    assert jan.list_rows["rating"].to_list() == [1500, 1379, 1950, 2000, 2300]  # not compressed
    assert jan.player_explanations["compression"].null_count() == 5
    mar = fide_period(games_frame([], "2024-03"), feb.state, None, "2024-03", "standard")
    assert mar.list_rows["rating"].to_list() == [1700, 1627, 1970, 2000, 2300]  # not again
    assert mar.player_explanations["compression"].null_count() == 5


def test_2024_02_floor_1000_then_compression_and_2024_03_floor_1400() -> None:
    # 1405 (K 20) loses five games to 1590s: D +185 -> PD .26 -> 5 x -0.26 x 20 = -26 -> 1379
    opponents = [(f"o{i}", 1590, 100, 1600) for i in range(5)]
    st_ = state_frame([("p", 1405, 100, 1500), *opponents])
    g = games_frame([(f"g{i}", "t", 3 + i, "p", f"o{i}", 0.0) for i in range(5)], "2024-02")
    feb = fide_period(g, st_, None, "2024-02", "standard")
    assert row(feb.player_explanations, "p")["rating_after"] == 1627  # 1379 kept (floor 1000)
    assert (row(feb.list_rows, "p")["rating"], row(feb.list_rows, "p")["change"]) == (1627, -26)
    assert feb.dropped.height == 0
    # 1400 (K 20) loses to 1695: D +295 -> PD .15 -> -0.15 x 20 = -3 -> 1397
    st_mar = state_frame([("q", 1400, 100, 1450), ("o", 1695, 100, 1700)])
    g_mar = games_frame([("h1", "t", 4, "q", "o", 0.0)], "2024-03")
    mar = fide_period(g_mar, st_mar, None, "2024-03", "standard")
    assert "q" not in mar.list_rows["player_id"].to_list()
    assert row(mar.dropped, "q")["new_rating"] == 1397
    assert "1400" in row(mar.dropped, "q")["reason"]
    # the same game a month earlier: 1397 stays on the list (floor 1000), compressed by 241.2
    g_feb = games_frame([("h1", "t", 4, "q", "o", 0.0)], "2024-02")
    feb_q = fide_period(g_feb, st_mar, None, "2024-02", "standard")
    assert row(feb_q.list_rows, "q")["rating"] == 1397 + 241


def test_k_30_before_2014_07_then_k_40() -> None:
    # RULES §3.3: a 2000 player with 12 rated games scores 3/4 against four 2000s (PD .50 each,
    # sum dR = 1.0): K 30 in 2013-05 -> +30; the same games in 2014-07, K 40 -> +40
    opponents = [(f"o{i}", 2000, 100, 2000) for i in range(4)]
    st_ = state_frame([("p", 2000, 12, 2000), *opponents])
    rows = [(f"g{i}", "T", 3 + i, "p", f"o{i}", 1.0 if i < 3 else 0.0) for i in range(4)]
    for period, k, change in (("2013-05", 30, 30), ("2014-07", 40, 40)):
        r = fide_period(games_frame(rows, period), st_, None, period, "standard")
        p = row(r.player_explanations, "p")
        assert (p["k_used"], p["change"], p["k_reason"]) == (k, change, "under 30 games")


def test_blitz_k_20_for_everyone_until_2022_09_then_the_standard_k() -> None:
    # RULES §3.3: 2018-03 blitz, a 1500 player (15 years old, 3 rated games: K 40 by the
    # standard rules) beats a 1500: K 20 -> +10; in 2022-10 the same junior gets K 40 -> +20
    st_ = state_frame([("kid", 1500, 3, 1500), ("opp", 1500, 100, 1500)])
    for period, year, k, change in (("2018-03", 2003, 20, 10), ("2022-10", 2007, 40, 20)):
        players = pl.DataFrame({"player_id": ["kid"], "birth_year": [year]})  # 15 that year
        g = games_frame([("g1", "T", 5, "kid", "opp", 1.0)], period, rating_list="blitz")
        r = fide_period(g, st_, players, period, "blitz")
        kid = row(r.player_explanations, "kid")
        assert (kid["k_used"], kid["change"]) == (k, change), period
        assert kid["k_reason"] == ("K 20 for everyone" if period < "2022-10" else "junior")
        opp = row(r.player_explanations, "opp")  # established: 20 in both eras
        assert (opp["k_used"], opp["change"]) == (20, -10)
    # the standard list in 2018-03 keeps its own K: the junior's 40
    g = games_frame([("g1", "T", 5, "kid", "opp", 1.0)], "2018-03")
    players = pl.DataFrame({"player_id": ["kid"], "birth_year": [2003]})
    assert (
        row(fide_period(g, st_, players, "2018-03", "standard").player_explanations, "kid")[
            "k_used"
        ]
        == 40
    )


def _raise_federation(kind: str) -> tuple[pl.DataFrame, dict[str, pl.DataFrame | None]]:
    """RULES §3.3's raise example: standard 2732 / rapid 2283, standard 2000 / rapid 1950, and
    a rapid player with no standard rating (1700); no game."""
    standard = state_frame([("a", 2732, 100, 2740), ("b", 2000, 100, 2000)])
    fast = state_frame([("a", 2283, 100, 2290), ("b", 1950, 100, 1960), ("c", 1700, 50, 1700)])
    return standard, {"standard": standard, kind: fast}


@pytest.mark.parametrize("kind", ["rapid", "blitz"])
def test_raise_of_2022_10_on_the_lists_of_2022_09_only(kind: str) -> None:
    from rating_core.systems.federation import fide_lists_period

    _, starts = _raise_federation(kind)
    empty_games = games_frame([], "2022-09", rating_list=kind)
    sep = fide_lists_period(empty_games, starts, {}, None, "2022-09")
    listed = dict(zip(sep[kind].list_rows["player_id"], sep[kind].list_rows["rating"], strict=True))
    # 2732 - 100 = 2632 > 2283: raised; 2000 - 100 = 1900 < 1950: unchanged; c: no standard
    assert listed == {"a": 2632, "b": 1950, "c": 1700}
    assert row(sep[kind].state, "a")["peak_rating"] == 2632  # a published rating: the new peak
    added = dict(sep[kind].player_explanations.select("player_id", "compression").rows())
    assert added == {"a": 349, "b": 0, "c": 0}
    assert row(sep["standard"].list_rows, "a")["rating"] == 2732  # the standard list: as it was
    # period 2022-10 starts from the raised values and raises nothing again; 2022-08 raises nothing
    after: dict[str, pl.DataFrame | None] = {
        "standard": sep["standard"].state,
        kind: sep[kind].state,
    }
    octo = fide_lists_period(games_frame([], "2022-10", kind), after, {}, None, "2022-10")
    assert octo[kind].list_rows["rating"].to_list() == [2632, 1950, 1700]
    assert octo[kind].player_explanations["compression"].null_count() == 3
    aug = fide_lists_period(games_frame([], "2022-08", kind), starts, {}, None, "2022-08")
    assert aug[kind].list_rows["rating"].to_list() == [2283, 1950, 1700]


def test_the_raise_is_against_the_standard_list_after_the_period() -> None:
    from rating_core.systems.federation import fide_lists_period

    # "a" gains on the standard list of 2022-09: 2700 beats 2200 (capped, PD .92, K 10 -> +1 ->
    # 2701); the raise uses that new standard rating: 2701 - 100 = 2601
    standard = state_frame([("a", 2700, 100, 2740), ("z", 2200, 100, 2200)])
    rapid = state_frame([("a", 2283, 100, 2290)])
    g = games_frame([("g1", "T", 4, "a", "z", 1.0)], "2022-09")
    out = fide_lists_period(g, {"standard": standard, "rapid": rapid}, {}, None, "2022-09")
    assert row(out["standard"].list_rows, "a")["rating"] == 2701
    assert row(out["rapid"].list_rows, "a")["rating"] == 2601


# --- the other switches, by hand ------------------------------------------------------------------


def test_one_game_limit_of_the_400_point_rule_2022_to_2024_02() -> None:
    st_ = state_frame([("top", 2700, 500, 2750), ("a", 2200, 100, 2250), ("b", 2250, 100, 2250)])
    games = [("g1", "T", 3, "top", "a", 1.0), ("g2", "T", 4, "b", "top", 0.0)]
    may = fide_period(games_frame(games, "2023-05"), st_, None, "2023-05", "standard")
    # one tournament: the cap in the game of greatest |D| (500 vs a: PD .92, +0.08); vs b the
    # real D 450 -> PD .94 (+0.06): 10 x 0.14 = 1.4 -> +1
    top = row(may.player_explanations, "top")
    assert (top["change_exact"], top["change"]) == (pytest.approx(1.4), 1)
    ge = may.game_explanations.filter(pl.col("player_id") == "top").sort("game_id")
    assert ge["d_used"].to_list() == [-400, -450] and ge["pd"].to_list() == [0.92, 0.94]
    # the lower sides keep the cap: PD .08, -0.08 x 20 = -1.6 -> -2 each
    assert [row(may.list_rows, p)["change"] for p in ("a", "b")] == [-2, -2]
    assert fide_game_explanations(games_frame(games, "2023-05"), st_, "2023-05", "standard").equals(
        may.game_explanations
    )
    # two tournaments, or from 2024-03: the cap in every game, 10 x 0.16 = 1.6 -> +2
    apart = [("g1", "T", 3, "top", "a", 1.0), ("g2", "U", 4, "b", "top", 0.0)]
    may_apart = fide_period(games_frame(apart, "2023-05"), st_, None, "2023-05", "standard")
    later = fide_period(games_frame(games, "2024-05"), st_, None, "2024-05", "standard")
    before = fide_period(games_frame(games, "2021-05"), st_, None, "2021-05", "standard")
    for result in (may_apart, later, before):
        assert row(result.player_explanations, "top")["change"] == 2


def test_k_values_before_and_after_2014_07_and_the_k_times_n_cap() -> None:
    st_ = state_frame(
        [
            ("new", 1800, 10, 1800),
            ("est", 2100, 100, 2100),
            ("top", 2300, 100, 2450),
            ("opp", 1800, 100, 1800),
        ]
    )
    # 40 games of "new" in one period: K 30 x 40 = 1200, no cap before 2014-07;
    # from 2014-07 K 40 x 40 > 700 -> K 17 (17 x 40 = 680)
    games = [(f"g{i}", "T", 1 + i % 28, "new", "opp", 0.5) for i in range(40)]
    early = fide_period(games_frame(games, "2013-05"), st_, None, "2013-05", "standard")
    k = dict(early.player_explanations.select("player_id", "k_base").rows())
    assert k == {"new": 30, "est": 15, "top": 10, "opp": 15}
    assert row(early.player_explanations, "new")["k_used"] == 30
    late = fide_period(games_frame(games, "2014-07"), st_, None, "2014-07", "standard")
    k = dict(late.player_explanations.select("player_id", "k_base").rows())
    assert k == {"new": 40, "est": 20, "top": 10, "opp": 20}
    assert row(late.player_explanations, "new")["k_used"] == 17


def test_junior_until_the_18th_birthday_then_until_the_end_of_that_year() -> None:
    st_ = state_frame([("kid", 2000, 100, 2000)])
    players = pl.DataFrame({"player_id": ["kid"], "birth_year": [2004]})

    # 18 in 2022: junior (K 40) all of 2022 from 2022-01; by the earlier wording, with the
    # birth year alone, not from the start of 2022 (K 20), but still in 2021 (K 40)
    def k_base(period: str, rules: FideRules | None = None) -> int:
        r = fide_period(games_frame([], period), st_, players, period, "standard", rules=rules)
        return row(r.player_explanations, "kid")["k_base"]

    assert k_base("2022-11") == 40
    assert k_base("2022-11", rules_for_period("2021-12")) == 20
    assert k_base("2021-12") == 40
    assert k_base("2023-01") == 20
    assert k_base("2013-05") == 15  # no junior rule before 2014-07: established, under 2400
    assert k_base("2014-07") == 40  # 18 in 2022: still under 18 in 2014


def _newcomer_games(player: str, opponents: list[int], points: list[float], period: str):
    state = [(f"{player}-o{i}", r, 100, r) for i, r in enumerate(opponents)]
    games = [
        (f"{player}-g{i}", f"T-{player}", 2 + i, player, f"{player}-o{i}", s)
        for i, s in enumerate(points)
    ]
    return games_frame(games, period), state_frame(state)


@pytest.mark.parametrize(
    ("opponents", "points", "old", "new"),
    [
        # RULES §3 example: sum 9507, 3 of 5. Old: Ra 1901.4, one half point above 50 % -> +20
        # -> 1921; new: (9507 + 3600) / 7 = 1872.43, p 4/7 = .57 -> dp 50 -> 1922
        ([1900, 1900, 1900, 1900, 1907], [1, 1, 1, 0, 0], 1921, 1922),
        # 1 of 5 vs 1300s. Old: p .20 -> dp -240 -> 1060, published (floor 1000); new: 10100/7
        # = 1442.86, p 2/7 = .29 -> dp -158 -> 1285 < 1400: not published
        ([1300] * 5, [1, 0, 0, 0, 0], 1060, None),
        # 5 of 5 vs 2300s. Old: 5 half points above 50 % -> 2300 + 100 = 2400, no upper limit;
        # new: 15100/7 = 2157.14, p 6/7 = .86 -> dp 309 -> 2466 -> at most 2200
        ([2300] * 5, [1, 1, 1, 1, 1], 2400, 2200),
        # 2 of 5 vs 1900s. Old: p .40 -> dp -72 -> 1828; new: 13100/7 = 1871.43,
        # p 3/7 = .43 -> dp -50 -> 1821
        ([1900] * 5, [1, 1, 0, 0, 0], 1828, 1821),
    ],
)
def test_initial_rating_before_and_from_2024_03(
    opponents: list[int], points: list[float], old: int, new: int | None
) -> None:
    for period, expected in (("2023-05", old), ("2024-05", new)):
        g, st_ = _newcomer_games("nu", opponents, points, period)
        r = fide_period(g, st_, None, period, "standard")
        listed = dict(zip(r.list_rows["player_id"], r.list_rows["rating"], strict=True))
        assert listed.get("nu") == expected, period


def test_600_point_rule_on_rapid_from_2024_12() -> None:
    st_ = state_frame([("hi", 2601, 100, 2650), ("lo", 2000, 100, 2000)])
    for period, counted in (("2024-11", True), ("2024-12", False)):
        g = games_frame([("g1", "t", 5, "hi", "lo", 1.0)], period, rating_list="rapid")
        ge = fide_game_explanations(g, st_, period, "rapid")
        assert ge["counted"].to_list() == [counted, counted], period


# --- the calculator --------------------------------------------------------------------------------


def test_calculator_by_date() -> None:
    before = fide_calculator(2700, 10, [(2200, 1.0)], rules_on(dt.date(2025, 9, 30)))
    after = fide_calculator(2700, 10, [(2200, 1.0)], rules_on(dt.date(2025, 10, 1)))
    assert (before["rules"], before["change_exact"], before["change"]) == ("FIDE 2024-12", 0.8, 1)
    assert (after["rules"], after["change_exact"], after["change"]) == ("FIDE 2025-10", 0.4, 0)
    # one tournament in 2023: the cap in the game of greatest |D| only (see above): +1.4 -> +1
    limited = fide_calculator(2700, 10, [(2200, 1.0), (2250, 1.0)], rules_on(dt.date(2023, 5, 2)))
    assert [g["D"] for g in limited["games"]] == [-400, -450]
    assert (limited["change_exact"], limited["change"]) == (1.4, 1)
    # before 2014-07 no K x n cap: K 30 over 40 games stays 30 (from 2014-07, 17)
    many = [(1800, 0.5)] * 40
    assert fide_calculator(1800, 30, many, rules_on(dt.date(2013, 1, 1)))["k"] == 30
    assert fide_calculator(1800, 40, many, rules_on(dt.date(2014, 7, 1)))["k"] == 17


# --- a random federation replayed across the era boundaries ---------------------------------------

RANGES = (
    ["2024-01", "2024-02", "2024-03", "2024-04"],
    ["2025-08", "2025-09", "2025-10", "2025-11"],
)
RATINGS = st.one_of(
    st.sampled_from([1300, 1390, 1401, 1405, 1500, 1950, 1999, 2000, 2200, 2660, 2700, 2800]),
    st.integers(1000, 2900),
)


def starting_list(
    kind: str, period: str, players: list[str], ratings: list[int], played: list[int]
) -> pl.DataFrame:
    """An official FIDE `kind` list after `period`: each player's rating (also the peak) and
    career count."""
    return pl.DataFrame(
        {
            "list": [f"fide-{kind}"] * len(players),
            "period": [period] * len(players),
            "player_id": players,
            "rating": ratings,
            "rated_games": played,
            "peak_rating": ratings,
        }
    ).pipe(conform, STARTING_LIST_SCHEMA)


@st.composite
def federations(draw):
    """A starting list of 3 to 6 players and 0 to 8 games per period, one tournament per
    period (so the one-game limit of 2024-01/02 applies within it)."""
    periods = draw(st.sampled_from(RANGES))
    n = draw(st.integers(3, 6))
    players = [f"p{i}" for i in range(n)]
    ratings = draw(st.lists(RATINGS, min_size=n, max_size=n))
    played = draw(st.lists(st.integers(0, 60), min_size=n, max_size=n))
    start = starting_list("standard", previous_period(periods[0]), players, ratings, played)
    pair = st.tuples(
        st.sampled_from(players), st.sampled_from(players), st.sampled_from([0.0, 0.5, 1.0])
    )
    frames = []
    for period in periods:
        pairs = draw(st.lists(pair.filter(lambda t: t[0] != t[1]), max_size=8))
        rows = [
            (f"{period}-g{i}", f"T{period}", 1 + i, w, b, s) for i, (w, b, s) in enumerate(pairs)
        ]
        frames.append(games_frame(rows, period))
    return periods, start, pl.concat(frames)


@given(federations())
@settings(max_examples=40, deadline=None)
def test_each_period_of_a_replay_follows_the_rules_of_its_era(federation) -> None:
    periods, start, games = federation
    states = dict.fromkeys(federation_state_tables("fide"))
    outputs = dict(fide_lists_periods(games, start, states, None, periods))
    previous_list: dict[str, int] | None = None
    for period in periods:
        rules, out = rules_for_period(period), outputs[period]
        rows = out.list_rows
        assert out.facts["rules"] == rules.name
        if not rows.width:  # nobody left on the list and no game: the period rates nothing
            assert not out.explanations and not games.filter(pl.col("period") == period).height
            previous_list = {}
            continue
        listed = dict(zip(rows["player_id"], rows["rating"], strict=True))
        assert set(rows[RULES_COLUMN]) <= {rules.name}
        assert all(r >= rules.floor for r in listed.values()), period
        expl = out.explanations["history/fide-standard-player_explanations"]
        dropped = out.explanations["history/fide-standard-dropped"]
        assert (dropped["new_rating"] < rules.floor).all()
        for p in expl.filter(~pl.col("newcomer") & ~pl.col("dropped")).iter_rows(named=True):
            if previous_list is not None:  # each period starts from the list before it
                assert p["rating_before"] == previous_list[p["player_id"]]
            from_games = p["rating_before"] + p["change"]
            # the compression exactly once: on the list of 2024-02, and on no other
            expected = compressed(from_games) if period == "2024-02" else from_games
            assert listed[p["player_id"]] == expected, (period, p)
            assert p["k_base"] in rules.k_values
        ge = out.explanations["history/fide-standard-game_explanations"]
        beyond = ge.filter(pl.col("counted") & (pl.col("d_raw") < -rules.difference_cap))
        for side in beyond.iter_rows(named=True):
            if side["own_rating"] >= 2650 and period >= "2025-10":
                assert side["d_used"] == side["d_raw"]  # the 2650 exemption, from 2025-10 only
            elif not rules.cap_one_game_per_event:
                assert side["d_used"] == -rules.difference_cap
        if rules.cap_one_game_per_event:  # per player and tournament: the cap in one game,
            # the one of greatest |D|
            for _, sides in beyond.group_by("player_id"):
                capped = sides.filter(pl.col("d_used") == -rules.difference_cap)
                assert capped.height == 1
                assert capped["d_raw"][0] == sides["d_raw"].min()
                assert (sides.filter(pl.col("d_used") != -400)["d_used"] < -400).all()
        lower = ge.filter(pl.col("counted") & (pl.col("d_raw") > rules.difference_cap))
        assert (lower["d_used"] == rules.difference_cap).all()  # the lower side: always capped
        previous_list = listed


# --- a random blitz list replayed across the raise of 2022-10 -------------------------------------

BLITZ_RANGE = ["2022-08", "2022-09", "2022-10", "2022-11"]


@st.composite
def blitz_federations(draw):
    """3 to 6 players on the standard and blitz starting lists of 2022-07 (blitz ratings up to
    400 below standard), 0 to 8 blitz games per period."""
    n = draw(st.integers(3, 6))
    players = [f"p{i}" for i in range(n)]
    standard = draw(st.lists(st.integers(1400, 2700), min_size=n, max_size=n))
    gaps = draw(st.lists(st.integers(-150, 400), min_size=n, max_size=n))
    blitz = [max(1000, s - g) for s, g in zip(standard, gaps, strict=True)]
    played = draw(st.lists(st.integers(0, 60), min_size=n, max_size=n))

    def listed(kind: str, ratings: list[int]) -> pl.DataFrame:
        return starting_list(kind, "2022-07", players, ratings, played)

    pair = st.tuples(
        st.sampled_from(players), st.sampled_from(players), st.sampled_from([0.0, 0.5, 1.0])
    )
    frames = []
    for period in BLITZ_RANGE:
        pairs = draw(st.lists(pair.filter(lambda t: t[0] != t[1]), max_size=8))
        rows = [
            (f"{period}-g{i}", f"B{period}", 1 + i, w, b, s) for i, (w, b, s) in enumerate(pairs)
        ]
        frames.append(games_frame(rows, period, rating_list="blitz"))
    return pl.concat([listed("standard", standard), listed("blitz", blitz)]), pl.concat(frames)


@given(blitz_federations())
@settings(max_examples=30, deadline=None)
def test_a_blitz_replay_gets_k_20_then_the_raise_once_then_the_standard_k(federation) -> None:
    start, games = federation
    states = dict.fromkeys(federation_state_tables("fide"))
    outputs = dict(fide_lists_periods(games, start, states, None, BLITZ_RANGE))
    official = start.filter(pl.col("list") == "fide-standard")  # no standard game: unchanged
    standard = dict(zip(official["player_id"], official["rating"], strict=True))
    previous: dict[str, int] | None = None
    for period in BLITZ_RANGE:
        rules = rules_for_period(period, "blitz")
        rows = outputs[period].list_rows.filter(pl.col("list") == "fide-blitz")
        listed = dict(zip(rows["player_id"], rows["rating"], strict=True))
        expl = outputs[period].explanations["history/fide-blitz-player_explanations"]
        for p in expl.filter(~pl.col("newcomer") & ~pl.col("dropped")).iter_rows(named=True):
            if previous is not None:
                # off the last list (fallen below the floor of 1000): rated again from the
                # standard rating (§3 step 7), not raised, as the raise is of the list's ratings
                before = previous.get(p["player_id"], standard[p["player_id"]])
                assert p["rating_before"] == before
            if period < "2022-10":
                assert p["k_base"] == 20 and p["k_reason"] == "K 20 for everyone"
            else:
                assert p["k_base"] in rules.k_values
            from_games = p["rating_before"] + p["change"]
            # the raise exactly once: on the list of 2022-09, to standard - 100
            target = standard[p["player_id"]] - 100
            expected = max(from_games, target) if period == "2022-09" else from_games
            assert listed[p["player_id"]] == expected, (period, p)
        previous = listed
