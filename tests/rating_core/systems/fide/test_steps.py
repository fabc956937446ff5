"""FIDE steps 1-3 in their three versions (`rating_core.systems.fide.steps`) agree side by side.

The Polars version (`rate_rows`: club lists, calculator), the numpy version (`rate_sides`: the
per-game explanations) and the numba version (`_side_steps` inside `_counted_sums_kernel`: the
FIDE list) must give every counted side the same D, PD and ΔR, and count the same sides.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from rating_core.systems.fide.rules import FIDE_ERAS, FIDE_ERAS_BY_LIST, FIDE_RULES, FideRules
from rating_core.systems.fide.steps import (
    _PD_BY_D_I64,
    _side_steps,
    code_sides,
    counted_sums,
    one_game_uncapped,
    rate_rows,
    rate_sides,
    real_difference_expr,
)

FAST_RULES = FIDE_ERAS_BY_LIST["rapid"][-1]  # today's rapid (and blitz) rules

# Ratings on the rules' edges (400 cap, real D from 2650, the 600-point rule, the PD table's
# "> 735" end) and anywhere between; None is a player listed without a rating.
EDGES = [1000, 1400, 2000, 2001, 2200, 2249, 2250, 2251, 2600, 2601, 2649, 2650, 2651, 2900]
RATINGS = st.one_of(st.sampled_from(EDGES), st.integers(1000, 3000), st.none())
GAMES = st.lists(
    st.tuples(RATINGS, RATINGS, st.sampled_from([0.0, 0.5, 1.0])), min_size=1, max_size=60
)


def _sides(games: list[tuple[int | None, int | None, float]]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The games (white_id, black_id, white_score) and a period-start list in which every side
    is its own player (white `w{i}`, black `b{i}`), so per-player sums are per-side values."""
    g = pl.DataFrame(
        {
            "white_id": [f"w{i}" for i in range(len(games))],
            "black_id": [f"b{i}" for i in range(len(games))],
            "white_score": [s for _, _, s in games],
        },
        schema={"white_id": pl.String, "black_id": pl.String, "white_score": pl.Float64},
    )
    start = pl.DataFrame(
        {
            "player_id": [*g["white_id"], *g["black_id"]],
            "rating": [w for w, _, _ in games] + [b for _, b, _ in games],
        },
        schema={"player_id": pl.String, "rating": pl.Int32},
    )
    return g, start


@given(games=GAMES, standard=st.booleans())
@settings(max_examples=150, deadline=None)
def test_polars_numpy_and_numba_steps_agree_per_counted_side(
    games: list[tuple[int | None, int | None, float]], standard: bool
) -> None:
    g, start = _sides(games)
    coded = code_sides(g, start)
    rules = FIDE_RULES if standard else FAST_RULES
    numpy_steps = rate_sides(coded, standard, rules)
    n_games = g.height
    counted = np.concatenate((numpy_steps.counted, numpy_steps.counted))  # side-major

    # numba: which sides the kernel counts and the ΔR it adds, per side (one side per player).
    numba_n, numba_sum = counted_sums(coded, standard, start.height, rules)
    order = coded.own_code  # side -> its row of `start`
    assert (numba_n[order] == counted).all()

    idx = np.flatnonzero(counted)
    own = coded.own_rating[idx].astype(np.int64)
    opp = coded.own_rating[np.where(idx < n_games, idx + n_games, idx - n_games)].astype(np.int64)
    white_score = g["white_score"].to_numpy()[idx % n_games]
    score = np.where(idx < n_games, white_score, 1.0 - white_score)
    assert FIDE_RULES.real_difference_from is not None  # the standard list has the real D
    real = standard & (own >= FIDE_RULES.real_difference_from)
    numba_steps = [
        _side_steps(int(o - r), float(s), bool(re), FIDE_RULES.difference_cap, _PD_BY_D_I64)
        for r, o, s, re in zip(own, opp, score, real, strict=True)
    ]

    polars_steps = rate_rows(
        pl.LazyFrame(
            {"own_rating": own, "opponent_rating": opp, "score": score},
            schema={"own_rating": pl.Int64, "opponent_rating": pl.Int64, "score": pl.Float64},
        ),
        rules,
        pl.lit(standard) & (pl.col("own_rating") >= FIDE_RULES.real_difference_from),
    ).collect()

    assert (
        polars_steps["d_raw"].to_list() == numpy_steps.d_raw[idx].tolist() == (opp - own).tolist()
    )
    for column, position in (("d_used", 0), ("pd_h", 1), ("delta_h", 2)):
        from_numpy = getattr(numpy_steps, column)[idx].tolist()
        from_numba = [int(step[position]) for step in numba_steps]
        assert polars_steps[column].to_list() == from_numpy == from_numba, column
    assert numba_sum[order[idx]].tolist() == polars_steps["delta_h"].to_list()


