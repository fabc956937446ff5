"""The streamed site and FIBS ratings (issue 31 item 3): games (matches) fed in batches give
what one batch gives, and the lake hands a period's platform games (backgammon matches) over in
replay order, a batch at a time."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rating_core import tables
from rating_core.lake.game_batches import LakeBatches, PlatformGames, PlatformMatches
from rating_core.lake.storage import StagedParts
from rating_core.schemas import GAMES_SCHEMA, MATCHES_SCHEMA, PLAYERS_SCHEMA, conform
from rating_core.systems.contract import CollectedRows, FrameSource, GameSource
from rating_core.systems.fibs.classification import FIBS_MATCH_COLUMNS, MATCH_SIDES
from rating_core.systems.fibs.replay import FibsReplay, replay_ids
from rating_core.systems.platform import (
    FIBS_HISTORY,
    FIBS_PAIRS,
    FIBS_STATE,
    SITE_EXCLUDED,
    SITE_HISTORY,
    fibs_lists_periods,
    site_lists_periods,
)
from rating_core.systems.site.classification import SITE_GAME_COLUMNS
from tests.rating_core.systems.test_platform_properties import BOT, low_state, site_games
from tests.rating_core.systems.test_replay_periods import fibs_case

PERIODS = ["2024-01", "2024-02", "2024-03"]


@dataclass(frozen=True)
class Chunked:
    """A `GameSource` cutting each period's games, in replay order, into batches of `size`."""

    frame: pl.DataFrame
    size: int
    sides: tuple[str, str] = ("white_id", "black_id")
    order: tuple[str, str] = ("played_at", "game_id")

    def players(self) -> pl.Series:
        return FrameSource(self.frame, self.sides).players()

    def batches(self, period: str) -> Iterator[pl.DataFrame]:
        rows = self.frame.filter(pl.col("period") == period).sort(*self.order, nulls_last=True)
        for start in range(0, rows.height, self.size):
            yield rows.slice(start, self.size)


def _outputs(source, annulled, state):  # noqa: ANN001, ANN202
    sink = CollectedRows()
    outputs = dict(site_lists_periods(source, BOT, annulled, state, PERIODS, sink))
    return outputs, sink


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort(frame.columns, nulls_last=True) if frame.width else frame


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(site_games(), low_state(), st.integers(1, 25), st.data())
def test_batches_of_any_size_rate_as_one_batch(
    games: pl.DataFrame, state: pl.DataFrame, size: int, data: st.DataObject
) -> None:
    ids = games["game_id"].to_list()
    annulled = data.draw(st.lists(st.sampled_from(ids), max_size=3)) if ids else []
    whole, whole_rows = _outputs(FrameSource(games), annulled, state)
    cut, cut_rows = _outputs(Chunked(games, size), annulled, state)
    assert list(whole) == list(cut) == PERIODS
    for period in PERIODS:
        a, b = whole[period], cut[period]
        assert a.states["state/site"].equals(b.states["state/site"])
        assert a.list_rows.equals(b.list_rows)
        assert a.facts == b.facts
        assert a.facts["games"] == games.filter(pl.col("period") == period).height
        for table in (SITE_HISTORY, SITE_EXCLUDED):
            # the same rows; history rows come in replay order either way
            x, y = whole_rows.frame(table, period), cut_rows.frame(table, period)
            assert _sorted(x).equals(_sorted(y)), (table, period)
        history = cut_rows.frame(SITE_HISTORY, period)
        if history.height:
            order = history.select("played_at", "game_id")
            assert order.equals(order.sort("played_at", "game_id"))


def _games(n: int, start: datetime, platform: bool = True) -> pl.DataFrame:
    rows = [
        {
            "game_id": f"{'p' if platform else 'f'}{(i * 7919) % n:05d}",
            "played_at": start + timedelta(minutes=(i * 37) % 500),
            "period": start.strftime("%Y-%m"),
            "white_id": f"w{i % 13}",
            "black_id": f"b{i % 11}",
            "white_score": 1.0,
            "category": "blitz",
            "rated": True,
            "source": "platform" if platform else "federation",
        }
        for i in range(n)
    ]
    return conform(pl.DataFrame(rows), GAMES_SCHEMA)


