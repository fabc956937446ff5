"""A range of periods in one pass (issue 10 item 1): `site_replay_periods` and
`fibs_replay_periods` give, for every period, exactly what the single-period replay gives for
that period's rows started from the previous period's result."""

from __future__ import annotations

import dataclasses
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from rating_core.periods import next_period, period_range
from rating_core.schemas import (
    CATEGORIES,
    GAMES_SCHEMA,
    MATCHES_SCHEMA,
    PLAYERS_SCHEMA,
    conform,
    empty,
)
from rating_core.systems.fibs.periods import fibs_replay_periods
from rating_core.systems.fibs.replay import FibsReplayResult, fibs_replay
from rating_core.systems.fibs.rules import FIBS_PAIR_STATE_SCHEMA, FIBS_STATE_SCHEMA
from rating_core.systems.site.periods import site_replay_periods
from rating_core.systems.site.replay import SiteReplayResult, site_replay
from rating_core.systems.site.rules import SITE_NUMBERS, SITE_STATE_SCHEMA

SETTINGS = settings(max_examples=80, deadline=None)
HUMANS = ["p0", "p1", "p2", "p3", "p4"]
HUMAN_CATEGORIES = [c for c in CATEGORIES if c != "bots"]
REGISTRY = conform(
    pl.DataFrame(
        [
            {"player_id": "bot", "is_bot": True, "bot_rating": 1400},
            {"player_id": "norating", "is_bot": True},  # a bot without a fixed rating
        ]
    ),
    PLAYERS_SCHEMA,
)


def month_start(period: str) -> datetime:
    year, month = period.split("-")
    return datetime(int(year), int(month), 1, tzinfo=UTC)


def assert_same_results(got: Any, expected: Any) -> None:
    """Every field of two replay results is equal (frames: values, dtypes and order)."""
    for f in dataclasses.fields(expected):
        a, b = getattr(got, f.name), getattr(expected, f.name)
        if isinstance(b, pl.DataFrame):
            assert_frame_equal(a, b, check_exact=True)
        else:
            assert a == b, f.name


# --- site ----------------------------------------------------------------------------------


def site_loop(
    games: pl.DataFrame,
    registry: pl.DataFrame | None,
    annulled: list[str] | None,
    previous: pl.DataFrame | None,
    periods: list[str],
) -> dict[str, SiteReplayResult]:
    """The reference: one `site_replay` per period, each from the period before's state."""
    out = {}
    state = previous
    for period in periods:
        out[period] = site_replay(
            games.filter(pl.col("period") == period), registry, annulled, state
        )
        state = out[period].state
    return out


@st.composite
def site_case(
    draw: st.DrawFn,
) -> tuple[pl.DataFrame, list[str] | None, pl.DataFrame | None, list[str]]:
    """(games, annulled ids, previous state, periods): up to 50 games over up to 5 months,
    some months empty, one month maybe only casual games, bots, moderation, rejections."""
    periods = period_range("2024-01", draw(st.sampled_from(["2024-01", "2024-02", "2024-05"])))
    casual_month = draw(st.sampled_from([None, *periods]))
    players = [*HUMANS, "bot", "norating", "sf"]
    rows: list[dict[str, Any]] = []
    for i in range(draw(st.integers(0, 50))):
        period = draw(st.sampled_from(periods))
        white, black = draw(st.lists(st.sampled_from(players), min_size=2, max_size=2, unique=True))
        if draw(st.integers(0, 30)) == 0:
            black = white  # a player against themselves: rejected
        bots = {"bot", "norating", "sf"} & {white, black}
        rows.append(
            {
                "game_id": f"g{i:03d}",
                "source": "platform",
                "played_at": month_start(period)
                + timedelta(minutes=draw(st.integers(0, 60 * 24 * 27))),
                "period": period,
                "white_id": white,
                "black_id": black,
                "white_score": draw(st.sampled_from([0.0, 0.5, 1.0, 1.0, None])),
                "category": "bots" if bots else draw(st.sampled_from(HUMAN_CATEGORIES)),
                "rated": period != casual_month and draw(st.booleans() | st.just(True)),
                "status": draw(st.sampled_from(["finished"] * 6 + ["aborted", "forfeit"])),
                "plies": draw(st.sampled_from([None, 0, 1, 2, 10, 17, 18, 40])),
                "termination": draw(
                    st.sampled_from(["normal", "resign", "timeout", "bot_no_move", "abort"])
                ),
                "kind": "live",
                "otb_confirmed": draw(st.booleans()),
                "white_is_bot": white == "sf",
                "black_is_bot": black == "sf",
                "white_elo": 2000 if white == "sf" else None,
                "black_elo": 2000 if black == "sf" else None,
            }
        )
    frame = (
        conform(pl.DataFrame(rows, schema_overrides=GAMES_SCHEMA), GAMES_SCHEMA)
        if rows
        else empty(GAMES_SCHEMA)
    )
    ids = frame["game_id"].to_list()
    annulled = draw(st.none() | st.lists(st.sampled_from(ids), unique=True) if ids else st.none())
    previous = None
    if draw(st.booleans()):
        state_rows = [
            (p, number, draw(st.floats(100, 2500)), draw(st.integers(0, 60)), "2023-12")
            for p in HUMANS
            for number in SITE_NUMBERS
            if draw(st.integers(0, 3)) == 0
        ]
        previous = pl.DataFrame(state_rows, schema=SITE_STATE_SCHEMA, orient="row")
    return frame, annulled, previous, periods


