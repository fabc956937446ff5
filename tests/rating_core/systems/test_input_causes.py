"""Diff causes of the federation lists: tournaments and starting-list entries new, changed or
gone since the last publication (rating_core.systems.input_causes)."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from rating_core.systems.input_causes import (
    club_period_inputs,
    file_causes,
    file_inputs,
    input_causes,
    period_inputs,
    tournament_players,
)


def _games(*rows: tuple[str, str, str, str, str]) -> pl.DataFrame:
    """Games (game_id, tournament_id, white_id, black_id, result), all standard and rated."""
    return pl.DataFrame(
        {
            "game_id": [r[0] for r in rows],
            "tournament_id": [r[1] for r in rows],
            "round": [1] * len(rows),
            "played_at": [datetime(2026, 2, 20, tzinfo=UTC)] * len(rows),
            "white_id": [r[2] for r in rows],
            "black_id": [r[3] for r in rows],
            "result": [r[4] for r in rows],
            "rating_list": ["standard"] * len(rows),
            "rated": [True] * len(rows),
            "status": ["finished"] * len(rows),
        }
    )


OPEN = [("g1", "open", "a", "b", "1-0"), ("g2", "open", "c", "a", "0-1")]


def _causes(before: pl.DataFrame | None, now: pl.DataFrame) -> dict[str, str]:
    causes = input_causes(tournament_players(now), before, "fide")
    assert causes is not None
    assert set(causes["list"]) <= {"fide-standard"}
    return dict(causes.select("player_id", "cause").iter_rows())


def test_who_played_where_with_one_digest_per_tournament() -> None:
    players = tournament_players(_games(*OPEN, ("g3", "cup", "d", "e", "1-0")))
    assert players.select("name", "player_id").rows() == [
        ("cup", "d"),
        ("cup", "e"),
        ("open", "a"),
        ("open", "b"),
        ("open", "c"),
    ]
    digests = dict(players.select("name", "digest").unique().iter_rows())
    assert len(set(digests.values())) == 2 and set(players["rating_list"]) == {"standard"}
    # the digest is the games', not their order in the file
    again = tournament_players(_games(OPEN[1], ("g3", "cup", "d", "e", "1-0"), OPEN[0]))
    assert dict(again.select("name", "digest").unique().iter_rows()) == digests


def test_a_late_tournament_names_its_players_only() -> None:
    before = tournament_players(_games(*OPEN))
    now = _games(*OPEN, ("late-1", "late-match", "d", "b", "0-1"))
    assert _causes(before, now) == {
        "b": "late result: tournament late-match (standard)",
        "d": "late result: tournament late-match (standard)",
    }


def test_changed_and_withdrawn_tournaments() -> None:
    before = tournament_players(_games(*OPEN, ("g3", "cup", "d", "e", "1-0")))
    now = _games(("g1", "open", "a", "b", "0-1"), OPEN[1])  # g1 corrected, the cup withdrawn
    assert _causes(before, now) == {
        "a": "changed results: tournament open (standard)",
        "b": "changed results: tournament open (standard)",
        "c": "changed results: tournament open (standard)",
        "d": "withdrawn: tournament cup (standard)",
        "e": "withdrawn: tournament cup (standard)",
    }


def test_nothing_new_and_no_record() -> None:
    before = tournament_players(_games(*OPEN))
    assert _causes(before, _games(*OPEN)) == {}
    assert input_causes(tournament_players(_games(*OPEN)), None, "fide") is None


def _starting(*rows: tuple[str, str, str, int]) -> pl.DataFrame:
    """Starting-list entries (list, period, player_id, rating)."""
    return pl.DataFrame(
        {
            "list": [r[0] for r in rows],
            "period": [r[1] for r in rows],
            "player_id": [r[2] for r in rows],
            "rating": [r[3] for r in rows],
            "rated_games": [50] * len(rows),
            "peak_rating": [2000] * len(rows),
        },
        schema_overrides={"rating": pl.Int32, "rated_games": pl.Int32, "peak_rating": pl.Int32},
    )


def test_starting_list_entries_new_changed_and_removed() -> None:
    no_games = _games(*OPEN).clear()
    january = _starting(
        ("fide-standard", "2026-01", "a", 1900), ("fide-standard", "2026-01", "b", 1800)
    )
    before = period_inputs(no_games, january, "fide", "2026-02")
    assert set(before["name"]) == {"fide-standard@2026-01"}
    # a UKD list, or a list official after another month, is not February's FIDE input
    others = _starting(("ukd-standard", "2026-01", "z", 1500), ("fide-rapid", "2025-12", "y", 1500))
    assert period_inputs(no_games, others, "fide", "2026-02").height == 0
    corrected = pl.concat(
        [
            _starting(
                ("fide-standard", "2026-01", "a", 1910), ("fide-standard", "2026-01", "c", 1700)
            ),
            _starting(("fide-rapid", "2026-01", "a", 1850)),
        ]
    )
    causes = input_causes(period_inputs(no_games, corrected, "fide", "2026-02"), before, "fide")
    assert causes is not None
    # each list names its own starting list only
    assert causes.rows() == [
        ("fide-rapid", "a", "new starting list fide-rapid@2026-01"),
        ("fide-standard", "a", "changed starting list fide-standard@2026-01"),
        ("fide-standard", "b", "removed from starting list fide-standard@2026-01"),
        ("fide-standard", "c", "changed starting list fide-standard@2026-01"),
    ]


def test_a_tournament_of_two_lists_is_a_cause_on_both() -> None:
    before = tournament_players(_games(*OPEN))
    mixed = _games(*OPEN, ("r1", "festival", "a", "d", "1-0"), ("b1", "festival", "d", "a", "1-0"))
    mixed = mixed.with_columns(
        rating_list=pl.when(pl.col("game_id") == "b1")
        .then(pl.lit("blitz"))
        .otherwise("rating_list")
    )
    causes = input_causes(tournament_players(mixed), before, "ukd")
    assert causes is not None
    cause = "late result: tournament festival (blitz/standard)"
    assert causes.rows() == [
        ("ukd-blitz", "a", cause),
        ("ukd-blitz", "d", cause),
        ("ukd-standard", "a", cause),
        ("ukd-standard", "d", cause),
    ]


def test_a_late_club_tournament_is_a_cause_on_its_clubs_list_only() -> None:
    """Club tournaments are inputs of `club-<club>-<list>`: each under its own club's list."""
    games = _games(*OPEN, ("g3", "cup", "d", "e", "1-0")).with_columns(
        pl.Series("club_id", ["Ankara SK", "Ankara SK", "odtu"])
    )
    before = club_period_inputs(games.head(2), pl.DataFrame(), "club", "2026-02")
    late = club_period_inputs(games, pl.DataFrame(), "club", "2026-02")
    causes = input_causes(late, before, "club")
    assert causes is not None
    assert causes.rows() == [
        ("club-odtu-standard", "d", "late result: tournament cup (odtu-standard)"),
        ("club-odtu-standard", "e", "late result: tournament cup (odtu-standard)"),
    ]
    assert set(before["rating_list"]) == {"ankara-sk-standard"}  # the club's list name


