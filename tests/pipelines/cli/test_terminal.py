"""End-to-end tier: what `ratings run`, `show`, `diff` and `history` print at 80 columns (issue 9
items 12, 17, 18): nothing wider than the terminal, ids whole, user strings never read as markup,
truncation said aloud, and a diff of a list a player left after a late annulment; the progress
of `ratings run` off a terminal, on stderr only (issue 31 item 7)."""

from __future__ import annotations

import io
import json
import re
import subprocess
from pathlib import Path

import polars as pl
import pytest
from rich.console import Console

from pipelines.cli.output import print_table, shorten_middle
from rating_core.lake import publishing as publish
from tests.support.inbox import ratings as run_cli

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]

PLAYERS = (
    "player_id,name,federation,sex,birth_date,title,fide_id,is_bot,bot_rating,"
    "email_verified,display_name\n"
    "u-alice,Alice Anderson-Abernathy,,,,,,false,,true,alice\n"
    "u-bob,Bob Brown,,,,,,false,,true,bob\n"
    "u-carl,Carl Christiansen,,,,,,false,,true,carl\n"
    "u-dora,Dora Dimitrova,,,,,,false,,true,dora\n"
)
HEADER = "game_id,played_at,white_id,black_id,result,time_control,rated,kind,plies,termination\n"
GAMES_FILE = "platform/[bold]games-2026-03-exported-from-the-site-database-in-full.csv"
"""A long file name with rich markup in it: printed literally, shortened in the middle."""
RAPID = [  # u-dora's only rapid game of 2026-03 is r-04: annulling it drops her from the list
    ("r-01", "2026-03-02T10:00:00Z", "u-alice", "u-bob", "1-0"),
    ("r-02", "2026-03-03T10:00:00Z", "u-bob", "u-carl", "0-1"),
    ("r-03", "2026-03-04T10:00:00Z", "u-carl", "u-alice", "1/2-1/2"),
    ("r-04", "2026-03-05T10:00:00Z", "u-dora", "u-alice", "1-0"),
    ("r-05", "2026-03-06T10:00:00Z", "u-alice", "u-bob", "0-1"),
]
PGN = """[Event "Rated Blitz game"]
[Site "https://lichess.org/zzTerm01"]
[Date "2026.03.10"]
[White "u-bob"]
[Black "Zed Nobody"]
[Result "1-0"]
[UTCDate "2026.03.10"]
[UTCTime "12:00:00"]
[TimeControl "180+0"]

1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0
"""
"""One game against a player the registry does not know: the only one identified by name only
(u-bob is in the tag by id, and in players.csv)."""


