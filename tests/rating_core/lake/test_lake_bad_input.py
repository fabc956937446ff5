"""Malformed-input corpus, inbox layout and lake paths (issue 9 items 11 and 14).

Club folders with any name, club folders that cannot be told apart, symbolic links leading
outside the inbox, inboxes with nothing to rate, and a lake path that is a file. Each case says
what a person reads (the reason, note or sentence), where, and that the good records around it
landed.
"""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from rating_core.lake import publishing as publish
from tests.support.inbox import (
    FEDERATION_HEADER,
    PLATFORM_HEADER,
    PLAYERS_HEADER,
    assert_one_sentence,
    ingest,
    ratings,
    write_inbox,
)

# The bad-input corpus runs the ingest assets and the `ratings` command on each case.
pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("csv_in_chunks_of_two_rows")]


def _club_games(tournament: str, day: str, rating_list: str = "standard") -> str:
    """A closed club tournament of three games between four players, on `day` (YYYY-MM-DD)."""
    rows = [
        f"{tournament}-r1-b1,{tournament},1,{day},c-1,c-2,1-0,{rating_list}",
        f"{tournament}-r1-b2,{tournament},1,{day},c-3,c-4,1/2-1/2,{rating_list}",
        f"{tournament}-r2-b1,{tournament},2,{day},c-1,c-3,0-1,{rating_list}",
    ]
    return FEDERATION_HEADER + "\n".join(rows) + "\n"


def _platform_games() -> str:
    return PLATFORM_HEADER + (
        "p-1,2026-01-05T10:00:00Z,u-a,u-b,1-0,600+0,true,live,40,resign\n"
        "p-2,2026-01-06T10:00:00Z,u-b,u-a,0-1,600+0,true,live,40,resign\n"
    )


def _step_failure(result: dg.ExecuteInProcessResult) -> str:
    """The innermost message of the run's first failed step (what the CLI turns into a sentence)."""
    for event in result.all_events:
        if event.is_step_failure:
            error = event.step_failure_data.error
            assert error is not None, "a step failure without its error"
            while error.cause is not None:
                error = error.cause
            return error.message
    raise AssertionError("no step failed")


def _notes(result: dg.ExecuteInProcessResult, asset: str = "games") -> list[str]:
    """The notes the ingest of `asset` reported for the run summary."""
    for event in result.get_asset_materialization_events():
        if event.materialization.asset_key.to_user_string() == asset:
            notes = event.materialization.metadata["notes"].value
            assert isinstance(notes, list), notes  # dg.MetadataValue.json of a list of strings
            return list(notes)
    raise AssertionError(f"{asset} was not materialized")


# --- club folders with any name are accepted ------------------------------------------------


@pytest.mark.parametrize(
    ("folder", "list_name"),
    [
        ("Ankara SK", "club-ankara-sk-standard"),
        ("Şişli", "club-sisli-standard"),
        ("Kadıköy Satranç (1923)", "club-kadikoy-satranc-1923-standard"),
    ],
)
def test_a_club_folder_named_with_spaces_or_letters_of_any_alphabet_is_ingested(
    tmp_path: Path, folder: str, list_name: str
) -> None:
    inbox = write_inbox(
        tmp_path,
        {
            f"clubs/{folder}/cup.csv": _club_games("cup", "2026-01-10"),
            "clubs/konya-sk/open.csv": _club_games("open", "2026-01-11"),
        },
    )
    done = ingest(inbox)
    assert done.result.success
    assert done.reasons() == []
    games = done.games
    mine = games.filter(pl.col("source_file") == f"clubs/{folder}/cup.csv")
    assert mine.height == 3 and set(mine["club_id"]) == {folder}
    assert mine["source_line"].sort().to_list() == [2, 3, 4]
    assert games.filter(pl.col("club_id") == "konya-sk").height == 3  # the neighbour too
    from rating_core.systems.club.folders import club_list_name

    assert club_list_name(folder, "standard") == list_name


# --- club folders that cannot each have a list are refused before anything ---------------------


