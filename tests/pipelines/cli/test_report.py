"""End-to-end tier: `ratings report` writes a page that a real browser (headless Chromium) draws
with no network, every chart with the marks its data calls for.

The hand-built lake's expected marks are worked out by hand below; the sample run's from the
published files through the README's plain Polars glob, not through the report's code.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest

from pipelines.cli import app as cli
from rating_core import tables
from rating_core.lake.publishing import publish_list
from rating_core.lake.storage import write_partitioned
from tests.support.published_lake import PublishMeta

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]
CHROMIUM = next(
    (found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None
)
_NO_CHROMIUM = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium on this machine (Debian's `chromium` package; .ci/run installs it)",
)


def needs_browser(test: Callable[..., None]) -> Callable[..., None]:
    """A test that draws a page in headless Chromium: marked `browser`, skipped without it."""
    return pytest.mark.browser(_NO_CHROMIUM(test))


BROWSER_FLAGS = (
    "--headless",
    "--no-sandbox",  # root in CI and containers
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--window-size=1400,900",
    "--virtual-time-budget=15000",  # let the page's scripts run to the end
    "--host-resolver-rules=MAP * ~NOTFOUND",  # no host resolves: the page must need none
)


def ratings(*args: str) -> subprocess.CompletedProcess[str]:
    """The command line in a fresh process, as a user runs it."""
    proc = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.returncode == 0, f"ratings {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def browser(page: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Chromium on `page` with `args` (`--dump-dom`, `--screenshot=F`...)."""
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, *BROWSER_FLAGS, *args, page.resolve().as_uri()],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


class ChartMarks(HTMLParser):
    """Reads a dumped DOM: for each chart holder (`data-chart`), its `data-rendered` state, its
    `<svg>` elements, and the items of each Vega mark type drawn in it (`mark-rect`: one per bar,
    `mark-symbol`: one per point, `mark-line`: one per line, `mark-text`, `mark-rule`)."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, str, str | None]] = []  # tag, class, chart id
        self.kinds: dict[str, str] = {}
        self.rendered: dict[str, str | None] = {}
        self.svgs: Counter[str] = Counter()
        self.marks: dict[str, Counter[str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        chart = self.stack[-1][2] if self.stack else None
        if "data-chart" in found and found.get("id"):
            chart = str(found["id"])
            self.kinds[chart] = str(found["data-chart"])
            self.rendered[chart] = found.get("data-rendered")
            self.marks[chart] = Counter()
        if chart is not None:
            if tag == "svg":
                self.svgs[chart] += 1
            parent_class = self.stack[-1][1] if self.stack else ""
            if self.stack and self.stack[-1][0] == "g" and "role-mark" in parent_class.split():
                self.marks[chart][parent_class.split()[0]] += 1
        if tag not in VOID:
            self.stack.append((tag, found.get("class") or "", chart))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        while self.stack:  # tolerate an unclosed element
            if self.stack.pop()[0] == tag:
                break


def drawn(page: Path) -> ChartMarks:
    """The page's charts as Chromium drew them."""
    parser = ChartMarks()
    parser.feed(browser(page, "--dump-dom").stdout)
    return parser


def page_requests(page: Path, net_log: Path) -> list[str]:
    """Every URL the page itself asked for while Chromium drew it (from Chromium's net log; the
    browser's own background requests have no file:// isolation key and are left out)."""
    browser(page, f"--log-net-log={net_log}", "--dump-dom")
    log = json.loads(net_log.read_text(encoding="utf-8"))
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return [
        event["params"]["url"]
        for event in log["events"]
        if event["type"] == start_job
        and str(event.get("params", {}).get("network_isolation_key", "")).startswith("file://")
        and not event["params"]["url"].startswith(("file:", "data:", "blob:"))
    ]


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def _list(ratings: dict[str, float], games: dict[str, int] | None = None) -> pl.DataFrame:
    ids = list(ratings)
    return pl.DataFrame(
        {
            "player_id": ids,
            "name": [f"Player {i.upper()}" for i in ids],
            "rating": list(ratings.values()),
            "games": [(games or {}).get(i, 0) for i in ids],
        },
        schema_overrides={"rating": pl.Float64, "games": pl.Int32},
    )


