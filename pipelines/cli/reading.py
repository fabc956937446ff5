"""`ratings show`, `ratings diff` and `ratings history`: read what was published, never write."""

from __future__ import annotations

import argparse
from pathlib import Path

import polars as pl

from pipelines.cli import as_of, top_lists
from pipelines.cli.errors import UserError
from pipelines.cli.output import (
    console,
    plain,
    print_cause_left_out,
    print_json,
    print_table,
    span,
)
from rating_core import tables
from rating_core.lake import publishing as publish
from rating_core.lake import revisions
from rating_core.lake.storage import as_local_path, read_table
from rating_core.systems.contract import as_published

COMPACT_COLUMNS = (
    "rank",
    "player_id",
    "name",
    "rating",
    "games",
    "change",
    "k",
    "flag",
    "experience",
)
"""What `ratings show` prints without --all (a list has more columns: see the Parquet file;
--all shows a federation list's federation, titles, sex and birth year)."""
DEFAULT_TOP = 20
"""Rows `ratings show LIST` prints without --top or --all."""
LIST_DROP_ORDER = ("experience", "flag", "k", "change", "rank", "games", "name")
"""Columns of a list left out first when the terminal is too narrow for all of them."""
TEXT_COLUMNS = ("name", "cause", "reason", "not_counted_reason", "not_rated_because", "k_reason")
"""Columns of words, wrapped at spaces on a narrow terminal; every other value stays whole."""
HISTORY_COLUMNS = (
    "period",
    "tournament_id",
    "tournament_ids",
    "game_id",
    "match_id",
    "number",
    "opponent_id",
    "rating_before",
    "own_rating",
    "opponent_rating",
    "expected",
    "pd",
    "PD",
    "score",
    "won",
    "k",
    "k_used",
    "k_reason",
    "n",
    "weight",
    "m",
    "sum_delta_r",
    "delta_r",
    "change_exact",
    "change",
    "rating_after",
    "field",
    "old",
    "new",
    "counted",
    "not_counted_reason",
    "reason",
    "not_rated_because",
)
"""What `ratings history` prints without --all, in this order."""
HISTORY_KEEP = (
    "period",
    "game_id",
    "match_id",
    "number",
    "opponent_id",
    "rating_after",
    "change",
    "not_counted_reason",
    "not_rated_because",
    "reason",
    "score",
    "won",
    "rating_before",
    "own_rating",
    "delta_r",
    "tournament_id",
)
"""What `ratings history` keeps longest on a narrow terminal, most telling first (the other
columns are dropped before these, then these from the last)."""


def _lake(args: argparse.Namespace) -> Path:
    lake = as_local_path(args.lake)
    if not (lake / "lists").is_dir():
        raise UserError(f"no published lists in '{lake}' (run 'ratings run' first)")
    return lake


def _pick(lake: Path, name: str, period: str | None, version: int | None) -> tuple[str, int]:
    names = publish.list_names(lake)
    if name not in names:
        raise UserError(f"no list named '{name}'; published lists: {', '.join(names) or 'none'}")
    periods = publish.list_periods(lake, name)
    period = period or periods[-1]
    if period not in periods:
        raise UserError(
            f"list '{name}' has no period {period}; it has {span(periods[0], periods[-1])}"
        )
    latest = publish.latest_version(lake, name, period)
    version = latest if version is None else version
    if latest is None or version is None or not 1 <= version <= latest:
        versions = "version v1 only" if latest == 1 else f"versions v1 to v{latest}"
        raise UserError(f"list '{name}' {period} has {versions}, not v{version}")
    return period, version


def _check_positive(value: int | None, option: str) -> None:
    """Refuse `--top -1` or `--version 0` in one sentence instead of printing nonsense."""
    if value is not None and value < 1:
        raise UserError(f"{option} must be a whole number of at least 1, not {value}")


