"""`ratings preview`: what the next `ratings run` would publish, per list and period, without
publishing anything (DESIGN §7, issue 11 item 2).

The preview runs the very same pipeline (`pipelines.cli.run`) into a scratch copy of the lake,
`<lake>/.preview-<id>/`, on an ephemeral Dagster instance, then reads the versions that copy
gained and deletes it: what it reports is what the run would publish, computed by the run's own
code. The copy hard-links the lake's files (a copy where links are refused): every writer of
the lake replaces a file by renaming a new one over it (`storage._atomic_write_parquet`,
`publishing.publish_list`'s staged versions) and never writes into an existing one, so the
scratch run can never change a file of the real lake. The files that are written in place, the
lock files and the Dagster instance, are not copied. The preview holds the lake's lock, like
`ratings run`, so no run changes the lake while it is copied and compared.
"""

from __future__ import annotations

import argparse
import builtins
import contextlib
import os
import shlex
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from pipelines.cli.errors import UserError
from pipelines.cli.lake_option import INBOX_HELP, add_lake, check_lake_folder
from pipelines.cli.output import (
    console,
    err_console,
    plain,
    print_cause_left_out,
    print_json,
    print_table,
)
from rating_core import tables
from rating_core.lake import publishing as publish
from rating_core.lake import revisions
from rating_core.lake.lock import LOCK_FILE, hold_lake
from rating_core.lake.storage import (
    INSTANCE_DIR,
    STAGING_DIR,
    clean_interrupted_writes,
    read_table,
    table_partitions,
)
from rating_core.systems.late_results import (
    DEFAULT_POLICY,
    LateResultsPolicy,
    fide_list_periods,
    late_fide_choices,
)

SCRATCH_PREFIX = ".preview-"
"""Name prefix of the scratch lake inside the real one (hidden: no table, no `lists/` glob)."""

NOT_COPIED_TOP = (INSTANCE_DIR, STAGING_DIR)
"""Top folders of the lake the scratch copy leaves out: the Dagster instance (sqlite files
written in place; the preview uses an ephemeral instance) and a killed run's staging."""

TEMP_MARKS = (".tmp-", publish.PARTIAL_SUFFIX)
"""Parts of the names of half-written files (a killed run's), never copied."""

PLAYERS_SHOWN = 20
"""Changed players printed per new version (`--json` gives every one)."""


@dataclass
class PreviewedVersion:
    """One list and period of the next run: a new version (with its diff) or unchanged."""

    list: str
    period: str
    status: str  # "new" or "unchanged"
    version: int
    row_count: int | None
    changed_rows: int | None = None
    publication: str | None = None
    revises: int | None = None
    reason: str | None = None
    diff: builtins.list[dict] = field(default_factory=builtins.list)  # `list` is the field above


@dataclass
class Preview:
    """What the next run would do: its periods, the lists it would publish, its failures."""

    inbox: Path
    lake: Path
    periods: list[str]
    recomputed: list[str]
    versions: list[PreviewedVersion]
    failures: list[str]
    notes: list[str]
    late_results: list[str] = field(default_factory=list)
    """One line per late FIDE tournament: what each policy would do with it (RULES §3.4)."""

    def to_json(self) -> dict:
        """The `--json` payload."""
        return {
            "inbox": str(self.inbox),
            "lake": str(self.lake),
            "periods": self.periods,
            "recomputed": self.recomputed,
            "new_versions": sum(v.status == "new" for v in self.versions),
            "unchanged": sum(v.status == "unchanged" for v in self.versions),
            "lists": [vars(v) for v in self.versions],
            "failures": self.failures,
            "notes": self.notes,
            "late_results": self.late_results,
        }


def _link_or_copy(source: Path, target: Path, links: list[bool]) -> None:
    """Hard-link `source` at `target`, or copy it once links are refused (another device, a
    filesystem without them); `links[0]` remembers the refusal for the remaining files."""
    if links[0]:
        try:
            os.link(source, target)
            return
        except OSError:
            links[0] = False
    shutil.copy2(source, target)


def scratch_copy(lake: Path, scratch: Path) -> None:
    """Copy `lake` into `scratch` (hard links where possible), leaving out the lock files, the
    Dagster instance, staging, half-written files and other previews' scratch folders."""
    links = [True]
    for here, folders, files in os.walk(lake):
        relative = Path(here).relative_to(lake)
        if relative == Path("."):
            folders[:] = [
                f for f in folders if f not in NOT_COPIED_TOP and not f.startswith(SCRATCH_PREFIX)
            ]
        target = scratch / relative
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            if name == LOCK_FILE or any(mark in name for mark in TEMP_MARKS):
                continue
            _link_or_copy(Path(here) / name, target / name, links)


def _drop_stale_scratch(lake: Path) -> None:
    """Remove the scratch folders a killed preview left (only while holding the lake's lock)."""
    for child in lake.iterdir():
        if child.is_dir() and child.name.startswith(SCRATCH_PREFIX):
            shutil.rmtree(child, ignore_errors=True)


