"""The `ratings report` page: Altair (Vega-Lite) charts in one self-contained HTML file.

Every chart is a Vega-Lite spec built with Altair from the frames of
`rating_core.lake.report_data`; the page inlines the Vega, Vega-Lite and Vega-Embed scripts
(bundled by vl-convert, no network access when opened) and draws each chart as SVG, with
tooltips. Text from the lake (names, reasons, causes) is escaped for HTML, and the specs are
embedded so that no value can close their `<script>` element.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import altair as alt
import polars as pl

from rating_core.lake.report_data import TOP_MOVERS, LatestList, ReportData
from rating_core.rounding import round_half_away
from rating_core.text import format_text

# --- looks: one place for the page's colours, sizes and fonts ---------------------------------

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
INK = "#1f2933"
MUTED = "#616e7c"
GRID = "#e4e7eb"
BAR = "#3b6ea5"
UP = "#2f855a"
DOWN = "#c53030"
REVISED = "#d97706"
SOURCE_COLOURS = {
    "platform": "#3b6ea5",
    "federation": "#c2763a",
    "club": "#4f9a8a",
    "backgammon": "#8e6bb0",
}
"""Games per period: one colour per inbox folder (and backgammon matches)."""
QUARANTINE_COLOURS = {"games": "#c2763a", "matches": "#8e6bb0", "players": "#3b6ea5"}
ACTIVITY_COLOURS = {"players listed": "#9aa5b1", "players who played": BAR}
HALF_WIDTH = 560
"""Width of a chart that shares its row with another (two side by side fit 1400 px)."""
FULL_WIDTH = 1180
SMALL_MULTIPLE_WIDTH = 185
SMALL_MULTIPLE_COLUMNS = 5
BAR_STEP = 20
"""Height of one bar in the horizontal bar charts (movers, quarantine reasons)."""
REASON_LABEL_LIMIT = 560
"""Pixels a quarantine reason's label may take before it is cut with an ellipsis."""


