"""At 80 columns nothing overflows, no id, file name or list name is broken across lines or made
ambiguous, and a column left out is said under its table (issue 33 item 6).

Each case is printed through the commands' own output functions into an 80-column console, the
way a piped `ratings` with COLUMNS=80 prints it, and read back as text."""

from __future__ import annotations

import io
import re

import polars as pl
import pytest
from rich.console import Console

from pipelines.cli import app, output, preview, tournament
from pipelines.cli.output import ELLIPSIS, print_table
from rating_core.lake.tournament_report import TournamentReport

WIDTH = 80


def _console(terminal: bool = False) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=WIDTH, force_terminal=terminal, color_system=None), buffer


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def _fits(text: str) -> None:
    wide = [line for line in _lines(text) if len(line) > WIDTH]
    assert not wide, "\n".join(wide)


def _whole(text: str, name: str) -> bool:
    """`name` on one line of `text`, not run into another word."""
    return any(
        re.search(rf"(^|[\s│(]){re.escape(name)}($|[\s│),:])", line) for line in _lines(text)
    )


def _cells(text: str, column: int) -> list[str]:
    """The `column`th cell of each body row of a rich table."""
    return [line.split("│")[column + 1].strip() for line in _lines(text) if line.startswith("│")]


def _stands_for(shown: str, names: list[str]) -> list[str]:
    """The names a shown (perhaps shortened: `head…tail`, `head…middle…tail`) cell could be."""
    pattern = ".+".join(re.escape(piece) for piece in shown.split(ELLIPSIS))
    return [n for n in names if re.fullmatch(pattern, n)]


def test_a_title_longer_than_its_table_stays_on_one_line() -> None:
    out, buffer = _console()
    title = "34500012: ukd-standard-tournament_explanations"
    print_table(
        title,
        ["period", "rating_before", "pd", "k", "m"],
        [["2026-02", 2163, 0.89, 15, 2]],
        out=out,
    )
    text = buffer.getvalue()
    _fits(text)
    assert _lines(text)[0] == title


def test_a_title_wider_than_the_terminal_wraps_at_spaces_only() -> None:
    out, buffer = _console()
    lake = "/srv/ratings/" + "-".join(["federation-lake"] * 3)
    title = f"Next run on {lake} with a few more words to wrap at spaces"
    print_table(title, ["list", "period"], [["fide-standard", "2026-02"]], out=out)
    text = buffer.getvalue()
    _fits(text)
    assert _whole(text, lake)


INBOX_FILES = [
    "federation/lists/fide-blitz@2025-12.csv",
    "federation/lists/fide-rapid@2025-12.csv",
    "federation/lists/fide-standard@2025-12.csv",
    "federation/lists/ukd-blitz@2025-12.csv",
    "federation/lists/ukd-rapid@2025-12.csv",
    "federation/lists/ukd-standard@2025-12.csv",
    "federation/ankara-winter-2026-01.csv",
    "platform/games-2026.csv",
]


def _inbox_table(files: list[str]) -> str:
    out, buffer = _console()
    rows = [[f, "starting_lists", 12, 0] for f in files]
    print_table(
        "Inbox inbox",
        ["file", "kind", "ingested", "quarantined"],
        rows,
        shorten=("file",),
        right=("ingested", "quarantined"),
        out=out,
    )
    return buffer.getvalue()


def test_shortened_file_names_each_stand_for_one_file() -> None:
    text = _inbox_table(INBOX_FILES)
    _fits(text)
    shown = _cells(text, 0)
    assert len(shown) == len(INBOX_FILES)
    assert any(ELLIPSIS in cell for cell in shown)  # the table did need shortening
    for cell, name in zip(shown, INBOX_FILES, strict=True):
        assert _stands_for(cell, INBOX_FILES) == [name], cell


def test_two_names_sharing_a_long_prefix_and_suffix_stay_apart() -> None:
    common_head = "clubs/ankara-satranc-kulubu/season-2026/"
    common_tail = "-round-robin-final-standings-2026-06.csv"
    files = [f"{common_head}{part}{common_tail}" for part in ("group-a", "group-b", "group-c")]
    text = _inbox_table(files)
    _fits(text)
    for cell, name in zip(_cells(text, 0), files, strict=True):
        assert _stands_for(cell, files) == [name], cell


@pytest.mark.parametrize("width", [20, 26, 34, 40])
def test_shorten_names_never_gives_a_cut_that_fits_two_names(width: int) -> None:
    shown = output.shorten_names(INBOX_FILES, width)
    if shown is None:  # too narrow to tell them apart: the caller widens the column
        return
    for cell, name in zip(shown, INBOX_FILES, strict=True):
        assert len(cell) <= width
        assert _stands_for(cell, INBOX_FILES) == [name], cell


def test_a_long_id_in_a_wrapping_column_stays_whole_when_there_is_room() -> None:
    out, buffer = _console()
    game = "federation/ankara-open-2026-05.trf:Ankara-Open:r1:3-4"  # 52 characters
    reason = "not counted: the opponent was unrated on this list at the period's start"
    print_table(
        "1 row",
        ["period", "game_id", "reason"],
        [["2026-05", game, reason]],
        wrap=("game_id", "reason"),
        out=out,
    )
    text = buffer.getvalue()
    _fits(text)
    assert _whole(text, game)


