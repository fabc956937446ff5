"""Raw rows to canonical games: status, scores, periods, quarantine of what cannot be classified."""

from __future__ import annotations

from datetime import UTC, date, datetime

import polars as pl

from rating_core.ingest.canonical import canonical_games
from rating_core.schemas import (
    GAMES_SCHEMA,
    PLAYED_RESULTS,
    RAW_GAMES_SCHEMA,
    RESULT_BY_SCORE,
    RESULTS,
    SCORE_BY_RESULT,
    conform,
)


def raw(rows: list[dict]) -> pl.DataFrame:
    base = {
        "source_file": "f.csv",
        "format": "csv",
        "rated": True,
        "kind": "live",
        "termination": "normal",
        "plies": 40,
    }
    frame = pl.DataFrame([{**base, **r} for r in rows])
    return conform(frame, RAW_GAMES_SCHEMA)


def ts(day: int, month: int = 1) -> datetime:
    return datetime(2026, month, day, 12, tzinfo=UTC)


def test_platform_games_classified_and_bad_ones_quarantined() -> None:
    frame = raw(
        [
            {
                "game_id": "g1",
                "source_line": 2,
                "played_at": ts(1),
                "white_id": "a",
                "black_id": "b",
                "result": "1-0",
                "time_control": "300+3",
            },
            {
                "game_id": "g2",
                "source_line": 3,
                "played_at": ts(2),
                "white_id": "a",
                "black_id": "b",
                "result": "0-1",
                "time_control": "?",
            },
            {
                "game_id": "g1",
                "source_line": 4,
                "played_at": ts(3),
                "white_id": "a",
                "black_id": "b",
                "result": "0-1",
                "time_control": "60",
            },
            {
                "game_id": "g4",
                "source_line": 5,
                "played_at": ts(4, 2),
                "white_id": "a",
                "black_id": "a",
                "result": "0-1",
                "time_control": "60",
            },
            {
                "game_id": "g5",
                "source_line": 6,
                "played_at": ts(5, 2),
                "white_id": "a",
                "black_id": "b",
                "result": "1/2-1/2",
                "time_control": "60",
                "plies": 1,
            },
        ]
    )
    out = canonical_games(frame, "platform")
    assert out.rows.schema == pl.Schema(GAMES_SCHEMA)
    assert out.rows.get_column("game_id").to_list() == ["g1", "g5"]
    g1 = out.rows.row(0, named=True)
    assert (g1["category"], g1["white_score"], g1["period"], g1["status"]) == (
        "blitz",
        1.0,
        "2026-01",
        "finished",
    )
    assert out.rows.row(1, named=True)["status"] == "aborted"
    reasons = dict(zip(out.quarantine["record"], out.quarantine["reason"], strict=True))
    assert set(reasons) == {"g2", "g1", "g4"}
    assert "unknown" in reasons["g2"]
    assert "appears again" in reasons["g1"] and "line 2" in reasons["g1"]
    assert "themself" in reasons["g4"]


def test_federation_period_is_the_tournament_end_and_forfeits_are_not_rated() -> None:
    frame = raw(
        [
            {
                "game_id": "t1",
                "source_line": 2,
                "tournament_id": "T",
                "played_at": ts(30, 1),
                "white_id": "a",
                "black_id": "b",
                "result": "1-0",
                "kind": "otb",
            },
            {
                "game_id": "t2",
                "source_line": 3,
                "tournament_id": "T",
                "played_at": ts(2, 2),
                "white_id": "c",
                "black_id": "d",
                "result": "+-",
                "kind": "otb",
            },
            {
                "game_id": "t3",
                "source_line": 4,
                "tournament_id": "U",
                "played_at": ts(2, 1),
                "tournament_end": date(2026, 3, 1),
                "white_id": "c",
                "black_id": None,
                "result": "bye",
                "kind": "otb",
            },
        ]
    )
    out = canonical_games(frame, "federation")
    rows = {r["game_id"]: r for r in out.rows.iter_rows(named=True)}
    assert rows["t1"]["period"] == "2026-02"  # one tournament never straddles two lists
    assert rows["t1"]["rating_list"] == "standard"
    assert rows["t1"]["rated"] is True
    assert (rows["t2"]["status"], rows["t2"]["rated"], rows["t2"]["white_score"]) == (
        "forfeit",
        False,
        1.0,
    )
    assert (rows["t3"]["status"], rows["t3"]["period"]) == ("bye", "2026-03")
    assert out.quarantine.is_empty()
    assert any("standard list" in n for n in out.notes)


