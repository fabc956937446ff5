"""End-to-end tier: every failure is one `ratings:` sentence (issue 9 items 13, 15, 16).

Faults of the machine (a full disk, a denied permission) cannot be made for real here (no small
tmpfs, and the tests may run as root, who may read anything), so a `sitecustomize` module put on
the subprocess's PYTHONPATH injects them: it raises the very errors Python and Polars raise (an
`OSError` with errno ENOSPC or EACCES, Polars' `ComputeError` "... (os error 28)") from the write
or read of a matching path. Production code has no hook for it.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from tests.support.inbox import write_inbox

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]

PLATFORM_HEADER = (
    "game_id,played_at,white_id,black_id,result,time_control,rated,kind,plies,termination\n"
)
ONE_GAME = PLATFORM_HEADER + "g1,2026-03-01T10:00:00Z,a,b,1-0,900+10,true,live,60,normal\n"
CLASS_NAME = re.compile(
    r"[A-Za-z]+(Error|Exception)\b|zlib\.error|Traceback|polars\.|rating_core\.|usage:"
)

FAULT_HOOK = '''
"""Test-only fault injection (tests/pipelines/cli/test_user_mistakes.py): RATINGS_TEST_FAULT=kind:path-part."""
import errno
import os
import pathlib

KIND, _, WHERE = os.environ.get("RATINGS_TEST_FAULT", "").partition(":")
if KIND:
    import polars as pl

    def _fail(path):
        if KIND == "enospc":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        if KIND == "polars-enospc":  # what Polars really raises on a full disk
            raise pl.exceptions.ComputeError(
                "parquet: File out of specification: underlying IO error: "
                "No space left on device (os error 28)"
            )
        if KIND in ("eacces", "eacces-read"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        if KIND == "bug":
            raise KeyError("an injected bug")

    _write_parquet = pl.DataFrame.write_parquet

    def write_parquet(self, file, *args, **kwargs):
        if KIND != "eacces-read" and WHERE in str(file):
            _fail(file)
        return _write_parquet(self, file, *args, **kwargs)

    pl.DataFrame.write_parquet = write_parquet
    _write_bytes = pathlib.Path.write_bytes

    def write_bytes(self, data):
        # small Parquet files are encoded in memory and written by Python: a full disk there is
        # the operating system's error, whichever kind of full disk is injected
        if KIND == "polars-enospc" and WHERE in str(self):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
        if KIND != "eacces-read" and WHERE in str(self):
            _fail(self)
        return _write_bytes(self, data)

    pathlib.Path.write_bytes = write_bytes
    _read_bytes = pathlib.Path.read_bytes

    def read_bytes(self):
        if KIND == "eacces-read" and WHERE in str(self):
            _fail(self)
        return _read_bytes(self)

    pathlib.Path.read_bytes = read_bytes
    _open = pathlib.Path.open

    def open_for_reading(self, mode="r", *args, **kwargs):
        # files are read through open() as well (a digest, a CSV a block at a time)
        if KIND == "eacces-read" and WHERE in str(self) and "r" in mode:
            _fail(self)
        return _open(self, mode, *args, **kwargs)

    pathlib.Path.open = open_for_reading
'''


def ratings(
    *args: str, fault: str | None = None, hook: Path | None = None, debug: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run the CLI in a fresh process, optionally with an injected fault (`kind:path-part`)."""
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    env.pop("RATINGS_DEBUG", None)
    if fault is not None:
        assert hook is not None
        env["PYTHONPATH"] = f"{hook}{os.pathsep}{ROOT}"
        env["RATINGS_TEST_FAULT"] = fault
    if debug:
        env["RATINGS_DEBUG"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pipelines.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )


def one_sentence(proc: subprocess.CompletedProcess[str], status: int | None = None) -> str:
    """The command failed with exactly one `ratings:` line on stderr, free of Python names."""
    assert proc.returncode != 0, proc.stdout
    if status is not None:
        assert proc.returncode == status, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("ratings: "), proc.stderr
    assert not CLASS_NAME.search(lines[0]), lines[0]
    return lines[0]


@pytest.fixture
def hook(tmp_path: Path) -> Path:
    """A folder holding the fault-injecting `sitecustomize`."""
    folder = tmp_path / "hook"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(FAULT_HOOK, encoding="utf-8")
    return folder


# --- item 13: faults of the machine and unreadable files ------------------------------------------


def test_full_disk_at_ingest_says_the_disk_is_full(tmp_path: Path, hook: Path) -> None:
    inbox = write_inbox(tmp_path, {"platform/games.csv": ONE_GAME})
    lake = tmp_path / "lake"
    proc = ratings(
        "run", "--inbox", str(inbox), "--lake", str(lake), fault="enospc:lake", hook=hook
    )
    sentence = one_sentence(proc)
    assert "the disk is full" in sentence
    assert str(lake) in sentence  # where it could not write
    assert ".tmp-" not in sentence  # the folder, not a hidden temporary file