def _assert_in_order(source: LakeBatches, rows: pl.DataFrame, size: int) -> None:
    """`source` hands over `rows` (its kept rows, in January) in its replay order, typed as
    written, in batches of at most `size`; its players are both sides' ids; February is empty."""
    batches = list(source.batches("2024-01"))
    assert all(b.height <= size for b in batches) and len(batches) >= rows.height // size
    got = pl.concat(batches)
    want = rows.select(source.columns).sort(*source.ORDER)
    assert got.schema == want.schema
    assert got.equals(want)
    assert set(source.players()) == set(want[source.SIDES[0]]) | set(want[source.SIDES[1]])
    assert list(source.batches("2024-02")) == []


def test_the_lake_gives_a_periods_platform_games_in_replay_order(tmp_path: Path) -> None:
    jan = datetime(2024, 1, 1, tzinfo=UTC)
    first, second = _games(700, jan), _games(300, jan, platform=False)
    third = _games(500, jan).with_columns(pl.col("game_id") + "x")  # another file, same times
    for key, frame in (("a", first), ("b", second), ("c", third)):
        staged = StagedParts(tmp_path, f"part-{key}.parquet")
        staged.write(tables.GAMES, frame)
        staged.commit()
    source = PlatformGames(tmp_path, ["2024-01"], SITE_GAME_COLUMNS, 128, 32 << 20)
    _assert_in_order(source, pl.concat([first, third]), 128)


# --- FIBS ----------------------------------------------------------------------------------

FIBS_REGISTRY = pl.DataFrame(
    [("a", True, "Ayla"), ("b", True, None), ("c", False, "Cem")],
    schema={k: PLAYERS_SCHEMA[k] for k in ("player_id", "email_verified", "display_name")},
    orient="row",
)


def _fibs_outputs(
    source: GameSource | pl.DataFrame,
    state: pl.DataFrame | None,
    pairs: pl.DataFrame | None,
    periods: list[str],
):  # noqa: ANN202
    sink = CollectedRows()
    outputs = dict(fibs_lists_periods(source, FIBS_REGISTRY, state, pairs, periods, sink))
    return outputs, sink


def _matches_in_batches(matches: pl.DataFrame, size: int) -> Chunked:
    return Chunked(matches, size, MATCH_SIDES, ("ended_at", "match_id"))


def _assert_same_fibs(
    whole: tuple[dict, CollectedRows], cut: tuple[dict, CollectedRows], periods: list[str]
) -> None:
    (a_out, a_rows), (b_out, b_rows) = whole, cut
    assert list(a_out) == list(b_out) == periods
    for period in periods:
        a, b = a_out[period], b_out[period]
        assert a.states[FIBS_STATE].equals(b.states[FIBS_STATE]), period
        assert a.states[FIBS_PAIRS].equals(b.states[FIBS_PAIRS]), period
        assert a.list_rows.equals(b.list_rows), period
        assert a.facts == b.facts, period
        assert a.streamed == b.streamed == (FIBS_HISTORY,)
        # the history rows come in replay order either way: equal row for row
        x, y = a_rows.frame(FIBS_HISTORY, period), b_rows.frame(FIBS_HISTORY, period)
        assert x.equals(y), period


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(fibs_case(), st.integers(1, 20))
def test_matches_in_batches_of_any_size_rate_as_one_batch(
    case: tuple[pl.DataFrame, pl.DataFrame | None, pl.DataFrame | None, list[str]], size: int
) -> None:
    matches, state, pairs, periods = case
    whole = _fibs_outputs(matches, state, pairs, periods)
    cut = _fibs_outputs(_matches_in_batches(matches, size), state, pairs, periods)
    _assert_same_fibs(whole, cut, periods)
    for period in periods:
        history = cut[1].frame(FIBS_HISTORY, period)
        assert cut[0][period].facts["games"] == matches.filter(pl.col("period") == period).height
        if history.height:
            order = history.select("ended_at", "match_id")
            assert order.equals(order.sort("ended_at", "match_id"))


