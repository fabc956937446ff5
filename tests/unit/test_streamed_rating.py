"""The streamed site rating (issue 31 item 3): games fed in batches give what one batch gives,
and the lake hands a period's platform games over in replay order, a batch at a time."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from rating_core.lake import tables
from rating_core.lake.game_batches import PlatformGames
from rating_core.lake.storage import StagedParts
from rating_core.schemas import GAMES_SCHEMA, conform
from rating_core.systems.contract import CollectedRows, FrameSource
from rating_core.systems.platform import SITE_EXCLUDED, SITE_HISTORY, site_lists_periods
from rating_core.systems.site.classification import SITE_GAME_COLUMNS
from tests.unit.test_platform_properties import BOT, low_state, site_games

PERIODS = ["2024-01", "2024-02", "2024-03"]


@dataclass(frozen=True)
class Chunked:
    """A `GameSource` cutting each period's games, in replay order, into batches of `size`."""

    frame: pl.DataFrame
    size: int

    def players(self) -> pl.Series:
        return FrameSource(self.frame).players()

    def counts(self) -> Mapping[str, int]:
        return FrameSource(self.frame).counts()

    def batches(self, period: str) -> Iterator[pl.DataFrame]:
        rows = self.frame.filter(pl.col("period") == period).sort("played_at", "game_id")
        for start in range(0, rows.height, self.size):
            yield rows.slice(start, self.size)


def _outputs(source, annulled, state):  # noqa: ANN001, ANN202
    sink = CollectedRows()
    outputs = dict(site_lists_periods(source, BOT, annulled, state, PERIODS, sink))
    return outputs, sink


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort(frame.columns, nulls_last=True) if frame.width else frame


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


def test_the_lake_gives_a_periods_platform_games_in_replay_order(tmp_path: Path) -> None:
    jan = datetime(2024, 1, 1, tzinfo=UTC)
    first, second = _games(700, jan), _games(300, jan, platform=False)
    third = _games(500, jan).with_columns(pl.col("game_id") + "x")  # another file, same times
    for key, frame in (("a", first), ("b", second), ("c", third)):
        staged = StagedParts(tmp_path, f"part-{key}.parquet")
        staged.write(tables.GAMES, frame)
        staged.commit()
    source = PlatformGames(tmp_path, ["2024-01"], SITE_GAME_COLUMNS, 128, 32 << 20)
    batches = list(source.batches("2024-01"))
    assert all(b.height <= 128 for b in batches) and len(batches) >= 1200 // 128
    got = pl.concat(batches)
    want = pl.concat([first, third]).select(SITE_GAME_COLUMNS).sort("played_at", "game_id")
    assert got.schema == want.schema
    assert got.equals(want)
    assert set(source.players()) == set(want["white_id"]) | set(want["black_id"])
    assert source.counts() == {"2024-01": 1200}
    assert list(source.batches("2024-02")) == []
