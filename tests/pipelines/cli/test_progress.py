"""What `ratings run` shows of long work (issue 31 item 7, `pipelines.cli.progress`): plain
timestamped lines at most every N seconds off a terminal, a live bar within 80 columns on one,
rates and estimates from the reports' times, reports from several threads at once."""

from __future__ import annotations

import io
import re
import threading

import pytest
from rich.cells import cell_len
from rich.console import Console

from pipelines.cli.progress import (
    EVERY_S,
    ProgressDisplay,
    every_seconds,
    format_bytes,
    format_count,
    format_duration,
)
from rating_core.progress import Progress, listening, report
from tests.support.clock import FakeClock

FILE = "platform/lichess_db_standard_rated_2026-11.pgn.zst"
GB = 1_000_000_000


def plain(every: float = 5.0, width: int = 80) -> tuple[ProgressDisplay, Console, FakeClock]:
    """A display writing plain lines (not a terminal) to a recording console, on a fake clock."""
    console = Console(file=io.StringIO(), width=width, record=True)
    clock = FakeClock()
    return ProgressDisplay(console, every=every, clock=clock, stamp=clock.stamp), console, clock


def lines(console: Console) -> list[str]:
    return console.export_text().splitlines()


def ingest(display: ProgressDisplay, clock: FakeClock, at: float, done: int, games: int) -> None:
    clock.now = at
    display(Progress("ingest", FILE, done, 6 * GB, "bytes", games))


def test_plain_lines_at_most_every_n_seconds_with_rate_and_time_left() -> None:
    display, console, clock = plain(every=5)
    for step in range(1, 41):  # a chunk of 85 MB and 40k games every second
        ingest(display, clock, float(step), step * 85_000_000, step * 40_000)
    printed = lines(console)
    # the piece was first heard of at 1 s: lines at 6, 11, ... 36 s, never two within 5 s
    stamps = [line.split()[0] for line in printed]
    assert stamps == [f"2026-12-05T09:12:{s:02d}Z" for s in (6, 11, 16, 21, 26, 31, 36)]
    assert all(cell_len(line) <= 80 for line in printed)
    # at 36 s: 3.06 of 6 GB done at 85 MB/s, 2.94 GB left: about 35 s
    last = printed[-1]
    assert " ingest " in last and last.endswith("3.1/6.0 GB 85 MB/s 35 s left"), last
    assert "…" in last and last.split()[2].endswith("11.pgn.zst")  # the name cut in the middle


def test_plain_line_says_games_per_second_when_the_label_leaves_room() -> None:
    display, console, clock = plain(every=0)
    for at, done, games in ((0.0, 0, 0), (2.0, 170_000_000, 82_000)):
        clock.now = at
        display(Progress("ingest", "a.pgn", done, 6 * GB, "bytes", games))
    assert lines(console)[-1] == (
        "2026-12-05T09:12:02Z ingest a.pgn 0.2/6.0 GB 2% 85 MB/s 41k games/s 69 s left"
    )


def test_file_names_are_printed_as_written() -> None:
    display, console, clock = plain(every=0)
    display(Progress("ingest", "platform/[bold]x.pgn", 1, 10, "bytes", 1))
    console.print(display)  # the live rows, rendered on a console that is not a terminal
    line, row = lines(console)
    assert line.split()[2] == "platform/[bold]x.pgn" and "platform/[bold]x.pgn" in row


def test_the_rate_follows_the_last_seconds_not_the_whole_piece() -> None:
    display, console, clock = plain(every=0)
    for step in range(0, 31):  # slow for 30 s: 10 MB/s
        ingest(display, clock, float(step), step * 10_000_000, 0)
    for step in range(1, 31):  # then fast for 30 s: 100 MB/s
        ingest(display, clock, 30.0 + step, 300_000_000 + step * 100_000_000, 0)
    assert " 100 MB/s " in lines(console)[-1]


