"""Tests of the memory budget (`--memory`): sizes as people write them, and what they set."""

from __future__ import annotations

import pytest

from rating_core.budget import (
    BASE_BYTES,
    BATCH_GAMES,
    GAME_BYTES,
    LEAST_MEMORY,
    LIST_ROWS,
    PLAYER_BYTES,
    SORT_MEMORY,
    STRETCH_LIMIT,
    WINDOW_MAX,
    ZSTD_WINDOW_LIMIT,
    BudgetError,
    MemoryBudget,
    is_decimal,
    memory_bytes,
    players_refusal,
    run_memory_bytes,
    run_need,
    show_budget,
    show_size,
    show_size_like,
)


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("3G", 3 * 1024**3),
        ("3GiB", 3 * 1024**3),
        ("2GB", 2 * 1000**3),
        ("1.5 GiB", int(1.5 * 1024**3)),
        ("512MiB", 512 * 1024**2),
        ("100000000", 100_000_000),
    ],
)
def test_sizes_are_read_as_written(text: str, size: int) -> None:
    assert memory_bytes(text) == size


@pytest.mark.parametrize("text", ["", "3x", "-1G", "G", "1e9", "nan"])
def test_what_is_not_a_size_is_refused_in_one_sentence(text: str) -> None:
    with pytest.raises(BudgetError, match="--memory takes a size such as"):
        memory_bytes(text)


def test_a_budget_below_the_least_is_refused() -> None:
    with pytest.raises(BudgetError, match="--memory must be at least 64 MiB"):
        memory_bytes("10M")
    assert memory_bytes("64MiB") == LEAST_MEMORY


def test_no_budget_keeps_the_defaults_and_a_budget_shrinks_them() -> None:
    none = MemoryBudget()
    assert (none.text_window, none.zstd_window, none.stretch) == (
        WINDOW_MAX,
        ZSTD_WINDOW_LIMIT,
        STRETCH_LIMIT,
    )
    assert none.fits(10**9, 10**10)
    small = MemoryBudget(256 * 1024**2)
    assert small.text_window == 8 * 1024**2
    assert small.zstd_window == 64 * 1024**2 and small.stretch == 32 * 1024**2
    assert MemoryBudget(64 * 1024**2).text_window == 4 * 1024**2  # never below 4 MiB
    # a platform's month of 30M games among 1M players fits in 3 GiB (issue 31 item 4), not in 2
    assert MemoryBudget(3 * 1024**3).fits(1_000_000, 30_000_000)
    assert not MemoryBudget(2 * 1024**3).fits(1_000_000, 30_000_000)


def test_the_rating_holds_less_at_a_time_in_a_smaller_budget() -> None:
    none = MemoryBudget()
    assert (none.batch_games, none.sort_memory, none.list_rows) == (
        BATCH_GAMES,
        SORT_MEMORY,
        LIST_ROWS,
    )
    small = MemoryBudget(600 * 1024**2)
    assert small.batch_games == 102_400 and small.list_rows == 102_400
    assert small.sort_memory == 100 * 1024**2
    least = MemoryBudget(LEAST_MEMORY)  # never below what a batch needs to be worth its cost
    assert (least.batch_games, least.sort_memory, least.list_rows) == (10_922, 64 << 20, 50_000)
    assert MemoryBudget(64 * 1024**3).batch_games == BATCH_GAMES  # never above the defaults


def test_sizes_are_shown_in_the_unit_they_fill() -> None:
    assert show_size(3 * 1024**3) == "3.0 GiB"
    assert show_size(32 * 1024**2) == "32 MiB"
    assert show_size(12 * 1024**3) == "12 GiB"
    assert show_size(100) == "100 B"


def test_a_size_just_under_a_unit_is_shown_in_that_unit_never_as_1024_of_the_one_below() -> None:
    assert show_size(1024**3 - 1) == "1.0 GiB"  # the scanner's chunk limit, not `1024 MiB`
    assert show_size(1023.5 * 1024**2) == "1.0 GiB"
    assert show_size(1023.4 * 1024**2) == "1023 MiB"
    assert show_size(1024**2 - 1) == "1 MiB"
    assert (show_size(1023), show_size(1024), show_size(600 * 1024)) == (
        "1023 B",
        "1 KiB",
        "600 KiB",
    )


def test_a_run_below_what_every_run_holds_is_refused_in_one_sentence_naming_the_least() -> None:
    least = BASE_BYTES // 1024**2
    with pytest.raises(BudgetError) as refused:
        run_memory_bytes("300MiB")
    assert str(refused.value) == (
        f"--memory 300MiB is less than the {least} MiB that every run holds before any game or "
        "player (Python, Polars, DuckDB, Dagster and the rating kernels): give --memory "
        f"{least}MiB or more"
    )
    assert run_memory_bytes(f"{least}MiB") == BASE_BYTES
    with pytest.raises(BudgetError, match="--memory takes a size such as"):
        run_memory_bytes("lots")