@contextlib.contextmanager
def _scratch_lake(lake: Path, command: str) -> Iterator[Path]:
    """A scratch copy of `lake`, deleted afterwards; the lake's lock is held throughout. A lake
    that does not exist yet is neither created nor locked: the scratch is a temporary folder."""
    if not lake.is_dir():
        with tempfile.TemporaryDirectory(prefix="ratings-preview-") as folder:
            yield Path(folder)
        return
    from pipelines.cli.run import _waiting

    with hold_lake(lake, command, on_wait=lambda holder: _waiting(lake, holder)):
        _drop_stale_scratch(lake)
        scratch = lake / f"{SCRATCH_PREFIX}{uuid.uuid4().hex}"
        try:
            scratch_copy(lake, scratch)
            clean_interrupted_writes(scratch)
            yield scratch
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


def _diff_rows(scratch: Path, name: str, period: str, version: int) -> list[dict]:
    """The diff a new version would have, as JSON rows (player, name, old, new, change, cause)."""
    diff = publish.read_diff(scratch, name, period, version)
    return diff.drop(list(publish.SNAPSHOT_COLUMNS), strict=False).to_dicts()


def _previewed(scratch: Path, row: dict) -> PreviewedVersion:
    """One outcome of the scratch run, with the new version's manifest and diff read back."""
    name, period, version = row["list"], row["period"], row["version"]
    if row["status"] != "published":
        return PreviewedVersion(name, period, "unchanged", version, row.get("row_count"))
    manifest = publish.read_manifest(scratch, name, period, version)
    publication = revisions.publication_of(manifest)
    return PreviewedVersion(
        name,
        period,
        "new",
        version,
        manifest.get("row_count"),
        changed_rows=manifest.get("changed_rows"),
        publication=publication.kind,
        revises=publication.revises,
        reason=manifest.get("reason"),
        diff=_diff_rows(scratch, name, period, version),
    )


def preview_run(inbox: Path, lake: Path, late_results: LateResultsPolicy | None = None) -> Preview:
    """Run the pipeline on `inbox` into a scratch copy of `lake` (under the `late_results`
    policy, default RULES §3.4's) and report what it published; `lake` is left exactly as it
    was."""
    import dagster as dg  # here, not at the top: the command line's parser imports this module

    from pipelines.cli.run import _run_holding_lock

    command = shlex.join(["ratings", *sys.argv[1:]])
    policy = late_results or DEFAULT_POLICY
    published, recorded = _fide_published(lake)
    with _scratch_lake(lake, command) as scratch:
        # the scratch lake's own lock, as `ratings run` holds its lake's: the steps find it theirs
        with hold_lake(scratch, command), dg.DagsterInstance.ephemeral() as instance:
            outcome = _run_holding_lock(
                inbox.resolve(),
                scratch,
                instance,
                err_console,
                command="preview",
                late_results=late_results,
            )
        rows = sorted(outcome.on_disk(), key=lambda r: (r["list"], r["period"], r["version"]))
        versions = [_previewed(scratch, row) for row in rows]
        late = _late_choices(scratch, published, recorded, policy)
    return Preview(
        inbox=inbox,
        lake=lake,
        periods=outcome.periods,
        recomputed=outcome.recomputed,
        versions=versions,
        failures=outcome.failures,
        notes=outcome.notes,
        late_results=late,
    )


def _fide_published(lake: Path) -> tuple[set[str], pl.DataFrame]:
    """The periods whose FIDE lists `lake` has published, and the tournaments they rated (the
    record `applied/fide-inputs`), before the preview's run."""
    table = tables.applied_inputs("fide")
    recorded = (
        read_table(lake, table)
        .filter(pl.col("source") == "tournament")
        .select(pl.col("name").alias("tournament_id"), "period")
        .unique()
        .collect()
    )
    return set(table_partitions(lake, table)), recorded


def _late_choices(
    scratch: Path, published: set[str], recorded: pl.DataFrame, policy: LateResultsPolicy
) -> list[str]:
    """What each late-results policy would do with each late FIDE tournament the preview's run
    read (`late_fide_choices`)."""
    if not published:
        return []
    games = (
        read_table(scratch, tables.GAMES)
        .filter(pl.col("source") == "federation")
        .select("game_id", "tournament_id", "played_at", "period")
        .collect()
    )
    return late_fide_choices(fide_list_periods(games), recorded, published, policy.fide)


def add_preview_parser(sub: argparse._SubParsersAction) -> None:
    """`ratings preview [--inbox DIR] [--lake DIR] [--json]`."""
    preview = sub.add_parser(
        "preview", help="what the next run would publish (writes nothing under lists/)"
    )
    preview.add_argument("--inbox", help=INBOX_HELP)
    add_lake(preview)
    preview.add_argument("--json", action="store_true", help="print JSON")


