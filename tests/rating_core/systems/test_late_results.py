"""RULES §3.4: FIDE's closing date, the late-results policy per list family and its validation,
and where a late tournament is rated; every worked example of §3.4 a test."""

from __future__ import annotations

import datetime as dt
import json

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rating_core.periods import next_period, period_index, period_of_date
from rating_core.systems.late_results import (
    DEFAULT_POLICY,
    TOO_LATE,
    LateResultsError,
    LateResultsPolicy,
    fide_closing_period,
    fide_closing_period_expr,
    late_results_policy,
    place_late_tournament,
)


@pytest.mark.parametrize(
    ("end", "period"),
    [
        # ends 29 August -> the list of period 2026-08 (FIDE's SEP26); 30 or 31 -> 2026-09 (OCT26)
        (dt.date(2026, 8, 29), "2026-08"),
        (dt.date(2026, 8, 30), "2026-09"),
        (dt.date(2026, 8, 31), "2026-09"),
        (dt.date(2026, 8, 1), "2026-08"),
        # February: the list of 1 March closes on 26 February (27 in a leap year)
        (dt.date(2026, 2, 26), "2026-02"),
        (dt.date(2026, 2, 27), "2026-03"),
        (dt.date(2024, 2, 27), "2024-02"),
        (dt.date(2024, 2, 28), "2024-03"),
        # December into the next year
        (dt.date(2025, 12, 30), "2026-01"),
        (dt.date(2025, 12, 29), "2025-12"),
    ],
)
def test_closing_date(end: dt.date, period: str) -> None:
    assert fide_closing_period(end) == period
    frame = pl.DataFrame({"end": [end]})
    assert frame.select(fide_closing_period_expr(pl.col("end"))).item() == period
    as_time = pl.DataFrame({"end": [dt.datetime(end.year, end.month, end.day, 23, tzinfo=dt.UTC)]})
    assert as_time.select(fide_closing_period_expr(pl.col("end"))).item() == period


@given(st.dates(dt.date(1990, 1, 1), dt.date(2100, 12, 31)))
def test_closing_date_is_three_days_before_the_list(end: dt.date) -> None:
    """The list of period P is dated the first day of P + 1: a tournament is on it exactly when
    it ends on or before the day 3 days before that date."""
    period = fide_closing_period(end)
    list_date = dt.date.fromisoformat(next_period(period) + "-01")
    assert end <= list_date - dt.timedelta(days=3)
    before = period_of_date(end)
    assert period in (before, next_period(before))
    if period != before:  # moved: the month's list had closed
        own_list = dt.date.fromisoformat(next_period(before) + "-01")
        assert end > own_list - dt.timedelta(days=3)


def test_defaults_fide_next_list_the_others_revise() -> None:
    assert late_results_policy(None) == DEFAULT_POLICY == LateResultsPolicy()
    assert DEFAULT_POLICY.fide == "next_list"
    assert (DEFAULT_POLICY.ukd, DEFAULT_POLICY.club, DEFAULT_POLICY.site, DEFAULT_POLICY.fibs) == (
        "revise",
        "revise",
        "revise",
        "revise",
    )
    assert DEFAULT_POLICY.of("fide-blitz") == "next_list"
    assert DEFAULT_POLICY.of("club-ankara-sk-standard") == "revise"
    assert DEFAULT_POLICY.of("site-elo") == DEFAULT_POLICY.of("fibs") == "revise"
    assert DEFAULT_POLICY.as_manifest("fide-standard") == {
        "late_results": "next_list",
        "late_results_until": "list 3 after the tournament",
    }
    assert DEFAULT_POLICY.as_manifest("ukd-rapid") == {"late_results": "revise"}