@pytest.mark.parametrize(
    ("folders", "sentence"),
    [
        (
            ("Ankara SK", "ankara-sk"),
            "the club folders 'clubs/Ankara SK' and 'clubs/ankara-sk' would both publish as "
            "'club-ankara-sk-...'",
        ),
        (
            ("Şişli", "sisli"),
            "the club folders 'clubs/sisli' and 'clubs/Şişli' would both publish as "
            "'club-sisli-...'",
        ),
        (("象棋",), "the club folder 'clubs/象棋' has no letter or digit that can name its lists"),
    ],
)
def test_club_folders_that_cannot_each_have_a_list_stop_the_ingest_in_one_sentence(
    tmp_path: Path, folders: tuple[str, ...], sentence: str
) -> None:
    files = {
        f"clubs/{name}/t{i}.csv": _club_games(f"t{i}", "2026-01-10")
        for i, name in enumerate(folders)
    }
    done = ingest(write_inbox(tmp_path, {**files, "platform/games.csv": _platform_games()}))
    assert not done.result.success
    message = _step_failure(done.result)
    assert sentence in message
    assert "\n" not in message.strip()
    assert done.games.height == 0  # nothing ingested, so nothing can be published


def test_ratings_run_refuses_club_folders_that_clash_in_one_sentence_before_any_work(
    tmp_path: Path,
) -> None:
    inbox = write_inbox(
        tmp_path,
        {
            "clubs/Ankara SK/jan.csv": _club_games("jan", "2026-01-10"),
            "clubs/ankara-sk/feb.csv": _club_games("feb", "2026-02-10"),
        },
    )
    proc = ratings("run", "--inbox", str(inbox), "--lake", str(tmp_path / "lake"))
    assert assert_one_sentence(proc) == (
        "ratings: the club folders 'clubs/Ankara SK' and 'clubs/ankara-sk' would both publish "
        "as 'club-ankara-sk-...': rename or merge them"
    )
    assert not (tmp_path / "lake").exists()


# --- symbolic links leading outside the inbox are not followed ---------------------------------


def test_a_club_folder_linked_from_outside_the_inbox_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "club"
    outside.mkdir(parents=True)
    (outside / "secret.csv").write_text(_club_games("secret", "2026-01-12"), encoding="utf-8")
    inbox = write_inbox(tmp_path, {"clubs/ankara-sk/open.csv": _club_games("open", "2026-01-11")})
    (inbox / "clubs" / "linked").symlink_to(outside, target_is_directory=True)
    done = ingest(inbox)
    assert done.result.success
    assert "clubs/linked: a symbolic link leading outside the inbox, not followed" in _notes(
        done.result
    )
    assert set(done.games["tournament_id"]) == {"open"}
    assert done.games.height == 3


def test_a_game_file_linked_from_outside_the_inbox_is_followed(tmp_path: Path) -> None:
    """Only linked folders are refused: a linked file is a deliberate choice (a big archive
    linked instead of copied), read like any other."""
    outside = tmp_path / "elsewhere.csv"
    outside.write_text(_club_games("linked", "2026-01-12"), encoding="utf-8")
    inbox = write_inbox(
        tmp_path,
        {
            "clubs/ankara-sk/open.csv": _club_games("open", "2026-01-11"),
            "platform/games.csv": _platform_games(),
        },
    )
    (inbox / "clubs" / "ankara-sk" / "linked.csv").symlink_to(outside)
    done = ingest(inbox)
    assert done.result.success
    assert not [n for n in _notes(done.result) if "symbolic link" in n]
    assert set(done.games["source_file"]) == {
        "clubs/ankara-sk/open.csv",
        "clubs/ankara-sk/linked.csv",
        "platform/games.csv",
    }
    assert done.games.height == 8


def test_a_link_to_a_file_inside_the_inbox_is_followed(tmp_path: Path) -> None:
    inbox = write_inbox(tmp_path, {"archive/open.csv": _club_games("open", "2026-01-11")})
    (inbox / "clubs" / "ankara-sk").mkdir(parents=True)
    (inbox / "clubs" / "ankara-sk" / "open.csv").symlink_to(inbox / "archive" / "open.csv")
    done = ingest(inbox)
    assert done.result.success
    assert done.games.height == 3
    assert not [n for n in _notes(done.result) if "symbolic link" in n]


# --- inboxes with nothing to rate --------------------------------------------------------------


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"players.csv": PLAYERS_HEADER + "u-a,Ada,TUR,F,1990,,,false,,true,\n"},
        {"clubs/empty-club/readme.txt": "nothing here", "platform/notes.md": "# notes"},
    ],
    ids=["empty", "players-only", "no-game-files"],
)
def test_an_inbox_without_games_ingests_to_empty_tables_with_their_columns(
    tmp_path: Path, files: dict[str, str]
) -> None:
    done = ingest(write_inbox(tmp_path, files))
    assert done.result.success, _step_failure(done.result)
    assert done.games.height == 0
    assert {"source", "rating_list", "period"} <= set(done.games.columns)
    assert done.reasons() == []
    assert done.players.height == (1 if "players.csv" in files else 0)