@pytest.mark.parametrize("size", [97, 700])
def test_many_pairs_in_batches_rebuild_the_pair_table_like_one_batch(size: int) -> None:
    # thousands of pairs active at once across a month boundary: the pair table is reserved,
    # purged, recycled and grown before batches (and, a period at a time, inside the kernel)
    rng = random.Random(7)
    start = datetime(2024, 1, 20, tzinfo=UTC)
    rows = []
    for i in range(8000):
        at = start + timedelta(minutes=rng.randrange(20 * 24 * 60))
        winner, loser = ("f1", "f2") if i % 4 == 0 else rng.sample(range(3000), 2)
        rows.append(_match_row(i, str(winner), str(loser), at))
    matches = conform(pl.DataFrame(rows), MATCHES_SCHEMA)
    periods = ["2024-01", "2024-02"]
    whole = _fibs_outputs(matches, None, None, periods)
    cut = _fibs_outputs(_matches_in_batches(matches, size), None, None, periods)
    _assert_same_fibs(whole, cut, periods)
    assert whole[0]["2024-01"].states[FIBS_PAIRS].height > 100


def test_matches_fed_out_of_replay_order_are_refused() -> None:
    jan = datetime(2024, 1, 10, tzinfo=UTC)
    matches = conform(
        pl.DataFrame([_match_row(i, "a", "b", jan + timedelta(hours=i)) for i in range(4)]),
        MATCHES_SCHEMA,
    )
    replay = FibsReplay(replay_ids(FrameSource(matches, MATCH_SIDES).players(), None, None))
    replay.feed(matches.slice(2, 2))
    with pytest.raises(ValueError, match="replay order"):
        replay.feed(matches.slice(0, 2))


def _match_row(i: int, winner: str, loser: str, at: datetime) -> dict[str, object]:
    return {
        "match_id": f"m{i:05d}",
        "ended_at": at,
        "period": at.strftime("%Y-%m"),
        "winner_id": winner,
        "loser_id": loser,
        "length": 1 + i % 7,
        "ranked": i % 23 != 0,
        "vs_ai": i % 31 == 0,
    }


def _lake_matches(n: int, start: datetime, suffix: str) -> pl.DataFrame:
    rows = [
        _match_row(i, f"w{i % 13}", f"l{i % 11}", start + timedelta(minutes=(i * 37) % 500))
        for i in range(n)
    ]
    frame = pl.DataFrame(rows).with_columns(
        pl.col("match_id").str.slice(1).str.reverse() + suffix  # ids out of time order
    )
    return conform(frame, MATCHES_SCHEMA)


def test_the_lake_gives_a_periods_matches_in_replay_order(tmp_path: Path) -> None:
    jan = datetime(2024, 1, 1, tzinfo=UTC)
    first, second = _lake_matches(700, jan, "a"), _lake_matches(500, jan, "b")  # same times
    for key, frame in (("a", first), ("b", second)):
        staged = StagedParts(tmp_path, f"part-{key}.parquet")
        staged.write(tables.MATCHES, frame)
        staged.commit()
    source = PlatformMatches(tmp_path, ["2024-01"], FIBS_MATCH_COLUMNS, 128, 32 << 20)
    _assert_in_order(source, pl.concat([first, second]), 128)
    # rated from the lake a batch at a time: what the matches in memory give
    periods = ["2024-01", "2024-02"]
    _assert_same_fibs(
        _fibs_outputs(pl.concat([first, second]), None, None, periods),
        _fibs_outputs(source, None, None, periods),
        periods,
    )
