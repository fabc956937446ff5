"""The synthetic PGN generator's options for the end-to-end benchmark (issue 10): how many players,
how many months, unique game ids, and the default output left as it was."""

from __future__ import annotations

import hashlib
import io
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import chess.pgn
import pytest

from rating_core.ingest.pgn_synth import LichessMonth, generate_pgn


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
    options: dict[str, Any] = {"seed": 4, "n_players": 300, "n_bodies": 10}
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


# --- LichessMonth: a platform's month streamed a block at a time (issue 31's scale benchmark) --


def month_games(month: LichessMonth) -> list[chess.pgn.Game]:
    """Every game of `month`, parsed by python-chess from its blocks."""
    handle = io.StringIO(b"".join(month.blocks()).decode("utf-8"))
    games = []
    while (game := chess.pgn.read_game(handle)) is not None:
        games.append(game)
    return games


def month_headers(month: LichessMonth) -> list[chess.pgn.Headers]:
    """Every game's headers of `month`, read by python-chess from its blocks."""
    handle = io.StringIO(b"".join(month.blocks()).decode("utf-8"))
    out = []
    while (h := chess.pgn.read_headers(handle)) is not None:
        out.append(h)
    return out


def test_month_is_deterministic_by_seed() -> None:
    def text(seed: int) -> bytes:
        return b"".join(LichessMonth(9_000, seed=seed, n_players=1_000, n_bodies=3).blocks())

    one = text(1)
    assert one == text(1)
    assert one != text(2)


def test_month_streams_blocks_of_lichess_sized_games() -> None:
    month = LichessMonth(10_000, seed=3, n_bodies=4)
    blocks = list(month.blocks())
    assert len(blocks) == month.blocks_count == 2  # 8,192 games, then the rest
    assert all(block.endswith(b"\n\n") for block in blocks)
    size = sum(len(block) for block in blocks) / 10_000
    assert 1_700 < size < 2_400  # about 2 KB of text a game, as in Lichess's dumps


def test_month_games_parse_with_clocks() -> None:
    month = LichessMonth(1_000, seed=4, n_players=1_000_000, month="2026-02", n_bodies=4)
    games = month_games(month)
    assert len(games) == 1_000
    assert all(not game.errors for game in games)
    for game in games[:50]:
        moves = list(game.mainline())
        assert len(moves) >= 30
        assert all(node.clock() is not None for node in moves)  # a %clk comment every move
        base = int(game.headers["TimeControl"].split("+")[0])
        assert moves[0].clock() == base
        assert game.headers["Event"].startswith("Rated ")
    assert all(g.headers["White"] != g.headers["Black"] for g in games)
    assert {g.headers["UTCDate"][:8] for g in games} == {"2026.02."}
    controls = {g.headers["TimeControl"] for g in games}
    assert {"60+0", "180+0", "180+2", "300+3", "600+0", "900+10", "1800+0"} == controls


def test_month_first_game_is_the_earliest_and_ids_are_unique() -> None:
    month = LichessMonth(9_000, seed=5, n_players=5_000, n_bodies=2)
    games = month_headers(month)  # month.first_game is known once every block is produced
    played = [
        (
            datetime.strptime(h["UTCDate"] + " " + h["UTCTime"], "%Y.%m.%d %H:%M:%S"),
            h["Site"].removeprefix("https://lichess.org/"),
        )
        for h in games
    ]
    assert month.first_game == min(played)
    ids = [game_id for _, game_id in played]
    assert len(set(ids)) == len(ids) == 9_000
    assert all(len(i) == 8 and i.isalnum() and i.isascii() for i in ids)


def test_month_players_are_skewed() -> None:
    month = LichessMonth(8_000, seed=6, n_players=1_000, n_bodies=2)
    sides = Counter(name for h in month_headers(month) for name in (h["White"], h["Black"]))
    counts = sorted(sides.values())
    assert len(sides) <= 1_000
    assert counts[-1] > 5 * counts[len(counts) // 2]  # the busiest play far more than most
