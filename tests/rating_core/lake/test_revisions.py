"""Original and revised lists (issue 11 item 3): the manifest fields, older manifests, the
original of each period, and the diff of the original against the latest revision."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from rating_core.lake import publishing as publish
from rating_core.lake import revisions

LIST = "fide-standard"


def _rows(**ratings: int) -> pl.DataFrame:
    """A small list: one row per player id with its rating."""
    return pl.DataFrame(
        {"player_id": list(ratings), "rating": list(ratings.values())},
        schema_overrides={"rating": pl.Int32},
    )


def _publish(
    lake: Path, period: str, rows: pl.DataFrame, causes: pl.DataFrame | None = None
) -> publish.PublishOutcome:
    return publish.publish_list(
        lake,
        LIST,
        period,
        rows,
        reason="monthly list",
        input_digest="abc",
        code_version="0.1.0",
        causes=causes,
    )


def _causes(**by_player: str) -> pl.DataFrame:
    return pl.DataFrame({"player_id": list(by_player), "cause": list(by_player.values())})


def _strip_publication_fields(lake: Path) -> None:
    """Make every manifest look like one an older release wrote (no publication fields)."""
    for path in (lake / "lists").rglob(publish.MANIFEST_FILE):
        manifest = json.loads(path.read_text(encoding="utf-8"))
        manifest.pop("publication"), manifest.pop("revises")
        path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def test_manifests_record_original_then_revisions_of_the_parent(tmp_path: Path) -> None:
    _publish(tmp_path, "2024-03", _rows(a=1500, b=1600))
    _publish(tmp_path, "2024-03", _rows(a=1510, b=1600))
    _publish(tmp_path, "2024-03", _rows(a=1510, b=1590))
    fields = [
        {
            k: publish.read_manifest(tmp_path, LIST, "2024-03", v)[k]
            for k in ("publication", "revises")
        }
        for v in (1, 2, 3)
    ]
    assert fields == [
        {"publication": "original", "revises": None},
        {"publication": "revision", "revises": 1},
        {"publication": "revision", "revises": 2},
    ]


def test_older_manifests_read_as_original_at_v1_and_revision_of_the_previous(
    tmp_path: Path,
) -> None:
    for rating in (1500, 1510, 1520):
        _publish(tmp_path, "2024-03", _rows(a=rating))
    _strip_publication_fields(tmp_path)
    read = [
        revisions.publication_of(publish.read_manifest(tmp_path, LIST, "2024-03", v))
        for v in (1, 2, 3)
    ]
    assert read == [
        revisions.Publication("original", None),
        revisions.Publication("revision", 1),
        revisions.Publication("revision", 2),
    ]


def test_the_new_fields_never_make_an_unchanged_list_republish(tmp_path: Path) -> None:
    _publish(tmp_path, "2024-03", _rows(a=1500, b=1600))
    _strip_publication_fields(tmp_path)  # a lake published before the fields existed
    again = _publish(tmp_path, "2024-03", _rows(a=1500, b=1600))
    assert again.status == "unchanged" and again.version == 1
    assert publish.latest_version(tmp_path, LIST, "2024-03") == 1


def test_original_versions_and_original_lists(tmp_path: Path) -> None:
    _publish(tmp_path, "2024-03", _rows(a=1500, b=1600))
    _publish(tmp_path, "2024-03", _rows(a=1510, b=1600))
    _publish(tmp_path, "2024-04", _rows(a=1520, b=1600))
    originals = revisions.original_versions(tmp_path)
    assert originals.rows() == [(LIST, "2024-03", 1), (LIST, "2024-04", 1)]
    current = publish.current_versions(tmp_path)
    assert current.rows() == [(LIST, "2024-03", 2), (LIST, "2024-04", 1)]
    frame = revisions.original_lists(tmp_path).collect().sort("period", "player_id")
    assert frame.select("period", "version", "player_id", "rating").rows() == [
        ("2024-03", 1, "a", 1500.0),
        ("2024-03", 1, "b", 1600.0),
        ("2024-04", 1, "a", 1520.0),
        ("2024-04", 1, "b", 1600.0),
    ]
    assert revisions.original_lists(tmp_path / "empty").collect().height == 0


def test_diff_between_the_original_and_the_latest_revision(tmp_path: Path) -> None:
    _publish(tmp_path, "2024-03", _rows(a=1500, b=1600, c=1700, d=1800))
    # v2: a late result moves a and b; v3: a correction moves b back and c, e appears, d leaves
    _publish(
        tmp_path,
        "2024-03",
        _rows(a=1510, b=1590, c=1700, d=1800),
        _causes(a="late result: t1", b="late result: t1"),
    )
    _publish(
        tmp_path,
        "2024-03",
        _rows(a=1510, b=1600, c=1650, e=1400),
        _causes(b="correction", c="correction", d="merged", e="new player"),
    )
    diff = revisions.diff_between(tmp_path, LIST, "2024-03", 1, 3)
    got = {
        row["player_id"]: (row["old"], row["new"], row["cause"])
        for row in diff.iter_rows(named=True)
    }
    # b is back where the original had it: not in the diff; the others with every cause since v1
    assert got == {
        "a": (1500.0, 1510.0, "v2: late result: t1"),
        "c": (1700.0, 1650.0, "v3: correction"),
        "d": (1800.0, None, "v3: merged"),
        "e": (None, 1400.0, "v3: new player"),
    }
    assert set(diff["version"].to_list()) == {3}
    # between consecutive versions it is the stored diff, cause for cause
    stored = publish.read_diff(tmp_path, LIST, "2024-03", 2).sort("player_id")
    computed = revisions.diff_between(tmp_path, LIST, "2024-03", 1, 2).sort("player_id")
    assert computed.select("player_id", "old", "new", "change").equals(
        stored.select("player_id", "old", "new", "change")
    )
    assert computed["cause"].to_list() == [f"v2: {c}" for c in stored["cause"].to_list()]


def test_the_versions_view_says_original_or_revision_older_manifests_too(tmp_path: Path) -> None:
    from rating_core.lake.query import query_frame
    from rating_core.lake.versions import published_versions

    _publish(tmp_path, "2024-03", _rows(a=1500))
    _publish(tmp_path, "2024-03", _rows(a=1510))
    _strip_publication_fields(tmp_path)  # v1 and v2 as an older release wrote them
    _publish(tmp_path, "2024-03", _rows(a=1520))
    _publish(tmp_path, "2024-04", _rows(a=1530))
    got = published_versions(tmp_path).select("period", "version", "publication", "revises")
    assert got.rows() == [
        ("2024-03", 1, "original", None),
        ("2024-03", 2, "revision", 1),
        ("2024-03", 3, "revision", 2),
        ("2024-04", 1, "original", None),
    ]
    originals = query_frame(
        tmp_path,
        "SELECT list, period, version FROM versions WHERE publication = 'original' ORDER BY ALL",
    )
    assert originals.rows() == revisions.original_versions(tmp_path).rows()