def test_registry_bot_marks_the_game_as_bots() -> None:
    frame = raw(
        [
            {
                "game_id": "g1",
                "source_line": 2,
                "played_at": ts(1),
                "white_id": "h",
                "black_id": "stockfish",
                "result": "1-0",
                "time_control": "60",
            }
        ]
    )
    players = pl.DataFrame({"player_id": ["stockfish"], "is_bot": [True]})
    out = canonical_games(frame, "platform", players)
    assert out.rows.row(0, named=True)["category"] == "bots"


def test_a_game_a_reader_marked_unratable_is_kept_but_never_rated() -> None:
    common = {"played_at": ts(3), "white_id": "a", "black_id": "b", "result": "1-0"}
    frame = raw(
        [
            {**common, "game_id": "v1", "source_line": 2, "time_control": "300+0"},
            {
                **common,
                "game_id": "v2",
                "source_line": 9,
                "time_control": "300+0",
                "unrated_reason": "variant 'Atomic' is not standard chess",
            },
        ]
    )
    for source in ("platform", "federation"):
        games = canonical_games(frame, source).rows.sort("game_id")
        assert games.get_column("rated").to_list() == [True, False]
        assert games.get_column("unrated_reason").to_list() == [
            None,
            "variant 'Atomic' is not standard chess",
        ]


# --- dates (issue 9 item 1): 1850 up to today, and within the game's own tournament ------------

TODAY = date(2026, 12, 1)


def game(game_id: str, line: int, played: datetime, **extra) -> dict:
    """One raw game between a and b (1-0, standard time control) on `played`."""
    return {
        "game_id": game_id,
        "source_line": line,
        "played_at": played,
        "white_id": "a",
        "black_id": "b",
        "result": "1-0",
        "time_control": "5400+30",
        **extra,
    }


def on(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, 12, tzinfo=UTC)


def test_online_games_from_1850_up_to_today_keep_their_period() -> None:
    frame = raw(
        [
            game("old", 2, on(1850, 1, 1)),
            game("sixties", 3, on(1960, 5, 7)),
            game("today", 4, datetime(2026, 12, 1, 23, 59, tzinfo=UTC)),
        ]
    )
    out = canonical_games(frame, "platform", today=TODAY)
    assert out.quarantine.is_empty()
    periods = dict(out.rows.select("game_id", "period").iter_rows())
    assert periods == {"old": "1850-01", "sixties": "1960-05", "today": "2026-12"}


def test_online_games_after_today_or_before_1850_are_quarantined_with_the_date() -> None:
    frame = raw(
        [
            game("good", 2, on(2026, 3, 1)),
            game("future", 3, on(2999, 1, 1)),
            game("tomorrow", 4, on(2026, 12, 2)),
            game("ancient", 5, on(1700, 5, 1)),
            game("good2", 6, on(2026, 3, 2)),
        ]
    )
    out = canonical_games(frame, "platform", today=TODAY)
    assert sorted(out.rows.get_column("game_id")) == ["good", "good2"]
    got = {r["record"]: (r["line"], r["value"], r["reason"]) for r in out.quarantine.to_dicts()}
    assert got == {
        "future": (3, "2999-01-01", "dated 2999-01-01, after today"),
        "tomorrow": (4, "2026-12-02", "dated 2026-12-02, after today"),
        "ancient": (5, "1700-05-01", "dated 1700-05-01, before 1850: not a real game date?"),
    }