def test_a_table_sets_the_families_it_names() -> None:
    policy = late_results_policy({"fide": "revise", "ukd": "next_list"})
    assert (policy.fide, policy.ukd, policy.club) == ("revise", "next_list", "revise")
    assert late_results_policy({}) == DEFAULT_POLICY


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            {"fide": "later"},
            'ratings.toml: [late_results] fide = "later" is not a policy (revise or next_list)',
        ),
        ({"fide": 1}, "ratings.toml: [late_results] fide = 1 is not a policy"),
        (
            {"chess": "revise"},
            "ratings.toml: [late_results] chess is not a list family (fide, ukd, club, site, fibs)",
        ),
        ("revise", "ratings.toml: late_results must be a table"),
    ],
)
def test_a_bad_value_names_the_file_the_key_and_the_value(table: object, message: str) -> None:
    with pytest.raises(LateResultsError) as caught:
        late_results_policy(table, "ratings.toml")  # type: ignore[arg-type]  # bad on purpose
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_worked_example_of_rules_3_4() -> None:
    # a FIDE tournament ending 2026-03-20 (first list after it: period 2026-03, APR26) arrives
    # after the lists of 2026-03 and 2026-04 are published: under next_list it is rated in
    # period 2026-05 (JUN26, the third list after it ended)
    own = fide_closing_period(dt.date(2026, 3, 20))
    assert own == "2026-03"
    placed = place_late_tournament(own, {"2026-03", "2026-04"}, "next_list", "tournament T")
    assert placed.period == "2026-05"
    assert "list 3 after the tournament" in placed.reason
    # had it arrived after 2026-05 was published too, it is quarantined
    too_late = place_late_tournament(own, {"2026-03", "2026-04", "2026-05"}, "next_list")
    assert too_late.period is None and TOO_LATE in too_late.reason
    assert TOO_LATE == "too late to be rated: FIDE §9.1, third list after the tournament"
    # under revise: 2026-03 is revised (v2), and every later period with it
    assert place_late_tournament(own, {"2026-03", "2026-04"}, "revise").period == "2026-03"


def test_a_result_in_time_goes_on_its_own_list_under_either_policy() -> None:
    for policy in ("revise", "next_list"):
        assert place_late_tournament("2026-03", {"2026-01", "2026-02"}, policy).period == "2026-03"
        assert place_late_tournament("2026-03", set(), policy).period == "2026-03"


@given(
    own=st.integers(0, 30),
    published=st.sets(st.integers(0, 40), max_size=12),
)
def test_next_list_is_the_first_unpublished_period_within_three_lists(
    own: int, published: set[int]
) -> None:
    def name(i: int) -> str:
        return f"{2024 + i // 12}-{i % 12 + 1:02d}"

    done = {name(i) for i in published}
    placed = place_late_tournament(name(own), done, "next_list")
    first_free = next(i for i in range(own, own + 50) if i not in published)
    if first_free - own <= 2:
        assert placed.period == name(first_free)
        assert placed.period not in done
        assert period_index(placed.period) >= period_index(name(own))
    else:
        assert placed.period is None and TOO_LATE in placed.reason


def _games(rows: list[tuple[str, str | None, str, str]]) -> pl.DataFrame:
    """Rows: (game_id, tournament_id, played on YYYY-MM-DD, period as ingest gave it)."""
    from rating_core.schemas import GAMES_SCHEMA, conform

    return conform(
        pl.DataFrame(
            [
                {
                    "game_id": g,
                    "tournament_id": t,
                    "played_at": dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC),
                    "period": period,
                }
                for g, t, day, period in rows
            ]
        ),
        GAMES_SCHEMA,
    )


def test_fide_list_periods_moves_a_tournament_ending_on_the_last_two_days() -> None:
    from rating_core.systems.late_results import fide_list_periods

    games = _games(
        [
            ("a1", "A", "2026-08-20", "2026-08"),  # A ends 30 August: the list of 2026-09
            ("a2", "A", "2026-08-30", "2026-08"),
            ("b1", "B", "2026-08-29", "2026-08"),  # B ends 29 August: stays
            ("c1", None, "2026-08-31", "2026-08"),  # a game outside a tournament: its own date
            ("d1", "D", "2026-08-30", "2026-09"),  # a TRF end in September already: kept
            ("e1", "E", "2026-02-27", "2026-02"),  # 27 February: March's list
        ]
    )
    moved = dict(fide_list_periods(games).select("game_id", "period").iter_rows())
    assert moved == {
        "a1": "2026-09",
        "a2": "2026-09",
        "b1": "2026-08",
        "c1": "2026-09",
        "d1": "2026-09",
        "e1": "2026-03",
    }
    assert fide_list_periods(games.clear()).height == 0