def test_full_disk_as_polars_reports_it_says_the_disk_is_full(tmp_path: Path, hook: Path) -> None:
    inbox = write_inbox(tmp_path, {"platform/games.csv": ONE_GAME})
    lake = tmp_path / "lake"
    proc = ratings(
        "run", "--inbox", str(inbox), "--lake", str(lake), fault="polars-enospc:lake", hook=hook
    )
    sentence = one_sentence(proc)
    assert "the disk is full" in sentence
    assert "thrift" not in sentence and "specification" not in sentence


def test_full_disk_while_publishing_is_a_plain_failure_line(tmp_path: Path, hook: Path) -> None:
    # a version is written under lake/.staging/ before it is renamed into lists/
    inbox = write_inbox(tmp_path, {"platform/games.csv": ONE_GAME})
    lake = tmp_path / "lake"
    proc = ratings(
        "run",
        "--inbox",
        str(inbox),
        "--lake",
        str(lake),
        fault="polars-enospc:/.staging/",
        hook=hook,
    )
    assert proc.returncode == 1
    failed = [line for line in proc.stdout.splitlines() if line.startswith("failed:")]
    assert failed, proc.stdout
    text = " ".join(proc.stdout.split())  # the summary may wrap the line
    assert "failed: the publication of the site lists stopped: the disk is full" in text
    assert not CLASS_NAME.search(proc.stdout + proc.stderr), proc.stdout + proc.stderr


def test_lake_without_write_permission_names_the_path(tmp_path: Path, hook: Path) -> None:
    inbox = write_inbox(tmp_path, {"platform/games.csv": ONE_GAME})
    lake = tmp_path / "lake"
    proc = ratings(
        "run", "--inbox", str(inbox), "--lake", str(lake), fault="eacces:lake", hook=hook
    )
    sentence = one_sentence(proc)
    assert "permission denied on '" in sentence
    assert str(lake) in sentence


def test_inbox_file_without_read_permission_names_the_file(tmp_path: Path, hook: Path) -> None:
    inbox = write_inbox(tmp_path, {"platform/games.csv": ONE_GAME})
    proc = ratings(
        "run",
        "--inbox",
        str(inbox),
        "--lake",
        str(tmp_path / "lake"),
        fault="eacces-read:games.csv",
        hook=hook,
    )
    sentence = one_sentence(proc)
    assert "platform/games.csv" in sentence
    assert "permission denied" in sentence.lower()


def test_unreadable_file_is_its_own_sentence_without_the_class_name(tmp_path: Path) -> None:
    bad = PLATFORM_HEADER.replace("plies", "result")  # `result` twice in the header
    inbox = write_inbox(tmp_path, {"platform/games.csv": bad + "g1,2026-03-01T10:00:00Z\n"})
    proc = ratings("run", "--inbox", str(inbox), "--lake", str(tmp_path / "lake"))
    sentence = one_sentence(proc)
    assert "platform/games.csv" in sentence
    assert "column 'result' appears twice in the header" in sentence
    assert not (tmp_path / "lake" / "lists").exists()  # stopped before anything was published