def ratings(*args: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    """The CLI in a fresh process at `columns` terminal columns (80 by default)."""
    return run_cli(*args, columns=columns)


def assert_fits(text: str, width: int = 80) -> None:
    """No line of `text` is wider than the terminal."""
    wide = [line for line in text.splitlines() if len(line.rstrip()) > width]
    assert not wide, "\n".join(wide)


def write_inbox(inbox: Path) -> None:
    """The small platform inbox every test here reads."""
    (inbox / "platform").mkdir(parents=True)
    (inbox / "players.csv").write_text(PLAYERS, encoding="utf-8")
    lines = [f"{g},{t},{w},{b},{r},600+5,true,live,40,resign\n" for g, t, w, b, r in RAPID]
    (inbox / GAMES_FILE).write_text(HEADER + "".join(lines), encoding="utf-8")
    (inbox / "platform" / "lichess-2026-03.pgn").write_text(PGN, encoding="utf-8")


@pytest.fixture(scope="module")
def annulled(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A run, a late annulment of u-dora's only rapid game, a second run."""
    root = tmp_path_factory.mktemp("terminal")
    inbox, lake = root / "inbox", root / "lake"
    write_inbox(inbox)
    first = ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    assert first.returncode == 0, first.stdout + first.stderr
    assert "u-dora" in publish.read_list(lake, "site-rapid", "2026-03")["player_id"].to_list()
    (inbox / "platform" / "moderation").mkdir()
    (inbox / "platform" / "moderation" / "decisions-2026-04.csv").write_text(
        "game_id,decided_at,decision,reason\nr-04,2026-04-02T09:00:00Z,annul,engine use\n",
        encoding="utf-8",
    )
    second = ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    assert second.returncode == 0, second.stdout + second.stderr
    return {"lake": lake, "first": first, "second": second}


def test_diff_of_a_list_a_player_left_after_an_annulment(annulled: dict) -> None:
    lake = str(annulled["lake"])
    assert "u-dora" not in publish.read_list(lake, "site-rapid", "2026-03")["player_id"].to_list()
    proc = ratings("diff", "site-rapid", "2026-03", "--lake", lake)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "v2 against v1" in proc.stdout
    dora = [line for line in proc.stdout.splitlines() if "u-dora" in line]
    assert len(dora) == 1  # one row, whole, on one line
    assert_fits(proc.stdout)
    shown = json.loads(ratings("diff", "site-rapid", "2026-03", "--lake", lake, "--json").stdout)
    left = [row for row in shown["diff"] if row["player_id"] == "u-dora"]
    assert len(left) == 1 and left[0]["old"] is not None and left[0]["new"] is None


def test_summary_fits_80_columns_and_prints_file_names_literally(annulled: dict) -> None:
    out = annulled["first"].stdout
    assert_fits(out)
    # the markup is printed as written, and the long name is cut in the middle, its end kept
    files = [line for line in out.splitlines() if "[bold]" in line]
    assert len(files) == 1 and "…" in files[0] and "in-full.csv" in files[0]
    assert files[0].split("│")[1].strip().startswith("platform/[bold]")
    assert "site-rapid" in out and "2026-03/v1" in out
    assert_fits(annulled["second"].stdout)


def test_next_hints_name_the_lake_even_the_default_one(annulled: dict, tmp_path: Path) -> None:
    lake = annulled["lake"]
    assert f"ratings ui --lake {lake}" in annulled["first"].stdout
    inbox = tmp_path / "inbox"
    write_inbox(inbox)
    proc = run_cli("run", "--inbox", str(inbox), cwd=tmp_path, columns=80)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hints = proc.stdout.split("next:")[1].split()
    assert hints.count("--lake") == 5 and hints[hints.index("ui") + 2] == "lake"
    assert (tmp_path / "lake" / "lists" / "site-rapid").is_dir()


def test_summary_counts_name_only_players_outside_the_registry(annulled: dict) -> None:
    # the registered u-bob named in a PGN tag is not "identified by name only"; Zed Nobody is
    assert "1 not in players.csv, 1 identified by name only" in annulled["first"].stdout


def test_summary_says_it_counts_list_periods(annulled: dict) -> None:
    second = annulled["second"].stdout
    assert "1 list-period unchanged" in second and "lists unchanged" not in second  # site-blitz


def test_show_at_80_columns_says_how_many_rows_it_left_out(annulled: dict) -> None:
    lake = str(annulled["lake"])
    proc = ratings("show", "site-elo", "--top", "2", "--lake", lake)
    assert proc.returncode == 0, proc.stderr
    assert_fits(proc.stdout)
    total = publish.read_list(lake, "site-elo", "2026-03").height
    assert f"showing 2 of {total} rows" in proc.stdout
    top = publish.read_list(lake, "site-elo", "2026-03")
    for player in top.sort("rating", descending=True)["player_id"].head(2).to_list():
        assert len([line for line in proc.stdout.splitlines() if player in line]) == 1
    every = ratings("show", "site-elo", "--lake", lake)
    assert "showing" not in every.stdout  # every row fits the default 20: nothing to say


def test_show_all_at_80_columns_prints_every_column(annulled: dict) -> None:
    lake = str(annulled["lake"])
    proc = ratings("show", "site-rapid", "--all", "--lake", lake)
    assert proc.returncode == 0, proc.stderr
    assert_fits(proc.stdout)
    listed = publish.read_list(lake, "site-rapid", "2026-03")
    for column in ("player_id", "rating", "games"):
        assert column in proc.stdout
    for player in listed["player_id"].to_list():
        assert player in proc.stdout
    wide = ratings("show", "site-rapid", "--all", "--lake", lake, columns=400)
    table_columns = wide.stdout.splitlines()[2]
    for column in listed.columns:
        if column in table_columns:  # every column the wide table prints, the narrow one does
            assert column in proc.stdout


def test_history_at_80_columns_keeps_ids_whole(annulled: dict) -> None:
    lake = str(annulled["lake"])
    proc = ratings("history", "u-alice", "--lake", lake)
    assert proc.returncode == 0, proc.stderr
    assert_fits(proc.stdout)
    for value in ("2026-03", "u-bob", "u-carl"):
        assert value in proc.stdout
    assert "peri…" not in proc.stdout and "…" not in proc.stdout
    stacked = ratings("history", "u-alice", "--all", "--lake", lake)
    assert_fits(stacked.stdout)
    assert "rating_before" in stacked.stdout or "rating_after" in stacked.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["show", "site-rapid", "--top", "-1"],
        ["show", "site-rapid", "--top", "0"],
        ["show", "site-rapid", "--version", "0"],
        ["diff", "site-rapid", "2026-03", "--version", "0"],
    ],
)
def test_nonsense_numbers_are_refused(annulled: dict, args: list[str]) -> None:
    proc = ratings(*args, "--lake", str(annulled["lake"]))
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ratings: ") and "at least 1" in lines[0]


