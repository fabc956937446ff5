"""Malformed-input corpus: `federation/merges.csv` (issue 11 item 4).

A bad merge row (an empty id, a bad date, an id merged into itself or twice, an id found
nowhere) is quarantined with its line, value and reason while the good merge on the lines around
it still lands; a chain or a cycle of merges stops the run in one sentence naming the file and
lines, before anything is published.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rating_core import tables
from tests.support.inbox import (
    FEDERATION_HEADER,
    assert_one_sentence,
    ingest,
    ratings,
    write_inbox,
)

# The bad-input corpus runs the ingest assets and the `ratings` command on each case.
pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("csv_in_chunks_of_two_rows")]

HEADER = "keep_id,merge_id,decided_at,reason\n"
GOOD = "f1,f9,2026-02-01,same person\n"  # line 2: f9 is f1's duplicate
GAMES = FEDERATION_HEADER + (
    "t1,T,1,2026-01-10,f1,f2,1-0,standard\n"
    "t2,T,2,2026-01-11,f9,f3,1/2-1/2,standard\n"
    "t3,T,3,2026-01-12,f2,f3,0-1,standard\n"
)
FILE = "federation/merges.csv"


def inbox_with(tmp_path: Path, rows: str) -> Path:
    return write_inbox(tmp_path, {"federation/t.csv": GAMES, FILE: HEADER + GOOD + rows})


CASES = [
    # (case, row on line 3, quarantined value, reason)
    ("keep_id_empty", ",f3,2026-02-01,x\n", "", "keep_id is empty"),
    ("merge_id_empty", "f2,,2026-02-01,x\n", "", "merge_id is empty"),
    (
        "bad_date",
        "f2,f3,2026-02-30,x\n",
        "2026-02-30",
        "decided_at '2026-02-30' is not a valid ISO 8601 date",
    ),
    ("same_id", "f2,f2,2026-02-01,x\n", "f2", "keep_id and merge_id are the same id 'f2'"),
    (
        "merged_twice",
        "f2,f9,2026-02-01,x\n",
        "f9",
        "merge_id 'f9' appears again (first on line 2)",
    ),
    (
        "unknown_merge_id",
        "f2,zz,2026-02-01,x\n",
        "zz",
        "merge_id 'zz' is in no game, no starting list and not in players.csv",
    ),
    (
        "unknown_keep_id",
        "zz,f3,2026-02-01,x\n",
        "zz",
        "keep_id 'zz' is in no game, no starting list and not in players.csv",
    ),
]


@pytest.mark.parametrize(("case", "row", "value", "reason"), CASES, ids=[c[0] for c in CASES])
def test_a_bad_merge_row_is_quarantined_and_the_good_merge_lands(
    tmp_path: Path, case: str, row: str, value: str, reason: str
) -> None:
    done = ingest(inbox_with(tmp_path, row))
    assert done.result.success
    bad = done.only_quarantined(FILE)
    assert (bad["line"], bad["value"], bad["reason"], bad["source"]) == (3, value, reason, "merges")
    merges = done.table(tables.MERGES)
    assert merges.select("keep_id", "merge_id", "effective_period").rows() == [
        ("f1", "f9", "2026-01")
    ]


@pytest.mark.parametrize(
    ("rows", "words"),
    [
        ("f9,f1,2026-02-02,back\n", "merging 'f1' into 'f9' undoes line 2"),
        ("f3,f1,2026-02-02,chain\n", "lines 2 and 3 chain"),
    ],
    ids=["cycle", "chain"],
)
def test_a_cycle_or_chain_of_merges_is_one_sentence_and_nothing_is_published(
    tmp_path: Path, rows: str, words: str
) -> None:
    lake = tmp_path / "lake"
    proc = ratings("run", "--inbox", str(inbox_with(tmp_path, rows)), "--lake", str(lake))
    err = assert_one_sentence(proc)
    assert proc.returncode == 2
    assert err.startswith(f"ratings: {FILE} line 3: ") and words in err
    assert not (lake / "lists").exists()