def _recorded(rows: list[tuple[str, str]]) -> pl.DataFrame:
    return pl.DataFrame(
        rows, schema={"tournament_id": pl.String, "period": pl.String}, orient="row"
    )


def test_late_fide_placements_follow_the_worked_example() -> None:
    """RULES §3.4: T ends 2026-03-20; the lists of 2026-03 and 2026-04 are published: next_list
    rates it in 2026-05; with 2026-05 published too it is too late (null); revise moves
    nothing. A tournament already rated stays where it was rated; one in time is not moved."""
    from rating_core.systems.late_results import late_fide_placements, place_fide_games

    games = _games(
        [
            ("t1", "T", "2026-03-19", "2026-03"),
            ("t2", "T", "2026-03-20", "2026-03"),
            ("r1", "R", "2026-03-05", "2026-03"),  # rated on 2026-03's list already
            ("m1", "M", "2026-02-10", "2026-02"),  # rated late on 2026-04's list
            ("n1", "N", "2026-05-03", "2026-05"),  # in time
            ("x1", None, "2026-03-10", "2026-03"),  # outside a tournament: never moved
        ]
    )
    recorded = _recorded([("R", "2026-03"), ("M", "2026-04")])
    two = {"2026-02", "2026-03", "2026-04"}
    placed = late_fide_placements(games, recorded, two, "next_list")
    assert dict(placed.iter_rows()) == {"T": "2026-05", "M": "2026-04"}
    rated, too_late = place_fide_games(games, placed)
    assert dict(rated.select("game_id", "period").iter_rows()) == {
        "t1": "2026-05",
        "t2": "2026-05",
        "r1": "2026-03",
        "m1": "2026-04",
        "n1": "2026-05",
        "x1": "2026-03",
    }
    assert too_late.height == 0 and rated.columns == games.columns

    three = two | {"2026-05"}
    placed = late_fide_placements(games, recorded, three, "next_list")
    assert dict(placed.iter_rows()) == {"T": None, "M": "2026-04", "N": "2026-06"}
    rated, too_late = place_fide_games(games, placed)
    assert sorted(too_late["game_id"].to_list()) == ["t1", "t2"]
    assert "T" not in rated["tournament_id"].to_list()

    assert late_fide_placements(games, recorded, three, "revise").height == 0


def test_too_late_quarantine_names_the_tournament_and_the_rule() -> None:
    from rating_core.systems.late_results import TOO_LATE, too_late_quarantine

    games = _games([("t1", "T", "2026-03-19", "2026-03")]).with_columns(
        source_file=pl.lit("federation/t.csv"), source_line=pl.lit(2, pl.Int64)
    )
    rows = too_late_quarantine(games)
    assert rows.to_dicts() == [
        {
            "source_file": "federation/t.csv",
            "line": 2,
            "record": "t1",
            "value": "T",
            "reason": f"tournament T of 2026-03: {TOO_LATE}",
        }
    ]


def test_the_policy_travels_as_json() -> None:
    from rating_core.systems.late_results import LateResultsPolicy, late_results_policy

    policy = LateResultsPolicy(fide="revise", club="next_list")
    assert late_results_policy(json.loads(policy.as_json())) == policy


def test_late_fide_choices_say_what_each_policy_does() -> None:
    from rating_core.systems.late_results import late_fide_choices

    games = _games(
        [
            ("t1", "T", "2026-03-20", "2026-03"),
            ("r1", "R", "2026-03-05", "2026-03"),  # rated already: not late
            ("n1", "N", "2026-05-03", "2026-05"),  # in time
        ]
    )
    recorded = _recorded([("R", "2026-03")])
    assert late_fide_choices(games, recorded, {"2026-03", "2026-04"}, "revise") == [
        "late FIDE tournament T of 2026-03: next_list → the list of 2026-05; "
        "revise (in force) → revises 2026-03 to 2026-04"
    ]
    assert late_fide_choices(games, recorded, {"2026-03"}, "next_list") == [
        "late FIDE tournament T of 2026-03: next_list (in force) → the list of 2026-04; "
        "revise → revises 2026-03"
    ]
    assert late_fide_choices(games, recorded, set(), "next_list") == []
