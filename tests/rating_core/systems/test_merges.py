"""`federation/merges.csv`: reading, refusing chains and cycles, quarantining unknown ids and bad
rows, and renaming a merged id's games and starting-list entries (issue 11 item 4)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl
import pytest

from rating_core.ingest.inbox import _game_sources, inbox_files
from rating_core.ingest.merges import MergeChainError, read_merges, resolve_merges
from rating_core.schemas import STARTING_LIST_SCHEMA, conform
from rating_core.systems.merges import apply_merges, merge_causes, merge_reason, new_merges

HEADER = "keep_id,merge_id,decided_at,reason\n"


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "merges.csv"
    path.write_text(HEADER + body, encoding="utf-8")
    return path


def games_frame(rows: list[tuple[str, str, str, str | None, str | None]]) -> pl.DataFrame:
    """(game_id, source, period, white_id, black_id) rows, with provenance on line 2, 3..."""
    return pl.DataFrame(
        {
            "game_id": [r[0] for r in rows],
            "source": [r[1] for r in rows],
            "source_file": ["federation/t.csv"] * len(rows),
            "source_line": list(range(2, len(rows) + 2)),
            "period": [r[2] for r in rows],
            "white_id": [r[3] for r in rows],
            "black_id": [r[4] for r in rows],
        }
    )


def starting(rows: list[tuple[str, str, str, int]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "list": [r[0] for r in rows],
            "period": [r[1] for r in rows],
            "player_id": [r[2] for r in rows],
            "rating": [r[3] for r in rows],
            "rated_games": [None] * len(rows),
            "peak_rating": [None] * len(rows),
        }
    ).pipe(conform, STARTING_LIST_SCHEMA)


def test_good_rows_are_read_and_bad_rows_quarantined_with_line_value_and_reason(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path,
        "a-3,b-17,2026-03-02,same person\n"
        ",c-1,2026-03-02,no keep id\n"
        "d-4,e-5,2026-13-02,bad date\n"
        "f-6,f-6,2026-03-02,itself\n"
        "g-7,b-17,2026-03-02,b-17 again\n"
        "h-8,i-9,2026-03-04,\n",
    )
    read = read_merges(path, "federation/merges.csv")
    assert read.rows.select(
        "keep_id", "merge_id", "decided_at", "reason", "source_line"
    ).rows() == [
        ("a-3", "b-17", date(2026, 3, 2), "same person", 2),
        ("h-8", "i-9", date(2026, 3, 4), None, 7),
    ]
    quarantine = read.quarantine.sort("line")
    assert quarantine["source_file"].unique().to_list() == ["federation/merges.csv"]
    assert quarantine.select("line", "value").rows() == [
        (3, ""),
        (4, "2026-13-02"),
        (5, "f-6"),
        (6, "b-17"),
    ]
    reasons = quarantine["reason"].to_list()
    assert reasons[0] == "keep_id is empty"
    assert "not a valid ISO 8601 date" in reasons[1]
    assert "same id" in reasons[2]
    assert "appears again (first on line 2)" in reasons[3]


def test_a_cycle_is_refused_naming_the_file_and_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "x-0,y-0,2026-01-01,ok\na,b,2026-03-02,dup\nb,a,2026-03-03,dup\n")
    with pytest.raises(MergeChainError) as refused:
        read_merges(path, "federation/merges.csv")
    assert str(refused.value) == (
        "federation/merges.csv line 4: merging 'a' into 'b' undoes line 3, which merges 'b' into "
        "'a' (a cycle); keep only the line whose kept id is right"
    )


def test_a_chain_is_refused_naming_the_file_and_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "a,b,2026-03-02,dup\nb,c,2026-03-03,dup\n")
    with pytest.raises(MergeChainError) as refused:
        read_merges(path, "federation/merges.csv")
    message = str(refused.value)
    assert message.startswith("federation/merges.csv line 3: ")
    assert "lines 2 and 3 chain" in message and "straight into 'a'" in message


def test_a_quarantined_row_does_not_make_a_chain(tmp_path: Path) -> None:
    """The second row is bad (its date), so only a -> b stands: no chain."""
    path = write(tmp_path, "a,b,2026-03-02,dup\nb,c,yesterday,dup\n")
    read = read_merges(path, "federation/merges.csv")
    assert read.rows["merge_id"].to_list() == ["b"]
    assert read.quarantine["line"].to_list() == [3]


def test_unknown_ids_are_quarantined_and_each_merge_dated_by_its_first_period(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path,
        "a,b,2026-03-02,games only\n"
        "a,ghost,2026-03-02,nowhere\n"
        "nobody,c,2026-03-02,keep unknown\n"
        "a,s,2026-03-02,starting list only\n"
        "a,r,2026-03-02,registry only\n"
        "a,p,2026-03-02,platform only\n",
    )
    read = read_merges(path, "federation/merges.csv")
    games = games_frame(
        [
            ("g1", "federation", "2026-03", "b", "x"),
            ("g2", "club", "2026-02", "y", "b"),
            ("g3", "federation", "2026-01", "a", "c"),
            ("g4", "platform", "2026-01", "b", "p"),
        ]
    )
    lists = starting([("fide-standard", "2025-12", "s", 1500)])
    players = pl.DataFrame({"player_id": ["a", "r"]})
    resolved = resolve_merges(read.rows, games, lists, players)
    assert resolved.rows.select("merge_id", "effective_period").rows() == [
        ("b", "2026-02"),  # the club game of 2026-02 comes first; the platform game is not one
        ("s", "2026-01"),  # the list after 2025-12 starts 2026-01
        ("r", None),  # only in the registry: known, changes no list
    ]
    quarantine = resolved.quarantine.sort("line")
    assert quarantine.select("line", "value").rows() == [
        (3, "ghost"),
        (4, "nobody"),
        (7, "a and p"),  # an online account merged into a federation player (issue 32)
    ]
    assert quarantine["reason"].to_list()[:2] == [
        "merge_id 'ghost' is in no game, no starting list and not in players.csv",
        "keep_id 'nobody' is in no game, no starting list and not in players.csv",
    ]
    assert quarantine["reason"][2].startswith("'p' is an online account (platform games only)")


def test_a_game_between_the_two_ids_is_quarantined_as_a_self_game(tmp_path: Path) -> None:
    read = read_merges(write(tmp_path, "a,b,2026-03-02,dup\n"), "federation/merges.csv")
    games = games_frame(
        [("g1", "federation", "2026-01", "b", "a"), ("g2", "federation", "2026-01", "a", "x")]
    )
    resolved = resolve_merges(read.rows, games, starting([]), None)
    row = resolved.quarantine.row(0, named=True)
    assert resolved.quarantine.height == 1
    assert (row["source_file"], row["line"], row["record"], row["value"]) == (
        "federation/t.csv",
        2,
        "g1",
        "b vs a",
    )
    assert "federation/merges.csv line 2" in row["reason"] and "themself" in row["reason"]


def test_apply_merges_renames_games_and_entries_keeping_the_kept_ids_entry() -> None:
    merges = pl.DataFrame({"keep_id": ["a"], "merge_id": ["b"]})
    games = games_frame(
        [
            ("g1", "federation", "2026-01", "b", "x"),
            ("g2", "federation", "2026-01", "x", "b"),
            ("g3", "federation", "2026-01", "a", "b"),  # a self-game once merged
            ("g4", "platform", "2026-01", "b", "x"),  # platform accounts are not merged
            ("g5", "federation", "2026-01", "b", None),  # a bye
        ]
    )
    lists = starting(
        [
            ("fide-standard", "2025-12", "a", 1800),
            ("fide-standard", "2025-12", "b", 1700),  # both have one: a's stands
            ("ukd-standard", "2025-12", "b", 1500),  # only b has one: it becomes a's
            ("ukd-standard", "2025-12", "z", 1400),
        ]
    )
    renamed, renamed_lists = apply_merges(games, lists, merges)
    assert renamed.select("game_id", "white_id", "black_id").rows() == [
        ("g1", "a", "x"),
        ("g2", "x", "a"),
        ("g4", "b", "x"),
        ("g5", "a", None),
    ]
    assert renamed_lists is not None
    assert renamed_lists.select("list", "player_id", "rating").rows() == [
        ("fide-standard", "a", 1800),
        ("ukd-standard", "a", 1500),
        ("ukd-standard", "z", 1400),
    ]


def test_causes_name_only_the_merges_new_since_the_last_publication() -> None:
    merges = pl.DataFrame(
        {
            "keep_id": ["a-3", "c"],
            "merge_id": ["b-17", "d"],
            "decided_at": [date(2026, 3, 2), date(2026, 4, 1)],
            "reason": ["same person", None],
            "effective_period": ["2026-02", "2026-04"],
        }
    )
    causes = merge_causes(merges, "2026-03", None)
    expected = "merged b-17 into a-3: same person (decided 2026-03-02)"
    assert causes.rows() == [("a-3", expected), ("b-17", expected)]
    assert not merge_causes(merges, "2026-01", None).height  # not in force yet
    applied = pl.DataFrame({"keep_id": ["a-3"], "merge_id": ["b-17"]})
    later = merge_causes(merges, "2026-05", applied)
    assert later["cause"].unique().to_list() == [
        "merged d into c: no reason given (decided 2026-04-01)"
    ]
    assert new_merges(merges, "2026-03", applied).height == 0
    assert merge_reason("rated", merges, "2026-03", applied) == "rated"
    assert merge_reason("rated", merges, "2026-03", None) == (
        "rated; merged b-17 into a-3 (federation/merges.csv)"
    )
    # a merge taken out of the file since the last publication is named as withdrawn
    gone = merges.filter(pl.col("merge_id") == "d")
    both = pl.DataFrame({"keep_id": ["a-3", "c"], "merge_id": ["b-17", "d"]})
    assert merge_causes(gone, "2026-05", both).rows() == [
        ("a-3", "merge of b-17 into a-3 withdrawn"),
        ("b-17", "merge of b-17 into a-3 withdrawn"),
    ]
    assert merge_reason("rated", None, "2026-05", applied) == (
        "rated; merge of b-17 into a-3 withdrawn"
    )


def test_the_inbox_reads_merges_csv_as_its_own_kind_not_as_games(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    (inbox / "federation").mkdir(parents=True)
    (inbox / "federation" / "t.csv").write_text("x\n", encoding="utf-8")
    (inbox / "federation" / "Merges.CSV").write_text(HEADER, encoding="utf-8")
    federation = [s for s in _game_sources(inbox) if s[0] == "federation"][0]
    assert [p.name for p in federation[3]] == ["t.csv"]
    assert "Merges.CSV" in [p.name for p in inbox_files(inbox)]  # still digested and watched


def test_two_spellings_of_the_merges_file_are_refused(tmp_path: Path) -> None:
    from rating_core.ingest.common import UnreadableFileError
    from rating_core.ingest.inbox import decision_file

    folder = tmp_path / "federation"
    folder.mkdir()
    (folder / "merges.csv").write_text(HEADER, encoding="utf-8")
    assert decision_file(tmp_path, "merges") == folder / "merges.csv"
    (folder / "MERGES.csv").write_text(HEADER, encoding="utf-8")
    if len(list(folder.iterdir())) < 2:
        pytest.skip("a case-insensitive file system holds one of the two")
    with pytest.raises(UnreadableFileError, match="are both the merges file; keep one"):
        decision_file(tmp_path, "merges")