def cmd_show(args: argparse.Namespace) -> int:
    """Print a list (or the catalogue of lists when no name is given)."""
    _check_positive(args.top, "--top")
    _check_positive(args.version, "--version")
    lake = _lake(args)
    if not args.list and as_of.requested(args):
        return as_of.cmd_lists_in_force(lake, args)
    if not args.list:
        current = publish.current_versions(lake)
        if args.json:
            print_json(current.to_dicts())
            return 0
        summary = current.group_by("list", maintain_order=True).agg(
            first=pl.col("period").min(),
            last=pl.col("period").max(),
            periods=pl.len(),
            versions=pl.col("version").sum(),
        )
        print_table(
            f"Lists in {lake}",
            ["list", "first period", "last period", "periods", "versions"],
            summary.rows(),
        )
        return 0
    period, version, in_force = as_of.show_choice(lake, args)
    period, version = _pick(lake, args.list, period, version)
    if in_force and not args.json:
        console.print(in_force, highlight=False, markup=False)
    frame = top_lists.filtered(args, publish.read_list(lake, args.list, period, version), period)
    shown = as_published(
        frame.drop([c for c in ("list", "period", "version") if c in frame.columns]), args.list
    )
    if args.json:  # every row unless --top says otherwise: a script is never silently cut short
        manifest = publish.read_manifest(lake, args.list, period, version)
        publication = revisions.publication_of(manifest)
        day = {"as_of": args.as_of.isoformat()} if as_of.requested(args) else {}
        print_json(
            {
                "list": args.list,
                "period": period,
                "version": version,
                **day,
                "created_at": manifest.get("created_at"),
                "reason": manifest.get("reason"),
                "publication": publication.kind,
                "revises": publication.revises,
                "row_count": frame.height,
                "rows": (shown if args.top is None else shown.head(args.top)).to_dicts(),
            }
        )
        return 0
    if "display" in shown.columns:  # provisional ratings show as "1500?"
        shown = shown.with_columns(rating=pl.col("display")).drop("display")
    if not args.all:
        shown = shown.select([c for c in top_lists.columns(args, COMPACT_COLUMNS) if c in shown])
    if shown.schema.get("rating") == pl.Float64 and (shown["rating"] % 1 == 0).all():
        shown = shown.with_columns(pl.col("rating").cast(pl.Int64))  # integer lists
    shown = shown.with_columns(pl.col(pl.Float64).round(1))
    shown = shown.select(
        [c for c in shown.columns if shown.get_column(c).null_count() < shown.height]
    )
    top = args.top if args.top is not None else (frame.height if args.all else DEFAULT_TOP)
    print_table(
        f"{args.list} {period} v{version} ({frame.height} players)",
        shown.columns,
        shown.head(top).rows(),
        wrap=TEXT_COLUMNS,
        drop_order=() if args.all else LIST_DROP_ORDER,
        stack_when_narrow=args.all,
        hint="--all or --json shows every column",
    )
    if top < frame.height:
        console.print(
            f"showing {top} of {frame.height} rows (--top N for more, --all for every row "
            "and column)",
            highlight=False,
        )
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    """Print the diff of a version against its parent (who changed, old, new, why)."""
    _check_positive(args.version, "--version")
    lake = _lake(args)
    period, version = _pick(lake, args.list, args.period, args.version)
    manifest = publish.read_manifest(lake, args.list, period, version)
    if args.from_original:
        return _diff_from_original(args, lake, period, version, manifest)
    if version == 1:
        raise UserError(f"{args.list} {period} v1 is the first version; there is nothing to diff")
    diff = as_published(publish.read_diff(lake, args.list, period, version), args.list)
    if args.json:
        print_json({"manifest": manifest, "diff": diff.to_dicts()})
        return 0
    title = f"{args.list} {period} v{version} against v{manifest.get('parent_version')}"
    _print_diff(args, diff, manifest, title, f"reason: {plain(manifest.get('reason'))}")
    return 0


def _diff_from_original(
    args: argparse.Namespace, lake: Path, period: str, version: int, manifest: dict
) -> int:
    """`ratings diff LIST P --from-original`: the period's original list against `version` (the
    latest by default), each changed player with the causes of every revision in between."""
    original = revisions.original_version(lake, args.list, period) or 1
    if version <= original:
        raise UserError(
            f"{args.list} {period} v{version} is the original list; there is no revision to diff"
            if version == original
            else f"{args.list} {period} v{version} is older than its original v{original}"
        )
    diff = as_published(
        revisions.diff_between(lake, args.list, period, original, version), args.list
    )
    if args.json:
        print_json({"manifest": manifest, "from_version": original, "diff": diff.to_dicts()})
        return 0
    title = f"{args.list} {period} v{version} against the original v{original}"
    heading = (
        f"{version - original} revision{'s' if version - original > 1 else ''} since the "
        f"original; latest reason: {plain(manifest.get('reason'))}"
    )
    _print_diff(args, diff, manifest, title, heading)
    return 0


