"""Tests for rating_core.lake.publishing: versions, idempotency, diffs, atomicity and CSV safety."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from rating_core.lake import publishing as publish
from rating_core.lake.publishing import (
    all_diffs,
    all_snapshots,
    csv_safe,
    current_versions,
    digest_files,
    digest_frame,
    latest_version,
    list_names,
    list_periods,
    publish_list,
    read_diff,
    read_list,
    read_manifest,
)

LIST = "fide-standard"
PERIOD = "2024-03"


def _rows(**ratings: int) -> pl.DataFrame:
    """A small list: one row per player id with its rating."""
    ids = list(ratings)
    return pl.DataFrame(
        {
            "player_id": ids,
            "name": [f"Player {i}" for i in ids],
            "rating": list(ratings.values()),
            "games": [3] * len(ids),
            "change": [0] * len(ids),
        },
        schema_overrides={"rating": pl.Int32, "games": pl.Int32, "change": pl.Int32},
    )


def _publish(lake: Path | str, rows: pl.DataFrame, **kwargs: object) -> publish.PublishOutcome:
    """Publish `rows` as fide-standard 2024-03 with default metadata."""
    params: dict = {"reason": "monthly list", "input_digest": "abc", "code_version": "0.1.0"}
    params.update(kwargs)
    return publish_list(lake, LIST, PERIOD, rows, **params)


def _bytes(folder: Path) -> dict[str, bytes]:
    """Every file of a folder with its bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_first_publish_writes_files_and_manifest(tmp_path: Path) -> None:
    outcome = _publish(tmp_path, _rows(a=1500, b=1600))
    folder = tmp_path / "lists" / LIST / PERIOD / "v1"
    assert outcome.status == "published"
    assert outcome.version == 1
    assert outcome.path == folder
    assert outcome.row_count == 2
    assert {p.name for p in folder.iterdir()} == {"list.parquet", "list.csv", "manifest.json"}
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["list"] == LIST
    assert manifest["period"] == PERIOD
    assert manifest["version"] == 1
    assert manifest["parent_version"] is None
    assert manifest["row_count"] == 2
    assert manifest["reason"] == "first publication: monthly list"
    assert manifest["input_digest"] == "abc"
    assert manifest["code_version"] == "0.1.0"
    assert manifest["columns"] == ["player_id", "name", "rating", "games", "change"]
    assert manifest["created_at"].endswith("+00:00")
    for name in ("list.parquet", "list.csv"):
        assert manifest["checksums"][name] == publish._sha256_file(folder / name)
    assert read_manifest(tmp_path, LIST, PERIOD) == manifest


def test_list_is_sorted_by_rating_desc_then_key_and_carries_snapshot_columns(
    tmp_path: Path,
) -> None:
    _publish(tmp_path, _rows(c=1500, b=1500, a=1400, d=1700))
    frame = read_list(tmp_path, LIST, PERIOD)
    assert frame["player_id"].to_list() == ["d", "b", "c", "a"]
    assert frame["list"].unique().to_list() == [LIST]
    assert frame["period"].unique().to_list() == [PERIOD]
    assert frame["version"].unique().to_list() == [1]
    csv_ids = pl.read_csv(tmp_path / "lists" / LIST / PERIOD / "v1" / "list.csv")["player_id"]
    assert csv_ids.to_list() == ["d", "b", "c", "a"]


def test_csv_keeps_integer_ratings_as_integers(tmp_path: Path) -> None:
    _publish(tmp_path, _rows(a=1500))
    text = (tmp_path / "lists" / LIST / PERIOD / "v1" / "list.csv").read_text()
    assert text.splitlines()[1] == "a,Player a,1500,3,0"


def test_same_content_publishes_nothing(tmp_path: Path) -> None:
    first = _publish(tmp_path, _rows(a=1500, b=1600))
    again = _publish(
        tmp_path, _rows(b=1600, a=1500), input_digest="other", reason="rerun", code_version="0.2"
    )
    assert again.status == "unchanged"
    assert again.version == first.version == 1
    assert again.changed_rows == 0
    assert [p.name for p in (tmp_path / "lists" / LIST / PERIOD).iterdir() if p.is_dir()] == ["v1"]