def test_steps_on_the_rules_edges() -> None:
    """Known values: the 400 cap, the real difference from 2650 on the standard list only, the
    600-point rule of rapid and blitz, and a side listed without a rating."""
    games: list[tuple[int | None, int | None, float]] = [
        (2000, 2500, 1.0),  # D = 500 capped to 400: PD(400) = 8 for the lower side
        (2700, 2200, 0.0),  # standard: the side from 2650 uses the real D = -500
        (2601, 2000, 1.0),  # rapid/blitz: 601 apart, one above 2600 -> not counted
        (None, 2000, 0.5),  # white unrated: not counted
    ]
    g, start = _sides(games)
    standard = rate_sides(code_sides(g, start), True, FIDE_RULES)
    fast = rate_sides(code_sides(g, start), False, FAST_RULES)
    assert standard.counted.tolist() == [True, True, True, False]
    assert fast.counted.tolist() == [True, True, False, False]
    # side-major: white sides 0..3, black sides 4..7
    assert standard.d_used[[0, 4, 1, 5]].tolist() == [400, -400, -500, 400]
    assert standard.pd_h[[0, 1]].tolist() == [8, 96]
    assert standard.delta_h[[0, 1]].tolist() == [92, -96]
    assert fast.d_used[1] == -400  # the real difference is for the standard list only


# --- the era switches: the one-game limit, the real difference, the 600-point rule ---------------

ERA_GAMES = st.lists(
    st.tuples(
        st.integers(0, 4),
        st.integers(0, 4),
        st.sampled_from(["A", "B"]),
        st.sampled_from([0.0, 0.5, 1.0]),
    ).filter(lambda t: t[0] != t[1]),
    min_size=1,
    max_size=30,
)
ERA_RATINGS = st.lists(
    st.one_of(st.sampled_from([1400, 1900, 2000, 2300, 2601, 2650, 2700]), st.integers(1000, 3000)),
    min_size=5,
    max_size=5,
)


@given(
    games=ERA_GAMES,
    ratings=ERA_RATINGS,
    era=st.sampled_from(FIDE_ERAS + FIDE_ERAS_BY_LIST["rapid"]),
    standard=st.booleans(),
)
@settings(max_examples=150, deadline=None)
def test_the_three_steps_agree_under_every_era(
    games: list[tuple[int, int, str, float]], ratings: list[int], era: FideRules, standard: bool
) -> None:
    """Five players meeting repeatedly in two tournaments (so the one-game limit of 2022-01 to
    2024-02 picks among several games), by the rules of any era: Polars (`rate_rows` over each
    player's tournament rows in game order), numpy (`rate_sides`) and numba (`counted_sums`,
    `_side_steps`) give every counted side the same D, PD and ΔR."""
    g = pl.DataFrame(
        {
            "white_id": [f"p{w}" for w, _, _, _ in games],
            "black_id": [f"p{b}" for _, b, _, _ in games],
            "event_id": [e for _, _, e, _ in games],
            "white_score": [s for _, _, _, s in games],
        },
        schema={
            "white_id": pl.String,
            "black_id": pl.String,
            "event_id": pl.String,
            "white_score": pl.Float64,
        },
    )
    start = pl.DataFrame(
        {"player_id": [f"p{i}" for i in range(5)], "rating": ratings},
        schema={"player_id": pl.String, "rating": pl.Int32},
    )
    coded = code_sides(g, start)
    uncapped = one_game_uncapped(g, coded, standard, era)
    numpy_steps = rate_sides(coded, standard, era, uncapped)
    numba_n, numba_sum = counted_sums(coded, standard, start.height, era, uncapped)
    n_games = g.height

    # The counted sides worked out from the era's numbers, in game order (white, then black).
    long = []
    for i, (w, b, event, score) in enumerate(games):
        rw, rb = ratings[w], ratings[b]
        gap = era.fast_excluded_gap
        fast_rule = not standard and gap is not None and abs(rw - rb) >= gap
        if fast_rule and max(rw, rb) > era.fast_excluded_above:
            continue
        long.append((i, f"p{w}", event, rw, rb, score))
        long.append((i + n_games, f"p{b}", event, rb, rw, 1.0 - score))
    idx = np.array([s[0] for s in long], dtype=np.int64)
    counted = np.concatenate((numpy_steps.counted, numpy_steps.counted))
    assert sorted(np.flatnonzero(counted).tolist()) == sorted(idx.tolist())
    rows = pl.LazyFrame(
        {
            "player_id": [s[1] for s in long],
            "event_id": [s[2] for s in long],
            "own_rating": [s[3] for s in long],
            "opponent_rating": [s[4] for s in long],
            "score": [s[5] for s in long],
        },
        schema={
            "player_id": pl.String,
            "event_id": pl.String,
            "own_rating": pl.Int64,
            "opponent_rating": pl.Int64,
            "score": pl.Float64,
        },
    )
    polars_steps = rate_rows(
        rows, era, real_difference_expr(era, standard), ["player_id", "event_id"]
    ).collect()
    real_from = era.real_difference_from
    numba_steps = [
        _side_steps(
            opp - own,
            score,
            (standard and real_from is not None and own >= real_from)
            or (uncapped is not None and bool(uncapped[side])),
            era.difference_cap,
            _PD_BY_D_I64,
        )
        for side, _, _, own, opp, score in long
    ]
    for column, position in (("d_used", 0), ("pd_h", 1), ("delta_h", 2)):
        from_numpy = getattr(numpy_steps, column)[idx].tolist() if idx.size else []
        from_numba = [int(step[position]) for step in numba_steps]
        assert polars_steps[column].to_list() == from_numpy == from_numba, column
    per_player = polars_steps.group_by("player_id").agg(pl.len(), pl.col("delta_h").sum())
    for player, n, total in per_player.iter_rows():
        code = int(player[1:])
        assert (numba_n[code], numba_sum[code]) == (n, total), player