@pytest.fixture(scope="module")
def hand_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """fide-standard 2024-01 v1, 2024-02 v1 and v2 (a late result moves b and c); fibs 2024-02
    only; 3 chess games and 1 match; 3 quarantined records of 2 kinds."""
    lake = tmp_path_factory.mktemp("report") / "lake"
    meta: PublishMeta = {"reason": "test", "code_version": "t"}
    publish_list(
        lake,
        "fide-standard",
        "2024-01",
        _list({"a": 2000, "b": 1900, "c": 1800, "d": 1700}),
        input_digest="1",
        **meta,
    )
    publish_list(
        lake,
        "fide-standard",
        "2024-02",
        _list({"a": 2010, "b": 1890, "c": 1800, "d": 1700}, {"a": 2, "b": 2}),
        input_digest="2",
        **meta,
    )
    publish_list(
        lake,
        "fide-standard",
        "2024-02",
        _list({"a": 2010, "b": 1885, "c": 1805, "d": 1700, "e": 1500}, {"a": 2, "b": 3, "c": 1}),
        input_digest="3",
        causes=pl.DataFrame({"player_id": ["b", "c"], "cause": ["late result L1"] * 2}),
        **meta,
    )
    publish_list(
        lake, "fibs", "2024-02", _list({"x": 1500.5, "y": 1610.0}), input_digest="4", **meta
    )
    write_partitioned(
        lake,
        tables.GAMES,
        pl.DataFrame(
            {
                "game_id": ["g1", "g2", "g3", "g4"],
                "source": ["platform", "platform", "federation", "club"],
                "period": ["2024-01", "2024-01", "2024-01", "2024-02"],
            }
        ),
    )
    write_partitioned(
        lake, tables.MATCHES, pl.DataFrame({"match_id": ["m1"], "period": ["2024-02"]})
    )
    write_partitioned(
        lake,
        tables.QUARANTINE,
        pl.DataFrame(
            {
                "source_file": ["a.csv", "a.csv", "b.csv"],
                "line": [2, 5, 7],
                "record": ["g7", "g8", "g9"],
                "value": ["2-0", "1-1", "maybe"],
                "reason": [
                    "result '2-0' is not one of 1-0, 0-1, 1/2-1/2",
                    "result '1-1' is not one of 1-0, 0-1, 1/2-1/2",
                    "rated 'maybe' is not true or false",
                ],
                "source": ["games"] * 3,
            }
        ),
    )
    return lake


@pytest.fixture(scope="module")
def hand_page(hand_lake: Path) -> Path:
    page = hand_lake.parent / "report.html"
    out = ratings("report", "--output", str(page), "--lake", str(hand_lake), "--player", "b")
    assert f"wrote {page}" in out.stdout and "7 charts" in out.stdout
    return page


@needs_browser
def test_every_chart_draws_the_marks_its_data_calls_for(hand_page: Path) -> None:
    charts = drawn(hand_page)
    assert list(charts.kinds.values()) == [
        "player",
        "games",
        "activity",
        "histogram",  # fibs: its first period, so no movers
        "histogram",  # fide-standard
        "movers",
        "quarantine",
    ]
    assert set(charts.rendered.values()) == {"yes"}, charts.rendered
    assert all(charts.svgs[c] == 1 for c in charts.kinds), charts.svgs
    marks = list(charts.marks.values())
    # player b: the line through 2024-01 v1 and 2024-02 v2, a point on each, the replaced
    # 1890 (hollow) and the revised 1885 (diamond), one dashed rule between them, one "v2"
    assert marks[0] == {"mark-line": 1, "mark-symbol": 4, "mark-rule": 1, "mark-text": 1}
    # (2024-01, platform), (2024-01, federation), (2024-02, club), (2024-02, backgammon)
    assert marks[1] == {"mark-rect": 4}
    # two facets (fide-standard, fibs), two lines each; fide 2 periods x 2 points, fibs 1 x 2
    assert marks[2] == {"mark-line": 4, "mark-symbol": 6}
    # fibs: 1500.5 and 1610 in bins of 10 (109.5 / 20 -> 10): 2 bars
    assert marks[3] == {"mark-rect": 2}
    # fide-standard v2: 1500, 1700, 1805, 1885, 2010 in bins of 50 (510 / 20 -> 50): 5 bars
    assert marks[4] == {"mark-rect": 5}
    # against 2024-01: a +10, c +5 up, b -15 down (d unchanged, e new): 3 bars, 3 labels
    assert marks[5] == {"mark-rect": 3, "mark-text": 3}
    # result '…' is not one of ... (2 records) and rated '…' is not true or false (1)
    assert marks[6] == {"mark-rect": 2}