def test_a_finished_piece_says_what_it_did_and_short_work_says_nothing() -> None:
    display, console, clock = plain(every=5)
    ingest(display, clock, 0.0, 0, 0)
    ingest(display, clock, 6.0, 3 * GB, 1_500_000)
    clock.now = 12.0
    display(Progress("ingest", FILE, 6 * GB, 6 * GB, "bytes", 3_100_000, finished=True))
    # short work (under 5 s): no line at all, finished or not
    clock.now = 13.0
    display(Progress("rating", "fide", 0, 12, "periods"))
    clock.now = 14.0
    display(Progress("rating", "fide", 12, 12, "periods", 300_000, finished=True))
    printed = lines(console)
    assert len(printed) == 2, printed
    assert printed[1].startswith("2026-12-05T09:12:12Z ingest platform/")
    assert printed[1].endswith("done: 3.1M games in 12 s"), printed[1]
    assert all(cell_len(line) <= 80 for line in printed)


def test_rating_lines_show_periods_games_and_time_left() -> None:
    display, console, clock = plain(every=0)
    for period in range(0, 5):
        clock.now = 2.0 * period
        display(Progress("rating", "fide", period, 12, "periods", period * 25_000))
    clock.now = 30.0
    display(Progress("rating", "fide", 12, 12, "periods", 310_000, finished=True))
    printed = lines(console)
    # 4 periods in 8 s: 8 periods left take 16 s
    assert (
        printed[4] == "2026-12-05T09:12:08Z rating fide 4/12 periods 33% 100k games about 16 s left"
    )
    assert printed[-1] == "2026-12-05T09:12:30Z rating fide done: 12 periods, 310k games in 30 s"


def test_backgammon_counts_matches_not_games() -> None:
    display, console, clock = plain(every=0)
    display(Progress("ingest", "backgammon/matches.csv", 0, None, "lines", 0, counts="matches"))
    clock.now = 2.0
    display(Progress("ingest", "backgammon/matches.csv", 2, None, "lines", 1, counts="matches"))
    clock.now = 3.0
    display(Progress("rating", "fibs", 0, 2, "periods", 1, counts="matches"))
    clock.now = 4.0
    display(Progress("rating", "fibs", 2, 2, "periods", 40_000, True, "matches"))
    printed = lines(console)
    assert printed[1].endswith("2 lines 1 match"), printed
    assert printed[-1] == "2026-12-05T09:12:04Z rating fibs done: 2 periods, 40k matches in 1 s"
    assert not any("game" in line for line in printed), printed


def test_a_label_reported_again_after_it_finished_is_a_new_piece() -> None:
    display, console, clock = plain(every=5)
    display(Progress("rating", "site", 0, 3, "periods"))
    clock.now = 6.0
    display(Progress("rating", "site", 3, 3, "periods", 10, finished=True))
    clock.now = 7.0
    display(Progress("rating", "site", 0, 3, "periods"))  # started at 7 s: nothing until 12 s
    clock.now = 11.0
    display(Progress("rating", "site", 1, 3, "periods", 5))
    assert len(lines(console)) == 1


def test_terminal_rows_fit_80_columns() -> None:
    console = Console(file=io.StringIO(), width=80, record=True, force_terminal=True)
    clock = FakeClock()
    display = ProgressDisplay(console, every=5, clock=clock)
    with display.status("ingesting the inbox"):
        for step in range(1, 4):
            clock.now = float(step)
            display(Progress("ingest", FILE, step * 85_000_000, 6 * GB, "bytes", step * 40_000))
            display(Progress("ingest", "federation/x.pgn", step * 1000, None, "bytes", step))
            display(Progress("rating", "fide", step, 12, "periods", step * 25_000))
        console.print(display)
    shown = console.export_text().splitlines()
    assert shown[0].endswith("ingesting the inbox")
    assert len(shown) == 4 and all(cell_len(line) <= 80 for line in shown), shown
    assert "━" in shown[1] and "0.3/6.0 GB 4% 85 MB/s 40k games/s 68 s left" in shown[1]
    assert "11.pgn.zst" in shown[1] and "…" in shown[1]
    assert "3.0 kB" in shown[2] and "3/12 periods 25% 75k games 9 s left" in shown[3]


def test_terminal_rows_at_40_columns_leave_the_bar_out() -> None:
    console = Console(file=io.StringIO(), width=40, record=True, force_terminal=True)
    clock = FakeClock()
    display = ProgressDisplay(console, every=5, clock=clock)
    for step in range(1, 3):
        clock.now = float(step)
        display(Progress("ingest", FILE, step * 85_000_000, 6 * GB, "bytes", step * 40_000))
    console.print(display)
    shown = console.export_text().splitlines()
    assert shown and all(cell_len(line) <= 40 for line in shown), shown
    assert "━" not in shown[0]


