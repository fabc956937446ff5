"""The ingest within a `--memory` budget (issue 31 item 4): a file whose players so far could
not be rated within the budget stops the ingest there, in one sentence, before its players are
all held, and commits nothing; a file that fits is read whole."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from rating_core import tables
from rating_core.budget import MemoryBudget, OverBudgetError, run_need
from rating_core.ingest import pgn_stream
from rating_core.lake import ingest_store
from rating_core.lake.ingest_store import _ROOM_SHARE, _reduce_sides
from rating_core.lake.storage import read_table
from tests.support.pgn_text import blitz_game, write_pgn

GAMES = 400
"""Games of the month: game i between two players of its own (`w<i>`, `b<i>`)."""

REFUSED = re.compile(
    r"^platform/month\.pgn names at least (?P<players>[\d,]+) players in its first "
    r"(?P<games>[\d,]+) games, which need at least "
)


def _month(inbox: Path, games: int = GAMES) -> Path:
    """A PGN month in which every game brings two players no game before it named."""
    return write_pgn(
        inbox / "platform" / "month.pgn",
        [blitz_game(i, f"w{i}", f"b{i}", day=1 + i % 28) for i in range(games)],
    )


@pytest.fixture(autouse=True)
def _many_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pgn_stream, "WINDOW_BYTES", 600)  # a window or two a game


def _count(text: str) -> int:
    return int(text.replace(",", ""))


def test_a_file_whose_players_cannot_fit_stops_the_ingest_early(tmp_path: Path) -> None:
    inbox, lake = tmp_path / "inbox", tmp_path / "lake"
    _month(inbox)
    budget = MemoryBudget.for_run(run_need(200, GAMES))  # room for about 200 players
    with pytest.raises(OverBudgetError) as refused:
        ingest_store.ingest_games(inbox, lake, budget=budget)
    found = REFUSED.match(str(refused.value))
    assert found, str(refused.value)
    players, games = _count(found["players"]), _count(found["games"])
    room = budget.players_room(games)
    assert room is not None
    assert not budget.fits(players, games)  # the refusal is right: these cannot be rated
    assert players <= 2 * games  # "at least": the first `games` games name 2 * games players
    # counted at most a share of the room late (and a window's two players)
    assert players <= room + room // _ROOM_SHARE + 2
    assert games < GAMES // 2  # stopped early, not at the end of the file
    assert str(refused.value).endswith("MiB or more")


def test_a_refused_file_leaves_the_lake_as_it_was(tmp_path: Path) -> None:
    inbox, lake = tmp_path / "inbox", tmp_path / "lake"
    _month(inbox, 50)
    ingest_store.ingest_games(inbox, lake)  # the month's first 50 games, no budget
    before = {
        table.name: read_table(lake, table).collect()
        for table in (tables.GAMES, tables.INGEST_PLAYERS, tables.INGEST_NAMES, tables.INGEST_FILES)
    }
    _month(inbox)  # the whole month now: read again, and refused
    with pytest.raises(OverBudgetError):
        ingest_store.ingest_games(inbox, lake, budget=MemoryBudget.for_run(run_need(200, GAMES)))
    for table in (tables.GAMES, tables.INGEST_PLAYERS, tables.INGEST_NAMES, tables.INGEST_FILES):
        after = read_table(lake, table).collect()
        assert after.equals(before[table.name]), table.name


def test_a_file_that_fits_its_budget_is_read_whole(tmp_path: Path) -> None:
    inbox, lake = tmp_path / "inbox", tmp_path / "lake"
    _month(inbox)
    outcome = ingest_store.ingest_games(
        inbox, lake, budget=MemoryBudget.for_run(run_need(2 * GAMES, GAMES))
    )
    assert outcome.games == GAMES
    assert read_table(lake, tables.INGEST_PLAYERS).collect().height == 2 * GAMES


def test_games_that_alone_do_not_fit_stop_the_ingest(tmp_path: Path) -> None:
    inbox, lake = tmp_path / "inbox", tmp_path / "lake"
    write_pgn(  # two players only: the games' share alone outgrows the budget
        inbox / "platform" / "month.pgn",
        [blitz_game(i, "w", "b", day=1 + i % 28) for i in range(GAMES)],
    )
    budget = MemoryBudget.for_run(run_need(2, GAMES // 2))  # the players and half the games
    with pytest.raises(OverBudgetError) as refused:
        ingest_store.ingest_games(inbox, lake, budget=budget)
    found = REFUSED.match(str(refused.value))
    assert found, str(refused.value)
    players, games = _count(found["players"]), _count(found["games"])
    assert players == 2 and GAMES // 2 < games < GAMES
    assert not budget.fits(players, games)  # stopped at the window going over, no later
    assert games <= GAMES // 2 + 2
    assert not list(lake.glob("games/*/*.parquet"))


@pytest.mark.parametrize(
    ("sides", "known", "room", "reduced"),
    [
        (0, 0, None, False),  # no budget: only when many
        (1_999_999, 0, None, False),
        (2_000_000, 0, None, True),
        (2_000_000, 0, 10**9, True),
        (500, 400, 1000, False),  # might not exceed the room: not yet
        (700, 400, 1000, True),  # might, and a quarter of the room
        (200, 900, 1000, False),  # might, but not yet a quarter of the room
        (250, 900, 1000, True),
        (1, 0, -5, True),  # the games alone leave no room: at once
        (0, 7, -5, False),  # nothing to reduce
    ],
)
def test_sides_are_reduced_when_many_or_when_the_players_might_not_fit(
    sides: int, known: int, room: int | None, reduced: bool
) -> None:
    assert _reduce_sides(sides, known, room) is reduced


def test_without_a_budget_the_players_are_never_refused(tmp_path: Path) -> None:
    inbox, lake = tmp_path / "inbox", tmp_path / "lake"
    _month(inbox)
    assert ingest_store.ingest_games(inbox, lake, budget=MemoryBudget()).games == GAMES
    keys = read_table(lake, tables.INGEST_PLAYERS).collect().get_column("key")
    assert keys.n_unique() == 2 * GAMES and keys.dtype == pl.UInt64
