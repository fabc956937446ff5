"""Malformed-input corpus, TRF reports (issue 9 items 6 and 20), through the ingest assets.

Every case starts from one good four-player, two-round report and breaks one thing in it; the
case checks the quarantine reason, the line it points at, and which of the four games still land.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.support.inbox import ingest, write_inbox

# The bad-input corpus runs the ingest assets and the `ratings` command on each case.
pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("csv_in_chunks_of_two_rows")]

FILE = "federation/corpus-open.trf"


def record(rank: int, name: str, rating: str, fide: str, slots: list[str]) -> str:
    """A `001` record in the TRF16/TRF26 columns (rating and FIDE id as text, to break them)."""
    head = f"001 {rank:>4} m    {name:<33} {rating:>4} TUR {fide:>11} 1990/01/01  1.0 {rank:>4}"
    return head + "  " + "".join(f"{s:<10}" for s in slots).rstrip()


def slot(opp: int, colour: str, code: str) -> str:
    """One 10-column round slot: opponent, colour, result."""
    return f"{opp:>4} {colour} {code}"


def base() -> list[str]:
    """The good report: round 1 is 1-3 (1-0) and 2-4 (0-1), round 2 is 2-1 (draw) and 4-3 (0-1)."""
    return [
        "012 Corpus Open",  # line 1
        "042 2025/05/01",  # 2
        "052 2025/05/31",  # 3
        record(1, "Bir,Ali", "2100", "34600001", [slot(3, "w", "1"), slot(2, "b", "=")]),  # 4
        record(2, "Iki,Banu", "2000", "34600002", [slot(4, "w", "0"), slot(1, "w", "=")]),  # 5
        record(3, "Uc,Cem", "2345", "34600003", [slot(1, "b", "0"), slot(4, "b", "1")]),  # 6
        record(4, "Dort,Deniz", "1900", "34600004", [slot(2, "b", "1"), slot(3, "w", "0")]),  # 7
    ]


def with_lines(changes: dict[int, str | None]) -> str:
    """The good report with lines replaced (1-based; beyond the end: appended)."""
    lines = base()
    for number, text in sorted(changes.items()):
        if number > len(lines):
            lines.append(text or "")
        else:
            lines[number - 1] = text or ""
    return "\n".join(lines) + "\n"


PLAYER_3 = base()[5]
PLAYER_4 = base()[6]
ALL_GAMES = {"r1:1-3", "r1:2-4", "r2:2-1", "r2:4-3"}
WITHOUT_3 = {"r1:2-4", "r2:2-1"}  # the games player 3 does not play

CASES = [
    # (name, line changes, reason, line, games that land)
    (
        "record cut in the name",
        {6: PLAYER_3[:18]},
        "player record is cut short: it ends at column 18, in the name (columns 15-47)",
        6,
        WITHOUT_3,
    ),
    (
        "record cut in the rating (2345 would read as 23)",
        {6: PLAYER_3[:50]},
        "player record is cut short: it ends at column 50, in the rating (columns 49-52)",
        6,
        WITHOUT_3,
    ),
    (
        "record cut in the FIDE id (34600003 would read as player 3460)",
        {6: PLAYER_3[:64]},
        "player record is cut short: it ends at column 64, in the FIDE id (columns 58-68)",
        6,
        WITHOUT_3,
    ),
    (
        "record cut before its points",
        {6: PLAYER_3[:79]},
        "in the birth date (columns 70-79), but a 001 record holds every field up to the points",
        6,
        WITHOUT_3,
    ),
    (
        "game recorded against a cut record",
        {6: PLAYER_3[:64]},
        "opponent 3 in round 1 has a player record cut short (line 6)",
        4,
        WITHOUT_3,
    ),
    (
        "start rank not a number",
        {6: PLAYER_3[:6] + "x" + PLAYER_3[7:]},
        "start rank 'x3' in columns 5-8 of the 001 record is not a positive number",
        6,
        WITHOUT_3,
    ),
    (
        "rating not a number",
        {6: record(3, "Uc,Cem", "2z45", "34600003", [slot(1, "b", "0"), slot(4, "b", "1")])},
        "rating '2z45' in columns 49-52 of player 3 is not a number",
        6,
        WITHOUT_3,
    ),
    (
        "FIDE id not a number",
        {6: record(3, "Uc,Cem", "2345", "346O0003", [slot(1, "b", "0"), slot(4, "b", "1")])},
        "FIDE id '346O0003' in columns 58-68 of player 3 is not a number",
        6,
        WITHOUT_3,
    ),
    (
        "player with neither FIDE id nor name",
        {6: record(3, "", "2345", "0", [slot(1, "b", "0"), slot(4, "b", "1")])},
        "player 3 has neither a FIDE id nor a name",
        6,
        WITHOUT_3,
    ),
    (
        "game recorded against a quarantined record",
        {6: record(3, "Uc,Cem", "2z45", "34600003", [slot(1, "b", "0"), slot(4, "b", "1")])},
        "opponent 3 in round 2 has a quarantined 001 record (line 6)",
        7,
        WITHOUT_3,
    ),
    (
        "start rank given twice",
        {8: PLAYER_3},
        "start rank 3 appears again (first on line 6)",
        8,
        ALL_GAMES,
    ),
    (
        "round slot that is not 'opponent colour result'",
        {7: record(4, "Dort,Deniz", "1900", "34600004", [slot(2, "b", "1"), "   3 x ?"])},
        "round 2 slot (columns 102-109) of player 4 is not 'opponent colour result'",
        7,
        ALL_GAMES,  # 4-3 of round 2 still lands from player 3's record
    ),
    (
        "round slot without a result",
        {7: PLAYER_4[:-1].rstrip()},
        "player 4 has no result against 3 in round 2",
        7,
        ALL_GAMES,
    ),
    (
        "opponent who is not in the file",
        {4: record(1, "Bir,Ali", "2100", "34600001", [slot(3, "w", "1"), slot(9, "b", "=")])},
        "opponent start rank 9 in round 2 is not a player in the file",
        4,
        {"r1:1-3", "r1:2-4", "r2:4-3"},
    ),
    (
        "player paired against themselves",
        {4: record(1, "Bir,Ali", "2100", "34600001", [slot(3, "w", "1"), slot(1, "b", "=")])},
        "player 1 is paired against themselves in round 2",
        4,
        {"r1:1-3", "r1:2-4", "r2:4-3"},
    ),
    (
        "two records of one game that disagree",
        {7: record(4, "Dort,Deniz", "1900", "34600004", [slot(2, "b", "0"), slot(3, "w", "0")])},
        "round 1: player 2 records '4 w 0' but player 4 records '2 b 0'",
        7,
        {"r1:1-3", "r2:2-1", "r2:4-3"},
    ),
    (
        "bye code that names an opponent",
        {6: record(3, "Uc,Cem", "2345", "34600003", [slot(1, "b", "0"), slot(4, "-", "H")])},
        "bye code 'H' in round 2 names opponent 4",
        6,
        {"r1:1-3", "r1:2-4", "r2:2-1"},
    ),
    (
        "end date (tag 052) that is not a date",
        {3: "052 end of May"},
        "tag 052 end date 'end of May' is not a date",
        3,
        ALL_GAMES,  # dated by the start date (042)
    ),
    (
        "round date (tag 132) that is not a date",
        {8: "132" + " " * 88 + "25/05/01  someday"},
        "tag 132 date of round 2 'someday' is not a date",
        8,
        ALL_GAMES,  # round 2 is dated by the end date (052)
    ),
    (
        "round without any date",
        {2: "042 spring", 3: "052 later", 8: "132" + " " * 88 + "25/05/01"},
        "no date for round 2: tags 132, 052 and 042 give none",
        4,
        {"r1:1-3", "r1:2-4"},
    ),
]


def landed_pairings(games: pl.DataFrame, source_file: str) -> set[str]:
    """`r<round>:<white>-<black>` of the file's games in the games table (from their ids)."""
    prefix = f"{source_file}:Corpus Open:"
    ids = games.filter(pl.col("source_file") == source_file)["game_id"].to_list()
    assert all(i.startswith(prefix) for i in ids), ids
    return {i.removeprefix(prefix) for i in ids}