def test_live_display_starts_and_stops_and_keeps_long_pieces_lines() -> None:
    console = Console(file=io.StringIO(), width=80, record=True, force_terminal=True)
    clock = FakeClock()
    display = ProgressDisplay(console, every=5, clock=clock)
    with display, listening(display), display.status("rating and publishing 2026-02 to 2026-06"):
        report(Progress("rating", "fide", 0, 5, "periods"))
        clock.now = 7.0
        report(Progress("rating", "fide", 5, 5, "periods", 99, finished=True))
        clock.now = 8.0
        report(Progress("rating", "ukd", 0, 5, "periods"))
        report(Progress("rating", "ukd", 5, 5, "periods", 99, finished=True))
    text = console.export_text()
    assert "rating fide done: 5 periods, 99 games in 7 s" in text
    assert "rating ukd done" not in text  # short work leaves no line


def test_reports_from_several_threads_at_once() -> None:
    errors: list[BaseException] = []
    for terminal in (False, True):
        console = Console(file=io.StringIO(), width=80, record=True, force_terminal=terminal)
        display = ProgressDisplay(console, every=0)

        def work(number: int, display: ProgressDisplay = display) -> None:
            try:
                for step in range(1, 201):
                    done = step == 200
                    display(Progress("ingest", f"f{number}.pgn", step, 200, "bytes", step, done))
            except BaseException as error:  # noqa: BLE001 - the test reports any
                errors.append(error)

        with display:
            threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
            for thread in threads:
                thread.start()
            while terminal and any(thread.is_alive() for thread in threads):
                console.print(display)  # rendered while the threads report, as live does
            for thread in threads:
                thread.join()
        if not terminal:  # a line per report (every=0): none lost, none torn
            printed = lines(console)
            assert len(printed) == 8 * 200, len(printed)
            assert all(re.match(r"^\S+Z ingest f\d\.pgn (\d|done:)", line) for line in printed)
            assert sum(" done: " in line for line in printed) == 8
    assert not errors, errors


@pytest.mark.parametrize(
    ("value", "seconds"), [("", EVERY_S), ("0", 0.0), ("30", 30.0), ("-1", EVERY_S), ("x", EVERY_S)]
)
def test_the_interval_comes_from_the_environment(value: str, seconds: float) -> None:
    assert every_seconds({"RATINGS_PROGRESS_SECONDS": value}) == seconds


def test_amounts_are_short() -> None:
    assert format_bytes(1.2e9, 6e9) == "1.2 GB" and format_bytes(85e6) == "85 MB"
    assert format_bytes(340e6, 800e6) == "340 MB" and format_bytes(512) == "512 B"
    assert [format_count(n) for n in (850, 4_100, 41_000, 1_200_000)] == [
        "850",
        "4.1k",
        "41k",
        "1.2M",
    ]
    assert (format_bytes(9.96e6), format_bytes(9.94e6), format_count(9_960)) == (
        "10 MB",
        "9.9 MB",
        "10k",
    )
    assert [format_duration(s) for s in (57.4, 250, 600, 7500)] == [
        "57 s",
        "4 min 10 s",
        "10 min",
        "2 h 05 min",
    ]