def test_today_is_a_parameter_not_the_clock() -> None:
    frame = raw([game("g", 2, on(2026, 6, 1))])
    assert canonical_games(frame, "platform", today=date(2026, 6, 1)).quarantine.is_empty()
    late = canonical_games(frame, "platform", today=date(2026, 5, 31)).quarantine
    assert late.get_column("reason").to_list() == ["dated 2026-06-01, after today"]


def test_a_federation_game_far_from_its_tournament_is_quarantined_and_does_not_move_it() -> None:
    frame = raw(
        [
            game("r1", 2, on(2026, 3, 1), tournament_id="T", kind="otb"),
            game("r2", 3, on(2026, 3, 2), tournament_id="T", kind="otb"),
            game("typo", 4, on(2029, 3, 3), tournament_id="T", kind="otb"),
            game("r4", 5, on(2026, 3, 4), tournament_id="T", kind="otb"),
            game("old", 6, on(1800, 3, 5), tournament_id="T", kind="otb"),
            game("u1", 7, on(1999, 11, 6), tournament_id="U", kind="otb"),
        ]
    )
    out = canonical_games(frame, "federation", today=date(2030, 1, 1))
    periods = dict(out.rows.select("game_id", "period").iter_rows())
    assert periods == {"r1": "2026-03", "r2": "2026-03", "r4": "2026-03", "u1": "1999-11"}
    got = {r["record"]: (r["line"], r["reason"]) for r in out.quarantine.to_dicts()}
    assert got == {
        "typo": (
            4,
            "dated 2029-03-03, more than 366 days from the other games of tournament 'T'"
            " (median 2026-03-03)",
        ),
        "old": (6, "dated 1800-03-05, before 1850: not a real game date?"),
    }


def test_a_federation_game_after_today_is_quarantined() -> None:
    frame = raw(
        [
            game("r1", 2, on(2026, 11, 1), tournament_id="T", kind="otb"),
            game("r2", 3, on(2026, 12, 5), tournament_id="T", kind="otb"),
        ]
    )
    out = canonical_games(frame, "club", club_id="c", today=TODAY)
    assert out.rows.get_column("period").to_list() == ["2026-11"]
    assert out.quarantine.get_column("reason").to_list() == ["dated 2026-12-05, after today"]


def test_a_tournament_end_after_today_quarantines_its_games_with_the_end_date() -> None:
    frame = raw(
        [
            game("r1", 2, on(2026, 3, 1), tournament_id="T", tournament_end=date(2999, 1, 1)),
            game("k1", 3, on(2026, 3, 1), tournament_id="K", tournament_end=date(2026, 3, 2)),
        ]
    )
    out = canonical_games(frame, "federation", today=TODAY)
    assert out.rows.select("game_id", "period").rows() == [("k1", "2026-03")]
    row = out.quarantine.row(0, named=True)
    assert (row["record"], row["line"], row["value"]) == ("r1", 2, "2999-01-01")
    assert row["reason"] == "tournament end (TRF 052) dated 2999-01-01, after today"


def test_every_recorded_result_scores_by_the_one_table() -> None:
    """White's score of each canonical game is read from `SCORE_BY_RESULT`, which has every
    recorded result but a bye; readers and calculators share it (`RESULT_BY_SCORE`)."""
    assert set(SCORE_BY_RESULT) == set(RESULTS) - {"bye"}
    assert {RESULT_BY_SCORE[s] for s in (1.0, 0.5, 0.0)} == set(PLAYED_RESULTS)
    rows = [
        {
            "game_id": f"t{i}",
            "source_line": i + 2,
            "tournament_id": "T",
            "played_at": ts(10),
            "white_id": "a",
            "black_id": None if result == "bye" else "b",
            "result": result,
            "kind": "otb",
        }
        for i, result in enumerate(RESULTS)
    ]
    out = canonical_games(raw(rows), "federation")
    scores = dict(zip(out.rows["result"].cast(pl.String), out.rows["white_score"], strict=True))
    assert scores == {**SCORE_BY_RESULT, "bye": None}