def test_the_good_report_lands_whole(tmp_path: Path) -> None:
    done = ingest(write_inbox(tmp_path, {FILE: with_lines({})}))
    assert done.result.success
    assert landed_pairings(done.games, FILE) == ALL_GAMES
    assert done.reasons(FILE) == []


@pytest.mark.parametrize(
    ("changes", "reason", "line", "landed"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_bad_trf_record_is_quarantined_and_the_rest_lands(
    tmp_path: Path, changes: dict[int, str | None], reason: str, line: int, landed: set[str]
) -> None:
    done = ingest(write_inbox(tmp_path, {FILE: with_lines(changes)}))
    assert done.result.success
    quarantine = done.quarantine.filter(pl.col("source_file") == FILE)
    hits = quarantine.filter(pl.col("reason").str.contains(reason, literal=True))
    assert hits.height >= 1, quarantine["reason"].to_list()
    assert line in hits["line"].to_list(), hits
    assert landed_pairings(done.games, FILE) == landed


def test_cut_record_keeps_the_record_text_and_invents_no_player(tmp_path: Path) -> None:
    cut = PLAYER_3[:64]
    done = ingest(write_inbox(tmp_path, {FILE: with_lines({6: cut})}))
    row = done.quarantine.filter(pl.col("line") == 6).row(0, named=True)
    assert (row["record"], row["value"]) == ("rank 3", cut)
    games = done.games.filter(pl.col("source_file") == FILE)
    players = set(games["white_id"]) | set(games["black_id"])
    assert players == {"34600001", "34600002", "34600004"}  # no player "3460"


def test_two_reports_with_the_same_tournament_name_both_land(tmp_path: Path) -> None:
    other = "clubs/ankara-sk/corpus-open.trf"
    done = ingest(write_inbox(tmp_path, {FILE: with_lines({}), other: with_lines({})}))
    assert done.result.success
    assert landed_pairings(done.games, FILE) == ALL_GAMES
    assert landed_pairings(done.games, other) == ALL_GAMES
    assert not any("appears again" in r for r in done.reasons())