def test_changed_content_publishes_next_version_with_diff_and_v1_untouched(
    tmp_path: Path,
) -> None:
    _publish(tmp_path, _rows(a=1500, b=1600, c=1700))
    v1 = tmp_path / "lists" / LIST / PERIOD / "v1"
    before = _bytes(v1)
    causes = pl.DataFrame(
        {"player_id": ["a", "a"], "cause": ["moderation M-12: annulled games g1, g2", "late"]}
    )
    outcome = _publish(tmp_path, _rows(a=1490, b=1600, d=1450), reason="late result", causes=causes)
    assert outcome.status == "published"
    assert outcome.version == 2
    assert outcome.changed_rows == 3
    assert _bytes(v1) == before
    assert latest_version(tmp_path, LIST, PERIOD) == 2
    manifest = read_manifest(tmp_path, LIST, PERIOD)
    assert manifest["parent_version"] == 1
    # the same input digest as v1 and other content: the code changed, says the reason
    assert manifest["reason"] == "same inputs as v1, recomputed by code version 0.1.0: late result"
    assert set(manifest["checksums"]) == {"list.parquet", "list.csv", "diff.parquet", "diff.csv"}
    diff = read_diff(tmp_path, LIST, PERIOD).sort("player_id")
    assert diff["player_id"].to_list() == ["a", "c", "d"]  # b unchanged
    assert diff["old"].to_list() == [1500.0, 1700.0, None]
    assert diff["new"].to_list() == [1490.0, None, 1450.0]
    assert diff["change"].to_list() == [-10.0, None, None]
    assert diff["cause"].to_list() == [
        "moderation M-12: annulled games g1, g2; late",
        manifest["reason"],
        manifest["reason"],
    ]
    assert diff["version"].unique().to_list() == [2]
    assert read_diff(tmp_path, LIST, PERIOD, version=1).height == 0
    assert read_list(tmp_path, LIST, PERIOD, version=1)["rating"].to_list() == [1700, 1600, 1500]


def test_a_change_outside_the_value_still_publishes(tmp_path: Path) -> None:
    _publish(tmp_path, _rows(a=1500))
    renamed = _rows(a=1500).with_columns(pl.lit("New Name").alias("name"))
    outcome = _publish(tmp_path, renamed)
    assert (outcome.status, outcome.version, outcome.changed_rows) == ("published", 2, 0)


def test_csv_neutralises_formulas_but_not_numbers(tmp_path: Path) -> None:
    rows = pl.DataFrame(
        {
            "player_id": ["p1", "p2", "p3", "p4"],
            "name": ['=HYPERLINK("x")', "-cmd", "@SUM(A1)", "Plain -name"],
            "rating": [1500, 1400, 1300, 1200],
            "change": [-5, 7, 0, -12],
        }
    )
    _publish(tmp_path, rows)
    back = pl.read_csv(tmp_path / "lists" / LIST / PERIOD / "v1" / "list.csv")
    assert back["name"].to_list() == ['\'=HYPERLINK("x")', "'-cmd", "'@SUM(A1)", "Plain -name"]
    assert back["change"].to_list() == [-5, 7, 0, -12]
    assert back["change"].dtype == pl.Int64
    # the Parquet file keeps the names as given
    assert read_list(tmp_path, LIST, PERIOD)["name"].to_list()[:2] == ['=HYPERLINK("x")', "-cmd"]


def test_csv_safe_covers_every_trigger_and_categoricals() -> None:
    frame = pl.DataFrame(
        {
            "s": ["=a", "+b", "-c", "@d", "\te", "\rf", "ok", None],
            "e": pl.Series(["=x"] * 7 + ["y"], dtype=pl.Enum(["=x", "y"])),
            "n": [-1, 2, 3, 4, 5, 6, 7, 8],
        }
    )
    safe = csv_safe(frame)
    assert safe["s"].to_list() == ["'=a", "'+b", "'-c", "'@d", "'\te", "'\rf", "ok", None]
    assert safe["e"].to_list()[0] == "'=x"
    assert safe["n"].to_list() == frame["n"].to_list()


def test_diff_csv_is_safe(tmp_path: Path) -> None:
    _publish(tmp_path, pl.DataFrame({"player_id": ["a"], "name": ["=cmd"], "rating": [1500]}))
    _publish(tmp_path, pl.DataFrame({"player_id": ["a"], "name": ["=cmd"], "rating": [1510]}))
    text = (tmp_path / "lists" / LIST / PERIOD / "v2" / "diff.csv").read_text()
    assert "'=cmd" in text
    assert ",=cmd" not in text


