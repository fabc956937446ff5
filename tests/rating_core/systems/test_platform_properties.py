"""Hypothesis properties of the sequential platform replays (site Elo and FIBS)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rating_core.schemas import CATEGORIES, GAMES_SCHEMA, MATCHES_SCHEMA, PLAYERS_SCHEMA, conform
from rating_core.systems.fibs.replay import fibs_replay
from rating_core.systems.site.lists import site_lists, site_period_lists
from rating_core.systems.site.replay import site_replay
from rating_core.systems.site.rules import SITE_STATE_SCHEMA, empty_site_state
from tests.support.scalars import as_number

pytestmark = pytest.mark.slow  # Hypothesis searches over whole replays

T0 = datetime(2024, 1, 1, tzinfo=UTC)
PLAYERS = ["p0", "p1", "p2", "p3", "p4", "bot"]
BOT = conform(
    pl.DataFrame([{"player_id": "bot", "is_bot": True, "bot_rating": 1400}]), PLAYERS_SCHEMA
)
HUMAN_CATEGORIES = [c for c in CATEGORIES if c != "bots"]


@st.composite
def site_games(draw: st.DrawFn) -> pl.DataFrame:
    """Up to 60 games over three months among five humans and a bot, some not rated."""
    n = draw(st.integers(1, 60))
    rows: list[dict[str, Any]] = []
    for i in range(n):
        white, black = draw(st.lists(st.sampled_from(PLAYERS), min_size=2, max_size=2, unique=True))
        at = T0 + timedelta(minutes=draw(st.integers(0, 60 * 24 * 89)))
        has_bot = "bot" in (white, black)
        rows.append(
            {
                "game_id": f"g{i:03d}",
                "played_at": at,
                "period": at.strftime("%Y-%m"),
                "white_id": white,
                "black_id": black,
                "white_score": draw(st.sampled_from([0.0, 0.5, 1.0])),
                "category": "bots" if has_bot else draw(st.sampled_from(HUMAN_CATEGORIES)),
                "rated": draw(st.booleans() | st.just(True)),
                "status": "finished",
                "plies": draw(st.integers(0, 80)),
                "termination": "normal",
                "kind": "live",
                "otb_confirmed": True,
            }
        )
    return conform(pl.DataFrame(rows), GAMES_SCHEMA)


@st.composite
def low_state(draw: st.DrawFn) -> pl.DataFrame:
    """A starting state near the floor, so that floors actually trigger."""
    rows = []
    for p in PLAYERS[:-1]:
        for number in ["site-elo"] + [f"site-{c}" for c in CATEGORIES]:
            if draw(st.booleans()):
                rows.append(
                    (p, number, draw(st.floats(100, 400)), draw(st.integers(1, 60)), "2023-12")
                )
    return pl.DataFrame(rows, schema=SITE_STATE_SCHEMA, orient="row")


SETTINGS = settings(max_examples=60, deadline=None)


@SETTINGS
@given(site_games(), low_state())
def test_no_rating_below_floor(games: pl.DataFrame, start: pl.DataFrame) -> None:
    r = site_replay(games, BOT, state=start)
    assert r.state.height == 0 or as_number(r.state["rating"].min()) >= 100.0
    if r.history.height:
        assert as_number(r.history["rating_after"].min()) >= 100.0


@SETTINGS
@given(site_games())
def test_equal_k_equal_weight_human_games_are_zero_sum(games: pl.DataFrame) -> None:
    h = site_replay(games, BOT).history.filter(pl.col("opponent_is_bot").not_())
    pairs = h.group_by("game_id", "number").agg(
        pl.col("raw_change").sum().alias("total"),
        pl.col("k").n_unique().alias("ks"),
        pl.col("change").sum().alias("applied"),
        (pl.col("raw_change") - pl.col("change")).abs().max().alias("floored"),
    )
    same_k = pairs.filter(pl.col("ks") == 1)
    assert (same_k["total"].abs() < 1e-9).all()
    unfloored = same_k.filter(pl.col("floored") < 1e-12)
    assert (unfloored["applied"].abs() < 1e-9).all()


@SETTINGS
@given(site_games())
def test_replaying_twice_gives_identical_state(games: pl.DataFrame) -> None:
    once = site_replay(games, BOT)
    twice = site_replay(games.sample(fraction=1.0, shuffle=True, seed=1), BOT)
    assert once.state.equals(twice.state)
    assert once.history.equals(twice.history)


@pytest.mark.slow
@SETTINGS
@given(site_games(), st.data())
def test_annul_then_restore_returns_original_lists(
    games: pl.DataFrame, data: st.DataObject
) -> None:
    victim = data.draw(st.sampled_from(games["game_id"].to_list()))
    original = site_lists(site_replay(games, BOT).state, "2024-03")
    annulled = site_replay(games, BOT, annulled=[victim])
    assert victim in annulled.excluded["game_id"].to_list()
    without = site_replay(games.filter(pl.col("game_id") != victim), BOT)
    assert annulled.state.equals(without.state)
    restored = site_lists(site_replay(games, BOT, annulled=[]).state, "2024-03")
    assert original.equals(restored)


@SETTINGS
@given(site_games())
def test_period_chaining_equals_all_at_once(games: pl.DataFrame) -> None:
    whole = site_replay(games, BOT)
    state = empty_site_state()
    periods, lists, states = ["2024-01", "2024-02", "2024-03"], [], []
    for period in periods:
        previous = state
        state = site_replay(games.filter(pl.col("period") == period), BOT, state=state).state
        lists.append(site_lists(state, period, previous))
        states.append(state)
    assert whole.state.equals(state)
    assert site_lists(whole.state, "2024-03", previous).equals(lists[-1])
    # the lists of a range at once (one join and sort) are each period's own
    at_once = site_period_lists(states, periods, empty_site_state())
    assert len(at_once) == len(lists)
    for one, alone in zip(at_once, lists, strict=True):
        assert one.equals(alone)


UNRATED_BOT = conform(
    pl.DataFrame([{"player_id": "bot", "is_bot": True, "bot_rating": None}]), PLAYERS_SCHEMA
)


@SETTINGS
@given(site_games(), st.data())
def test_a_bot_without_a_rating_rates_nobody_and_is_listed_nowhere(
    games: pl.DataFrame, data: st.DataObject
) -> None:
    # the bot's games are excluded (kept, with the reason), the other games rate as without them
    r = site_replay(games, UNRATED_BOT)
    bot_games = games.filter((pl.col("white_id") == "bot") | (pl.col("black_id") == "bot"))
    assert "bot" not in r.state["player_id"].to_list()
    assert not set(r.history["game_id"].to_list()) & set(bot_games["game_id"].to_list())
    assert r.rejected.height == 0
    reasons = dict(zip(r.excluded["game_id"], r.excluded["reason"], strict=True))
    for gid in bot_games["game_id"]:
        assert gid in reasons
    without = site_replay(games.join(bot_games, on="game_id", how="anti"), UNRATED_BOT)
    assert r.state.equals(without.state)
    assert "bot" not in site_lists(r.state, "2024-03")["player_id"].to_list()
    # a game a reader kept unrated never rates anyone, whatever else it says
    victim = data.draw(st.sampled_from(games["game_id"].to_list()))
    marked = games.with_columns(
        unrated_reason=pl.when(pl.col("game_id") == victim).then(pl.lit("variant 'Atomic'"))
    )
    kept = site_replay(marked, BOT)
    assert victim not in kept.history["game_id"].to_list()
    assert victim in kept.excluded["game_id"].to_list()


@st.composite
def backgammon(draw: st.DrawFn) -> pl.DataFrame:
    """Up to 50 matches among four people over two months, bunched so fair play triggers."""
    n = draw(st.integers(1, 50))
    rows = []
    for i in range(n):
        w, lo = draw(st.lists(st.sampled_from(PLAYERS[:4]), min_size=2, max_size=2, unique=True))
        at = T0 + timedelta(hours=draw(st.integers(0, 24 * 59)) / 4)
        rows.append(
            {
                "match_id": f"m{i:03d}",
                "ended_at": at,
                "period": at.strftime("%Y-%m"),
                "winner_id": w,
                "loser_id": lo,
                "length": draw(st.sampled_from([1, 3, 5, 7, 11])),
                "ranked": draw(st.booleans() | st.just(True)),
                "vs_ai": False,
            }
        )
    return conform(pl.DataFrame(rows), MATCHES_SCHEMA)


@SETTINGS
@given(backgammon())
def test_fibs_chaining_equals_all_at_once_and_experience_adds_up(ms: pl.DataFrame) -> None:
    whole = fibs_replay(ms)
    r1 = fibs_replay(ms.filter(pl.col("period") == "2024-01"))
    r2 = fibs_replay(ms.filter(pl.col("period") == "2024-02"), state=r1.state, pairs=r1.pairs)
    assert whole.state.equals(r2.state)
    ranked = ms.filter(pl.col("ranked"))
    assert whole.state["experience"].sum() == 2 * ranked["length"].sum()
    counted = whole.history.filter(pl.col("counted"))
    window = counted.filter(pl.col("won")).with_columns(
        pl.min_horizontal("player_id", "opponent_id").alias("a"),
        pl.max_horizontal("player_id", "opponent_id").alias("b"),
    )
    # At most 3 rating-changing matches per pair in any 24-hour window.
    per_window = window.sort("ended_at").rolling("ended_at", period="24h", group_by=["a", "b"])
    assert as_number(per_window.agg(pl.len())["len"].max() or 0) <= 3