def test_summary_reports_versions_published_before_a_failure(tmp_path: Path) -> None:
    inbox, lake = tmp_path / "inbox", tmp_path / "lake"
    write_inbox(inbox)
    # a file where site-rapid's period folder belongs: the site lists sorted before it are
    # published, then the step fails before reporting any of them
    (lake / "lists" / "site-rapid").mkdir(parents=True)
    (lake / "lists" / "site-rapid" / "2026-03").write_text("in the way", encoding="utf-8")
    proc = ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    assert proc.returncode != 0
    assert_fits(proc.stdout)
    on_disk = publish.current_versions(lake).filter(pl.col("list") != "site-rapid")
    assert on_disk.filter(pl.col("list").str.starts_with("site-")).height > 0
    assert f"{on_disk.height} list versions published" in proc.stdout
    for name in on_disk["list"].to_list():
        assert name in proc.stdout


def test_shorten_middle_keeps_both_ends() -> None:
    name = "federation/ankara-winter-2026-01.csv"
    assert shorten_middle(name, 27) == "federation/an…r-2026-01.csv"
    assert shorten_middle(name, 80) == name


def test_table_prints_markup_literally_and_ids_whole() -> None:
    console = Console(width=40, record=True, file=io.StringIO())
    reason = "a reason long enough to wrap at the spaces between its words"
    print_table(
        "[bold]title", ["id", "reason"], [["[red]id-0123", reason]], wrap=["reason"], out=console
    )
    text = console.export_text()
    assert "[bold]title" in text and "[red]id-0123" in text  # markup printed as written, id whole
    assert all(len(line.rstrip()) <= 40 for line in text.splitlines())
    assert all(word in text for word in reason.split())  # wrapped at spaces, words whole


def _timing_rows(out: str) -> list[str]:
    """The step names of the `--timings` table (the rows after its title)."""
    table = out.split("Timings (")[1]
    return [line.split("│")[1].strip() for line in table.splitlines() if line.startswith("│")]


def test_timings_name_each_step_of_the_run_at_80_columns(tmp_path: Path) -> None:
    inbox, lake = tmp_path / "inbox", tmp_path / "lake"
    write_inbox(inbox)
    first = ratings("run", "--inbox", str(inbox), "--lake", str(lake), "--timings")
    assert first.returncode == 0, first.stdout + first.stderr
    assert_fits(first.stdout)
    steps = _timing_rows(first.stdout)
    assert steps[0] == "imports" and steps[-1] == "total"
    for step in ("lake lock, Dagster instance", "ingest run", "rating and publishing run"):
        assert step in steps
    # nothing changed: the second run rates nothing, and its table says only what it did
    second = ratings("run", "--inbox", str(inbox), "--lake", str(lake), "--timings")
    assert "nothing to" in second.stdout
    assert "rating and publishing run" not in _timing_rows(second.stdout)
    assert "choosing the periods" in _timing_rows(second.stdout)


def test_a_run_without_timings_prints_none(annulled: dict) -> None:
    assert "Timings (" not in annulled["first"].stdout


PROGRESS_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ (ingest|rating) \S+ ")
"""A plain progress line: a UTC timestamp, the stage, what is worked on, where it stands."""

HEARTBEAT_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ [a-z].*: \d+ s so far$")
"""A heartbeat line: a UTC timestamp, the step being worked on, its seconds so far."""


def test_progress_off_a_terminal_is_plain_lines_on_stderr_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RATINGS_PROGRESS_SECONDS", "0")  # a line at every report, short work too
    monkeypatch.setenv("RATINGS_HEARTBEAT_SECONDS", "0.5")  # silent steps: a line every 0.5 s
    samples = ROOT / "data_samples"
    proc = ratings("run", "--inbox", str(samples), "--lake", str(tmp_path / "lake"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    beats = [line for line in proc.stderr.splitlines() if HEARTBEAT_LINE.match(line)]
    err = [line for line in proc.stderr.splitlines() if line not in beats]
    assert err and all(PROGRESS_LINE.match(line) for line in err), proc.stderr
    # the run takes seconds, some silent for 0.5 s: each such step is named by the heartbeat
    steps = {line.split(" ", 1)[1].rsplit(": ", 1)[0] for line in beats}
    steps = {"preparing" if s.startswith("preparing ") else s for s in steps}  # a first run's
    assert steps and steps <= {
        "checking the inbox and the kernels",
        "loading Dagster and the pipeline",
        "opening the lake",
        "preparing",
        "ingesting the inbox",
        "choosing the periods to rate",
        "rating and publishing 2026-01 to 2026-06",
    }, proc.stderr
    assert_fits(proc.stderr)
    for system in ("site", "fibs", "fide", "ukd", "club"):  # each system's range, then its end
        mine = [line.split(" ", 3)[3] for line in err if line.split()[1:3] == ["rating", system]]
        assert mine[0].startswith("0/6 periods 0% 0 games"), mine
        assert mine[-1].startswith("done: 6 periods, "), mine
    # stdout is the summary alone: no progress line, no spinner, no terminal control codes
    out = proc.stdout.splitlines()
    assert not any(PROGRESS_LINE.match(line) or HEARTBEAT_LINE.match(line) for line in out)
    assert "\x1b" not in proc.stdout + proc.stderr and "⠋" not in proc.stdout + proc.stderr
    assert "Inbox " in proc.stdout and "rating and publishing" not in proc.stdout