# --- issue 32 item 6: corrections recorded, changes carried -------------------------------------


def _log(rows: list[tuple[str, str, str, str, bool]]) -> pl.DataFrame:
    """Correction-log rows: (list, player_id, field, new, applied)."""
    from rating_core.systems.corrections import CORRECTION_LOG_SCHEMA

    return pl.DataFrame(
        [
            {
                "list": lst,
                "player_id": pid,
                "field": field,
                "value": new,
                "old": "1500",
                "new": new if applied else None,
                "reason": "arbiter's report",
                "applied": applied,
                "not_applied": None if applied else "not on the list",
                "source_file": "federation/corrections.csv",
                "source_line": 2,
            }
            for lst, pid, field, new, applied in rows
        ],
        schema=CORRECTION_LOG_SCHEMA,
    )


def test_a_revision_names_only_the_corrections_new_since_its_parent() -> None:
    from rating_core.systems.input_causes import correction_inputs, new_corrections

    first = _log([("fide-standard", "p1", "rating", "1607", True)])
    record = correction_inputs(first)
    assert record.select("source", "name", "rating_list", "player_id").rows() == [
        ("correction", "fide-standard rating", "standard", "p1")
    ]
    assert new_corrections(first, None).height == 1  # no record: the first publication
    assert new_corrections(first, record).height == 0  # the parent applied it
    # a second correction, and the first one's value changed: both new
    second = _log(
        [("fide-standard", "p1", "rating", "1610", True), ("fide-standard", "p2", "k", "20", True)]
    )
    assert new_corrections(second, record)["player_id"].to_list() == ["p1", "p2"]
    # a correction that did not apply is never recorded
    assert correction_inputs(_log([("fide-standard", "p3", "k", "20", False)])).height == 0


def test_carried_causes_name_the_origin_period_and_what_changed_there() -> None:
    from rating_core.systems.input_causes import carried_causes

    march = pl.DataFrame(
        {
            "list": ["fide-standard", "fide-standard", "ukd-standard"],
            "player_id": ["a", "b", "a"],
            "cause": ["late result: tournament T (standard)"] * 3,
        }
    )
    may = pl.DataFrame(
        {"list": ["fide-standard"], "player_id": ["c"], "cause": ["correction: rating 1 -> 2 (x)"]}
    )
    assert carried_causes([("2026-02", None)]) is None
    carried = carried_causes([("2026-03", march), ("2026-04", None), ("2026-05", may)])
    assert carried is not None
    assert carried.sort("list").rows() == [
        (
            "fide-standard",
            None,
            "carried from 2026-03: late result: tournament T (standard); "
            "carried from 2026-05: correction: rating 1 -> 2 (x)",
        ),
        ("ukd-standard", None, "carried from 2026-03: late result: tournament T (standard)"),
    ]
    many = pl.DataFrame(
        {
            "list": ["fide-standard"] * 5,
            "player_id": list("abcde"),
            "cause": [f"late result: tournament T{i} (standard)" for i in range(5)],
        }
    )
    carried = carried_causes([("2026-03", many)])
    assert carried is not None
    (text,) = carried["cause"].to_list()
    assert text.endswith("tournament T2 (standard) and 2 more")


def _files(**digests: str) -> pl.DataFrame:
    return file_inputs(
        pl.DataFrame({"name": list(digests), "digest": list(digests.values())}), "games"
    )


def test_platform_files_new_changed_and_removed_are_named_for_every_player() -> None:
    before = _files(**{"platform/may.pgn": "d1", "platform/june.pgn": "d2", "platform/x.csv": "d3"})
    now = _files(**{"platform/may.pgn": "d1", "platform/june.pgn": "d9", "platform/july.pgn": "d4"})
    causes = file_causes(now, before)
    assert causes is not None
    assert causes["player_id"].null_count() == causes.height  # every player the version moved
    assert causes["cause"].to_list() == [
        "changed results: games file platform/june.pgn",
        "late result: games file platform/july.pgn",
        "withdrawn: games file platform/x.csv",
    ]
    same = file_causes(now, now)
    assert same is not None and not same.height
    assert file_causes(now, None) is None  # the period's first publication