def _version_label(version: PreviewedVersion) -> str:
    """`v2 (revises v1)`, `v1 (original)`."""
    if version.publication == publish.REVISION:
        return f"v{version.version} (revises v{version.revises})"
    return f"v{version.version} (original)"


def _value(number: object) -> object:
    """A rating as printed: whole numbers without `.0`, others to one decimal."""
    if isinstance(number, float):
        return int(number) if number.is_integer() else round(number, 1)
    return number


def _overview_rows(versions: list[PreviewedVersion]) -> list[list[object]]:
    """One row per new version (`new v2`), and one per list for its unchanged periods
    (`2026-02 to 2026-06`, some of which may lie between new versions), in list order: the
    table stays short when one list changes."""
    rows: list[list[object]] = []
    by_list: dict[str, list[PreviewedVersion]] = {}
    for version in versions:
        by_list.setdefault(version.list, []).append(version)
    for name in sorted(by_list):
        mine = by_list[name]
        for v in mine:
            if v.status == "new":
                changed = "" if v.revises is None else v.changed_rows
                rows.append([name, v.period, f"new v{v.version}", v.row_count, changed])
        same = sorted(v.period for v in mine if v.status == "unchanged")
        if same:
            span = same[0] if len(same) == 1 else f"{same[0]} to {same[-1]}"
            rows.append([name, span, "unchanged", "", ""])
    return rows


def print_preview(result: Preview) -> None:
    """The preview for people: one row per list and period, then each revision's players."""
    for note in result.notes:
        console.print(f"note: {plain(note)}", highlight=False)
    for line in result.late_results:
        console.print(plain(line), highlight=False)
    if not result.periods:
        console.print("nothing to rate: the next run would publish nothing", highlight=False)
    elif not result.recomputed:
        console.print(
            "no input changed since the last run: the next run would publish nothing",
            highlight=False,
        )
    else:
        first, last = result.recomputed[0], result.recomputed[-1]
        console.print(
            f"the next run would recompute {first}"
            + ("" if first == last else f" to {last}")
            + " (nothing is published by this preview)",
            highlight=False,
        )
    new = [v for v in result.versions if v.status == "new"]
    if result.versions:
        print_table(
            f"Next run on {result.lake}",
            ["list", "period", "next run", "players", "changed"],
            _overview_rows(result.versions),
            right=("players", "changed"),
            drop_order=("players",),
        )
        console.print(
            f"{len(new)} new version{'s' if len(new) != 1 else ''}, "
            f"{len(result.versions) - len(new)} list-periods unchanged",
            highlight=False,
        )
    for version in new:
        if not version.diff:
            continue
        _print_players(version)
    for failure in result.failures:
        console.print(f"the run would fail: {plain(failure)}", style="red", highlight=False)


def _print_players(version: PreviewedVersion) -> None:
    """The players a revision changes: old → new and the cause (the version's reason once, above
    the table, when it is every row's cause)."""
    diff = pl.DataFrame(version.diff)
    same_cause = (diff["cause"] == version.reason).all()
    console.print(
        f"{version.list} {version.period} {_version_label(version)}: {plain(version.reason)}",
        highlight=False,
    )
    columns = ["player_id", "name", "old → new", "change"] + ([] if same_cause else ["cause"])
    rows = [
        [
            row["player_id"],
            row.get("name"),
            f"{'—' if row['old'] is None else _value(row['old'])} → "
            f"{'—' if row['new'] is None else _value(row['new'])}",
            "" if row["change"] is None else _value(row["change"]),
            *([] if same_cause else [row["cause"]]),
        ]
        for row in version.diff[:PLAYERS_SHOWN]
    ]
    print_table(
        f"{version.list} {version.period}: players changed",
        columns,
        rows,
        wrap=("cause",),  # names stay whole (a wrapped name beside a long cause overflowed 80)
        drop_order=("name",),
        right=("change",),
    )
    if same_cause:
        print_cause_left_out()
    if len(version.diff) > PLAYERS_SHOWN:
        console.print(
            f"… {len(version.diff) - PLAYERS_SHOWN} more (--json for every player)",
            highlight=False,
        )


def cmd_preview(args: argparse.Namespace) -> int:
    """Print what the next `ratings run` would publish; exit 1 when that run would fail."""
    from pipelines.cli.late_results_config import check_late_results
    from rating_core.ingest.inbox import inbox_files
    from rating_core.systems.club.folders import ClubFolderError

    inbox = Path(args.inbox)
    if not inbox.is_dir():
        raise UserError(f"inbox folder '{inbox}' does not exist")
    lake = Path(args.lake)
    check_lake_folder(lake)
    late_results = check_late_results()  # ratings.toml's [late_results], as `ratings run` does
    try:  # the inbox's layout, before any work (as `ratings run` checks it)
        inbox_files(inbox)
    except ClubFolderError as error:
        raise UserError(str(error)) from error
    result = preview_run(inbox, lake, late_results)
    if args.json:
        print_json(result.to_json())
    else:
        print_preview(result)
    return 0 if not result.failures else 1
