"""`assets.period_io.range_releases`: a range's list rows cut into one release per list and
period, with each list's manifest facts."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from assets.period_io import INPUT_DIGEST, _grouped_in_order, range_releases
from rating_core.systems.contract import CLUB_FOLDER, LIST_COLUMN, RULES_COLUMN


def test_a_range_becomes_one_release_per_list_and_period_in_order() -> None:
    lists = pl.Enum(["site-rapid", "site-blitz"])  # physical order is not the names' order
    rows = pl.DataFrame(
        {
            "period": ["2024-02", "2024-01", "2024-02", "2024-01", "2024-01", "2024-03"],
            LIST_COLUMN: [
                "site-blitz",
                "site-rapid",
                "site-rapid",
                "site-blitz",
                "site-rapid",
                "site-blitz",
            ],
            "player_id": ["a", "b", "c", "d", "e", "f"],
            "rating": [1500, 1600, 1700, 1800, 1900, 2000],
            INPUT_DIGEST: ["d2", "d1", "d2", "d1", "d1", "d3"],
            CLUB_FOLDER: [None, "north", "north", None, "north", None],
            RULES_COLUMN: ["2024", None, None, "2024", None, None],
        },
        schema_overrides={LIST_COLUMN: lists},
    )
    causes = pl.DataFrame(
        {LIST_COLUMN: ["site-rapid", None], "player_id": ["c", "a"], "cause": ["merge", "fix"]}
    )
    reasons = {"2024-01": "monthly", "2024-02": "correction"}  # 2024-03 is not released
    releases = range_releases(rows, reasons, {"2024-02": causes})
    seen = [(r.period, r.list_name, r.rows["player_id"].to_list()) for r in releases]
    assert seen == [
        ("2024-01", "site-blitz", ["d"]),
        ("2024-01", "site-rapid", ["b", "e"]),
        ("2024-02", "site-blitz", ["a"]),
        ("2024-02", "site-rapid", ["c"]),
    ]
    assert all(r.rows.columns == ["player_id", "rating"] for r in releases)
    assert [r.reason for r in releases] == ["monthly", "monthly", "correction", "correction"]
    assert [r.input_digest for r in releases] == ["d1", "d1", "d2", "d2"]
    assert [r.extra_manifest for r in releases] == [
        {"rules": "2024"}, {"club_folder": "north"}, {"rules": "2024"}, {"club_folder": "north"}
    ]  # fmt: skip
    assert releases[0].causes is None
    blitz, rapid = (releases[2].causes, releases[3].causes)
    assert blitz is not None and blitz["player_id"].to_list() == ["a"]
    assert rapid is not None and sorted(rapid["player_id"].to_list()) == ["a", "c"]


def test_without_a_digest_column_each_release_digests_its_rows() -> None:
    rows = pl.DataFrame({"period": ["2024-01"] * 2, LIST_COLUMN: ["x", "y"],
                         "player_id": ["a", "a"], "rating": [1, 2]})  # fmt: skip
    one, two = range_releases(rows, {"2024-01": "monthly"}, {})
    assert one.input_digest != two.input_digest
    assert range_releases(rows.clear(), {"2024-01": "monthly"}, {}) == []


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["2024-01", "2024-02"]), st.sampled_from(["a", "b", "c"])),
        max_size=12,
    )
)
def test_rows_already_grouped_in_order_are_released_as_a_sort_would(
    keys: list[tuple[str, str]],
) -> None:
    rows = pl.DataFrame(
        {
            "period": [p for p, _ in keys],
            LIST_COLUMN: [name for _, name in keys],
            "player_id": [f"p{i}" for i in range(len(keys))],
            "rating": [float(i) for i in range(len(keys))],
        }
    )
    ordered = rows.sort("period", LIST_COLUMN, maintain_order=True)
    expressions = [pl.col("period"), pl.col(LIST_COLUMN)]
    assert _grouped_in_order(rows, expressions) == rows.equals(ordered)
    reasons = {"2024-01": "r1", "2024-02": "r2"}
    for given_rows in (rows, ordered):
        releases = range_releases(given_rows, reasons, {})
        assert [(r.period, r.list_name) for r in releases] == sorted(set(keys))
        for release in releases:
            mine = ordered.filter(
                (pl.col("period") == release.period) & (pl.col(LIST_COLUMN) == release.list_name)
            )
            assert release.rows.equals(mine.drop("period", LIST_COLUMN))