def _version(
    list_name: str, period: str, reason: str, causes: list[str]
) -> preview.PreviewedVersion:
    return preview.PreviewedVersion(
        list=list_name,
        period=period,
        status="new",
        version=2,
        row_count=40,
        changed_rows=len(causes),
        publication="revision",
        revises=1,
        reason=reason,
        diff=[
            {
                "player_id": f"3450{i:04d}",
                "name": "Abdurrahmanoğlu-Karaosmanoğlu, Mehmet Ali Fatih",
                "old": 2100.0 + i,
                "new": 2110.0 + i,
                "change": 10.0,
                "cause": cause,
            }
            for i, cause in enumerate(causes)
        ],
    )


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """The commands' console replaced by an 80-column one that writes to a buffer."""
    out, buffer = _console()
    for module in (output, preview):
        monkeypatch.setattr(module, "console", out)
    return buffer


def test_a_preview_too_wide_says_every_column_it_leaves_out(captured: io.StringIO) -> None:
    long_list = "club-ankara-satranc-kulubu-standard"
    cause = "late result: tournament ankara-satranc-kulubu-spring-championship-2026-04 (standard)"
    version = _version(long_list, "2026-04", "a late result", [cause, cause + " again"])
    preview._print_players(version)
    text = captured.getvalue()
    _fits(text)
    assert _whole(text, long_list)
    assert _whole(text, "ankara-satranc-kulubu-spring-championship-2026-04")
    for row in version.diff:
        assert _whole(text, row["player_id"])
    for column in ("player_id", "name", "old → new", "change", "cause"):
        shown = any(  # in the table's header, or as the label of a stacked row
            re.match(rf"^(┃.*\s|){re.escape(column)}\s", line) for line in _lines(text)
        )
        assert shown or re.search(rf"not shown at 80 columns: .*\b{column}\b", text), column


def test_a_preview_says_when_the_cause_column_is_the_reason_above(
    captured: io.StringIO,
) -> None:
    reason = "inputs of 2026-03 or an earlier period changed since v1"
    version = _version("ukd-standard", "2026-03", reason, [reason, reason])
    preview._print_players(version)
    text = captured.getvalue()
    _fits(text)
    header = next(line for line in _lines(text) if line.startswith("┃"))
    assert "cause" not in header
    assert "cause not shown: every player's is the reason above" in text


def _report(name: str, opponent_id: str) -> TournamentReport:
    player = {
        "player_id": "34500018",
        "name": name,
        "ro": 1707,
        "k": 20,
        "k_reason": "established",
        "rated_games": 1,
        "w": 1.0,
        "we": 0.5,
        "w_minus_we": 0.5,
        "change": 10.0,
        "performance": 2107,
        "ra": 1707,
        "period": "2026-05",
        "period_change": 10,
        "rating_after": 1717,
    }
    game = {
        "player_id": "34500018",
        "round": 1,
        "opponent_id": opponent_id,
        "opponent_name": None,
        "opponent_rating": None,
        "counted": False,
        "d": None,
        "pd": None,
        "score": 1.0,
        "delta_r": None,
        "k_delta_r": None,
        "not_counted_reason": "opponent unrated on this list: "
        "federation/lists/fide-standard@2025-12.csv has no rating for this player",
    }
    return TournamentReport(
        tournament_id="ankara-satranc-kulubu-spring-championship-2026-04",
        list_name="fide-standard",
        period="2026-05",
        players=pl.DataFrame([player]),
        games=pl.DataFrame([game]),
    )


def test_a_tournament_report_cuts_a_long_name_never_the_id() -> None:
    opponent = "u-an-opponent-without-a-name-on-the-site"
    lines = tournament.report_lines(
        _report('=HYPERLINK("http://example.org/a-long-name")', opponent)
    )
    text = "\n".join(lines)
    _fits(text)
    assert _whole(text, "(34500018)")
    assert _whole(text, opponent)
    assert _whole(text, "federation/lists/fide-standard@2025-12.csv")
    assert sum("(34500018)" in line for line in lines) == 2  # the table row and the heading


def test_help_at_80_columns_keeps_names_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    parser = app.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert isinstance(sub.choices, dict)  # the subcommands' parsers by name
    helps = [parser.format_help()] + [p.format_help() for p in sub.choices.values()]
    text = "\n".join(helps)
    _fits(text)
    assert not re.search(r"[a-z]-\n", text)  # never broken after a hyphen (`fide-xml-`)
    for name in ("fide-xml-combined", "--as-of", "fide-ukd-calculator"):
        assert _whole(text, name), name


def test_an_error_on_a_terminal_wraps_at_spaces_and_stays_one_line_in_a_pipe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    names = [f"club-ankara-satranc-kulubu-{kind}" for kind in ("blitz", "rapid", "standard")]
    sentence = f"no list named 'club-ankara'; published lists: {', '.join(names)}"
    terminal, on_terminal = _console(terminal=True)
    monkeypatch.setattr(app, "err_console", terminal)
    app._say(sentence)
    text = re.sub(r"\x1b\[[0-9;]*m", "", on_terminal.getvalue())
    _fits(text)
    for name in names:
        assert _whole(text, name), name
    piped, in_pipe = _console()
    monkeypatch.setattr(app, "err_console", piped)
    app._say(sentence)
    assert in_pipe.getvalue() == f"ratings: {sentence}\n"