def _config(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """The page's common look: fonts, muted axes and grid, left-aligned titles."""
    return (
        chart.configure(font=FONT)
        .configure_view(stroke=None)
        .configure_title(
            fontSize=15,
            fontWeight=600,
            color=INK,
            anchor="start",
            subtitleColor=MUTED,
            subtitleFontSize=12,
            offset=10,
        )
        .configure_axis(
            labelFontSize=12,
            titleFontSize=12,
            titleFontWeight=500,
            labelColor=MUTED,
            titleColor=INK,
            gridColor=GRID,
            domainColor="#9aa5b1",
            tickColor="#9aa5b1",
        )
        .configure_legend(labelFontSize=12, titleFontSize=12, orient="top", titleColor=INK)
        .configure_header(labelFontSize=12, labelColor=INK, labelFontWeight=600, title=None)
    )


def _count_axis(largest: int, **options: Any) -> alt.Axis:
    """An axis of counts with whole-number ticks only (no `1, 1, 2` from ticks at 1.5)."""
    if largest <= 10:
        return alt.Axis(format="d", values=list(range(largest + 1)), **options)
    return alt.Axis(format="d", tickMinStep=1, **options)


def _values(frame: pl.DataFrame) -> alt.Data:
    """A frame as inline Vega-Lite values (rows of plain JSON types)."""
    return alt.Data(values=frame.to_dicts())


def _month(column: str = "period") -> pl.Expr:
    """`YYYY-MM` as the first day of the month, the date a temporal axis places the period at."""
    return (pl.col(column) + "-01").alias("month")


def _player_label() -> pl.Expr:
    """`Name (id)`, or the id alone when the list gives no name."""
    return (
        pl.when(pl.col("name").is_null() | (pl.col("name") == pl.col("player_id")))
        .then(pl.col("player_id"))
        .otherwise(pl.col("name") + " (" + pl.col("player_id") + ")")
        .alias("player")
    )


def _padded(changes: pl.Series) -> list[float]:
    """A domain from the largest fall to the largest rise (and 0), a quarter wider each way so
    that the value written at the end of a bar stays inside the chart."""
    low = min(float(changes.min()), 0.0)  # type: ignore[arg-type]
    high = max(float(changes.max()), 0.0)  # type: ignore[arg-type]
    margin = (high - low) * 0.25 or 1.0
    return [low - margin if low < 0 else 0.0, high + margin if high > 0 else 0.0]


def _rating_format(frame: pl.DataFrame, *columns: str) -> str:
    """`d` for whole ratings, `.1f` when any value has a decimal (FIBS)."""
    for column in columns:
        values = frame.get_column(column).drop_nulls()
        if values.len() and not (values % 1 == 0).all():
            return ".1f"
    return "d"


# --- charts ------------------------------------------------------------------------------------


def histogram_chart(latest: LatestList) -> alt.TopLevelMixin:
    """How the ratings of the list's latest version are spread: players per rating bin."""
    bins = latest.histogram
    width = bins["bin_end"][0] - bins["bin_start"][0]
    fmt = ".1f" if width % 1 else "d"
    data = bins.with_columns(
        range=format_text(
            "{} to {}",
            pl.col("bin_start").cast(pl.Int64 if fmt == "d" else pl.Float64),
            pl.col("bin_end").cast(pl.Int64 if fmt == "d" else pl.Float64),
        )
    )
    chart = (
        alt.Chart(_values(data))
        .mark_bar(color=BAR, stroke="white", strokeWidth=1)
        .encode(
            x=alt.X(
                "bin_start:Q",
                title="Rating",
                scale=alt.Scale(zero=False, nice=False),
                axis=alt.Axis(format=fmt),
            ),
            x2="bin_end:Q",
            y=alt.Y(
                "players:Q",
                title="Players",
                # polars types max() as any Python value; a count column's is an int
                axis=_count_axis(int(bins["players"].max())),  # type: ignore[arg-type]
            ),
            y2=alt.datum(0),
            tooltip=[
                alt.Tooltip("range:N", title="Rating"),
                alt.Tooltip("players:Q", title="Players"),
            ],
        )
        .properties(
            width=HALF_WIDTH,
            height=190,
            title=alt.Title(
                "Rating distribution",
                subtitle=f"{latest.players} players, bars {_number(width)} points wide",
            ),
        )
    )
    return _config(chart)


def movers_chart(latest: LatestList) -> alt.TopLevelMixin:
    """Who gained and who lost the most since the period before (rises green, falls red)."""
    movers = latest.movers.with_columns(_player_label())
    fmt = _rating_format(movers, "before", "after", "change")
    data = movers.with_columns(
        label=pl.when(pl.col("change") > 0)
        .then(pl.lit("+") + pl.col("change").cast(pl.String))
        .otherwise(pl.col("change").cast(pl.String))
        .str.replace(r"\.0$", "")
    )
    order = data["player"].to_list()
    y = alt.Y("player:N", sort=order, title=None, axis=alt.Axis(labelLimit=260))
    bars = (
        alt.Chart(_values(data))
        .mark_bar(height={"band": 0.75})
        .encode(
            x=alt.X(
                "change:Q",
                title=f"Rating change since {latest.previous_period}",
                scale=alt.Scale(domain=_padded(movers["change"]), nice=False),
                axis=alt.Axis(tickCount=6),
            ),
            y=y,
            color=alt.Color(
                "direction:N",
                scale=alt.Scale(domain=["up", "down"], range=[UP, DOWN]),
                legend=None,
            ),
            tooltip=[
                alt.Tooltip("player:N", title="Player"),
                alt.Tooltip("before:Q", title=latest.previous_period or "before", format=fmt),
                alt.Tooltip("after:Q", title=latest.period, format=fmt),
                alt.Tooltip("change:Q", title="Change", format=f"+{fmt}"),
            ],
        )
    )
    sides: tuple[tuple[str, Literal["left", "right"], int], ...] = (
        (">", "left", 4),
        ("<", "right", -4),
    )
    labels = [
        alt.Chart(_values(data))
        .transform_filter(f"datum.change {sign} 0")
        .mark_text(fontSize=11, color=INK, align=align, dx=dx)
        .encode(x="change:Q", y=y, text="label:N")
        for sign, align, dx in sides
    ]
    ups = int((movers["direction"] == "up").sum())
    downs = movers.height - ups
    chart = alt.layer(bars, *labels).properties(
        width=HALF_WIDTH - 200,
        height=alt.Step(BAR_STEP),
        title=alt.Title(
            "Top movers",
            subtitle=f"{latest.previous_period} to {latest.period}: the largest "
            f"{_count(ups, 'rise')} and {_count(downs, 'fall')} "
            f"(at most {TOP_MOVERS} each way; hover for the ratings)",
        ),
    )
    return _config(chart)


def activity_chart(activity: pl.DataFrame) -> alt.TopLevelMixin:
    """Per list, over time: players on the list and players who played in the period."""
    long = (
        activity.with_columns(_month())
        .unpivot(
            index=["list", "period", "month", "rated_games"],
            on=["players", "active_players"],
            variable_name="measure",
            value_name="count",
        )
        .with_columns(
            pl.col("measure").replace(
                {"players": "players listed", "active_players": "players who played"}
            )
        )
    )
    lists = long["list"].unique(maintain_order=True).to_list()
    base = (
        alt.Chart()
        .mark_line(point=alt.OverlayMarkDef(size=28), strokeWidth=2)
        .encode(
            x=alt.X(
                "month:T",
                timeUnit="yearmonth",
                title=None,
                axis=alt.Axis(format="%b %y", labelAngle=0, tickCount=4),
            ),
            y=alt.Y("count:Q", title=None, axis=alt.Axis(tickMinStep=1, format="d")),
            color=alt.Color(
                "measure:N",
                title=None,
                scale=alt.Scale(
                    domain=list(ACTIVITY_COLOURS), range=list(ACTIVITY_COLOURS.values())
                ),
            ),
            tooltip=[
                alt.Tooltip("list:N", title="List"),
                alt.Tooltip("period:N", title="Period"),
                alt.Tooltip("measure:N", title="Measure"),
                alt.Tooltip("count:Q", title="Players"),
                alt.Tooltip("rated_games:Q", title="Rated games (per player, summed)"),
            ],
        )
        .properties(width=SMALL_MULTIPLE_WIDTH, height=110)
    )
    # one small chart per list (a concatenation, not a facet: a facet's wrapped last row draws
    # axes under its empty cells); time is shared so the periods line up, counts are not
    cells = [
        base.transform_filter(alt.datum.list == name).properties(title=alt.Title(name, fontSize=12))
        for name in lists
    ]
    chart = (
        alt.concat(*cells, columns=SMALL_MULTIPLE_COLUMNS, data=_values(long), spacing=24)
        .resolve_scale(x="shared", y="independent", color="shared")
        .properties(
            title=alt.Title(
                "Players per period, list by list",
                subtitle="grey: players on the list (its newest version); "
                "blue: players with at least one rated game in the period",
            )
        )
    )
    return _config(chart)


def games_chart(per_period: pl.DataFrame) -> alt.TopLevelMixin:
    """How many games (and backgammon matches) each period holds, by inbox folder."""
    sources = [s for s in SOURCE_COLOURS if s in set(per_period["source"].to_list())]
    sources += sorted(set(per_period["source"].to_list()) - set(sources))
    colours = [SOURCE_COLOURS.get(s, MUTED) for s in sources]
    chart = (
        alt.Chart(_values(per_period.with_columns(_month())))
        .mark_bar()
        .encode(
            x=alt.X(
                "month:O",
                timeUnit="yearmonth",
                title="Period",
                axis=alt.Axis(format="%b %Y", labelAngle=0, labelOverlap=True),
            ),
            y=alt.Y("sum(games):Q", title="Games and matches", stack="zero"),
            color=alt.Color(
                "source:N",
                title="From",
                scale=alt.Scale(domain=sources, range=colours),
                sort=sources,
            ),
            order=alt.Order("source_order:Q"),
            tooltip=[
                alt.Tooltip("period:N", title="Period"),
                alt.Tooltip("source:N", title="From"),
                alt.Tooltip("games:Q", title="Games"),
            ],
        )
        .transform_calculate(source_order=f"indexof({json.dumps(sources)}, datum.source)")
        .properties(
            width=FULL_WIDTH,
            height=240,
            title=alt.Title(
                "Games per period",
                subtitle="every game ingest kept (rated or not), by inbox folder; "
                "backgammon: ranked and unranked matches",
            ),
        )
    )
    return _config(chart)


def quarantine_chart(reasons: pl.DataFrame) -> alt.TopLevelMixin:
    """Which mistakes the inbox held: quarantined records per kind of reason."""
    tables = sorted(set(reasons["source"].to_list()))
    colours = [QUARANTINE_COLOURS.get(t, MUTED) for t in tables]
    order = reasons["reason"].unique(maintain_order=True).to_list()
    chart = (
        alt.Chart(_values(reasons))
        .mark_bar(height={"band": 0.75})
        .encode(
            x=alt.X(
                "records:Q",
                title="Records",
                # polars types max() as any Python value; a count column's is an int
                axis=_count_axis(int(reasons["records"].max())),  # type: ignore[arg-type]
            ),
            y=alt.Y(
                "reason:N",
                sort=order,
                title=None,
                axis=alt.Axis(labelLimit=REASON_LABEL_LIMIT),
            ),
            color=alt.Color(
                "source:N", title="Table", scale=alt.Scale(domain=tables, range=colours)
            ),
            tooltip=[
                alt.Tooltip("source:N", title="Table"),
                alt.Tooltip("reason:N", title="Reason"),
                alt.Tooltip("records:Q", title="Records"),
                alt.Tooltip("example:N", title="Example"),
            ],
        )
        .properties(
            width=FULL_WIDTH - REASON_LABEL_LIMIT,
            height=alt.Step(BAR_STEP + 2),
            title=alt.Title(
                "Quarantined records by reason",
                subtitle=f"{int(reasons['records'].sum())} records kept out of the lake "
                "(quoted values shown as '…'; hover for an example)",
            ),
        )
    )
    return _config(chart)


def player_chart(player_label: str, timeline: pl.DataFrame) -> alt.TopLevelMixin:
    """A player's rating over time on every list: the line follows each period's newest
    version; a revised version that moved the player is a diamond, with the rating it
    replaced as a hollow circle and the cause in its tooltip."""
    fmt = _rating_format(timeline, "rating", "old")
    data = timeline.with_columns(
        _month(),
        revised=pl.col("old").is_not_null() & (pl.col("version") > 1),
        version_label=format_text("v{}", pl.col("version")),
    )
    x = alt.X(
        "month:T",
        timeUnit="yearmonth",
        title="Period",
        axis=alt.Axis(format="%b %Y", labelAngle=0),
    )
    y = alt.Y("rating:Q", title="Rating", scale=alt.Scale(zero=False))
    lists = sorted(set(timeline["list"].to_list()))
    # one colour per list
    scheme: Literal["tableau10", "tableau20"] = "tableau10" if len(lists) <= 10 else "tableau20"
    colour = alt.Color("list:N", title="List", scale=alt.Scale(scheme=scheme, domain=lists))
    tooltip = [
        alt.Tooltip("list:N", title="List"),
        alt.Tooltip("period:N", title="Period"),
        alt.Tooltip("version_label:N", title="Version"),
        alt.Tooltip("rating:Q", title="Rating", format=fmt),
        alt.Tooltip("old:Q", title="Before this version", format=fmt),
        alt.Tooltip("cause:N", title="Cause"),
    ]
    source = alt.Chart(_values(data))
    current = source.transform_filter("datum.current")
    line = current.mark_line(strokeWidth=2).encode(x=x, y=y, color=colour)
    points = current.mark_point(filled=True, size=36).encode(
        x=x, y=y, color=colour, tooltip=tooltip
    )
    revised = source.transform_filter("datum.revised")
    replaced = revised.mark_point(filled=False, size=70, color=MUTED, strokeWidth=1.5).encode(
        x=x, y=alt.Y("old:Q"), tooltip=tooltip
    )
    moves = revised.mark_rule(strokeDash=[3, 3], color=MUTED).encode(x=x, y="old:Q", y2="rating:Q")
    diamonds = revised.mark_point(
        shape="diamond", filled=True, size=150, color=REVISED, stroke="white", strokeWidth=1
    ).encode(x=x, y=y, tooltip=tooltip)
    labels = revised.mark_text(dy=-14, fontSize=11, fontWeight=600, color=REVISED).encode(
        x=x, y=y, text="version_label:N"
    )
    revisions = int(data["revised"].sum())
    chart = alt.layer(line, points, moves, replaced, diamonds, labels).properties(
        width=FULL_WIDTH - 180,
        height=320,
        title=alt.Title(
            f"Rating of {player_label} over time",
            subtitle=[
                f"on {_count(len(lists), 'list')}; the line follows each period's newest version",
                f"{_count(revisions, 'revised rating')}: an orange diamond marks the revised "
                "version (vN), a hollow circle the rating it replaced",
            ],
        ),
    )
    return _config(chart)


# --- the page ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChartBlock:
    """One chart on the page: its element id, what it shows (for tests and readers), its spec."""

    chart_id: str
    kind: str
    spec: dict


def _count(n: int, noun: str) -> str:
    """`1 rise`, `3 rises`."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _number(value: float) -> str:
    """A number as a person writes it: `50`, `2.5`."""
    return f"{value:g}"


def _script_json(payload: object) -> str:
    """JSON safe inside a `<script>` element: no `</script>` or `<!--` can end or bend it."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _esc(value: object) -> str:
    """`value` as HTML text (names and reasons come from input files)."""
    return html.escape("" if value is None else str(value), quote=True)


VALIDATE_SPECS = False
"""Whether the page validates each chart's spec against the Vega-Lite schema (tests set it)."""


class _Page:
    """Collects the page's sections and charts in order, numbering the charts."""

    def __init__(self, on_chart: Callable[[str], None] | None = None) -> None:
        self.parts: list[str] = []
        self.charts: list[ChartBlock] = []
        self.on_chart = on_chart

    def add(self, markup: str) -> None:
        """Append markup the caller built (and escaped)."""
        self.parts.append(markup)

    def chart(self, kind: str, chart: alt.TopLevelMixin, css: str = "chart") -> str:
        """Register `chart` and return the element it is drawn into."""
        chart_id = f"chart-{len(self.charts) + 1}"
        # Altair validates each spec against the Vega-Lite schema as it builds it (about 0.1 s
        # a chart); the unit tests validate every kind of chart, so the page skips it
        self.charts.append(ChartBlock(chart_id, kind, chart.to_dict(validate=VALIDATE_SPECS)))
        if self.on_chart is not None:
            self.on_chart(kind)
        return f'<div class="{css}" id="{chart_id}" data-chart="{_esc(kind)}"></div>'


def _note(text: str) -> str:
    """A sentence in place of a chart that has nothing to show."""
    return f'<p class="note">{_esc(text)}</p>'


def _table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A plain HTML table, every cell escaped."""
    head = "".join(f"<th>{_esc(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{_esc(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _player_section(page: _Page, data: ReportData) -> None:
    """The `--player` section: the rating chart and the table of revised versions."""
    timeline = data.timeline
    names = timeline["name"].drop_nulls()
    name = names[-1] if names.len() else None
    label = f"{name} ({data.player})" if name and name != data.player else str(data.player)
    page.add(f'<section id="player"><h2>{_esc(label)}</h2>')
    page.add(page.chart("player", player_chart(label, timeline), "chart wide"))
    revised = timeline.filter(pl.col("old").is_not_null() & (pl.col("version") > 1))
    if revised.height:
        fmt = _rating_format(timeline, "rating", "old")
        page.add("<h3>Revised versions</h3>")
        page.add(
            _table(
                ["List", "Period", "Version", "Before", "After", "Cause"],
                (
                    (
                        r["list"],
                        r["period"],
                        f"v{r['version']}",
                        _format(r["old"], fmt),
                        _format(r["rating"], fmt),
                        r["cause"],
                    )
                    for r in revised.iter_rows(named=True)
                ),
            )
        )
    else:
        page.add(_note("No published version revised this player's rating."))
    page.add("</section>")


def _format(value: float | None, fmt: str) -> str:
    """A rating for the table: one decimal (`.1f`) or whole, rounded half away from zero."""
    if value is None:
        return ""
    return f"{round_half_away(value, 1):.1f}" if fmt == ".1f" else str(round_half_away(value))


def _list_section(page: _Page, latest: LatestList) -> None:
    """One list's card: its distribution and its top movers (or why there are none)."""
    anchor = f"list-{latest.list}"
    page.add(
        f'<section class="list" id="{_esc(anchor)}"><h3>{_esc(latest.list)} '
        f'<span class="meta">{_esc(latest.period)} · v{latest.version} · '
        f'{latest.players} players</span></h3><div class="row">'
    )
    if latest.histogram.height:
        page.add(page.chart("histogram", histogram_chart(latest)))
    else:
        page.add(_note("This version has no rated player."))
    if latest.movers.height:
        page.add(page.chart("movers", movers_chart(latest)))
    elif latest.previous_period is None:
        page.add(_note(f"{latest.period} is the list's first period: no earlier list to compare."))
    else:
        page.add(
            _note(f"No player's rating moved between {latest.previous_period} and {latest.period}.")
        )
    page.add("</div></section>")


CSS = f"""
* {{ box-sizing: border-box; }}
body {{ margin: 0; font-family: {FONT}; color: {INK}; background: #f5f7fa; }}
header {{ background: #1f2933; color: white; padding: 22px 40px 18px; }}
header h1 {{ margin: 0 0 4px; font-size: 24px; font-weight: 600; }}
header p {{ margin: 0; color: #cbd2d9; font-size: 14px; }}
nav {{ padding: 10px 40px; background: white; border-bottom: 1px solid {GRID}; font-size: 14px; }}
nav a {{ color: {BAR}; margin-right: 16px; text-decoration: none; }}
main {{ padding: 8px 40px 40px; max-width: 1400px; }}
section {{ background: white; border: 1px solid {GRID}; border-radius: 8px; padding: 18px 22px;
  margin: 18px 0; overflow-x: auto; }}
h2 {{ font-size: 19px; margin: 0 0 12px; font-weight: 600; }}
h3 {{ font-size: 16px; margin: 0 0 10px; font-weight: 600; }}
.meta {{ color: {MUTED}; font-weight: 400; font-size: 14px; margin-left: 8px; }}
.row {{ display: flex; flex-wrap: wrap; gap: 28px; align-items: flex-start; }}
.note {{ color: {MUTED}; font-size: 14px; margin: 8px 0; max-width: 520px; }}
.chart-error {{ color: {DOWN}; }}
table {{ border-collapse: collapse; font-size: 13px; margin-top: 6px; }}
th, td {{ text-align: left; padding: 5px 12px 5px 0; border-bottom: 1px solid {GRID};
  vertical-align: top; }}
th {{ color: {MUTED}; font-weight: 600; }}
"""

EMBED_SCRIPT = """
for (const holder of document.querySelectorAll("[data-chart]")) {
  const spec = JSON.parse(document.getElementById("spec-" + holder.id).textContent);
  vegaEmbed(holder, spec, {renderer: "svg", actions: false})
    .then(() => { holder.dataset.rendered = "yes"; })
    .catch((error) => {
      holder.dataset.rendered = "error";
      holder.classList.add("chart-error");
      holder.textContent = "This chart could not be drawn: " + error;
    });
}
"""
"""Draws every chart of the page from its spec; a chart that fails says so in its place (and
`data-rendered` tells a test which ones were drawn)."""


BUNDLE_MARKER = "window.vegaEmbed="
"""What every complete bundle defines (a cached file without it is rebuilt)."""


def scripts_cache_dir() -> Path:
    """Where the Vega bundle is kept between reports: `$XDG_CACHE_HOME/rating-lists` (by
    default `~/.cache/rating-lists`)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rating-lists"


def vega_scripts(cache_dir: Path | None = None) -> str:
    """Vega, Vega-Lite and Vega-Embed as one script (vl-convert's bundle, about 0.9 MB), for the
    Vega-Lite version Altair writes; it defines `window.vegaEmbed`.

    Bundling takes seconds, so the bundle is kept in `cache_dir` (by default
    `scripts_cache_dir()`), one file per vl-convert and Vega-Lite version; a cache that cannot be
    read or written is skipped, never an error.
    """
    import vl_convert

    version = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    supported = getattr(vl_convert, "get_vegalite_versions", lambda: [version])()
    wanted = version if version in supported else None
    tool = getattr(vl_convert, "__version__", "unknown")
    cached = (cache_dir or scripts_cache_dir()) / f"vega-bundle-{tool}-vl{wanted}.js"
    with contextlib.suppress(OSError, UnicodeDecodeError):
        text = cached.read_text(encoding="utf-8")
        if BUNDLE_MARKER in text:
            return text
    # vl-convert's stub marks `snippet` required; at run time it defaults to None (the snippet
    # that makes vegaEmbed, vegaLite and vega globals)
    bundle = vl_convert.javascript_bundle(vl_version=wanted)  # type: ignore[call-arg]
    with contextlib.suppress(OSError):
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
        partial.write_text(bundle, encoding="utf-8")
        os.replace(partial, cached)  # readers see the whole bundle or none
    return bundle


def build_page(
    data: ReportData,
    *,
    generated_at: datetime,
    scripts: str,
    on_chart: Callable[[str], None] | None = None,
) -> tuple[str, list[ChartBlock]]:
    """The report page for `data` and the charts it holds (in page order).

    `scripts` is the Vega bundle (`vega_scripts()`), inlined in the page so that it draws with
    no network access; `on_chart(kind)` is called after each chart is built (for progress).
    """
    page = _Page(on_chart)
    links = []
    if data.player is not None:
        _player_section(page, data)
        links.append(("player", "Player"))
    page.add('<section id="activity"><h2>Activity over time</h2>')
    if data.games_per_period.height:
        page.add(page.chart("games", games_chart(data.games_per_period), "chart wide"))
    else:
        page.add(_note("The lake holds no games."))
    if data.activity.height:
        page.add(page.chart("activity", activity_chart(data.activity), "chart wide"))
    page.add("</section>")
    links.append(("activity", "Activity"))
    page.add('<section id="lists"><h2>Latest period of each list</h2>')
    page.add(
        _note(
            "Each list's newest version of its latest period: how ratings are spread, and who "
            "moved most since the list of the period before (players on both lists)."
        )
    )
    page.add("</section>")
    for latest in data.latest:
        _list_section(page, latest)
    links.append(("lists", "Lists"))
    page.add('<section id="quarantine"><h2>Quarantine</h2>')
    if data.quarantine.height:
        page.add(page.chart("quarantine", quarantine_chart(data.quarantine), "chart wide"))
    else:
        page.add(_note("No record was quarantined: every inbox row was read."))
    page.add("</section>")
    links.append(("quarantine", "Quarantine"))

    periods = sorted({latest.period for latest in data.latest})
    span = f"{periods[0]} to {periods[-1]}" if len(periods) > 1 else "".join(periods)
    subtitle = (
        f"{_count(len(data.latest), 'list')}, latest period {span} · lake: {data.lake} · "
        f"generated {generated_at:%Y-%m-%d %H:%M} UTC"
    )
    nav = "".join(f'<a href="#{anchor}">{_esc(text)}</a>' for anchor, text in links)
    specs = "".join(
        f'<script type="application/json" id="spec-{c.chart_id}">{_script_json(c.spec)}</script>'
        for c in page.charts
    )
    document = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Rating lists report</title><style>{CSS}</style></head><body>"
        f"<header><h1>Rating lists report</h1><p>{_esc(subtitle)}</p></header>"
        f"<nav>{nav}</nav><main>{''.join(page.parts)}</main>{specs}"
        f'<script type="module">{scripts}\n{EMBED_SCRIPT}</script></body></html>\n'
    )
    return document, page.charts