def test_truncated_gzip_names_the_file_not_the_decoder_error(tmp_path: Path) -> None:
    pgn = '[Event "x"]\n[White "a"]\n[Black "b"]\n[Result "1-0"]\n\n1. e4 e5 1-0\n\n' * 200
    packed = gzip.compress(pgn.encode())
    inbox = write_inbox(tmp_path, {"platform/games.pgn.gz": packed[: len(packed) // 2]})
    proc = ratings("run", "--inbox", str(inbox), "--lake", str(tmp_path / "lake"))
    sentence = one_sentence(proc)
    assert "games.pgn.gz" in sentence
    assert "EOFError" not in sentence and "zlib" not in sentence


def test_internal_error_is_one_short_sentence_and_debug_shows_the_traceback(
    tmp_path: Path, hook: Path
) -> None:
    inbox = write_inbox(tmp_path, {"platform/games.csv": ONE_GAME})
    args = ("run", "--inbox", str(inbox), "--lake", str(tmp_path / "lake"))
    sentence = one_sentence(ratings(*args, fault="bug:lake", hook=hook))
    assert re.match(r"ratings: internal error in the [a-z ]+: ", sentence), sentence
    assert sentence.endswith("rerun with RATINGS_DEBUG=1 for the traceback")
    debug = ratings(*args, fault="bug:lake", hook=hook, debug=True)
    assert debug.returncode != 0
    assert 'File "' in debug.stderr and "an injected bug" in debug.stderr  # the stack


def test_unreadable_lake_file_while_reading_is_one_sentence(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    version = lake / "lists" / "site-elo" / "2026-03" / "v1"
    version.mkdir(parents=True)
    (version / "list.parquet").write_bytes(b"PAR1 cut short")
    (version / "manifest.json").write_text(
        json.dumps({"list": "site-elo", "period": "2026-03", "version": 1, "columns": []})
    )
    sentence = one_sentence(ratings("show", "site-elo", "--lake", str(lake)), status=1)
    assert "a lake file read by 'ratings show' is damaged or incomplete" in sentence


# --- item 15: argument errors and the calculator forms --------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["calc", "ukd", "--rating", "1500", "--colour", "w"], "unknown option or argument"),
        (["calc", "ukd", "--rating"], "--rating needs a value"),
        (["calc", "ukd", "--rating", "abc"], "--rating takes a whole number, not 'abc'"),
        (["calc", "elo", "--rating", "x"], "--rating takes a number, not 'x'"),
        (["calc", "fide", "--rating", "1800", "--k", "30"], "--k must be one of 10, 20, 40"),
        (["calc", "ukd", "--game", "2000:1"], "missing --rating"),
        (["calc", "chess960"], "calc: unknown calculator 'chess960'"),
        (["calc"], "missing a calculator (elo, fide, ukd, fibs, site)"),
        (["rate"], "unknown command 'rate'"),
        ([], "missing a command"),
        (["show", "--top"], "show: --top needs a value"),
        (["calc", "ukd", "--rating", "1500", "--json=yes"], "--json takes no value"),
    ],
)
def test_argument_errors_are_one_sentence_with_exit_2(args: list[str], expected: str) -> None:
    proc = ratings(*args)
    sentence = one_sentence(proc, status=2)
    assert expected in sentence, sentence
    assert "--help" in sentence  # where to read the forms


def test_help_still_prints_the_usage() -> None:
    proc = ratings("calc", "ukd", "--help")
    assert proc.returncode == 0
    assert "usage: ratings calc ukd" in proc.stdout and "--game" in proc.stdout


def test_readme_calculator_form_with_an_unrated_opponent() -> None:
    proc = ratings("calc", "ukd", "--rating", "1500", "--game", "-:1", "--json")
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["games"][0]["opponent"] is None
    both = ratings("calc", "ukd", "--rating", "1500", "--game", "2000:1", "--game", "-:0.5")
    assert both.returncode == 0, both.stderr


def test_unrated_opponent_with_a_bad_result_is_one_sentence() -> None:
    sentence = one_sentence(ratings("calc", "ukd", "--rating", "1500", "--game", "-:2"), status=2)
    assert "result '2' is not 1, 0.5 or 0" in sentence


# --- item 16: a version's causes are what changed since its parent --------------------------------


def _rapid_games() -> str:
    rows = []
    pairs = [("p1", "p2"), ("p3", "p4"), ("p1", "p3"), ("p2", "p4")]
    number = 0
    for day in range(1, 13):
        for hour, (white, black) in enumerate(pairs):
            number += 1
            result = ["1-0", "0-1", "1/2-1/2"][(day + hour) % 3]
            rows.append(
                f"g{number:03d},2026-03-{day:02d}T1{hour}:00:00Z,{white},{black},{result},"
                "900+10,true,live,60,normal"
            )
    return PLATFORM_HEADER + "\n".join(rows) + "\n"


MODERATION_HEADER = "game_id,decided_at,decision,reason\n"


def test_each_version_names_only_the_annulments_new_since_its_parent(tmp_path: Path) -> None:
    inbox = write_inbox(tmp_path, {"platform/games.csv": _rapid_games()})
    lake = tmp_path / "lake"
    run = ("run", "--inbox", str(inbox), "--lake", str(lake))
    assert ratings(*run).returncode == 0  # v1: no decisions
    moderation = inbox / "platform" / "moderation"
    moderation.mkdir()
    (moderation / "first.csv").write_text(MODERATION_HEADER + "g001,2026-04-02,annul,engine use\n")
    assert ratings(*run).returncode == 0  # v2: g001 (p1 against p2)
    (moderation / "second.csv").write_text(MODERATION_HEADER + "g006,2026-04-09,annul,sandbag\n")
    assert ratings(*run).returncode == 0  # v3: g006 (p3 against p4)

    folder = lake / "lists" / "site-rapid" / "2026-03"
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith("v")) == ["v1", "v2", "v3"]
    v2 = json.loads((folder / "v2" / "manifest.json").read_text())
    v3 = json.loads((folder / "v3" / "manifest.json").read_text())
    assert "g001" in v2["reason"] and "g006" not in v2["reason"]
    assert "g006" in v3["reason"] and "g001" not in v3["reason"], v3["reason"]

    causes = pl.read_parquet(folder / "v3" / "diff.parquet").select("player_id", "cause")
    assert not causes.filter(pl.col("cause").str.contains("g001")).height, causes
    named = causes.filter(pl.col("cause").str.contains("annulled g006"))
    assert sorted(named.get_column("player_id")) == ["p3", "p4"]
    shown = ratings("diff", "site-rapid", "2026-03", "--lake", str(lake), "--json")
    assert shown.returncode == 0 and "g001" not in shown.stdout and "g006" in shown.stdout


# --- issue 31 item 4: the memory budget -----------------------------------------------------------


def test_a_memory_budget_that_is_not_a_size_is_one_sentence(tmp_path: Path) -> None:
    proc = ratings("run", "--lake", str(tmp_path / "lake"), "--memory", "3 bananas")
    assert one_sentence(proc, 2) == (
        "ratings: --memory takes a size such as 3G, 2GB or 512MiB, not '3 bananas'"
    )
    assert not (tmp_path / "lake").exists()


def platform_month(first_game: int, players: list[str], games: int) -> str:
    """A platform CSV of `games` games in 2026-03, each player of `players` meeting the next one
    in turn (every player in a game once there are as many games as players)."""
    rows = [
        f"g{first_game + i},2026-03-{1 + i % 28:02d}T10:{i % 60:02d}:00Z,"
        f"{players[i % len(players)]},{players[(i + 1) % len(players)]},1-0,900+10,true,live,"
        "60,normal"
        for i in range(games)
    ]
    return PLATFORM_HEADER + "\n".join(rows) + "\n"


BUDGET_MIB = 561
"""A budget leaving room for 1 MiB of players and games beside what every run holds: about
1,024 players less the games' share (893 players beside 2,800 games)."""


def test_players_that_would_not_fit_the_budget_are_refused_before_rating(tmp_path: Path) -> None:
    # two files of 700 players each: either fits the budget, both together do not
    from rating_core.budget import BASE_BYTES, players_need, run_need, show_size

    a, b = [f"a{i}" for i in range(700)], [f"b{i}" for i in range(700)]
    inbox = write_inbox(
        tmp_path,
        {
            "platform/a.csv": platform_month(0, a, 1400),
            "platform/b.csv": platform_month(1400, b, 1400),
        },
    )
    lake = tmp_path / "lake"
    proc = ratings("run", "--inbox", str(inbox), "--lake", str(lake), "--memory", "561MiB")
    line = one_sentence(proc, 2)
    players, games = 1400, 2800
    need = run_need(players, games)
    assert need > BUDGET_MIB * 1024**2 >= run_need(700, 1400)
    base = BASE_BYTES // 1024**2
    assert line == (
        f"ratings: the lake's {players:,} players and {games:,} games need about "
        f"{show_size(players_need(players, games))} beside the {base} MiB that every run holds "
        "(Python, Polars, DuckDB, Dagster and the rating kernels), "
        f"{show_size(need)} in all, more than the --memory budget of {BUDGET_MIB} MiB: "
        f"give --memory {-(-need // 1024**2)}MiB or more"
    )
    assert not (lake / "lists").exists()


def test_a_file_whose_players_would_not_fit_the_budget_is_refused_in_the_ingest(
    tmp_path: Path,
) -> None:
    # the file's players alone cannot be rated within the budget: the ingest stops at them
    from rating_core.budget import BASE_BYTES, players_need, run_need, show_size

    players, games = 1400, 2800
    inbox = write_inbox(
        tmp_path,
        {"platform/month.csv": platform_month(0, [f"p{i}" for i in range(players)], games)},
    )
    lake = tmp_path / "lake"
    proc = ratings("run", "--inbox", str(inbox), "--lake", str(lake), "--memory", "561MiB")
    line = one_sentence(proc, 2)
    need = run_need(players, games)  # the file is read in one piece: its every game and player
    assert need > BUDGET_MIB * 1024**2
    base = BASE_BYTES // 1024**2
    assert line == (
        f"ratings: platform/month.csv names at least {players:,} players in its first "
        f"{games:,} games, which need at least {show_size(players_need(players, games))} beside "
        f"the {base} MiB that every run holds (Python, Polars, DuckDB, Dagster and the rating "
        f"kernels), at least {show_size(need)} in all, more than the --memory budget of "
        f"{BUDGET_MIB} MiB: give --memory {-(-need // 1024**2)}MiB or more"
    )
    assert not list(lake.glob("games/*/*.parquet"))  # its games were never committed
    assert not (lake / "lists").exists()