def test_off_a_terminal_a_status_is_named_by_the_heartbeat_and_progress_lines_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A step with no report for a while (the rating, Dagster's bookkeeping) still gets a
    timestamped line every few seconds; a progress line puts the next one off."""
    monkeypatch.setenv("RATINGS_HEARTBEAT_SECONDS", "3")  # the suite turns it off
    display, console, clock = plain(every=5)
    heartbeat = display.heartbeat
    assert heartbeat.active  # not a terminal
    heartbeat.clock, heartbeat.stamp = clock, clock.stamp
    heartbeat.said()  # the run starts at 0 s
    with display.status("rating and publishing 2026-01 to 2026-06 (6 periods)", plain="rating"):
        assert heartbeat.due(2.0) is None
        clock.now = 3.0
        assert heartbeat.due(3.0) == "2026-12-05T09:12:03Z rating: 3 s so far"
        ingest(display, clock, 4.0, 0, 0)  # a piece's first report: no line yet
        ingest(display, clock, 9.0, 85_000_000, 40_000)  # 5 s on: a progress line at 9 s
        printed = lines(console)
        assert len(printed) == 1 and " ingest " in printed[0]
        assert heartbeat.due(11.9) is None  # 3 s from the progress line, not from 3 s
        assert heartbeat.due(12.0) is not None
    assert heartbeat.due(20.0) is None  # no status: the heartbeat says nothing


def test_on_a_terminal_the_heartbeat_is_off() -> None:
    console = Console(file=io.StringIO(), width=80, force_terminal=True)
    display = ProgressDisplay(console)
    assert display.terminal and not display.heartbeat.active
    with display, display.status("ingesting the inbox"):
        pass
    assert display.heartbeat._thread is None


def test_one_period_and_one_game_are_singular_and_the_last_second_is_said_in_words() -> None:
    display, console, clock = plain(every=0, width=120)
    display(Progress("rating", "site", 0, 1, "periods"))
    clock.now = 1.0
    display(Progress("rating", "site", 0, 1, "periods", 1))
    clock.now = 2.0
    display(Progress("rating", "site", 1, 1, "periods", 1, finished=True))
    for step, at in ((1, 3.0), (2, 4.0), (399, 4.9)):  # 1 kB a second, then 397 kB at once
        clock.now = at
        display(Progress("ingest", "a.pgn", step * 1000, 400_000, "bytes", step))
    printed = lines(console)
    assert printed[1].endswith("rating site 0/1 period 0% 1 game")
    assert printed[2].endswith("rating site done: 1 period, 1 game in 2 s")
    assert printed[-1].endswith(" 99% 209 kB/s 209 games/s less than a second left")
    assert "0 s" not in " ".join(printed)
    assert format_duration(0.3) == "<1 s" and format_duration(0.6) == "1 s"


def test_a_file_read_again_from_its_start_measures_its_rate_afresh() -> None:
    """A file that is not UTF-8 is read again as Windows-1252: its reports start from 0 again,
    and the rate is the new reading's, never negative."""
    display, console, clock = plain(every=0)
    for at, done in ((0.0, 0), (1.0, 50_000_000), (2.0, 0), (3.0, 20_000_000)):
        clock.now = at
        display(Progress("ingest", "a.pgn", done, 100_000_000, "bytes"))
    assert " 20 MB/s " in lines(console)[-1]


def test_the_spinner_turns_as_time_goes_by() -> None:
    """The live display keeps one spinner, whose frame follows the time since it started."""
    clock = FakeClock()
    console = Console(
        file=io.StringIO(), width=80, record=True, force_terminal=True, get_time=clock
    )
    display = ProgressDisplay(console, every=5, clock=clock)
    with display.status("ingesting the inbox"):
        for at in (0.0, 0.1, 0.2, 0.3):
            clock.now = at
            console.print(display)
    frames = [line[0] for line in console.export_text().splitlines()]
    assert len(frames) == 4 and len(set(frames)) == 4, frames


def test_a_live_rows_label_and_bar_keep_their_place_while_its_figures_shorten() -> None:
    """Its figures' length wavers (`66 s left`, `2 s left`): the label is not cut and uncut
    at each frame, the bar does not move."""
    console = Console(file=io.StringIO(), width=80, record=True, force_terminal=True)
    clock = FakeClock()
    display = ProgressDisplay(console, every=5, clock=clock)
    shown = []
    for step in range(1, 70, 4):  # 85 MB a second
        clock.now = float(step)
        display(Progress("ingest", FILE, step * 85_000_000, 6 * GB, "bytes", step * 40_000))
        console.print(display)
        shown.append(console.export_text(clear=True).splitlines()[0])
    assert shown[1].endswith(" 7% 85 MB/s 40k games/s 66 s left"), shown
    assert shown[-1].endswith(" 97% 85 MB/s 40k games/s 2 s left"), shown
    # from the third frame on (the second's figures were its widest so far) one place
    labels = {re.sub(r" [━╸╺].*", "", line) for line in shown[2:]}
    bars = {re.sub(r"[━╸╺]", "━", line).index("━") for line in shown[2:]}
    assert len(labels) == 1 and len(bars) == 1, shown