def test_crash_before_rename_leaves_no_visible_version_and_next_run_publishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(src: object, dst: object) -> None:
        raise OSError("power cut")

    monkeypatch.setattr(publish.os, "rename", crash)
    monkeypatch.setattr(publish.shutil, "rmtree", lambda *a, **k: None)  # a kill cleans nothing
    with pytest.raises(OSError, match="power cut"):
        _publish(tmp_path, _rows(a=1500))
    folder = tmp_path / "lists" / LIST / PERIOD
    assert [p.name for p in folder.iterdir() if p.is_dir()] == []
    staged = tmp_path / ".staging" / LIST / PERIOD
    leftovers = [p.name for p in staged.iterdir() if p.is_dir()]
    assert len(leftovers) == 1 and leftovers[0].startswith("v1-")
    assert latest_version(tmp_path, LIST, PERIOD) is None
    assert list_names(tmp_path) == []
    assert all_snapshots(tmp_path).collect().height == 0
    with pytest.raises(FileNotFoundError):
        read_list(tmp_path, LIST, PERIOD)
    monkeypatch.undo()
    outcome = _publish(tmp_path, _rows(a=1500))
    assert (outcome.status, outcome.version) == ("published", 1)
    assert [p.name for p in folder.iterdir() if p.is_dir()] == ["v1"]
    assert not (tmp_path / ".staging").exists()
    assert read_list(tmp_path, LIST, PERIOD)["player_id"].to_list() == ["a"]