@needs_browser
def test_the_page_makes_no_network_request(hand_page: Path, tmp_path: Path) -> None:
    html = hand_page.read_text(encoding="utf-8")
    assert "window.vegaEmbed" in html  # the scripts are inlined, not fetched
    for attribute in ("src=", "href="):
        for chunk in html.split(attribute)[1:]:
            assert not chunk.lstrip("\"' ").startswith(("http:", "https:", "//")), chunk[:80]
    assert page_requests(hand_page, tmp_path / "net.json") == []
    # the check itself sees a page's request: a control page with a remote image
    control = tmp_path / "control.html"
    control.write_text('<img src="https://example.invalid/x.png">', encoding="utf-8")
    assert page_requests(control, tmp_path / "control.json") == ["https://example.invalid/x.png"]


@needs_browser
def test_screenshot_at_1400_pixels(hand_page: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    browser(hand_page, f"--screenshot={shot}")
    assert png_size(shot) == (1400, 900)
    # a page whose charts did not draw is a header on a flat background: a few KB of PNG
    assert shot.stat().st_size > 40_000


@pytest.mark.parametrize(
    ("args", "sentence"),
    [
        (
            ["--list", "ukd-blitz"],
            "no list named 'ukd-blitz'; published lists: fibs, fide-standard",
        ),
        (["--player", "nobody"], "no published list holds player 'nobody'"),
    ],
)
def test_unknown_list_or_player_is_one_sentence(
    hand_lake: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    sentence: str,
) -> None:
    page = tmp_path / "r.html"
    status = cli.main(["report", "--output", str(page), "--lake", str(hand_lake), *args])
    err = capsys.readouterr().err
    assert status == 2
    assert err.strip() == f"ratings: {sentence}"
    assert not page.exists()


def test_an_unwritable_output_is_one_sentence(
    hand_lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "file.txt"
    a_file.write_text("x", encoding="utf-8")
    cases = {
        str(tmp_path / "missing" / "r.html"): "the folder",
        str(tmp_path): "is a folder",
        str(a_file / "r.html"): "is a file, not a folder",
    }
    for output, words in cases.items():
        status = cli.main(["report", "--output", output, "--lake", str(hand_lake)])
        err = capsys.readouterr().err.strip()
        assert status == 2 and err.startswith("ratings: ") and words in err, err
        assert "\n" not in err and "Traceback" not in err
    inside = hand_lake / "lists" / "fibs" / "2024-02" / "v1" / "report.html"
    status = cli.main(["report", "--output", str(inside), "--lake", str(hand_lake)])
    err = capsys.readouterr().err.strip()
    assert status == 2 and "inside the published lists" in err and not inside.exists()
    status = cli.main(["report", "--output", str(tmp_path / "r.html"), "--lake", str(a_file)])
    assert status == 2 and "no published lists" in capsys.readouterr().err


def test_list_option_keeps_only_that_list(hand_lake: Path, tmp_path: Path) -> None:
    page = tmp_path / "fibs.html"
    assert (
        cli.main(["report", "--output", str(page), "--lake", str(hand_lake), "--list", "fibs"]) == 0
    )
    html = page.read_text(encoding="utf-8")
    assert 'id="list-fibs"' in html and 'id="list-fide-standard"' not in html


def _expected_sample_charts(lake: Path) -> Counter[str]:
    """Charts the samples' page must hold, from the published files via the README's glob."""
    lists = pl.scan_parquet(str(lake / "lists" / "**" / "list.parquet"))
    newest = lists.group_by("list", "period").agg(pl.col("version").max())
    rows = lists.join(newest, on=["list", "period", "version"]).collect()
    periods = rows.select("list", "period").unique().sort("list", "period")
    expected: Counter[str] = Counter(histogram=periods["list"].n_unique(), games=1, activity=1)
    for (name,), per_list in periods.group_by("list"):
        if per_list.height < 2:
            continue
        last, before = per_list["period"].sort().to_list()[-1:-3:-1]
        pair = rows.filter((pl.col("list") == name) & pl.col("period").is_in([last, before]))
        moved = pair.pivot("period", index="player_id", values="rating").drop_nulls()
        if moved.filter(pl.col(last) != pl.col(before)).height:
            expected["movers"] += 1
    if (lake / "quarantine").is_dir():
        expected["quarantine"] = 1
    return expected


@needs_browser
def test_the_sample_run_report_draws_in_the_browser(tmp_path: Path, samples: Path) -> None:
    lake = tmp_path / "lake"
    ratings("run", "--inbox", str(samples), "--lake", str(lake))
    page = lake / "report.html"
    ratings("report", "--output", str(page), "--lake", str(lake), "--player", "13400001")
    charts = drawn(page)
    expected = _expected_sample_charts(lake)
    expected["player"] = 1
    assert Counter(charts.kinds.values()) == expected
    assert set(charts.rendered.values()) == {"yes"}
    assert all(charts.svgs[c] == 1 and sum(charts.marks[c].values()) > 0 for c in charts.kinds)
