"""Malformed-input corpus: dates outside what can be rated (issue 9 item 1).

Games and matches from 1850 up to today are rated in their period; a date after today or before
1850 is quarantined with the date and a reason, and so is a tournament game dated far from its
own tournament (more than 366 days from the tournament's median game date), which then does not
move the tournament's period. Asset tier: the ingest assets, then the period assets through
`dagster.materialize`; end-to-end tier: `ratings run`, including a lake left with a stray
`games/period=3000-01` partition by older code.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest

from assets.resources import PipelinePaths
from pipelines.registry import PERIOD_ASSETS
from rating_core import tables
from rating_core.lake import publishing as publish
from rating_core.lake.data_periods import data_periods
from rating_core.lake.storage import table_partitions, write_partitioned
from rating_core.schemas import GAMES_SCHEMA, conform, empty
from tests.support.inbox import (
    FEDERATION_HEADER,
    PLATFORM_HEADER,
    ingest,
    ratings,
    write_inbox,
)
from tests.support.periods import materialize_period

# The bad-input corpus runs the ingest assets and the `ratings` command on each case.
pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("csv_in_chunks_of_two_rows")]

BACKGAMMON_HEADER = "match_id,ended_at,winner_id,loser_id,length,ranked\n"
CHESS_TOO = PLATFORM_HEADER + "c1,2026-01-02T10:00:00Z,u-a,u-b,1-0,300+0,true,live,40,resign\n"
"""One good chess game beside backgammon files (a backgammon-only inbox is issue 9 item 14)."""


def platform_row(game_id: str, played_at: str) -> str:
    return f"{game_id},{played_at},u-a,u-b,1-0,300+0,true,live,40,resign\n"


def federation_row(game_id: str, tournament: str, played_on: str, rnd: int = 1) -> str:
    return f"{game_id},{tournament},{rnd},{played_on},f1,f2,1-0,standard\n"


def pgn_game(game_id: str, date: str, white: str, black: str) -> str:
    return (
        f'[Event "Rated blitz game"]\n[Site "https://example.org/{game_id}"]\n[Date "{date}"]\n'
        f'[White "{white}"]\n[Black "{black}"]\n[Result "1-0"]\n[TimeControl "300+0"]\n\n'
        "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 1-0\n\n"
    )


def trf(start: str, end: str, round_date: str | None = None) -> str:
    """A two-player, one-round TRF event (tags 042/052 and the 132 round date as given)."""

    def player(rank: int, name: str, fide: int, opponent: int, colour: str, score: str) -> str:
        head = f"001 {rank:>4} m{'':>3} {name:<33} 2000 NOR {fide:>11} 1990/01/01  1.0 {rank:>4}"
        return head + "  " + f"{opponent:>4} {colour} {score}"

    return "\n".join(
        [
            "012 Open",
            f"042 {start}",
            f"052 {end}",
            *([f"132{' ' * 88}{round_date}"] if round_date else []),
            player(1, "One,A", 1000001, 2, "w", "1"),
            player(2, "Two,B", 1000002, 1, "b", "0"),
            "",
        ]
    )


# (name, files, bad file, expected reason substring, expected line, ids that must land)
CASES = [
    (
        "platform csv after today",
        {
            "platform/games.csv": PLATFORM_HEADER
            + platform_row("ok1", "2026-01-03T10:00:00Z")
            + platform_row("bad", "2999-01-01T10:00:00Z")
            + platform_row("ok2", "2026-01-04T10:00:00Z")
        },
        "platform/games.csv",
        "dated 2999-01-01, after today",
        3,
        {"ok1", "ok2"},
    ),
    (
        "platform csv before 1850",
        {
            "platform/games.csv": PLATFORM_HEADER
            + platform_row("ok1", "2026-01-03T10:00:00Z")
            + platform_row("bad", "1700-05-01T10:00:00Z")
        },
        "platform/games.csv",
        "dated 1700-05-01, before 1850: not a real game date?",
        3,
        {"ok1"},
    ),
    (
        "platform csv 1849-12-31 is before 1850",
        {
            "platform/games.csv": PLATFORM_HEADER
            + platform_row("bad", "1849-12-31T23:00:00Z")
            + platform_row("ok1", "1850-01-01T00:00:00Z")
        },
        "platform/games.csv",
        "dated 1849-12-31, before 1850",
        2,
        {"ok1"},
    ),
    (
        "platform pgn after today",
        {
            "platform/games.pgn": pgn_game("ok1", "2026.01.05", "u-a", "u-b")
            + pgn_game("bad", "2999.01.01", "u-b", "u-a")
            + pgn_game("ok2", "2026.01.06", "u-b", "u-a")
        },
        "platform/games.pgn",
        "dated 2999-01-01, after today",
        11,
        {"ok1", "ok2"},
    ),
    (
        "federation game before 1850 inside a 2026 event",
        {
            "federation/t.csv": FEDERATION_HEADER
            + federation_row("t1", "T", "2026-03-10", 1)
            + federation_row("t2", "T", "1800-03-11", 2)
            + federation_row("t3", "T", "2026-03-12", 3)
        },
        "federation/t.csv",
        "dated 1800-03-11, before 1850: not a real game date?",
        3,
        {"t1", "t3"},
    ),
    (
        "federation game years away from its 2026 event",
        {
            "federation/t.csv": FEDERATION_HEADER
            + federation_row("t1", "T", "2026-03-10", 1)
            + federation_row("t2", "T", "2026-03-11", 2)
            + federation_row("t3", "T", "1990-03-12", 3)
            + federation_row("t4", "T", "2026-03-12", 4)
        },
        "federation/t.csv",
        "dated 1990-03-12, more than 366 days from the other games of tournament 'T'",
        4,
        {"t1", "t2", "t4"},
    ),
    (
        "federation game after today",
        {
            "federation/t.csv": FEDERATION_HEADER
            + federation_row("t1", "T", "2026-03-10", 1)
            + federation_row("t2", "T", "2999-03-11", 2)
        },
        "federation/t.csv",
        "dated 2999-03-11, after today",
        3,
        {"t1"},
    ),
    (
        "trf tournament end (052) after today dates its games",
        {
            "federation/open.trf": trf("2026/01/01", "2999/01/01"),
            "federation/t.csv": FEDERATION_HEADER + federation_row("t1", "T", "2026-03-10"),
        },
        "federation/open.trf",
        "dated 2999-01-01, after today",
        4,
        {"t1"},
    ),
    (
        "trf tournament end (052) after its dated rounds and today",
        {
            "federation/open.trf": trf("2026/01/01", "2999/01/01", "26/01/01"),
            "federation/t.csv": FEDERATION_HEADER + federation_row("t1", "T", "2026-03-10"),
        },
        "federation/open.trf",
        "tournament end (TRF 052) dated 2999-01-01, after today",
        5,
        {"t1"},
    ),
    (
        "trf start (042) after today, no 052",
        {
            "federation/open.trf": trf("2999/02/01", ""),
            "federation/t.csv": FEDERATION_HEADER + federation_row("t1", "T", "2026-03-10"),
        },
        "federation/open.trf",
        "dated 2999-02-01, after today",
        4,
        {"t1"},
    ),
    (
        "club game years away from its event",
        {
            "clubs/chessclub/t.csv": FEDERATION_HEADER
            + federation_row("c1", "C", "2026-02-01", 1)
            + federation_row("c2", "C", "2026-02-08", 2)
            + federation_row("c3", "C", "2021-02-15", 3)
        },
        "clubs/chessclub/t.csv",
        "dated 2021-02-15, more than 366 days from the other games of tournament 'C'",
        4,
        {"c1", "c2"},
    ),
    (
        "backgammon match after today",
        {
            "platform/games.csv": CHESS_TOO,
            "backgammon/m.csv": BACKGAMMON_HEADER
            + "m1,2026-01-03T10:00:00Z,p1,p2,5,true\n"
            + "m2,2999-01-01T10:00:00Z,p2,p1,5,true\n"
            + "m3,2026-01-04T10:00:00Z,p2,p1,5,true\n",
        },
        "backgammon/m.csv",
        "dated 2999-01-01, after today",
        3,
        {"m1", "m3"},
    ),
    (
        "backgammon match before 1850",
        {
            "platform/games.csv": CHESS_TOO,
            "backgammon/m.csv": BACKGAMMON_HEADER
            + "m1,1700-05-01T10:00:00Z,p1,p2,5,true\n"
            + "m2,2026-01-04T10:00:00Z,p2,p1,5,true\n",
        },
        "backgammon/m.csv",
        "dated 1700-05-01, before 1850",
        2,
        {"m2"},
    ),
]


@pytest.mark.parametrize(
    ("files", "bad_file", "reason", "line", "landed"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_a_date_outside_the_ratable_range_is_quarantined(
    tmp_path: Path, files: dict, bad_file: str, reason: str, line: int, landed: set
) -> None:
    done = ingest(write_inbox(tmp_path, files))
    assert done.result.success
    row = done.only_quarantined(bad_file)
    assert reason in row["reason"], row
    assert row["line"] == line
    assert row["value"] and row["value"][:4] in reason
    table = done.table(tables.MATCHES) if bad_file.startswith("backgammon") else done.games
    id_col = "match_id" if "match_id" in table.columns else "game_id"
    assert set(table.get_column(id_col).to_list()) == landed
    # nothing ever lands in a period outside 1850-01 .. this month
    periods = table.get_column("period").unique().to_list()
    assert all("1850-01" <= p <= "2026-12" for p in periods), periods


def test_a_far_game_does_not_move_its_tournament_period(tmp_path: Path) -> None:
    files = {
        "federation/t.csv": FEDERATION_HEADER
        + federation_row("t1", "T", "2026-03-10", 1)
        + federation_row("t2", "T", "2026-03-11", 2)
        + federation_row("t3", "T", "2026-03-12", 3)
        + federation_row("late", "T", "2026-11-30", 4)  # in range, but 263 days away: kept
        + federation_row("typo", "T", "2028-03-12", 5)  # would make the period 2028-03
    }
    done = ingest(write_inbox(tmp_path, files))
    games = done.games
    assert set(games.get_column("game_id")) == {"t1", "t2", "t3", "late"}
    assert games.get_column("period").unique().to_list() == ["2026-11"]
    assert done.only_quarantined("federation/t.csv")["line"] == 6


OLD_INBOX = {
    "platform/games.csv": PLATFORM_HEADER
    + platform_row("p60", "1960-05-07T10:00:00Z")
    + platform_row("p61", "1960-05-08T10:00:00Z"),
    "federation/t.csv": FEDERATION_HEADER
    + federation_row("t1", "T99", "1999-11-10", 1)
    + federation_row("t2", "T99", "1999-11-11", 2),
    "federation/lists/fide-standard@1999-10.csv": (
        "player_id,rating,rated_games,peak_rating\nf1,1800,50,1850\nf2,1900,60,1950\n"
    ),
}


def test_a_1960_game_and_a_1999_event_are_rated_in_their_periods(tmp_path: Path) -> None:
    inbox = write_inbox(tmp_path, OLD_INBOX)
    done = ingest(inbox)
    assert done.result.success and done.quarantine.is_empty()
    assert table_partitions(done.lake, tables.GAMES) == ["1960-05", "1999-11"]
    periods = data_periods(done.lake)
    assert periods[0] == "1960-05" and periods[-1] == "1999-11"
    res = {"paths": PipelinePaths(inbox=str(inbox), lake=str(done.lake))}
    for partition in ("1960-05-01", "1999-11-01"):  # the first partition has no previous one
        result = materialize_period(PERIOD_ASSETS, resources=res, partition_key=partition)
        assert result.success, partition
    site = publish.read_list(done.lake, "site-elo", "1960-05")
    assert set(site.get_column("player_id")) == {"u-a", "u-b"}
    fide = publish.read_list(done.lake, "fide-standard", "1999-11")
    ratings_after = dict(zip(fide["player_id"], fide["rating"], strict=True))
    assert ratings_after["f1"] > 1800 and ratings_after["f2"] < 1900  # f1 beat f2 twice


def test_data_periods_ignore_stray_partitions(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    games = empty(GAMES_SCHEMA).with_columns(pl.col("period"))
    write_partitioned(lake, tables.GAMES, games, partitions=["2026-01", "3000-01", "1700-01"])
    assert data_periods(lake) == ["2026-01"]
    assert data_periods(lake, today=date(2025, 12, 31)) == []  # "today" is a parameter


@pytest.mark.slow
def test_run_rates_old_periods_and_quarantines_impossible_dates(tmp_path: Path) -> None:
    """End to end: a 1999 event and 1999 online games are published in their months; a game
    dated 2999 and a match dated 1700 are quarantined instead of crashing the run."""
    files = {
        "federation/t.csv": OLD_INBOX["federation/t.csv"],
        "federation/lists/fide-standard@1999-10.csv": OLD_INBOX[
            "federation/lists/fide-standard@1999-10.csv"
        ],
        "platform/games.csv": PLATFORM_HEADER
        + platform_row("p1", "1999-12-01T10:00:00Z")
        + platform_row("future", "2999-01-01T10:00:00Z")
        + platform_row("p2", "1999-12-02T10:00:00Z"),
        "backgammon/m.csv": BACKGAMMON_HEADER
        + "m1,1999-12-03T10:00:00Z,p1,p2,5,true\n"
        + "m2,1700-05-01T10:00:00Z,p2,p1,5,true\n",
    }
    inbox, lake = write_inbox(tmp_path, files), tmp_path / "lake"
    proc = ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    assert proc.returncode == 0, proc.stderr
    assert publish.latest_version(lake, "fide-standard", "1999-11") == 1
    assert publish.latest_version(lake, "site-elo", "1999-12") == 1
    assert publish.latest_version(lake, "fibs", "1999-12") == 1
    assert table_partitions(lake, tables.GAMES) == ["1999-11", "1999-12"]
    quarantine = ingest(inbox, tmp_path / "again").quarantine
    assert set(quarantine.get_column("record")) == {"future", "m2"}


@pytest.mark.slow
def test_a_lake_with_a_stray_future_partition_recovers(tmp_path: Path) -> None:
    """Older code wrote `games/period=3000-01` (and crashed); the next run with the input
    fixed empties it, ignores it and publishes."""
    inbox = write_inbox(
        tmp_path,
        {
            "platform/games.csv": PLATFORM_HEADER
            + platform_row("ok1", "2026-01-03T10:00:00Z")
            + platform_row("ok2", "2026-01-04T10:00:00Z")
        },
    )
    lake = tmp_path / "lake"
    stray = pl.DataFrame({"game_id": ["typo"], "source": ["platform"], "period": ["3000-01"]}).cast(
        {"source": GAMES_SCHEMA["source"]}
    )
    write_partitioned(lake, tables.GAMES, stray)
    write_partitioned(
        lake, tables.MATCHES, pl.DataFrame({"match_id": ["m"], "period": ["3000-01"]})
    )
    proc = ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    assert proc.returncode == 0, proc.stderr
    assert publish.latest_version(lake, "site-elo", "2026-01") == 1
    again = ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    assert again.returncode == 0, again.stderr


def test_data_periods_reach_the_fide_list_of_the_last_months_late_tournament(
    tmp_path: Path,
) -> None:
    """RULES §3.4: a federation tournament ending on one of the last two days of the last month
    with data goes on the next period's FIDE list, so the run rates that period too (and only
    then: one ending on 28 June, or a platform game on 30 June, adds nothing)."""

    def lake_with(rows: list[tuple[str, str | None, str, str]]) -> Path:
        lake = tmp_path / f"lake-{len(list(tmp_path.iterdir()))}"
        games = pl.DataFrame(
            [
                {
                    "game_id": g,
                    "tournament_id": t,
                    "source": source,
                    "played_at": datetime.fromisoformat(day).replace(tzinfo=UTC),
                    "period": day[:7],
                }
                for g, t, day, source in rows
            ]
        )
        write_partitioned(lake, tables.GAMES, conform(games, GAMES_SCHEMA))
        return lake

    today = date(2026, 12, 5)
    late = lake_with(
        [("a", "T", "2026-05-10", "federation"), ("b", "U", "2026-06-30", "federation")]
    )
    assert data_periods(late, today) == ["2026-05", "2026-06", "2026-07"]
    in_time = lake_with(
        [("a", "T", "2026-05-10", "federation"), ("b", "U", "2026-06-28", "federation")]
    )
    assert data_periods(in_time, today) == ["2026-05", "2026-06"]
    online = lake_with([("a", None, "2026-06-30", "platform")])
    assert data_periods(online, today) == ["2026-06"]
    # never a period after today's month
    assert data_periods(late, date(2026, 6, 30)) == ["2026-05", "2026-06"]