def test_crash_while_writing_manifest_leaves_nothing_visible(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _publish(tmp_path, _rows(a=1500))
    original = publish._write_file

    def failing(target: Path, write: bytes | pl.DataFrame, *digest: str) -> str:
        if target.name == "manifest.json":
            raise OSError("disk full")
        return original(target, write, *digest)

    monkeypatch.setattr(publish, "_write_file", failing)
    with pytest.raises(OSError, match="disk full"):
        _publish(tmp_path, _rows(a=1510))
    folder = tmp_path / "lists" / LIST / PERIOD
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == ["v1"]
    assert latest_version(tmp_path, LIST, PERIOD) == 1
    assert pl.scan_parquet(f"{tmp_path}/lists/**/list.parquet").collect()["version"].to_list() == [
        1
    ]
    monkeypatch.undo()
    assert _publish(tmp_path, _rows(a=1510)).version == 2


def test_interrupted_write_leaves_no_file_for_the_glob(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = publish._write_file

    def failing(target: Path, write: bytes | pl.DataFrame, *digest: str) -> str:
        if target.name == "manifest.json":
            raise KeyboardInterrupt  # killed after the data files, before the manifest
        return original(target, write, *digest)

    monkeypatch.setattr(publish, "_write_file", failing)
    monkeypatch.setattr(publish.shutil, "rmtree", lambda *a, **k: None)  # a kill cleans nothing
    with pytest.raises(KeyboardInterrupt):
        _publish(tmp_path, _rows(a=1500))
    staged = [p for p in (tmp_path / ".staging").rglob("*") if p.is_file()]
    assert staged and all(p.name.endswith(".partial") for p in staged)
    assert all(p.parent.name.startswith("v1-") for p in staged)
    assert not [p for p in (tmp_path / "lists").rglob("*") if p.is_file() and p.name != ".lock"]
    monkeypatch.undo()
    assert _publish(tmp_path, _rows(a=1500)).version == 1
    assert not list(tmp_path.rglob("*.partial"))


def test_version_folder_without_manifest_is_ignored_and_replaced(tmp_path: Path) -> None:
    _publish(tmp_path, _rows(a=1500))
    half = tmp_path / "lists" / LIST / PERIOD / "v2"
    half.mkdir()
    (half / "list.parquet").write_bytes(b"half written")
    assert latest_version(tmp_path, LIST, PERIOD) == 1
    assert all_snapshots(tmp_path).collect().height == 1
    outcome = _publish(tmp_path, _rows(a=1520))
    assert outcome.version == 2
    assert read_list(tmp_path, LIST, PERIOD)["rating"].to_list() == [1520.0]


def test_glob_reads_every_snapshot_without_hive_columns(tmp_path: Path) -> None:
    lake = tmp_path / "period=2099-01" / "lake"  # a hive-looking parent must not leak a column
    _publish(lake, _rows(a=1500, b=1600))
    _publish(lake, _rows(a=1510, b=1600))
    publish_list(
        lake,
        "fibs",
        "2024-03",
        pl.DataFrame(
            {"player_id": ["x"], "rating": [1512.3], "experience": [55], "provisional": [False]}
        ),
        reason="monthly",
        input_digest="d",
        code_version="c",
    )
    globbed = pl.scan_parquet(f"{lake}/lists/**/list.parquet").collect()
    assert globbed.height == 5
    assert globbed.columns == [*publish.SNAPSHOT_COLUMNS, *publish.LIST_SCHEMA]
    assert globbed.schema["period"] == pl.String
    per_version = globbed.group_by("list", "version").len().sort("list", "version").rows()
    assert per_version == [("fibs", 1, 1), (LIST, 1, 2), (LIST, 2, 2)]
    mine = all_snapshots(lake).collect()
    assert mine.sort("list", "version", "player_id").equals(
        globbed.sort("list", "version", "player_id")
    )
    current = current_versions(lake).sort("list").rows()
    assert current == [("fibs", "2024-03", 1), (LIST, PERIOD, 2)]
    assert all_diffs(lake).collect()["player_id"].to_list() == ["a"]


def test_player_rating_as_of_a_period_via_the_snapshots(tmp_path: Path) -> None:
    for period, rating in [("2024-01", 1500), ("2024-02", 1512), ("2024-03", 1530)]:
        publish_list(
            tmp_path, LIST, period, _rows(a=rating), reason="m", input_digest="d", code_version="c"
        )
    as_of = (
        all_snapshots(tmp_path)
        .filter(pl.col("player_id") == "a", pl.col("period") <= "2024-02")
        .sort("period", "version")
        .select(pl.col("rating").last())
        .collect()
        .item()
    )
    assert as_of == 1512.0
    assert list_periods(tmp_path, LIST) == ["2024-01", "2024-02", "2024-03"]


def test_parquet_bytes_are_stable_across_runs(tmp_path: Path) -> None:
    _publish(tmp_path / "one", _rows(a=1500, b=1600))
    _publish(tmp_path / "two", _rows(b=1600, a=1500))
    one = tmp_path / "one" / "lists" / LIST / PERIOD / "v1"
    two = tmp_path / "two" / "lists" / LIST / PERIOD / "v1"
    for name in ("list.parquet", "list.csv"):
        assert (one / name).read_bytes() == (two / name).read_bytes()


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (pl.DataFrame({"player_id": ["a", "a"], "rating": [1, 2]}), "duplicate"),
        (pl.DataFrame({"player_id": ["a", None], "rating": [1, 2]}), "no 'player_id'"),
        (pl.DataFrame({"player_id": ["a"], "colour": ["w"], "rating": [1]}), "LIST_SCHEMA"),
        (pl.DataFrame({"player_id": ["a"]}), "no 'rating'"),
    ],
)
def test_bad_lists_are_refused(tmp_path: Path, rows: pl.DataFrame, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _publish(tmp_path, rows)
    assert latest_version(tmp_path, LIST, PERIOD) is None


@pytest.mark.parametrize(("name", "period"), [("../x", "2024-01"), (LIST, "2024-13"), (LIST, "x")])
def test_unsafe_names_are_refused(tmp_path: Path, name: str, period: str) -> None:
    with pytest.raises(ValueError):
        publish_list(
            tmp_path, name, period, _rows(a=1), reason="r", input_digest="d", code_version="c"
        )


def test_readers_on_an_empty_lake(tmp_path: Path) -> None:
    assert list_names(tmp_path) == []
    assert list_periods(tmp_path, LIST) == []
    assert latest_version(tmp_path, LIST, PERIOD) is None
    assert current_versions(tmp_path).height == 0
    assert all_snapshots(tmp_path).collect().height == 0
    with pytest.raises(FileNotFoundError):
        read_manifest(tmp_path, LIST, PERIOD)


def test_uri_paths(tmp_path: Path) -> None:
    outcome = _publish(f"file://{tmp_path}", _rows(a=1500))
    assert outcome.path == tmp_path / "lists" / LIST / PERIOD / "v1"
    with pytest.raises(ValueError, match="local"):
        _publish("s3://bucket/lake", _rows(a=1500))


def test_digest_frame_distinguishes_content() -> None:
    base = pl.DataFrame({"a": ["x", ""], "b": [1.0, 2.0]})
    assert digest_frame(base) == digest_frame(base.clone())
    assert digest_frame(base) != digest_frame(base.with_columns(pl.Series("a", ["x", None])))
    assert digest_frame(base) != digest_frame(base.with_columns(pl.col("b") + 1e-9))
    assert digest_frame(base) != digest_frame(base.reverse())
    assert digest_frame(base) != digest_frame(base.cast({"b": pl.Float32}))


def test_digest_files_depends_on_names_and_bytes_not_location(tmp_path: Path) -> None:
    for root in ("one", "two"):
        (tmp_path / root / "sub").mkdir(parents=True)
        (tmp_path / root / "a.pgn").write_bytes(b"1. e4")
        (tmp_path / root / "sub" / "b.csv").write_bytes(b"x,y")
    one = digest_files([tmp_path / "one" / "sub" / "b.csv", tmp_path / "one" / "a.pgn"])
    two = digest_files([tmp_path / "two" / "a.pgn", tmp_path / "two" / "sub" / "b.csv"])
    assert one == two
    assert digest_files([tmp_path / "one"]) == digest_files([tmp_path / "two"])
    (tmp_path / "two" / "a.pgn").write_bytes(b"1. d4")
    assert digest_files([tmp_path / "two"]) != one
    os.rename(tmp_path / "one" / "a.pgn", tmp_path / "one" / "c.pgn")
    assert digest_files([tmp_path / "one"]) != digest_files([tmp_path / "two"])


_KILL_CHILD = r"""
import os, signal, sys
from pathlib import Path
import polars as pl
from rating_core.lake import publishing as publish

lake, kill_at = Path(sys.argv[1]), int(sys.argv[2])
calls = 0


def killing(original):
    def wrapper(*args, **kwargs):
        global calls
        calls += 1
        if calls == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)  # kill -9: no cleanup, no finally
        return original(*args, **kwargs)
    return wrapper


for name in ("_write_file", "_finish_files", "flush_filesystem"):
    setattr(publish, name, killing(getattr(publish, name)))
publish.os.rename = killing(os.rename)
rows = pl.DataFrame({"player_id": ["a", "b"], "rating": [1510, 1600]})
publish.publish_list(lake, "fide-standard", "2024-03", rows, reason="r", input_digest="d2",
                     code_version="c")
print("calls", calls)
"""
"""Publishes v2 of fide-standard 2024-03 and kills itself (SIGKILL) at its `kill_at`-th staging
step: each file written, the rename of the files, the flush of the staged files to disk, the rename
into `lists/`, the flush of the rename."""

_STAGING_STEPS = 9
"""Steps of a v2 publication: 5 files (list, csv, diff, diff csv, manifest), finish, flush,
rename, flush."""


def _glob_versions(lake: Path) -> tuple[list[int], list[int]]:
    """Versions the README's glob reads, with Polars and with DuckDB."""
    from tests.support.duck import relation

    pattern = f"{lake}/lists/**/list.parquet"
    polars_versions = pl.scan_parquet(pattern).collect()["version"].unique().sort().to_list()
    duck = relation(f"SELECT DISTINCT version FROM read_parquet('{pattern}') ORDER BY 1")
    return polars_versions, [row[0] for row in duck.fetchall()]


@pytest.mark.parametrize("kill_at", range(1, _STAGING_STEPS + 1))
def test_kill_9_at_any_staging_step_never_shows_a_staged_file_to_the_glob(
    tmp_path: Path, kill_at: int
) -> None:
    import subprocess
    import sys

    _publish(tmp_path, pl.DataFrame({"player_id": ["a", "b"], "rating": [1500, 1600]}))
    child = subprocess.run(
        [sys.executable, "-c", _KILL_CHILD, str(tmp_path), str(kill_at)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
    )
    assert child.returncode == -9, child.stderr
    renamed = kill_at > _STAGING_STEPS - 1  # killed after the rename into lists/
    expected = [1, 2] if renamed else [1]
    assert _glob_versions(tmp_path) == (expected, expected)
    assert all_snapshots(tmp_path).collect()["version"].unique().sort().to_list() == expected
    outcome = _publish(tmp_path, pl.DataFrame({"player_id": ["a", "b"], "rating": [1510, 1600]}))
    assert (outcome.version, outcome.status) == (2, "unchanged" if renamed else "published")
    assert _glob_versions(tmp_path) == ([1, 2], [1, 2])
    assert not (tmp_path / ".staging").exists()
    assert not list(tmp_path.rglob("*.partial"))


def test_the_child_takes_every_staging_step(tmp_path: Path) -> None:
    import subprocess
    import sys

    _publish(tmp_path, pl.DataFrame({"player_id": ["a", "b"], "rating": [1500, 1600]}))
    child = subprocess.run(
        [sys.executable, "-c", _KILL_CHILD, str(tmp_path), "0"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
    )
    assert child.stdout.split() == ["calls", str(_STAGING_STEPS)], child.stderr


def test_leftovers_of_an_old_release_inside_the_period_folder_are_cleaned(tmp_path: Path) -> None:
    _publish(tmp_path, _rows(a=1500))
    old = tmp_path / "lists" / LIST / PERIOD / ".tmp-v2-dead"
    old.mkdir()
    (old / "list.parquet").write_bytes(b"staged by an older release")
    assert _publish(tmp_path, _rows(a=1510)).version == 2
    assert not old.exists()


def test_extra_manifest_fields_are_recorded(tmp_path: Path) -> None:
    _publish(tmp_path, _rows(a=1500), extra_manifest={"club_folder": "Ankara SK"})
    assert read_manifest(tmp_path, LIST, PERIOD)["club_folder"] == "Ankara SK"


def test_reason_says_the_inputs_changed_when_the_digest_differs(tmp_path: Path) -> None:
    """The version reason is decided in publishing, from the parent manifest."""
    _publish(tmp_path, _rows(a=1500))
    _publish(tmp_path, _rows(a=1510), input_digest="new inputs", reason="late result")
    reason = read_manifest(tmp_path, LIST, PERIOD)["reason"]
    assert reason.startswith("inputs of 2024-03 or an earlier period changed since v1")
    assert reason.endswith(": late result")
    diff = publish.read_diff(tmp_path, LIST, PERIOD)
    assert diff["cause"].to_list() == [reason]  # no cause given: the version's reason


def test_unchanged_rows_make_no_csv_text(tmp_path: Path, monkeypatch) -> None:
    """Rows equal to the parent's list.parquet are unchanged without their CSV text being made
    (writing and hashing it cost a rerun more than reading the parent back); the content
    digest (the list.csv bytes' SHA-256) is still the parent manifest's."""
    first = _publish(tmp_path, _rows(a=1500, b=1600))
    manifest = read_manifest(tmp_path, LIST, PERIOD)
    assert manifest["content_digest"] == manifest["checksums"]["list.csv"]

    def no_csv(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("CSV text made for an unchanged list")

    with monkeypatch.context() as patched:
        patched.setattr(publish, "_frame_bytes", no_csv)
        again = _publish(tmp_path, _rows(b=1600, a=1500), input_digest="other")
    assert (again.status, again.version) == ("unchanged", first.version)
    changed = _publish(tmp_path, _rows(a=1500, b=1601))
    assert (changed.status, changed.version) == ("published", first.version + 1)
    manifest = read_manifest(tmp_path, LIST, PERIOD)
    assert manifest["content_digest"] == manifest["checksums"]["list.csv"]


def test_rows_typed_otherwise_with_the_parents_csv_text_are_unchanged(tmp_path: Path) -> None:
    """Rows that differ from the parent's list.parquet only in a way the CSV text does not show
    (a parent written with other types) are unchanged: the content digest decides."""
    _publish(tmp_path, _rows(a=1500, b=1600))
    folder = tmp_path / "lists" / LIST / PERIOD / "v1"
    parent = pl.read_parquet(folder / "list.parquet")
    parent.with_columns(pl.col("rating") + 0.25).write_parquet(folder / "list.parquet")
    again = _publish(tmp_path, _rows(a=1500, b=1600))
    assert (again.status, again.version) == ("unchanged", 1)


def test_a_manifest_without_the_new_content_digest_still_publishes_nothing_new(
    tmp_path: Path,
) -> None:
    """Manifests of older releases digested the content otherwise: the parent's Parquet decides."""
    _publish(tmp_path, _rows(a=1500, b=1600))
    path = tmp_path / "lists" / LIST / PERIOD / "v1" / "manifest.json"
    manifest = json.loads(path.read_text())
    path.write_text(json.dumps({**manifest, "content_digest": "ndjson-digest"}))
    again = _publish(tmp_path, _rows(a=1500, b=1600))
    assert (again.status, again.version) == ("unchanged", 1)


def test_a_batch_without_tidying_leaves_staging_to_one_final_drop(tmp_path: Path) -> None:
    """`tidy_staging=False` keeps the emptied staging folders; `drop_empty_staging` removes them
    and `.staging` itself, and the versions are complete either way."""
    for period in ("2024-01", "2024-02"):
        publish_list(
            tmp_path,
            LIST,
            period,
            _rows(a=1500),
            reason="r",
            input_digest="d",
            code_version="c",
            tidy_staging=False,
        )
    assert (tmp_path / ".staging" / LIST / "2024-02").is_dir()
    assert not [p for p in (tmp_path / ".staging").rglob("*") if p.is_file()]
    publish.drop_empty_staging(tmp_path)
    assert not (tmp_path / ".staging").exists()
    assert publish.list_periods(tmp_path, LIST) == ["2024-01", "2024-02"]


def test_tidying_named_lists_leaves_another_lists_staging_alone(tmp_path: Path) -> None:
    """On the multiprocess executor the systems publish side by side: one system's tidy-up
    must not remove the (still empty) staging folder another system has just created."""
    mine = tmp_path / ".staging" / "fide-blitz" / "2026-03"
    theirs = tmp_path / ".staging" / "site-elo" / "2026-03"
    mine.mkdir(parents=True)
    theirs.mkdir(parents=True)
    publish.drop_empty_staging(tmp_path, ["fide-blitz", "fide-rapid"])
    assert not (tmp_path / ".staging" / "fide-blitz").exists()
    assert theirs.is_dir()
    publish.drop_empty_staging(tmp_path)
    assert not (tmp_path / ".staging").exists()


def test_staging_survives_another_tidy_removing_its_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process's tidy-up removes the empty `.staging` root between this publication's
    creation of the root and of its own folder: the publication creates them again, and lands."""
    real_mkdir = Path.mkdir
    raced: list[Path] = []

    def racing_mkdir(self: Path, *args: Any, **kwargs: Any) -> None:  # Path.mkdir's
        if self.name.startswith("v1-") and not raced:
            real_mkdir(self.parent, parents=True, exist_ok=True)
            root = tmp_path / ".staging"
            for folder in sorted((p for p in root.rglob("*") if p.is_dir()), reverse=True):
                folder.rmdir()  # the other process's tidy-up, just in between
            root.rmdir()
            raced.append(self)
            raise FileNotFoundError(self)
        real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", racing_mkdir)
    rows = pl.DataFrame({"player_id": ["a", "b"], "rating": [1500, 1600]})
    outcome = publish.publish_list(
        tmp_path, "site-elo", "2026-03", rows, reason="test", input_digest="d", code_version="c"
    )
    assert raced, "the race was not simulated"
    assert outcome.status == "published"
    assert (tmp_path / "lists" / "site-elo" / "2026-03" / "v1" / "list.parquet").is_file()


def _release(list_name: str, period: str, rows: pl.DataFrame) -> publish.ListRelease:
    return publish.ListRelease(list_name, period, rows, "monthly list", "abc", "0.1.0")


def _without_dates(folder: Path) -> dict[str, object]:
    """A version's files, the manifest without its creation time (two runs differ there)."""
    files: dict[str, object] = {}
    for name, data in _bytes(folder).items():
        if name == "manifest.json":
            manifest = json.loads(data)
            manifest.pop("created_at")
            files[name] = manifest
        else:
            files[name] = data
    return files


def test_a_batch_publishes_exactly_what_one_call_per_list_publishes(tmp_path: Path) -> None:
    """Prepared together (one sort, cast and CSV escaping for the batch), each list still gets
    its own rows in its own order; versions, diffs and manifests are those of separate calls."""
    batch, single = tmp_path / "batch", tmp_path / "single"
    first = [
        ("fide-standard", "2024-03", _rows(a=1500, b=1600, c=1600)),
        ("fide-standard", "2024-04", _rows(b=1610, d=1400)),
        ("fide-rapid", "2024-03", _rows(a=1700, b=1500).with_columns(name=pl.lit("=x"))),
    ]
    second = [
        ("fide-standard", "2024-03", _rows(a=1510, b=1600, c=1600)),  # a v2 with a diff
        ("fide-standard", "2024-04", _rows(b=1610, d=1400)),  # unchanged
        ("fide-blitz", "2024-03", _rows(e=1800).drop("games")),  # another schema
    ]
    for rounds in (first, second):
        outcomes = publish.publish_lists(batch, [_release(*r) for r in rounds])
        alone = [publish_list(single, n, p, rows, reason="monthly list", input_digest="abc",
                              code_version="0.1.0") for n, p, rows in rounds]  # fmt: skip
        assert [(o.list, o.period, o.version, o.status, o.changed_rows) for o in outcomes] == [
            (o.list, o.period, o.version, o.status, o.changed_rows) for o in alone
        ]
    versions = sorted(p.relative_to(single) for p in single.glob("lists/*/*/v*"))
    assert versions == sorted(p.relative_to(batch) for p in batch.glob("lists/*/*/v*"))
    assert len(versions) == 5
    for version in versions:
        assert _without_dates(batch / version) == _without_dates(single / version)
    assert not (batch / ".staging").exists()


def test_a_batch_with_one_list_and_period_twice_is_refused(tmp_path: Path) -> None:
    twice = [_release(LIST, PERIOD, _rows(a=1500)), _release(LIST, PERIOD, _rows(a=1510))]
    with pytest.raises(ValueError, match="each list and period once"):
        publish.publish_lists(tmp_path, twice)
    assert not (tmp_path / "lists").exists()


def test_a_bad_list_in_a_batch_is_named_and_nothing_is_published(tmp_path: Path) -> None:
    good = _release(LIST, "2024-03", _rows(a=1500, b=1600))
    dupes = pl.concat([_rows(a=1500, b=1600), _rows(b=1610)])
    with pytest.raises(ValueError, match=r"duplicate 'player_id' values in the list, e.g. \['b'\]"):
        publish.publish_lists(tmp_path, [good, _release(LIST, "2024-04", dupes)])
    no_id = _rows(a=1500).with_columns(player_id=pl.lit(None, pl.String))
    with pytest.raises(ValueError, match="1 rows have no 'player_id'"):
        publish.publish_lists(tmp_path, [good, _release(LIST, "2024-04", no_id)])
    assert list_names(tmp_path) == []


def test_a_failure_while_staging_a_batch_publishes_the_releases_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch in period order publishes a prefix of its range: what comes before the failing
    release, never what comes after it (staged side by side or not)."""
    from concurrent.futures import ThreadPoolExecutor

    original = publish._write_file

    def failing(target: Path, data: bytes | pl.DataFrame, *digest: str) -> str:
        if target.parent.parent.name == "2024-04" and target.name == "manifest.json":
            raise OSError("disk full")
        return original(target, data, *digest)

    periods = ("2024-03", "2024-04", "2024-05")
    releases = [_release(LIST, p, _rows(a=1500)) for p in periods]
    for lake, pool in ((tmp_path / "serial", None), (tmp_path / "pool", ThreadPoolExecutor(2))):
        monkeypatch.setattr(publish, "_write_file", failing)
        with pytest.raises(OSError, match="disk full"):
            publish.publish_lists(lake, releases, pool=pool)
        assert list_periods(lake, LIST) == ["2024-03"]
        assert not [p for p in (lake / ".staging").rglob("*") if p.is_file()]
        monkeypatch.undo()
        outcomes = publish.publish_lists(lake, releases, pool=pool)
        assert [(o.period, o.version, o.status) for o in outcomes] == [
            ("2024-03", 1, "unchanged"), ("2024-04", 1, "published"), ("2024-05", 1, "published")
        ]  # fmt: skip


def test_a_folder_that_cannot_be_made_stops_the_batch_there(tmp_path: Path) -> None:
    (tmp_path / "lists" / LIST).mkdir(parents=True)
    (tmp_path / "lists" / LIST / "2024-04").write_text("in the way")
    releases = [_release(LIST, p, _rows(a=1500)) for p in ("2024-03", "2024-04", "2024-05")]
    with pytest.raises(OSError):
        publish.publish_lists(tmp_path, releases)
    assert list_periods(tmp_path, LIST) == ["2024-03"]


def test_a_batch_with_a_line_break_in_a_name_publishes_the_same_csv(tmp_path: Path) -> None:
    """A name holding a line break is quoted over two lines in `list.csv`, the same bytes in a
    batch as when the list is published alone."""
    rows = _rows(a=1500, b=1400).with_columns(
        pl.when(pl.col("player_id") == "a").then(pl.lit("two\nlines")).otherwise(pl.lit("one"))
        .alias("name")
    )  # fmt: skip
    releases = [_release(LIST, p, rows) for p in ("2024-03", "2024-04")]
    publish.publish_lists(tmp_path / "batch", releases)
    publish.publish_lists(tmp_path / "alone", releases[:1])
    batch = (tmp_path / "batch" / "lists" / LIST / "2024-03" / "v1" / "list.csv").read_bytes()
    alone = (tmp_path / "alone" / "lists" / LIST / "2024-03" / "v1" / "list.csv").read_bytes()
    assert b'"two\nlines"' in batch and batch == alone


def test_a_cause_without_a_player_is_everyone_elses_cause(tmp_path: Path) -> None:
    """A causes row with a null key (a change carried from an earlier period) is the cause of
    every changed player the other rows do not name, instead of the version's reason."""
    _publish(tmp_path, _rows(a=1500, b=1600, c=1700))
    causes = pl.DataFrame(
        {
            "player_id": ["a", None],
            "cause": ["late result: tournament T (standard)", "carried from 2024-02: late T"],
        }
    )
    _publish(tmp_path, _rows(a=1490, b=1610, c=1700), input_digest="new", causes=causes)
    diff = read_diff(tmp_path, LIST, PERIOD).sort("player_id")
    assert diff.select("player_id", "cause").rows() == [
        ("a", "late result: tournament T (standard)"),
        ("b", "carried from 2024-02: late T"),
    ]
