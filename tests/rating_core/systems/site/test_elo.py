"""Plain Elo formula and the seed's calculator (seed elo-calculator, RULES §2 first example)."""

from __future__ import annotations

import pytest

from rating_core.schemas import PLAYED_RESULTS, SCORE_BY_RESULT
from rating_core.systems.site.elo import elo_calculator, elo_update, expected_score, score_of


def test_seed_example_1500_beats_1600_k32() -> None:
    out = elo_calculator(1500, 1600, "win", 32)
    assert out["expected"] == 0.3599
    assert out["change"] == 20.48
    assert out["new_rating"] == 1520.48
    assert out["new_rating_exact"] == pytest.approx(1520.48208, abs=1e-5)


def test_expected_scores_are_complementary_and_symmetric() -> None:
    assert expected_score(1500.0, 1500.0) == 0.5
    assert expected_score(1500.0, 1600.0) + expected_score(1600.0, 1500.0) == pytest.approx(1.0)
    assert expected_score(1900.0, 1500.0) == pytest.approx(1 / (1 + 10**-1))


def test_draw_and_loss() -> None:
    draw = elo_calculator(1500, 1600, "draw", 32)
    assert draw["change"] == pytest.approx(32 * (0.5 - 0.35993500), abs=0.005)
    assert draw["change"] == 4.48
    loss = elo_calculator(1500, 1600, 0, 20)
    assert loss["change"] == -7.2  # 20 x (0 - 0.3599) = -7.1987
    assert loss["new_rating"] == 1492.8


def test_update_applies_floor_and_reports_applied_change() -> None:
    e, raw, applied, after = elo_update(105.0, 105.0, 0.0, 20.0, 1.0, 100.0)
    assert e == 0.5
    assert raw == -10.0
    assert after == 100.0
    assert applied == -5.0


@pytest.mark.parametrize(
    ("text", "score"), [("win", 1.0), ("1-0", 1.0), ("draw", 0.5), ("1/2", 0.5), ("L", 0.0)]
)
def test_score_spellings(text: str, score: float) -> None:
    assert score_of(text) == score


@pytest.mark.parametrize("result", PLAYED_RESULTS)
def test_a_played_result_scores_as_the_one_result_table_says(result: str) -> None:
    assert score_of(result) == SCORE_BY_RESULT[result]


@pytest.mark.parametrize("bad", ["victory", 2, 0.25])
def test_bad_result_is_an_error(bad: object) -> None:
    with pytest.raises(ValueError):
        score_of(bad)  # type: ignore[arg-type]  # a wrong value on purpose
