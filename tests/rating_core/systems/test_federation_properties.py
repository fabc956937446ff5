"""Hypothesis properties of the federation engines (FIDE, UKD, club)."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rating_core.schemas import GAMES_SCHEMA, conform
from rating_core.systems.club.period import club_tournament
from rating_core.systems.club.rules import CLUB_STATE_SCHEMA
from rating_core.systems.federation import games_by_period
from rating_core.systems.fide.period import fide_game_explanations, fide_period
from rating_core.systems.fide.rules import FIDE_RULES, FIDE_STATE_SCHEMA
from rating_core.systems.fide.steps import k_capped_expr
from rating_core.systems.ukd.period import ukd_period
from rating_core.systems.ukd.rules import UKD_STATE_SCHEMA
from tests.support.scalars import as_number

# RULES §3 as in force today, on periods of 2024 (the eras: tests/rating_core/systems/fide/test_eras.py).
pytestmark = pytest.mark.usefixtures("fide_rules_of_today")

SCORES = st.sampled_from([0.0, 0.5, 1.0])
SETTINGS = settings(max_examples=40, deadline=None)


def games_frame(rows: list[tuple[str, str, str, float]], period: str = "2024-01") -> pl.DataFrame:
    """Rows: (game_id, white, black, white_score), one tournament."""
    data = [
        {
            "game_id": gid,
            "tournament_id": "t",
            "played_at": dt.datetime(2024, 1, 10, tzinfo=dt.UTC),
            "period": period,
            "white_id": w,
            "black_id": b,
            "white_score": s,
            "rating_list": "standard",
            "status": "finished",
            "rated": True,
        }
        for gid, w, b, s in rows
    ]
    return (
        conform(pl.DataFrame(data), GAMES_SCHEMA) if data else conform(pl.DataFrame(), GAMES_SCHEMA)
    )


@given(k=st.sampled_from([10, 20, 40]), n=st.integers(min_value=0, max_value=200))
def test_k_times_n_never_above_700(k: int, n: int) -> None:
    used = pl.select(k_capped_expr(pl.lit(k), pl.lit(n), FIDE_RULES)).item()
    assert used * n <= 700
    assert used <= k
    if k * n > 700:
        assert (used + 1) * n > 700  # the largest such integer


@st.composite
def period_games(draw):
    n_players = draw(st.integers(min_value=2, max_value=6))
    players = [f"p{i}" for i in range(n_players)]
    ratings = draw(st.lists(st.integers(1400, 2900), min_size=n_players, max_size=n_players))
    rated_games = draw(st.lists(st.integers(0, 60), min_size=n_players, max_size=n_players))
    pairs = draw(
        st.lists(
            st.tuples(st.sampled_from(players), st.sampled_from(players), SCORES).filter(
                lambda t: t[0] != t[1]
            ),
            min_size=1,
            max_size=40,
        )
    )
    games = [(f"g{i:03d}", w, b, s) for i, (w, b, s) in enumerate(pairs)]
    state = pl.DataFrame(
        {
            "player_id": players,
            "rating": ratings,
            "rated_games": rated_games,
            "peak_rating": ratings,
            "last_played_period": [None] * n_players,
            "listed_since": ["2023-12"] * n_players,
        },
        schema=FIDE_STATE_SCHEMA,
    )
    perm = draw(st.permutations(list(range(len(games)))))
    return games, state, perm


@SETTINGS
@given(period_games())
def test_change_does_not_depend_on_game_order(case) -> None:
    games, state, perm = case
    a = fide_period(games_frame(games), state, None, "2024-01", "standard")
    b = fide_period(games_frame([games[i] for i in perm]), state, None, "2024-01", "standard")
    assert a.list_rows.equals(b.list_rows)
    assert a.state.equals(b.state)
    assert as_number((a.player_explanations["k_used"] * a.player_explanations["n"]).max()) <= 700


@SETTINGS
@given(period_games(), st.booleans())
def test_game_explanations_explain_every_change(case, drop_one: bool) -> None:
    games, state, _ = case
    if drop_one:  # the last player is unrated: their games count nothing for the others
        state = state.head(state.height - 1)
    frame = games_frame(games)
    r = fide_period(frame, state, None, "2024-01", "standard")
    alone = fide_game_explanations(frame, state, "2024-01", "standard")
    assert alone.equals(r.game_explanations)
    rated = set(state["player_id"])
    assert alone.height == sum((w in rated) + (b in rated) for _, w, b, _ in games)
    sums = (
        alone.filter(pl.col("counted"))
        .group_by("player_id")
        .agg(pl.len().alias("rows"), (pl.col("delta_r") * 100).round(0).cast(pl.Int64).sum())
    )
    rated_expl = r.player_explanations.filter(~pl.col("newcomer"))  # newcomers' n: pooled games
    per = rated_expl.join(sums, on="player_id", how="left").fill_null(0)
    assert per.height == state.height
    for p in per.iter_rows(named=True):
        assert p["rows"] == p["n"]
        assert abs(p["k_used"] * p["delta_r"] / 100 - p["change_exact"]) < 1e-9


@SETTINGS
@given(
    r1=st.integers(1400, 2399),
    r2=st.integers(1400, 2399),
    scores=st.lists(SCORES, min_size=1, max_size=35),
)
def test_two_players_equal_k_changes_are_opposite(r1: int, r2: int, scores: list[float]) -> None:
    games = [
        (f"g{i:02d}", "a", "b", s) if i % 2 == 0 else (f"g{i:02d}", "b", "a", 1 - s)
        for i, s in enumerate(scores)
    ]
    state = pl.DataFrame(
        {
            "player_id": ["a", "b"],
            "rating": [r1, r2],
            "rated_games": [100, 100],
            "peak_rating": [r1, r2],
            "last_played_period": [None, None],
            "listed_since": ["2023-12"] * 2,
        },
        schema=FIDE_STATE_SCHEMA,
    )
    res = fide_period(games_frame(games), state, None, "2024-01", "standard").player_explanations
    ca, cb = res["change_exact"].to_list()
    assert res["k_used"].to_list() == [20, 20]
    assert abs(ca + cb) < 1e-9


@SETTINGS
@given(
    ratings=st.lists(st.integers(1000, 1300), min_size=2, max_size=6),
    pairs=st.lists(
        st.tuples(st.integers(0, 5), st.integers(0, 5), SCORES, st.booleans()),
        min_size=1,
        max_size=40,
    ),
)
def test_ukd_never_below_1000(ratings: list[int], pairs) -> None:
    ids = [f"p{i}" for i in range(len(ratings))]
    games = []
    for i, (w, b, s, vs_unrated) in enumerate(pairs):
        w, b = ids[w % len(ids)], ids[b % len(ids)]
        if vs_unrated:
            b = f"x{i}"
        if w != b:
            games.append((f"g{i:03d}", w, b, s))
    state = pl.DataFrame({"player_id": ids, "rating": ratings}, schema=UKD_STATE_SCHEMA)
    res = ukd_period(games_frame(games), state, "2024-01", "standard")
    assert as_number(res.state["rating"].min()) >= 1000


@SETTINGS
@given(
    ratings=st.lists(st.integers(100, 400), min_size=2, max_size=6),
    pairs=st.lists(
        st.tuples(st.integers(0, 5), st.integers(0, 5), SCORES), min_size=1, max_size=40
    ),
)
def test_club_never_below_100(ratings: list[int], pairs) -> None:
    ids = [f"p{i}" for i in range(len(ratings))]
    games = [
        (f"g{i:03d}", ids[w % len(ids)], ids[b % len(ids)], s)
        for i, (w, b, s) in enumerate(pairs)
        if w % len(ids) != b % len(ids)
    ]
    state = pl.DataFrame(
        {
            "player_id": ids,
            "rating": ratings,
            "rated_games": [50] * len(ids),
            "peak_rating": ratings,
        },
        schema=CLUB_STATE_SCHEMA,
    )
    res = club_tournament(games_frame(games), state)
    assert as_number(res.state["rating"].min()) >= 100


@given(
    labels=st.lists(st.sampled_from(["2024-01", "2024-02", "2024-03", "2024-04"]), max_size=30),
    grouped=st.booleans(),
)
@SETTINGS
def test_games_by_period_are_the_rows_of_each_period_in_order(
    labels: list[str], grouped: bool
) -> None:
    """One period at a time (slices when each period's rows lie together, else filtered), the
    same rows in the same order as partitioning the whole range at once."""
    if grouped:
        labels = sorted(labels)
    games = pl.DataFrame({"period": labels, "row": list(range(len(labels)))})
    periods = ["2024-01", "2024-02", "2024-03"]  # 2024-04 is outside the range
    parts = games.partition_by("period", as_dict=True, maintain_order=True)
    got = list(games_by_period(games, periods))
    assert [period for period, _ in got] == periods
    for period, frame in got:
        assert frame.equals(parts.get((period,), games.clear()))
