"""Raw rows to canonical games: status, scores, periods, quarantine of what cannot be classified."""

from __future__ import annotations

from datetime import UTC, date, datetime

import polars as pl

from rating_core.games import canonical_games
from rating_core.schemas import GAMES_SCHEMA, RAW_GAMES_SCHEMA, conform


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