@pytest.mark.parametrize(
    "files",
    [{}, {"players.csv": PLAYERS_HEADER + "u-a,Ada,TUR,F,1990,,,false,,true,\n"}],
    ids=["empty", "players-only"],
)
def test_ratings_run_on_an_inbox_with_nothing_to_rate_says_so(
    tmp_path: Path, files: dict[str, str]
) -> None:
    inbox = write_inbox(tmp_path, files)
    lake = tmp_path / "lake"
    proc = ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "note: nothing to rate: the inbox holds no games and no matches" in proc.stdout
    assert proc.stderr == ""
    assert publish.list_names(lake) == []


def test_a_backgammon_only_inbox_publishes_fibs(tmp_path: Path) -> None:
    matches = (
        "match_id,ended_at,winner_id,loser_id,length,ranked,vs_ai\n"
        "m-1,2026-01-04T12:17:00Z,u-ece,u-deniz,3,true,false\n"
        "m-2,2026-01-05T09:23:00Z,u-zeynep,u-mert,1,true,false\n"
    )
    inbox = write_inbox(tmp_path, {"backgammon/matches.csv": matches})
    lake = tmp_path / "lake"
    proc = ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert publish.list_names(lake) == ["fibs"]
    listed = publish.read_list(lake, "fibs", "2026-01")
    assert set(listed["player_id"]) == {"u-ece", "u-deniz", "u-zeynep", "u-mert"}


# --- a lake path that is not a folder ----------------------------------------------------------


@pytest.mark.parametrize(
    ("lake_name", "sentence"),
    [
        ("lake.txt", "ratings: the lake '{root}/lake.txt' is a file, not a folder"),
        (
            "lake.txt/sub",
            "ratings: the lake '{root}/lake.txt/sub' is not a folder: '{root}/lake.txt' is a file",
        ),
    ],
)
def test_a_lake_path_that_is_a_file_is_one_sentence_before_any_work(
    tmp_path: Path, lake_name: str, sentence: str
) -> None:
    inbox = write_inbox(tmp_path, {"platform/games.csv": _platform_games()})
    (tmp_path / "lake.txt").write_text("my notes", encoding="utf-8")
    proc = ratings("run", "--inbox", str(inbox), "--lake", str(tmp_path / lake_name))
    assert proc.returncode == 2
    assert assert_one_sentence(proc) == sentence.format(root=tmp_path)
    assert (tmp_path / "lake.txt").read_text(encoding="utf-8") == "my notes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["inbox", "lake.txt"]  # no work done


# --- end to end: club lists of every period, the folder's name in the manifest ---------------


def test_club_lists_of_folders_with_any_name_are_published_for_every_period(
    tmp_path: Path,
) -> None:
    inbox = write_inbox(
        tmp_path,
        {
            "clubs/Ankara SK/jan.csv": _club_games("ank-jan", "2026-01-10"),
            "clubs/Ankara SK/feb.csv": _club_games("ank-feb", "2026-02-14"),
            "clubs/Şişli/jan.csv": _club_games("sis-jan", "2026-01-17"),
            "clubs/Şişli/mar.csv": _club_games("sis-mar", "2026-03-07"),
        },
    )
    lake = tmp_path / "lake"
    proc = ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert publish.list_names(lake) == ["club-ankara-sk-standard", "club-sisli-standard"]
    for name, folder in (
        ("club-ankara-sk-standard", "Ankara SK"),
        ("club-sisli-standard", "Şişli"),
    ):
        assert publish.list_periods(lake, name) == ["2026-01", "2026-02", "2026-03"]
        for period in ("2026-01", "2026-02", "2026-03"):
            manifest = json.loads(
                (publish.version_dir(lake, name, period) / publish.MANIFEST_FILE).read_text(
                    encoding="utf-8"
                )
            )
            assert manifest["club_folder"] == folder
    assert set(publish.read_list(lake, "club-sisli-standard", "2026-03")["player_id"]) == {
        "c-1",
        "c-2",
        "c-3",
        "c-4",
    }
