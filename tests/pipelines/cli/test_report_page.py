"""Tests for pipelines.cli.report_page: every chart is a valid Vega-Lite spec, and the page is one
self-contained, safely escaped HTML document (the browser test draws it: tests/pipelines/cli)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from pipelines.cli import report_page
from rating_core import tables
from rating_core.lake.publishing import publish_list
from rating_core.lake.report_data import gather_report
from rating_core.lake.storage import write_partitioned
from tests.support.published_lake import PublishMeta

SCRIPTS = "/* the Vega bundle */ window.vegaEmbed = () => Promise.resolve();"
NASTY = "</script><script>alert(1)</script> & <b>"


def _list(ratings: dict[str, float], name: dict[str, str] | None = None) -> pl.DataFrame:
    ids = list(ratings)
    return pl.DataFrame(
        {
            "player_id": ids,
            "name": [(name or {}).get(i, f"Player {i}") for i in ids],
            "rating": list(ratings.values()),
            "games": [2] * len(ids),
        },
        schema_overrides={"rating": pl.Float64, "games": pl.Int32},
    )


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    """Two lists over two periods, a revision with a cause, games, matches and a quarantine;
    one player's name tries to close the page's script elements."""
    lake = tmp_path / "lake"
    meta: PublishMeta = {"reason": "test", "code_version": "t"}
    names = {"x": NASTY}
    publish_list(
        lake, "fibs", "2024-01", _list({"x": 1500.0, "y": 1490.5}), input_digest="1", **meta
    )
    publish_list(
        lake, "fibs", "2024-02", _list({"x": 1512.3, "y": 1480.1}, names), input_digest="2", **meta
    )
    publish_list(
        lake,
        "fibs",
        "2024-02",
        _list({"x": 1515.0, "y": 1480.1}, names),
        input_digest="3",
        causes=pl.DataFrame({"player_id": ["x"], "cause": [f"late match of {NASTY}"]}),
        **meta,
    )
    publish_list(lake, "fide-standard", "2024-02", _list({"x": 2000.0}), input_digest="4", **meta)
    write_partitioned(
        lake,
        tables.GAMES,
        pl.DataFrame(
            {"game_id": ["g1", "g2"], "source": ["platform", "club"], "period": ["2024-01"] * 2}
        ),
    )
    write_partitioned(
        lake, tables.MATCHES, pl.DataFrame({"match_id": ["m"], "period": ["2024-02"]})
    )
    write_partitioned(
        lake,
        tables.QUARANTINE,
        pl.DataFrame(
            {
                "source_file": ["a.csv"],
                "line": [3],
                "record": ["g9"],
                "value": [NASTY],
                "reason": [f"result '{NASTY}' is not a result"],
                "source": ["games"],
            }
        ),
    )
    return lake


def _page(lake: Path, player: str | None = "x") -> tuple[str, list[report_page.ChartBlock]]:
    data = gather_report(lake, player=player)
    return report_page.build_page(
        data, generated_at=datetime(2024, 3, 1, 12, 0, tzinfo=UTC), scripts=SCRIPTS
    )


def test_every_chart_is_a_valid_vega_lite_spec(lake: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report_page, "VALIDATE_SPECS", True)  # Altair checks the schema
    _, charts = _page(lake)
    kinds = [c.kind for c in charts]
    # player, games, activity; fibs: histogram and movers; fide-standard (one period): histogram
    assert kinds == [
        "player",
        "games",
        "activity",
        "histogram",
        "movers",
        "histogram",
        "quarantine",
    ]
    assert all(
        c.spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/") for c in charts
    )


def test_page_holds_one_spec_per_chart_and_the_scripts_inline(lake: Path) -> None:
    page, charts = _page(lake)
    holders = re.findall(r'<div class="[^"]*" id="(chart-\d+)" data-chart="(\w+)">', page)
    assert [h[0] for h in holders] == [c.chart_id for c in charts]
    for chart in charts:
        match = re.search(
            rf'<script type="application/json" id="spec-{chart.chart_id}">(.*?)</script>', page
        )
        assert match is not None
        assert json.loads(match.group(1)) == chart.spec
    assert SCRIPTS in page
    assert page.count("<script") == len(charts) + 1  # the specs and the one module script


def test_names_and_reasons_cannot_break_out_of_the_page(lake: Path) -> None:
    page, _ = _page(lake)
    assert "<script>alert(1)" not in page  # neither in a spec nor in the HTML text
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;" in page
    specs = re.findall(r'<script type="application/json" id="spec-[^"]+">(.*?)</script>', page)
    # ... and the specs still carry the name as it is (JSON escapes, decoded by the browser)
    assert any(NASTY in json.dumps(json.loads(s), ensure_ascii=False) for s in specs)


def test_page_asks_for_nothing_over_the_network(lake: Path) -> None:
    page, _ = _page(lake)
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, re.IGNORECASE)
    assert not re.search(r"url\(\s*['\"]?\s*(?:https?:)?//", page, re.IGNORECASE)
    assert not re.search(r"@import", page)


def test_revisions_are_listed_with_their_cause(lake: Path) -> None:
    page, charts = _page(lake)
    player = next(c for c in charts if c.kind == "player")
    values = player.spec.get("datasets")
    rows = next(iter(values.values())) if values else player.spec["data"]["values"]
    revised = [r for r in rows if r["revised"]]
    assert [(r["list"], r["period"], r["version"], r["old"], r["rating"]) for r in revised] == [
        ("fibs", "2024-02", 2, 1512.3, 1515.0)
    ]
    assert "<h3>Revised versions</h3>" in page and "1512.3" in page and "1515.0" in page


def test_a_report_without_player_or_quarantine_says_so(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    publish_list(
        lake,
        "site-elo",
        "2024-01",
        _list({"a": 1500.0}),
        reason="t",
        input_digest="1",
        code_version="t",
    )
    page, charts = _page(lake, player=None)
    assert [c.kind for c in charts] == ["activity", "histogram"]
    assert "No record was quarantined" in page
    assert "2024-01 is the list&#x27;s first period" in page
    assert "The lake holds no games." in page


def test_the_vega_bundle_is_built_once_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import vl_convert

    calls: list[object] = []

    def bundle(vl_version: object = None) -> str:
        calls.append(vl_version)
        return f"/* bundle {len(calls)} */ window.vegaEmbed=function(){{}};"

    monkeypatch.setattr(vl_convert, "javascript_bundle", bundle)
    cache = tmp_path / "cache"
    first = report_page.vega_scripts(cache)
    assert report_page.vega_scripts(cache) == first and len(calls) == 1
    (kept,) = cache.iterdir()
    kept.write_text("/* cut short */", encoding="utf-8")  # no marker: built again
    assert report_page.vega_scripts(cache).startswith("/* bundle 2 */") and len(calls) == 2
    a_file = tmp_path / "file"
    a_file.write_text("", encoding="utf-8")
    assert report_page.BUNDLE_MARKER in report_page.vega_scripts(a_file / "cache")  # no cache
