"""The synthetic PGN generator's options for the end-to-end benchmark (issue 10): how many players,
how many months, unique game ids, and the default output left as it was."""

from __future__ import annotations

import hashlib
from pathlib import Path

import chess.pgn
import pytest

from rating_core.ingest.pgn_synth import generate_pgn


def headers(path: Path) -> list[chess.pgn.Headers]:
    """Every game's headers, read by python-chess."""
    out = []
    with path.open(encoding="utf-8") as handle:
        while (h := chess.pgn.read_headers(handle)) is not None:
            out.append(h)
    return out


def test_defaults_write_what_they_always_wrote(tmp_path: Path) -> None:
    """Existing callers (the ingest benchmark, the differential tests) keep their files: digests
    of the generator's output before the options were added."""
    plain = generate_pgn(tmp_path / "a.pgn", 200, seed=3).read_bytes()
    extras = generate_pgn(tmp_path / "b.pgn", 200, seed=7, extras=True, n_bodies=20).read_bytes()
    assert hashlib.sha256(plain).hexdigest() == (
        "bc06a4b2bc0a89426b7411cfaa4503573448a9d7b5d0fd5b886830fe11123d97"
    )
    assert hashlib.sha256(extras).hexdigest() == (
        "e3659df9e4da3a44f4adde218761f1dc8a586dcc6aacf31c8827ed63a2cc67be"
    )


def test_players_are_drawn_from_n_players(tmp_path: Path) -> None:
    games = headers(generate_pgn(tmp_path / "g.pgn", 2_000, seed=1, n_players=40, n_bodies=5))
    assert len(games) == 2_000
    names = {h["White"] for h in games} | {h["Black"] for h in games}
    assert len(names) == 40  # 2,000 games: every one of the 40 plays
    assert {"maia1", "stockfish-lite", "player17", "player40"} <= names
    assert all(h["White"] != h["Black"] for h in games)
    bots = [h for h in games if h["White"] == "maia1"]
    assert bots and all(h["WhiteTitle"] == "BOT" for h in bots)


def test_many_players(tmp_path: Path) -> None:
    games = headers(generate_pgn(tmp_path / "g.pgn", 500, seed=1, n_players=50_000, n_bodies=5))
    names = {h["White"] for h in games} | {h["Black"] for h in games}
    assert len(names) > 900  # 1,000 sides drawn from 50,000 names: few repeats
    assert max(int(n.removeprefix("player")) for n in names if n.startswith("player")) <= 50_000


def test_games_spread_over_n_months(tmp_path: Path) -> None:
    path = generate_pgn(
        tmp_path / "g.pgn", 3_000, seed=2, n_months=14, first_month="2024-11", n_bodies=5
    )
    games = headers(path)
    months = sorted({h["UTCDate"][:7] for h in games})
    assert months[0] == "2024.11" and months[-1] == "2025.12" and len(months) == 14
    assert all(h["Date"] == h["UTCDate"] for h in games)


def test_one_month(tmp_path: Path) -> None:
    path = generate_pgn(tmp_path / "g.pgn", 1_000, seed=2, n_months=1, first_month="2026-02")
    days = {h["UTCDate"] for h in headers(path)}
    assert {d[:8] for d in days} == {"2026.02."}
    assert len(days) == 28  # February 2026, every day of it, none after


def test_same_games_whatever_the_months(tmp_path: Path) -> None:
    """The months only move the dates: players, results, ids and moves stay the same."""
    options = {"seed": 4, "n_players": 300, "n_bodies": 10}
    spread = generate_pgn(tmp_path / "a.pgn", 1_000, n_months=60, first_month="2021-12", **options)
    one = generate_pgn(tmp_path / "b.pgn", 1_000, n_months=1, first_month="2026-11", **options)

    def without_dates(path: Path) -> list[str]:
        dated = ('[Date "', '[UTCDate "', '[UTCTime "')
        return [line for line in path.read_text().splitlines() if not line.startswith(dated)]

    assert without_dates(spread) == without_dates(one)
    assert spread.read_text() != one.read_text()


def test_game_ids_are_unique(tmp_path: Path) -> None:
    path = generate_pgn(tmp_path / "g.pgn", 20_000, seed=5, n_players=1_000, n_bodies=2)
    sites = [h["Site"] for h in headers(path)]
    assert len(set(sites)) == len(sites) == 20_000
    ids = [site.removeprefix("https://lichess.org/") for site in sites]
    assert all(len(i) == 8 and i.isalnum() and i.isascii() for i in ids)


def test_body_length(tmp_path: Path) -> None:
    path = generate_pgn(tmp_path / "g.pgn", 50, seed=6, min_plies=4, max_plies=8, n_bodies=20)
    with path.open(encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            plies = len(list(game.mainline_moves()))
            assert 1 <= plies <= 8  # at most the bound; fewer only when the game ended
            assert plies >= 4 or game.end().board().is_game_over()


def test_two_players_at_least(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="two players"):
        generate_pgn(tmp_path / "g.pgn", 10, n_players=1)
