"""Malformed-input corpus, output class (issue 9 items 17 and 18): bad records whose value or file
name would be misprinted (rich markup, a very long cell, a very long file name) are quarantined
with their line and a reason that names the value as written, the good records around them land,
and the run summary prints the value and the file name literally within 80 columns."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from pipelines.cli.run import RunOutcome
from pipelines.cli.summary import print_summary
from rating_core import tables
from tests.support.inbox import FEDERATION_HEADER, PLATFORM_HEADER, Ingested, ingest

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("csv_in_chunks_of_two_rows")]


def _game(game_id: str, **cells: str) -> str:
    """One platform CSV row, a finished rated rapid game unless `cells` say otherwise."""
    row = {
        "game_id": game_id,
        "played_at": "2026-03-02T10:00:00Z",
        "white_id": "u-a",
        "black_id": "u-b",
        "result": "1-0",
        "time_control": "600+5",
        "rated": "true",
        "kind": "live",
        "plies": "40",
        "termination": "resign",
    }
    row.update(cells)
    return ",".join(row.values()) + "\n"


def _platform(bad: str, name: str = "platform/games.csv") -> dict[str, str]:
    """A platform file: a good game, the bad one (line 3), another good game."""
    return {name: PLATFORM_HEADER + _game("ok-1") + bad + _game("ok-2", result="0-1")}


LONG_NAME = "platform/games-2026-03-exported-from-the-site-database-for-the-federation-audit.csv"
CASES = [
    (
        "markup in a result cell",
        _platform(_game("bad", result="[bold]1-0[/bold]")),
        "platform/games.csv",
        "result '[bold]1-0[/bold]' is not one of",
        3,
    ),
    (
        "markup in the file name",
        _platform(_game("bad", rated="maybe"), name="platform/[red]games.csv"),
        "platform/[red]games.csv",
        "rated 'maybe' is not true or false",
        3,
    ),
    (
        "a 300-character date cell",
        _platform(_game("bad", played_at="2026-03-" + "9" * 292)),
        "platform/games.csv",
        "is not a valid ISO 8601 date",
        3,
    ),
    (
        "a very long file name",
        _platform(_game("bad", result="1-1"), name=LONG_NAME),
        LONG_NAME,
        "result '1-1' is not one of",
        3,
    ),
    (
        "markup in a federation result",
        {
            "federation/open-2026-03.csv": FEDERATION_HEADER
            + "ok-1,open,1,2026-03-01,1001,1002,1-0,standard\n"
            + "bad,open,1,2026-03-01,1003,1004,[blink]2-0,standard\n"
            + "ok-2,open,2,2026-03-08,1001,1003,0-1,standard\n"
        },
        "federation/open-2026-03.csv",
        "result '[blink]2-0' is not one of",
        3,
    ),
    (
        "markup in a backgammon length",
        {
            "backgammon/matches-2026.csv": "match_id,ended_at,winner_id,loser_id,length,ranked,"
            "vs_ai\n"
            "ok-1,2026-03-04T12:17:00Z,u-a,u-b,3,true,false\n"
            "bad,2026-03-04T13:17:00Z,u-a,u-b,[b]3,true,false\n"
            "ok-2,2026-03-04T14:17:00Z,u-b,u-a,5,true,false\n"
        },
        "backgammon/matches-2026.csv",
        "length '[b]3' is not an integer of at least 1",
        3,
    ),
    (
        "markup in a moderation decision",
        {
            **_platform(_game("ok-3")),
            "platform/moderation/decisions-2026-04.csv": "game_id,decided_at,decision,reason\n"
            "ok-1,2026-04-02T09:00:00Z,annul,engine use\n"
            "ok-3,2026-04-02T09:30:00Z,[bold]annul,engine use\n"
            "ok-2,2026-04-02T10:00:00Z,annul,engine use\n",
        },
        "platform/moderation/decisions-2026-04.csv",
        "decision '[bold]annul' is not annul",
        3,
    ),
]
LANDED = {
    "backgammon": (tables.MATCHES, "match_id"),
    "moderation": (tables.MODERATION, "game_id"),
}
"""Where the good records of a file land (table, key), when not in the games table."""


def _summary(ingested: Ingested, inbox: Path, width: int = 80) -> str:
    """The run summary of what was ingested, rendered at `width` columns."""
    files = ingested.table(tables.INGEST_SUMMARY)
    outcome = RunOutcome(inbox, ingested.lake, files, [], [], [])
    console = Console(width=width, record=True, file=io.StringIO())
    print_summary(outcome, console)
    return console.export_text()


@pytest.mark.parametrize(
    ("files", "source_file", "reason", "line"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_misprintable_value_is_quarantined_and_printed_as_written(
    inbox_factory, files: dict[str, str], source_file: str, reason: str, line: int
) -> None:
    inbox = inbox_factory(files)
    ingested = ingest(inbox)
    bad = ingested.only_quarantined(source_file)
    assert reason in bad["reason"] and bad["line"] == line
    kind = next((k for k in LANDED if k in source_file), None)
    table, key = LANDED[kind] if kind else (tables.GAMES, "game_id")
    frame = ingested.table(table)
    landed = frame.filter(frame["source_file"] == source_file)
    assert sorted(landed[key].to_list()) == ["ok-1", "ok-2"]
    text = _summary(ingested, inbox)
    wide = [row for row in text.splitlines() if len(row.rstrip()) > 80]
    assert not wide, "\n".join(wide)
    flat = " ".join(part.strip() for part in text.splitlines())
    assert reason in flat  # the reason as written: markup not interpreted, long values folded
    rows = [row for row in text.splitlines() if "│" in row and row.split("│")[1].strip()]
    names = [row.split("│")[1].strip() for row in rows]
    if source_file not in names:  # cut in the middle: the folder and the end of the name stay
        cut = [n.split("…") for n in names if "…" in n]
        assert any(
            source_file.startswith(head)
            and source_file.endswith(tail)
            and min(len(head), len(tail)) >= 8
            for head, tail in cut
        ), names
    assert len(source_file) < 60 or source_file not in names  # a long name is never whole at 80