@pytest.mark.slow
@SETTINGS
@given(site_case(), st.booleans())
def test_site_range_equals_one_replay_per_period(
    case: tuple[pl.DataFrame, list[str] | None, pl.DataFrame | None, list[str]],
    with_registry: bool,
) -> None:
    games, annulled, previous, periods = case
    registry = REGISTRY if with_registry else None
    got = site_replay_periods(games, registry, annulled, previous, periods)
    expected = site_loop(games, registry, annulled, previous, periods)
    assert list(got) == periods
    for period in periods:
        assert_same_results(got[period], expected[period])


def _game(i: int, white: str, black: str, period: str, **kw: Any) -> dict[str, Any]:
    row = {
        "game_id": f"g{i}",
        "source": "platform",
        "played_at": month_start(period) + timedelta(hours=i),
        "period": period,
        "white_id": white,
        "black_id": black,
        "white_score": 1.0,
        "category": "blitz",
        "rated": True,
        "status": "finished",
        "plies": 40,
        "termination": "normal",
        "kind": "live",
    }
    return row | kw


def test_site_empty_period_carries_the_state_with_empty_history() -> None:
    games = conform(
        pl.DataFrame([_game(1, "a", "b", "2024-01"), _game(2, "b", "a", "2024-03")]), GAMES_SCHEMA
    )
    got = site_replay_periods(games, None, None, None, ["2024-01", "2024-02", "2024-03"])
    assert got["2024-02"].history.height == 0 and got["2024-02"].rated_games == 0
    assert_frame_equal(got["2024-02"].state, got["2024-01"].state)
    assert got["2024-03"].rated_games == 1
    assert set(got["2024-03"].history["period"]) == {"2024-03"}


def test_site_period_with_only_excluded_games() -> None:
    games = conform(
        pl.DataFrame([_game(1, "a", "b", "2024-01"), _game(2, "b", "a", "2024-02", rated=False)]),
        GAMES_SCHEMA,
    )
    got = site_replay_periods(games, None, ["g1"], None, ["2024-01", "2024-02"])
    assert got["2024-01"].excluded["reason"].to_list() == ["annulled by moderation"]
    assert got["2024-02"].excluded["reason"].to_list() == ["casual game"]
    assert got["2024-02"].state.height == 0


def test_site_games_outside_the_periods_are_refused() -> None:
    games = conform(pl.DataFrame([_game(1, "a", "b", "2024-03")]), GAMES_SCHEMA)
    with pytest.raises(ValueError, match="2024-03"):
        site_replay_periods(games, None, None, None, ["2024-01", "2024-02"])
    with pytest.raises(ValueError, match="ascending"):
        site_replay_periods(games, None, None, None, ["2024-03", "2024-02"])


# --- FIBS ----------------------------------------------------------------------------------