def _print_diff(
    args: argparse.Namespace, diff: pl.DataFrame, manifest: dict, title: str, heading: str
) -> None:
    """The diff as a table under `heading` (the cause column left out when every row gives the
    version's reason itself)."""
    shown = diff.drop(["list", "period", "version"], strict=False)
    same_cause = bool((shown["cause"] == manifest.get("reason")).all())
    if same_cause:  # the heading already says it
        shown = shown.drop("cause")
    # a player who left (new null) or appeared (old null) has one side only: test each column
    # on its own values, never the two side by side (their lengths differ)
    if all((shown.get_column(c).drop_nulls() % 1 == 0).all() for c in ("old", "new")):
        shown = shown.with_columns(pl.col("old", "new", "change").cast(pl.Int64))
    console.print(heading, highlight=False)
    print_table(
        title,
        shown.columns,
        shown.with_columns(pl.col(pl.Float64).round(1)).rows(),
        wrap=TEXT_COLUMNS,
        drop_order=() if args.all else ("name",),
        stack_when_narrow=args.all,
        hint="--all or --json shows every column",
    )
    if same_cause and diff.height:
        print_cause_left_out()


def player_history(lake: Path, player: str) -> pl.DataFrame:
    """Every explanation row of `player` across systems, oldest first.

    Site games that were not rated (annulled by moderation, aborted...) are included with their
    reason, so a value that did not move can be explained too.
    """
    frames = []
    for table in tables.history_tables():
        scan = read_table(lake, table)
        if "player_id" not in scan.collect_schema().names():  # not written (yet)
            continue
        rows = scan.filter(pl.col("player_id") == player).collect()
        if "n" in rows.columns:  # per-period rows of periods without games say nothing
            rows = rows.filter(pl.col("n") > 0)
        if rows.height:
            system = table.name.removeprefix(f"{tables.HISTORY}/")
            frames.append(rows.with_columns(system=pl.lit(system)))
    excluded = read_table(lake, tables.excluded("site")).collect()
    if excluded.height:
        games = read_table(lake, tables.GAMES).filter(
            (pl.col("white_id") == player) | (pl.col("black_id") == player)
        )
        mine = (
            excluded.join(games.select("game_id", "played_at").collect(), on="game_id")
            .rename({"reason": "not_rated_because"})
            .with_columns(player_id=pl.lit(player), system=pl.lit("site-not-rated"))
        )
        if mine.height:
            frames.append(mine)
    if not frames:
        return pl.DataFrame()
    from rating_core.lake.tournament_report import link_tournaments

    found = pl.concat(frames, how="diagonal_relaxed")
    ids: pl.Series | list[str] = (
        found.get_column("game_id").drop_nulls() if "game_id" in found.columns else []
    )
    games = read_table(lake, tables.GAMES)
    if "tournament_id" not in games.collect_schema().names():  # a lake whose games name none
        return found
    games = games.filter(pl.col("game_id").is_in(pl.Series(ids).implode()))
    return link_tournaments(found, games.select("game_id", "tournament_id").collect())


def cmd_history(args: argparse.Namespace) -> int:
    """Print a player's values game by game (and period by period), with the causes."""
    lake = as_local_path(args.lake)
    history = player_history(lake, args.player)
    if history.is_empty():
        merged = read_table(lake, tables.MERGES).collect()
        if merged.height and (into := merged.filter(pl.col("merge_id") == args.player)).height:
            row = into.row(0, named=True)
            raise UserError(
                f"player '{args.player}' was merged into '{row['keep_id']}' ({row['source_file']} "
                f"line {row['source_line']}): its games are in 'ratings history {row['keep_id']}'"
            )
        raise UserError(f"no rating history for player '{args.player}' in '{lake}'")
    sort_cols = [c for c in ("system", "period", "played_at", "game_id") if c in history.columns]
    history = history.sort(sort_cols)
    if as_of.requested(args):  # the ratings in force first, then the rows of those periods
        kept = as_of.history_as_of(lake, args, history)
        if kept is None:
            return 0
        history = kept
    if args.json:
        print_json(history.to_dicts())
        return 0
    for (system,), rows in history.group_by("system", maintain_order=True):
        if not args.all:
            rows = rows.select([c for c in HISTORY_COLUMNS if c in rows.columns])
        rows = rows.drop(
            [c for c in rows.columns if rows.get_column(c).null_count() == rows.height]
        ).with_columns(pl.col(pl.Float64).round(2))
        print_table(
            f"{args.player}: {system}",
            rows.columns,
            rows.rows(),
            wrap=TEXT_COLUMNS,
            drop_order=[c for c in reversed(HISTORY_COLUMNS) if c not in HISTORY_KEEP]
            + [c for c in reversed(HISTORY_KEEP) if c != "period"],
            stack_when_narrow=args.all,
            hint="--all or --json shows every column",
        )
    return 0
