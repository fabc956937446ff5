"""FIBS backgammon rating (RULES §5): seed calculator, worked examples, fair play, list."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import polars as pl
import pytest

from rating_core.schemas import MATCHES_SCHEMA, PLAYERS_SCHEMA, conform
from rating_core.systems.fibs import kernel as fibs_kernel
from rating_core.systems.fibs import rules as fibs_rules
from rating_core.systems.fibs.calculator import fibs_calculator
from rating_core.systems.fibs.lists import fibs_list
from rating_core.systems.fibs.replay import FibsReplayResult, fibs_replay
from rating_core.systems.fibs.rules import FIBS_RULES, FIBS_STATE_SCHEMA

T0 = datetime(2024, 1, 10, tzinfo=UTC)


def match(i: int, winner: str, loser: str, at: timedelta, n: int = 5, **kw: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "match_id": f"m{i:04d}",
        "ended_at": T0 + at,
        "period": "2024-01",
        "winner_id": winner,
        "loser_id": loser,
        "length": n,
        "ranked": True,
        "vs_ai": False,
    }
    row.update(kw)
    return row


def matches(*rows: dict[str, Any]) -> pl.DataFrame:
    return conform(pl.DataFrame(list(rows)), MATCHES_SCHEMA)


def state(rows: list[tuple[str, float, int, int]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=FIBS_STATE_SCHEMA, orient="row")


def rating(result: FibsReplayResult, player: str) -> float:
    return result.state.filter(pl.col("player_id") == player)["rating"][0]


H = timedelta(hours=1)


def test_seed_calculator_new_player_1500_vs_1600_5_points() -> None:
    out = fibs_calculator(1500, 1600, 5, 0)
    assert out["p_win"] == 0.436
    assert out["p_win_percent"] == 43.6
    assert out["multiplier"] == 4.95
    assert out["win"] == 25.0
    assert out["loss"] == -19.3


def test_equal_experienced_players_5_points_about_4_5() -> None:
    s = state([("a", 1700.0, 1000, 200), ("b", 1700.0, 1000, 200)])
    r = fibs_replay(matches(match(1, "a", "b", H)), state=s)
    assert rating(r, "a") - 1700 == pytest.approx(4.472136, abs=1e-6)
    assert rating(r, "b") - 1700 == pytest.approx(-4.472136, abs=1e-6)
    assert round(rating(r, "a") - 1700, 2) == 4.47


def test_1850_beats_1750_both_experience_1000() -> None:
    s = state([("a", 1850.0, 1000, 200), ("b", 1750.0, 1000, 200)])
    r = fibs_replay(matches(match(1, "a", "b", H)), state=s)
    assert rating(r, "a") - 1850 == pytest.approx(3.899648, abs=1e-6)
    assert rating(r, "b") - 1750 == pytest.approx(-3.899648, abs=1e-6)
    h = r.history.sort("player_id")
    assert h["m"].to_list() == [1.0, 1.0]
    assert h["experience_before"].to_list() == [1000, 1000]
    assert r.state.sort("player_id")["experience"].to_list() == [1005, 1005]


def test_each_player_uses_own_multiplier_not_zero_sum() -> None:
    s = state([("vet", 1500.0, 1000, 200)])
    r = fibs_replay(matches(match(1, "new", "vet", H)), state=s)
    # new: m 4.95 -> +V*0.5*4.95 ; vet: m 1 -> -V*0.5
    v = 4 * 5**0.5
    assert rating(r, "new") - 1500 == pytest.approx(v * 0.5 * 4.95)
    assert rating(r, "vet") - 1500 == pytest.approx(-v * 0.5)


def test_multiplier_uses_experience_plus_length() -> None:
    assert fibs_calculator(1500, 1500, 5, 390)["multiplier_exact"] == pytest.approx(1.05)
    assert fibs_calculator(1500, 1500, 5, 395)["multiplier_exact"] == 1.0
    assert fibs_calculator(1500, 1500, 5, 5000)["multiplier_exact"] == 1.0


def test_unranked_and_ai_matches_change_nothing() -> None:
    r = fibs_replay(
        matches(match(1, "a", "b", H, ranked=False), match(2, "a", "ai", 2 * H, vs_ai=True))
    )
    assert r.state.height == 0
    assert r.history.height == 0
    assert r.excluded["reason"].to_list() == [fibs_rules.R_UNRANKED, fibs_rules.R_AI]


def test_self_match_is_rejected() -> None:
    r = fibs_replay(matches(match(1, "a", "a", H)))
    assert r.state.height == 0
    assert r.rejected["match_id"].to_list() == ["m0001"]


# --- fair play ---------------------------------------------------------------------------------


def _counted(r: FibsReplayResult) -> list[bool]:
    return r.history.filter(pl.col("won"))["counted"].to_list()


def test_fourth_match_within_24h_adds_experience_but_no_rating() -> None:
    rows = [match(i, "a", "b", i * H) for i in range(4)]
    r = fibs_replay(matches(*rows))
    assert _counted(r) == [True, True, True, False]
    fourth = r.history.filter(pl.col("match_id") == "m0003")
    assert fourth["change"].to_list() == [0.0, 0.0]
    assert fourth["reason"].to_list() == [fibs_rules.R_FAIR_PLAY] * 2
    assert r.state["experience"].to_list() == [20, 20]
    assert r.state["matches"].to_list() == [4, 4]
    third = r.history.filter((pl.col("match_id") == "m0002") & pl.col("won"))
    assert rating(r, "a") == third["rating_after"][0]


def test_match_exactly_24h_after_the_first_counts_again() -> None:
    rows = [match(i, "a", "b", i * H) for i in range(3)]
    rows.append(match(3, "a", "b", 24 * H))
    rows.append(match(4, "a", "b", 24 * H - timedelta(microseconds=1), match_id="m0003a"))
    r = fibs_replay(matches(*rows))
    by_id = dict(
        zip(
            r.history.filter(pl.col("won"))["match_id"].to_list(),
            _counted(r),
            strict=True,
        )
    )
    assert by_id == {"m0000": True, "m0001": True, "m0002": True, "m0003a": False, "m0003": True}


def test_window_counts_only_rating_changing_matches() -> None:
    # 0h, 1h, 2h count; 3h does not; at 24h only 1h and 2h changed ratings in the last 24 h.
    hours = [0, 1, 2, 3, 24, 24.5]
    rows = [match(i, "a", "b", h * H) for i, h in enumerate(hours)]
    r = fibs_replay(matches(*rows))
    assert _counted(r) == [True, True, True, False, True, False]


def test_fair_play_is_per_pair() -> None:
    rows = [match(i, "a", "b", i * H) for i in range(3)]
    rows.append(match(3, "a", "c", 3 * H))
    rows.append(match(4, "b", "a", 4 * H))
    r = fibs_replay(matches(*rows))
    assert _counted(r) == [True, True, True, True, False]


def test_fair_play_window_chains_across_periods() -> None:
    jan = [match(i, "a", "b", timedelta(days=21, hours=20 + i), period="2024-01") for i in range(3)]
    feb = [match(3, "b", "a", timedelta(days=22, hours=1), period="2024-02")]
    feb.append(match(4, "b", "a", timedelta(days=23, hours=1), period="2024-02"))
    whole = fibs_replay(matches(*jan, *feb))
    r1 = fibs_replay(matches(*jan))
    r2 = fibs_replay(matches(*feb), state=r1.state, pairs=r1.pairs)
    assert _counted(whole) == [True, True, True, False, True]
    assert _counted(r2) == [False, True]
    assert whole.state.sort("player_id").equals(r2.state.sort("player_id"))
    assert whole.pairs.equals(r2.pairs)


# --- list ------------------------------------------------------------------------------------


def test_fibs_list_rounding_provisional_leaderboard_and_period_counts() -> None:
    players = conform(
        pl.DataFrame(
            [
                {"player_id": "a", "email_verified": True, "display_name": "Ana"},
                {"player_id": "b", "email_verified": True, "display_name": "  "},
                {"player_id": "c", "email_verified": False, "display_name": "Cem"},
            ]
        ),
        PLAYERS_SCHEMA,
    )
    prev = state(
        [("a", 1600.05, 45, 9), ("b", 1400.0, 100, 20), ("c", 1500.0, 100, 20), ("d", 1500.0, 3, 1)]
    )
    r = fibs_replay(matches(match(1, "a", "b", H, n=5, match_id="x")), state=prev)
    lst = fibs_list(r.state, "2024-01", players, prev).sort("player_id")
    assert lst["player_id"].to_list() == ["a", "b", "c", "d"]
    assert lst["experience"].to_list() == [50, 105, 100, 3]
    assert lst["provisional"].to_list() == [False, False, False, True]
    assert lst["leaderboard_eligible"].to_list() == [True, False, False, False]
    assert lst["games"].to_list() == [1, 1, 0, 0]
    assert lst["total_matches"].to_list() == [10, 21, 20, 1]
    assert lst["change"][2] == 0.0
    a_exact = rating(r, "a")
    assert lst["rating_exact"][0] == a_exact
    assert lst["change"][0] == pytest.approx(a_exact - 1600.05)


def test_fibs_list_one_decimal_half_away() -> None:
    s = state([("a", 1500.25, 60, 12), ("b", 1499.75, 60, 12), ("c", 1500.04, 60, 12)])
    lst = fibs_list(s, "2024-01").sort("player_id")
    assert lst["rating"].to_list() == [1500.3, 1499.8, 1500.0]


def test_leaderboard_needs_20_experience() -> None:
    players = conform(
        pl.DataFrame([{"player_id": "a", "email_verified": True, "display_name": "Ana"}]),
        PLAYERS_SCHEMA,
    )
    low = fibs_list(state([("a", 1500.0, 19, 4)]), "2024-01", players)
    ok = fibs_list(state([("a", 1500.0, 20, 4)]), "2024-01", players)
    assert low["leaderboard_eligible"].to_list() == [False]
    assert ok["leaderboard_eligible"].to_list() == [True]


def test_calculator_agrees_with_replay() -> None:
    s = state([("a", 1623.4, 37, 8), ("b", 1580.0, 210, 40)])
    r = fibs_replay(matches(match(1, "b", "a", H, n=7)), state=s)
    calc = fibs_calculator(1623.4, 1580.0, 7, 37)
    assert rating(r, "a") == 1623.4 + calc["loss_exact"]


def test_rules_constants() -> None:
    assert FIBS_RULES.start == 1500 and FIBS_RULES.fair_play_max == 3
    assert FIBS_RULES.fair_play_window_us == 86_400_000_000


def test_unsorted_input_gives_the_same_replay_as_sorted_input() -> None:
    rows = [match(i, f"p{i % 3}", f"p{(i + 1) % 3}", i * H, n=1 + 2 * (i % 3)) for i in range(12)]
    rows += [match(30, "p0", "p1", 2 * H, ranked=False), match(31, "p1", "p1", 3 * H)]
    ordered = matches(*rows)
    a, b = fibs_replay(ordered), fibs_replay(ordered.reverse())
    for name in ("history", "state", "pairs"):
        assert getattr(a, name).equals(getattr(b, name)), name
    assert a.excluded.height == b.excluded.height == 1
    assert a.rejected.height == b.rejected.height == 1


def test_fair_play_reason_follows_the_rules_object() -> None:
    rules = dataclasses.replace(FIBS_RULES, fair_play_max=2, fair_play_window_us=12 * 3600 * 10**6)
    r = fibs_replay(matches(*(match(i, "a", "b", i * H) for i in range(3))), rules=rules)
    assert _counted(r) == [True, True, False]
    reason = "fair play: 2 rating-changing matches between these players in the last 12 hours"
    assert r.history["reason"].drop_nulls().unique().to_list() == [reason]
    assert FIBS_RULES.fair_play_reason() == fibs_rules.R_FAIR_PLAY
    assert "3 rating-changing" in fibs_rules.R_FAIR_PLAY and "24 hours" in fibs_rules.R_FAIR_PLAY


def test_exclusion_codes_are_one_table() -> None:
    codes = [e.code for e in fibs_rules.Exclusion]
    assert sorted(codes) == list(range(1, len(codes) + 1))
    r = fibs_replay(
        matches(match(1, "a", "b", H, ranked=False), match(2, "a", "b", 2 * H, vs_ai=True))
    )
    assert r.excluded["reason"].to_list() == [e.text() for e in fibs_rules.Exclusion]


def test_player_record_layout_is_the_declared_dtype() -> None:
    records = np.zeros((2, fibs_kernel.PLAYER_SLOTS), dtype=np.float64)
    records[0, 0] = 1612.5
    records.view(np.int64)[0, [fibs_kernel.EXP_SLOT, fibs_kernel.MATCHES_SLOT]] = [250, 40]
    typed = records.view(fibs_kernel.FIBS_RECORD)[:, 0]
    assert typed["rating"].tolist() == [1612.5, 0.0]
    assert typed["experience"].tolist() == [250, 0] and typed["matches"].tolist() == [40, 0]