def fibs_loop(
    matches: pl.DataFrame,
    state: pl.DataFrame | None,
    pairs: pl.DataFrame | None,
    periods: list[str],
) -> dict[str, FibsReplayResult]:
    """The reference: one `fibs_replay` per period, each from the period before's states."""
    out = {}
    for period in periods:
        out[period] = fibs_replay(matches.filter(pl.col("period") == period), state, pairs)
        state, pairs = out[period].state, out[period].pairs
    return out


FIBS_PLAYERS = ["a", "b", "c", "d"]


@st.composite
def fibs_case(
    draw: st.DrawFn,
) -> tuple[pl.DataFrame, pl.DataFrame | None, pl.DataFrame | None, list[str]]:
    """(matches, previous state, previous pairs, periods): up to 50 matches among four players
    over up to 4 months, most within 30 hours of a month boundary (the 24-hour window crosses
    it), with unranked, AI and invalid matches; `scrambled` draws times outside their month."""
    periods = period_range("2024-01", draw(st.sampled_from(["2024-01", "2024-02", "2024-04"])))
    scrambled = draw(st.integers(0, 4)) == 0
    rows: list[dict[str, Any]] = []
    for i in range(draw(st.integers(0, 50))):
        period = draw(st.sampled_from(periods))
        month = draw(st.sampled_from(periods)) if scrambled else period
        hours = timedelta(hours=draw(st.sampled_from([0, 1, 2, 3, 5, 8, 13, 21, 24, 25, 29])))
        at = (
            month_start(next_period(month)) - timedelta(hours=1) - hours  # the month's end
            if draw(st.booleans())
            else month_start(month) + hours
        ) + timedelta(minutes=draw(st.sampled_from([0, 0, 30])))
        winner, loser = draw(st.lists(st.sampled_from(FIBS_PLAYERS), min_size=2, max_size=2))
        rows.append(
            {
                "match_id": f"m{i:03d}",
                "ended_at": at,
                "period": period,
                "winner_id": winner,  # winner == loser sometimes: rejected
                "loser_id": loser,
                "length": draw(st.sampled_from([1, 3, 5, 7, 0])),
                "ranked": draw(st.booleans() | st.just(True)),
                "vs_ai": draw(st.sampled_from([False, False, False, True])),
            }
        )
    frame = (
        conform(pl.DataFrame(rows, schema_overrides=MATCHES_SCHEMA), MATCHES_SCHEMA)
        if rows
        else empty(MATCHES_SCHEMA)
    )
    state = pairs = None
    if draw(st.booleans()):
        state = pl.DataFrame(
            [
                (
                    p,
                    draw(st.floats(1000, 2000)),
                    draw(st.integers(0, 400)),
                    draw(st.integers(0, 80)),
                )
                for p in FIBS_PLAYERS[:3]
            ],
            schema=FIBS_STATE_SCHEMA,
            orient="row",
        )
        december_end = datetime(2023, 12, 31, tzinfo=UTC)
        pair_rows = sorted(
            (a, b, december_end + timedelta(hours=draw(st.integers(0, 23))))
            for a, b in [("a", "b"), ("a", "c"), ("b", "c")]
            for _ in range(draw(st.integers(0, 3)))
        )
        pairs = pl.DataFrame(pair_rows, schema=FIBS_PAIR_STATE_SCHEMA, orient="row")
    return frame, state, pairs, periods


@pytest.mark.slow
@SETTINGS
@given(fibs_case())
def test_fibs_range_equals_one_replay_per_period(
    case: tuple[pl.DataFrame, pl.DataFrame | None, pl.DataFrame | None, list[str]],
) -> None:
    matches, state, pairs, periods = case
    got = fibs_replay_periods(matches, state, pairs, periods)
    expected = fibs_loop(matches, state, pairs, periods)
    assert list(got) == periods
    for period in periods:
        assert_same_results(got[period], expected[period])


def _match(i: int, winner: str, loser: str, at: datetime, **kw: Any) -> dict[str, Any]:
    row = {
        "match_id": f"m{i}",
        "ended_at": at,
        "period": at.strftime("%Y-%m"),
        "winner_id": winner,
        "loser_id": loser,
        "length": 5,
        "ranked": True,
        "vs_ai": False,
    }
    return row | kw


