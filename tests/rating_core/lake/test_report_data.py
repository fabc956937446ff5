"""Tests for rating_core.lake.report_data: the frames `ratings report` draws, on hand-built lakes
whose expected values are worked out by hand in each test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from rating_core import tables
from rating_core.lake.publishing import publish_list
from rating_core.lake.report_data import (
    games_per_period,
    gather_report,
    latest_lists,
    list_activity,
    nice_bin_width,
    player_timeline,
    quarantine_reasons,
    rating_histogram,
    report_steps,
    top_movers,
)
from rating_core.lake.storage import write_partitioned


def _list(ratings: dict[str, float], games: dict[str, int] | None = None) -> pl.DataFrame:
    """List rows: one per player id, named `Player <id>`."""
    ids = list(ratings)
    return pl.DataFrame(
        {
            "player_id": ids,
            "name": [f"Player {i}" for i in ids],
            "rating": list(ratings.values()),
            "games": [(games or {}).get(i, 0) for i in ids],
        },
        schema_overrides={"rating": pl.Float64, "games": pl.Int32},
    )


def _publish(lake: Path, name: str, period: str, rows: pl.DataFrame, **kw: Any) -> None:
    publish_list(
        lake, name, period, rows, reason="test", input_digest=period, code_version="t", **kw
    )


@pytest.mark.parametrize(
    ("low", "high", "width"),
    [
        (1000, 2000, 50),  # 1000 / 20 = 50 exactly
        (1313.8, 1702.5, 20),  # 19.4 -> the next of 1, 2, 5 x 10^k is 20
        (1500, 1530, 2),  # 1.5 -> 2
        (0, 7, 0.5),  # 0.35 -> 0.5
        (1500, 1500, 1),  # one value: any width, 1
    ],
)
def test_bin_width_is_one_two_or_five_times_a_power_of_ten(
    low: float, high: float, width: float
) -> None:
    assert nice_bin_width(low, high) == pytest.approx(width)


def test_histogram_counts_players_per_bin() -> None:
    # span 500 / 20 = 25 -> bins of 50; 1549 falls in [1500, 1550), 1550 in [1550, 1600)
    ratings = pl.Series([1500.0, 1549.0, 1550.0, 1600.0, 2000.0, None])
    bins = rating_histogram(ratings)
    assert bins.rows() == [
        (1500.0, 1550.0, 2),
        (1550.0, 1600.0, 1),
        (1600.0, 1650.0, 1),
        (2000.0, 2050.0, 1),
    ]
    assert rating_histogram(pl.Series([], dtype=pl.Float64)).is_empty()


def test_top_movers_rises_then_falls_largest_first() -> None:
    before = _list({"a": 1500, "b": 1500, "c": 1500, "d": 1500, "e": 1500, "f": 1500})
    after = _list({"a": 1510, "b": 1530, "c": 1510, "d": 1480, "e": 1500, "f": 1440, "new": 1700})
    movers = top_movers(after, before, n=2)
    # rises: b +30, then a and c tie at +10 (a first by id); falls: f -60, d -20; e did not
    # move and `new` has no earlier rating
    assert movers.select("player_id", "change", "direction").rows() == [
        ("b", 30.0, "up"),
        ("a", 10.0, "up"),
        ("f", -60.0, "down"),
        ("d", -20.0, "down"),
    ]
    assert movers.filter(pl.col("player_id") == "f").row(0, named=True) == {
        "player_id": "f",
        "name": "Player f",
        "before": 1500.0,
        "after": 1440.0,
        "change": -60.0,
        "direction": "down",
    }


def test_top_movers_one_decimal_without_float_noise() -> None:
    # 1500.3 - 1480.1 is 20.200000000000045 in floats; FIBS publishes one decimal
    movers = top_movers(_list({"x": 1500.3}), _list({"x": 1480.1}))
    assert movers["change"].to_list() == [20.2]
    assert top_movers(_list({"x": 1500.0}), _list({})).is_empty()


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    """fide-standard: 2024-01 v1, 2024-02 v1 and v2 (v2 revises p2); site-elo: 2024-02 only."""
    lake = tmp_path / "lake"
    _publish(lake, "fide-standard", "2024-01", _list({"p1": 2000, "p2": 1800, "p3": 1600}))
    _publish(
        lake,
        "fide-standard",
        "2024-02",
        _list({"p1": 2010, "p2": 1790, "p3": 1600}, games={"p1": 4, "p2": 4}),
    )
    _publish(
        lake,
        "fide-standard",
        "2024-02",
        _list({"p1": 2010, "p2": 1795, "p3": 1600, "p4": 1500}, games={"p1": 4, "p2": 5, "p4": 1}),
        causes=pl.DataFrame({"player_id": ["p2"], "cause": ["late result late-1"]}),
    )
    _publish(lake, "site-elo", "2024-02", _list({"p1": 1520, "u9": 1480}, games={"p1": 3}))
    return lake


def test_latest_lists_take_the_newest_version_and_the_period_before(lake: Path) -> None:
    seen: list[str] = []
    latest = {x.list: x for x in latest_lists(lake, on_list=seen.append)}
    assert seen == ["fide-standard", "site-elo"]
    fide = latest["fide-standard"]
    assert (fide.period, fide.version, fide.previous_period, fide.previous_version) == (
        "2024-02",
        2,
        "2024-01",
        1,
    )
    assert fide.players == 4  # v2 holds p4 too
    # against January: p1 +10, p2 -5 (v2's 1795, not v1's 1790); p3 unchanged, p4 new
    assert fide.movers.select("player_id", "change").rows() == [("p1", 10.0), ("p2", -5.0)]
    assert fide.histogram["players"].sum() == 4
    site = latest["site-elo"]
    assert site.previous_period is None and site.movers.is_empty()
    only = latest_lists(lake, ["site-elo"])
    assert [x.list for x in only] == ["site-elo"]


def test_activity_counts_the_newest_version_of_each_period(lake: Path) -> None:
    activity = list_activity(lake)
    assert activity.select("list", "period", "players", "active_players", "rated_games").rows() == [
        ("fide-standard", "2024-01", 3, 0, 0),
        ("fide-standard", "2024-02", 4, 3, 10),  # v2: p1 4, p2 5, p4 1
        ("site-elo", "2024-02", 2, 1, 3),
    ]
    assert list_activity(lake, ["site-elo"])["list"].to_list() == ["site-elo"]


def test_games_per_period_by_inbox_folder_and_backgammon(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    games = pl.DataFrame(
        {
            "game_id": ["g1", "g2", "g3", "g4"],
            "source": ["platform", "platform", "federation", "platform"],
            "period": ["2024-01", "2024-01", "2024-01", "2024-02"],
        }
    )
    write_partitioned(lake, tables.GAMES, games)
    write_partitioned(
        lake, tables.MATCHES, pl.DataFrame({"match_id": ["m1"], "period": ["2024-02"]})
    )
    assert games_per_period(lake).rows() == [
        ("2024-01", "federation", 1),
        ("2024-01", "platform", 2),
        ("2024-02", "backgammon", 1),
        ("2024-02", "platform", 1),
    ]
    assert games_per_period(tmp_path / "empty").is_empty()


def test_quarantine_reasons_count_one_mistake_once_whatever_its_value(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    rows = pl.DataFrame(
        {
            "source_file": ["a.csv"] * 4 + ["m.csv"],
            "line": [2, 3, 9, 12, 4],
            "record": ["g1", "g2", "g3", "g4", "m1"],
            "value": ["2-0", "1-1", "g1", "x", "0"],
            "reason": [
                "result '2-0' is not one of 1-0, 0-1, 1/2-1/2",
                "result '1-1' is not one of 1-0, 0-1, 1/2-1/2",
                "game id 'g1' appears again (first on line 2)",
                "result 'x' is not one of 1-0, 0-1, 1/2-1/2",
                "length '0' is not an integer of at least 1",
            ],
            "source": ["games"] * 4 + ["matches"],
        }
    )
    write_partitioned(lake, tables.QUARANTINE, rows)
    assert quarantine_reasons(lake).rows() == [
        (
            "games",
            "result '…' is not one of 1-0, 0-1, 1/2-1/2",
            3,
            "result '1-1' is not one of 1-0, 0-1, 1/2-1/2",
        ),
        ("games", "game id '…' appears again (first on line N)", 1, rows["reason"][2]),
        ("matches", "length '…' is not an integer of at least 1", 1, rows["reason"][4]),
    ]


def test_player_timeline_marks_newest_versions_and_causes(lake: Path) -> None:
    timeline = player_timeline(lake, "p2")
    assert timeline.select(
        "list", "period", "version", "rating", "current", "old", "cause"
    ).rows() == [
        ("fide-standard", "2024-01", 1, 1800.0, True, None, None),
        ("fide-standard", "2024-02", 1, 1790.0, False, None, None),
        ("fide-standard", "2024-02", 2, 1795.0, True, 1790.0, "late result late-1"),
    ]
    assert player_timeline(lake, "p1")["list"].unique().sort().to_list() == [
        "fide-standard",
        "site-elo",
    ]
    assert player_timeline(lake, "nobody").is_empty()


def test_gather_report_calls_back_once_per_step(lake: Path) -> None:
    steps: list[str] = []
    data = gather_report(lake, player="p2", on_step=steps.append)
    assert len(steps) == report_steps(2, "p2")
    assert [x.list for x in data.latest] == ["fide-standard", "site-elo"]
    assert data.timeline.height == 3
    assert data.quarantine.is_empty() and data.games_per_period.is_empty()
