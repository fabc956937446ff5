"""`reconcile`: every kind of difference between our list and FIDE's gets its explanation."""

from __future__ import annotations

import polars as pl

from rating_core.systems.fide.reconcile import EXPLANATIONS, explanation_counts, reconcile

# player: (ours: rating, exact, change_exact, games, k) / (theirs: rating, games, k)
OURS = {
    "p01": (1500, 1500.0, 0.0, 0, 20),  # the same on both lists: no difference
    "p02": (1600, 1600.0, 0.0, 0, 20),  # ours only
    "p04": (1700, 1700.0, 0.0, 0, 20),  # they rated a tournament we do not have
    "p05": (1810, 1810.2, 10.2, 4, 20),  # we rated T1, they nothing
    "p06": (1820, 1820.0, 20.0, 4, 20),  # 4 games against their 6
    "p07": (1830, 1830.4, 30.4, 4, 20),  # K 20 against their 40
    "p08": (1801, 1800.5, 0.5, 2, 20),  # +0.5 rounded up by us, down by them
    "p09": (1700, 1700.0, 0.0, 0, 20),  # nobody played: their start differs
    "p10": (1900, 1900.0, 0.0, 3, 20),  # same games and K, 50 apart: unexplained
}
THEIRS = {
    "p01": (1500, 0, 20),
    "p03": (2000, 0, 20),  # theirs only
    "p04": (1712, 5, 20),
    "p05": (1800, 0, 20),
    "p06": (1835, 6, 20),
    "p07": (1861, 4, 40),
    "p08": (1800, 2, 20),
    "p09": (1710, 0, 20),
    "p10": (1950, 3, 20),
}
EXPECTED = {
    "p02": "unknown to them",
    "p03": "unknown to us",
    "p04": "tournament we do not have",
    "p05": "tournament they do not have",
    "p06": "different games count",
    "p07": "different K",
    "p08": "rounding",
    "p09": "different starting rating",
    "p10": "unexplained",
}


def _ours() -> pl.DataFrame:
    return pl.DataFrame(
        [
            {
                "player_id": pid,
                "name": f"Player {pid}",
                "rating": float(r),
                "rating_exact": exact,
                "change_exact": change,
                "games": games,
                "k": k,
            }
            for pid, (r, exact, change, games, k) in OURS.items()
        ]
    )


def _theirs() -> pl.DataFrame:
    return pl.DataFrame(
        [
            {"player_id": pid, "rating": r, "games": games, "k": k}
            for pid, (r, games, k) in THEIRS.items()
        ]
    )


TOURNAMENTS = pl.DataFrame({"player_id": ["p05", "p05"], "tournament_id": ["T1", "T1"]})


def test_every_kind_of_difference_is_explained() -> None:
    found = reconcile(_ours(), _theirs(), TOURNAMENTS)
    assert dict(zip(found["player_id"], found["explanation"], strict=True)) == EXPECTED
    by_id = {row["player_id"]: row for row in found.iter_rows(named=True)}
    assert by_id["p05"]["detail"] == "we counted 4 games (T1), FIDE none"
    assert by_id["p06"]["detail"] == "we counted 4 games, FIDE 6"
    assert by_id["p07"]["detail"] == "our K 20, FIDE's 40"
    assert by_id["p09"]["detail"] == "our start 1700, FIDE's 1710"
    assert by_id["p04"]["difference"] == 12
    assert by_id["p03"]["ours"] is None and by_id["p03"]["theirs"] == 2000


def test_counts_follow_the_explanations_order() -> None:
    counts = explanation_counts(reconcile(_ours(), _theirs(), TOURNAMENTS))
    assert counts["explanation"].to_list() == [e for e in EXPLANATIONS if e in EXPECTED.values()]
    assert counts["players"].to_list() == [1] * len(EXPECTED)


def test_their_previous_list_explains_a_different_start() -> None:
    previous = pl.DataFrame({"player_id": ["p10"], "rating": [1950]})
    found = reconcile(_ours(), _theirs(), TOURNAMENTS, previous)
    row = found.filter(pl.col("player_id") == "p10").row(0, named=True)
    assert row["explanation"] == "different starting rating"
    assert row["detail"] == "our start 1900, FIDE's 1950"


def test_one_point_apart_without_a_half_is_not_rounding() -> None:
    ours = _ours().filter(pl.col("player_id") == "p08").with_columns(rating_exact=1800.8)
    found = reconcile(ours, _theirs().filter(pl.col("player_id") == "p08"))
    assert found["explanation"].to_list() == ["unexplained"]


def test_identical_lists_have_no_difference() -> None:
    theirs = _ours().select("player_id", pl.col("rating").cast(pl.Int64), "games", "k")
    assert reconcile(_ours(), theirs).is_empty()