def test_a_budget_in_decimal_units_is_answered_in_decimal_units() -> None:
    least_mb = -(-BASE_BYTES // 1000**2)  # rounded up: the suggestion must be accepted
    with pytest.raises(BudgetError) as refused:
        run_memory_bytes("300MB")
    assert str(refused.value).endswith(f"give --memory {least_mb}MB or more")
    assert run_memory_bytes(f"{least_mb}MB") >= BASE_BYTES


def test_a_run_shares_out_what_its_base_players_and_games_leave() -> None:
    total = 2 * 1024**3
    run = MemoryBudget.for_run(total)
    assert run.free == total - BASE_BYTES
    rating = run.holding(100_000, 1_000_000)
    assert rating.free == total - BASE_BYTES - 100_000 * PLAYER_BYTES - 1_000_000 * GAME_BYTES
    assert rating.batch_games == rating.free // 6 // 1024 < run.batch_games
    assert rating.sort_memory == rating.free // 6 < run.sort_memory
    assert run_need(100_000, 1_000_000) == total - rating.free
    assert rating.fits(100_000, 1_000_000) and not rating.fits(2_000_000, 1_000_000)
    # nothing left: every size at its least, the archive limits at theirs
    full = MemoryBudget.for_run(BASE_BYTES)
    assert full.free == 0
    assert (full.batch_games, full.sort_memory, full.list_rows) == (10_000, 64 << 20, 50_000)
    assert (full.text_window, full.zstd_window, full.stretch) == (4 << 20, 8 << 20, 16 << 20)
    assert full.csv_rows == 10_000


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("100MB", "100 MB"),
        ("512MiB", "512 MiB"),
        ("1.5GiB", "1.5 GiB"),
        ("1.5gb", "1.5 GB"),
        ("3G", "3 GiB"),
        ("1500MiB", "1500 MiB"),
        ("2GB", "2 GB"),
        ("123456789", "118 MiB"),  # no unit states it: the binary unit it fills
    ],
)
def test_a_budget_is_shown_as_the_user_wrote_it(text: str, shown: str) -> None:
    """`--memory 100MB` is never shown converted to `95.4 MiB`."""
    assert show_budget(memory_bytes(text)) == shown


def test_a_size_beside_a_budget_is_shown_in_the_budgets_units() -> None:
    assert is_decimal(memory_bytes("200MB")) and not is_decimal(memory_bytes("200MiB"))
    assert show_size_like(1_234_000_000, memory_bytes("200MB")) == "1.2 GB"
    assert show_size_like(524_000_000, memory_bytes("200MB")) == "524 MB"
    assert show_size_like(999_700_000, memory_bytes("200MB")) == "1.0 GB"  # never `1000 MB`
    assert show_size_like(500 * 1024**2, memory_bytes("200MiB")) == "500 MiB"


@pytest.mark.parametrize("total", [BASE_BYTES, 600 * 1024**2, 10**9, 3 * 1024**3 + 7])
@pytest.mark.parametrize("games", [0, 1, 1000, 3_000_000])
def test_the_players_room_is_the_most_players_that_fit(total: int, games: int) -> None:
    budget = MemoryBudget.for_run(total)
    room = budget.players_room(games)
    assert room is not None
    assert budget.fits(max(room, 0), games) is (room >= 0)
    assert not budget.fits(room + 1, games)
    assert MemoryBudget().players_room(games) is None


def test_a_refusal_counted_so_far_says_at_least_in_the_budget_s_units() -> None:
    players, games, total = 600_000, 2_000_000, 10**9  # `--memory 1GB`
    need = run_need(players, games)
    text = players_refusal(
        "f.pgn names at least 600,000 players, which need", players, games, total, True
    )
    assert text == (
        f"f.pgn names at least 600,000 players, which need at least "
        f"{show_size_like(players * PLAYER_BYTES + games * GAME_BYTES, total)} beside the "
        f"{show_size_like(BASE_BYTES, total)} that every run holds (Python, Polars, DuckDB, "
        f"Dagster and the rating kernels), at least {show_size_like(need, total)} in all, more "
        f"than the --memory budget of 1 GB: give --memory {-(-need // 1000**2)}MB or more"
    )
    assert show_size_like(need, total).endswith(" GB")
    lake = players_refusal("the lake's players need", players, games, 1024**3, False)
    assert " about " in lake and "at least" not in lake and lake.endswith("MiB or more")
