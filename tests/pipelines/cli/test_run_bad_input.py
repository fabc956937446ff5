"""Malformed-input corpus, errors and moderation (issue 9 items 13, 16, 20).

Two classes of cases:
- a bad moderation decision is quarantined with its file, line, value and reason, and the good
  decisions of the same file still apply;
- a file that cannot be read at all stops the ingest with one sentence naming the file and what is
  wrong with it, in plain words (no Python class name, not the decoder's low-level error).
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from pipelines.cli.run import _failures
from rating_core import tables
from tests.support.inbox import PLATFORM_HEADER, ingest, write_inbox

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("csv_in_chunks_of_two_rows")]

GAMES = PLATFORM_HEADER + "".join(
    f"g{n},2026-03-0{n}T10:00:00Z,p{n},q{n},1-0,900+10,true,live,60,normal\n" for n in range(1, 6)
)
MODERATION = "platform/moderation/decisions.csv"
MODERATION_HEADER = "game_id,decided_at,decision,reason\n"
GOOD_DECISION = "g1,2026-04-01,annul,engine use\n"
PYTHON_NAMES = re.compile(r"[A-Za-z]+(Error|Exception)\b|zlib\.error|polars\.|rating_core\.")

# (case, bad line after the good decision, expected reason, expected line)
BAD_DECISIONS = [
    ("date is not a date", "g2,last tuesday,annul,x\n", "decided_at 'last tuesday' is not", 3),
    ("decision is not annul", "g3,2026-04-01,ban,x\n", "decision 'ban' is not annul", 3),
    ("empty game id", ",2026-04-01,annul,no id\n", "the game id is empty", 3),
    (
        "second decision on the same game",
        "g1,2026-04-03,annul,again\n",
        "game id 'g1' appears again (first on line 2)",
        3,
    ),
]


@pytest.mark.parametrize(
    ("bad", "reason", "line"),
    [case[1:] for case in BAD_DECISIONS],
    ids=[case[0] for case in BAD_DECISIONS],
)
def test_bad_moderation_decision_is_quarantined_and_the_good_one_applies(
    tmp_path: Path, bad: str, reason: str, line: int
) -> None:
    inbox = write_inbox(
        tmp_path,
        {
            "platform/games.csv": GAMES,
            MODERATION: MODERATION_HEADER + GOOD_DECISION + bad + "g4,2026-04-02,annul,bot\n",
        },
    )
    ingested = ingest(inbox)
    row = ingested.only_quarantined(MODERATION)
    assert reason in row["reason"], row
    assert row["line"] == line
    applied = ingested.table(tables.MODERATION)
    assert sorted(applied.get_column("game_id")) == ["g1", "g4"]  # the good ones around it
    assert ingested.games.height == 5


PACKED = gzip.compress(
    b"".join(
        b'[Event "x"]\n[Date "2026.03.%02d"]\n[White "a"]\n[Black "b"]\n[Result "1-0"]\n\n'
        b"1. e4 e5 2. Nf3 Nc6 1-0\n\n" % (n % 28 + 1)
        for n in range(3000)
    )
)
UNREADABLE = [
    (
        "header names a column twice",
        {"platform/games.csv": PLATFORM_HEADER.replace("plies", "result") + "g1\n"},
        "platform/games.csv: column 'result' appears twice in the header",
    ),
    (
        "moderation file without the decision column",
        {
            "platform/games.csv": GAMES,
            MODERATION: "game_id,decided_at,reason\ng1,2026-04-01,x\n",
        },
        "missing required column 'decision'",
    ),
    (
        "gzip cut in the middle",
        {"platform/games.pgn.gz": PACKED[: len(PACKED) // 2]},
        "games.pgn.gz",
    ),
    (
        "a .gz that is not gzip at all",
        {"platform/games.pgn.gz": b"this was never compressed\n"},
        "games.pgn.gz",
    ),
    (
        "players.csv names a column twice",
        {"platform/games.csv": GAMES, "players.csv": "player_id,name,name\np1,Ann,Ann\n"},
        "players.csv: column 'name' appears twice in the header",
    ),
    (
        "backgammon file without the winner column",
        {
            "backgammon/matches.csv": "match_id,ended_at,loser_id,length,ranked\nm1,2026-03-01,a,5,true\n"
        },
        "missing required column 'winner_id'",
    ),
]


@pytest.mark.parametrize(
    ("files", "expected"),
    [case[1:] for case in UNREADABLE],
    ids=[case[0] for case in UNREADABLE],
)
def test_unreadable_file_stops_with_one_plain_sentence(
    tmp_path: Path, files: dict[str, str | bytes], expected: str
) -> None:
    ingested = ingest(write_inbox(tmp_path, files))
    assert not ingested.result.success
    failures = _failures(ingested.result)
    assert [f for f in failures if expected in f], failures  # the step that read the file
    for sentence in failures:
        assert not PYTHON_NAMES.search(sentence), sentence
        assert "\n" not in sentence