def test_fibs_window_crosses_the_period_boundary() -> None:
    jan_end = datetime(2024, 1, 31, 20, tzinfo=UTC)
    rows = [_match(i, "a", "b", jan_end + timedelta(hours=i)) for i in range(3)]
    rows += [_match(3, "b", "a", jan_end + timedelta(hours=6))]  # 1 Feb 02:00
    rows += [_match(4, "b", "a", jan_end + timedelta(hours=24))]  # 1 Feb 20:00: 24 h later
    got = fibs_replay_periods(
        conform(pl.DataFrame(rows), MATCHES_SCHEMA), None, None, ["2024-01", "2024-02"]
    )
    assert got["2024-01"].pairs.height == 3
    assert got["2024-02"].history.filter("won")["counted"].to_list() == [False, True]
    assert got["2024-02"].history["reason"][0].startswith("fair play: 3 rating-changing")


def test_fibs_empty_period_carries_state_and_pairs() -> None:
    rows = [_match(1, "a", "b", datetime(2024, 1, 31, 23, tzinfo=UTC))]
    got = fibs_replay_periods(
        conform(pl.DataFrame(rows), MATCHES_SCHEMA), None, None, ["2024-01", "2024-02"]
    )
    assert got["2024-02"].history.height == 0
    assert_frame_equal(got["2024-02"].state, got["2024-01"].state)
    assert_frame_equal(got["2024-02"].pairs, got["2024-01"].pairs)


def test_fibs_matches_outside_the_periods_are_refused() -> None:
    rows = [_match(1, "a", "b", datetime(2024, 3, 1, tzinfo=UTC))]
    with pytest.raises(ValueError, match="2024-03"):
        fibs_replay_periods(conform(pl.DataFrame(rows), MATCHES_SCHEMA), None, None, ["2024-01"])


def test_fibs_match_dated_before_its_period_sees_only_the_saved_pair_state() -> None:
    # The saved pair state after January keeps only matches within 24 h of its latest match
    # (20 Jan), so a February match dated 1 Jan 03:00 no longer sees the three of 1 Jan.
    jan1 = datetime(2024, 1, 1, tzinfo=UTC)
    rows = [_match(i, "a", "b", jan1 + timedelta(hours=i)) for i in range(3)]
    rows += [_match(3, "c", "d", jan1 + timedelta(days=19))]
    rows += [_match(4, "a", "b", jan1 + timedelta(hours=3), period="2024-02")]
    frame = conform(pl.DataFrame(rows), MATCHES_SCHEMA)
    periods = ["2024-01", "2024-02"]
    got = fibs_replay_periods(frame, None, None, periods)
    expected = fibs_loop(frame, None, None, periods)
    for period in periods:
        assert_same_results(got[period], expected[period])
    assert got["2024-02"].history["counted"].to_list() == [True, True]


@pytest.mark.parametrize("in_time_order", [True, False])
def test_fibs_range_with_many_pairs_rebuilds_the_pair_table_like_the_loop(
    in_time_order: bool,
) -> None:
    # Thousands of pairs over six months: the pair table is purged, recycled and grown inside
    # periods, and a pair that plays every few hours hits the limit across month boundaries.
    rng = random.Random(11)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    rows = []
    for i in range(6000):
        at = start + timedelta(minutes=rng.randrange(182 * 24 * 60))
        winner, loser = ("f1", "f2") if i % 3 == 0 else rng.sample(range(200), 2)
        row = _match(i, str(winner), str(loser), at)
        if not in_time_order and rng.random() < 0.1:
            row["period"] = rng.choice(period_range("2024-01", "2024-06"))
        rows.append(row)
    frame = conform(pl.DataFrame(rows), MATCHES_SCHEMA)
    periods = period_range("2024-01", "2024-06")
    got = fibs_replay_periods(frame, None, None, periods)
    expected = fibs_loop(frame, None, None, periods)
    for period in periods:
        assert_same_results(got[period], expected[period])
    assert not all(got["2024-03"].history["counted"])
