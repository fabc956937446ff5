"""The rating stage's progress reports (issue 31 item 7): each system's range function reports
once per period rated, with the games (or matches) handled so far, and a streamed replay also
between two batches of a period."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta

import polars as pl

from rating_core.progress import Progress, listening
from rating_core.schemas import GAMES_SCHEMA, conform
from rating_core.systems.contract import CollectedRows, FrameSource
from rating_core.systems.federation import club_lists_periods, fide_lists_periods
from rating_core.systems.fibs.classification import MATCH_SIDES
from rating_core.systems.platform import fibs_lists_periods, site_lists_periods
from tests.rating_core.systems.club.test_club import games_frame
from tests.rating_core.systems.fibs.test_fibs import match, matches
from tests.rating_core.systems.site.test_site import game as site_game
from tests.rating_core.systems.site.test_site import games as site_games
from tests.rating_core.systems.test_corrections import FIDE_START
from tests.rating_core.systems.test_corrections import game as federation_game

PERIODS = ["2026-03", "2026-04", "2026-05"]


def heard(run) -> list[tuple[str, str, int, int | None, str, int, bool]]:
    """Every report made while `run()` works, as tuples."""
    reports: list[Progress] = []
    with listening(reports.append):
        run()
    return [(p.stage, p.label, p.done, p.total, p.unit, p.games, p.finished) for p in reports]


def test_fide_reports_each_period_with_the_games_so_far() -> None:
    games = conform(
        pl.DataFrame(
            [
                federation_game("g1", "2026-03", "a", "b", 1.0),
                federation_game("g2", "2026-03", "b", "a", 0.5),
                federation_game("g3", "2026-05", "a", "b", 0.0),
            ]
        ),
        GAMES_SCHEMA,
    )
    reports = heard(lambda: dict(fide_lists_periods(games, FIDE_START, {}, None, PERIODS)))
    assert reports == [
        ("rating", "fide", 1, 3, "periods", 2, False),
        ("rating", "fide", 2, 3, "periods", 2, False),  # no game in 2026-04
        ("rating", "fide", 3, 3, "periods", 3, False),
    ]


def test_club_reports_each_period() -> None:
    games = games_frame(
        [
            ("c1", "t1", dt.date(2026, 3, 2), "p", "q", 1.0),
            ("c2", "t2", dt.date(2026, 4, 2), "q", "p", 0.0),
            ("c3", "t2", dt.date(2026, 4, 3), "p", "q", 0.5),
        ]
    ).with_columns(pl.lit("ankara").alias("club_id"), pl.lit("club").alias("source"))
    reports = heard(lambda: dict(club_lists_periods(games, None, None, PERIODS)))
    assert [(r[1], r[2], r[5]) for r in reports] == [("club", 1, 1), ("club", 2, 3), ("club", 3, 3)]


def test_federation_periods_are_yielded_one_at_a_time() -> None:
    """A period is handed over before the next one is rated (the report of a period follows
    its output), so the range is never held whole."""
    games = conform(
        pl.DataFrame(
            [
                federation_game("g1", "2026-03", "a", "b", 1.0),
                federation_game("g3", "2026-05", "a", "b", 0.0),
            ]
        ),
        GAMES_SCHEMA,
    )
    club = games_frame([("c1", "t1", dt.date(2026, 3, 2), "p", "q", 1.0)]).with_columns(
        pl.lit("ankara").alias("club_id"), pl.lit("club").alias("source")
    )
    for outputs in (
        fide_lists_periods(games, FIDE_START, {}, None, PERIODS),
        club_lists_periods(club, None, None, PERIODS),
    ):
        reports: list[Progress] = []
        with listening(reports.append):
            assert next(outputs)[0] == "2026-03"
            assert not reports  # nothing of 2026-04 rated yet
            assert next(outputs)[0] == "2026-04"
            assert [r.done for r in reports] == [1]
            assert [period for period, _ in outputs] == ["2026-05"]
            assert [r.done for r in reports] == [1, 2, 3]


def test_site_reports_each_period_of_its_one_pass() -> None:
    t0 = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    rows = [
        site_game(1, "u-a", "u-b", 1.0, period="2026-03", played_at=t0),
        site_game(2, "u-b", "u-a", 0.0, period="2026-05", played_at=t0 + timedelta(days=62)),
        site_game(3, "u-a", "u-b", 0.5, period="2026-05", played_at=t0 + timedelta(days=63)),
    ]
    reports = heard(
        lambda: dict(
            site_lists_periods(site_games(*rows), None, None, None, PERIODS, CollectedRows())
        )
    )
    assert [(r[1], r[2], r[3], r[5]) for r in reports] == [
        ("site", 1, 3, 1),
        ("site", 2, 3, 1),
        ("site", 3, 3, 3),
    ]


def test_fibs_reports_its_matches() -> None:
    rows = [
        match(1, "u-a", "u-b", timedelta(days=50), period="2026-03"),
        match(2, "u-b", "u-a", timedelta(days=80), period="2026-04"),
    ]
    reports = heard(
        lambda: dict(fibs_lists_periods(matches(*rows), None, None, None, PERIODS, CollectedRows()))
    )
    assert [(r[1], r[2], r[5]) for r in reports] == [("fibs", 1, 1), ("fibs", 2, 2), ("fibs", 3, 2)]


@dataclass(frozen=True)
class Batched:
    """A `GameSource` handing each period's games over `rows` at a time (as the lake's batches
    of a large month), in the frame's order."""

    source: FrameSource
    rows: int

    def players(self) -> pl.Series:
        return self.source.players()

    def batches(self, period: str) -> Iterator[pl.DataFrame]:
        for batch in self.source.batches(period):
            yield from batch.iter_slices(self.rows)


def test_a_period_in_several_batches_reports_the_games_so_far_between_them() -> None:
    """A large month is rated in batches: between two, the games so far (the period not done
    yet), so that a one-month run shows its games going up."""
    t0 = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    rows = [
        site_game(i, "u-a", "u-b", 1.0, period="2026-03", played_at=t0 + timedelta(hours=i))
        for i in range(5)
    ]
    source = Batched(FrameSource(site_games(*rows)), 2)
    reports = heard(
        lambda: dict(site_lists_periods(source, None, None, None, PERIODS[:1], CollectedRows()))
    )
    assert [(r[1], r[2], r[3], r[5]) for r in reports] == [
        ("site", 0, 1, 2),
        ("site", 0, 1, 4),
        ("site", 1, 1, 5),
    ]


def test_fibs_reports_its_matches_between_batches_too() -> None:
    rows = [match(i, "u-a", "u-b", timedelta(days=50, hours=i), period="2026-03") for i in range(3)]
    source = Batched(FrameSource(matches(*rows), MATCH_SIDES), 2)
    reports = heard(
        lambda: dict(fibs_lists_periods(source, None, None, None, PERIODS[:1], CollectedRows()))
    )
    assert [(r[1], r[2], r[5]) for r in reports] == [("fibs", 0, 2), ("fibs", 1, 3)]
