"""A version's diff (`publishing._make_diff`) against the plain definition: every key whose value
changed, appeared or left, from a full join of both versions, whatever the rows the diff skips
as unmoved (same key, same value, same position)."""

from __future__ import annotations

from random import Random

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rating_core.lake.publishing import ListRelease, _make_diff, _prepare_all, publish_list

REASON = "a moderation decision"


def _plain_changes(old: pl.DataFrame, new: pl.DataFrame) -> pl.DataFrame:
    """(player_id, old, new) of every key whose value differs between `old` and `new`, or that
    only one of them holds: the plain full join."""
    joined = old.select("player_id", pl.col("rating").cast(pl.Float64).alias("old")).join(
        new.select("player_id", pl.col("rating").cast(pl.Float64).alias("new")),
        on="player_id",
        how="full",
        coalesce=True,
    )
    changed = pl.col("old").is_null() | pl.col("new").is_null() | (pl.col("old") != pl.col("new"))
    return joined.filter(changed).sort("player_id")


def _listed(ratings: dict[str, int | None]) -> pl.DataFrame:
    """A list in publishing's order (rating descending, nulls last, then player_id)."""
    frame = pl.DataFrame(
        {
            "player_id": list(ratings),
            "name": [f"name {key}" for key in ratings],
            "rating": list(ratings.values()),
        },
        schema={"player_id": pl.String, "name": pl.String, "rating": pl.Int32},
    )
    return frame.sort(["rating", "player_id"], descending=[True, False], nulls_last=True)


def _diff(old: pl.DataFrame, new: pl.DataFrame, causes: pl.DataFrame | None = None):
    return _make_diff(
        old, new, key="player_id", value="rating", causes=causes, reason=REASON,
        list_name="site-elo", period="2024-01", version=2,
    )  # fmt: skip


players = st.dictionaries(
    st.sampled_from([f"p{n:02d}" for n in range(30)]),
    st.one_of(st.none(), st.integers(min_value=1490, max_value=1510)),
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(players, players, st.data())
def test_the_diff_holds_every_change_of_the_full_join(
    before: dict[str, int | None], moved: dict[str, int | None], data: st.DataObject
) -> None:
    """Lists sharing most rows (the new one some of the old's players moved, added or
    removed): the diff's keys and values are the full join's, each with its cause."""
    removed = data.draw(st.sets(st.sampled_from(sorted(before))) if before else st.just(set()))
    after = {k: v for k, v in before.items() if k not in removed} | moved
    old, new = _listed(before), _listed(after)
    causes = pl.DataFrame(
        {"player_id": sorted(moved)[:2], "cause": ["annulled g1"] * len(sorted(moved)[:2])},
        schema={"player_id": pl.String, "cause": pl.String},
    )
    diff = _diff(old, new, causes)
    plain = _plain_changes(old, new)
    assert diff.select("player_id", "old", "new").sort("player_id").equals(plain)
    expected_causes = {k: "annulled g1" for k in causes["player_id"]}
    for key, cause in diff.select("player_id", "cause").iter_rows():
        assert cause == expected_causes.get(key, REASON)
    assert diff.equals(diff.sort([pl.col("change").abs(), "player_id"], descending=[True, False]))


def test_an_unmoved_list_has_an_empty_diff_and_a_shifted_one_names_only_the_mover() -> None:
    """Every row in place: nothing; one player falling three places: only that player, though
    the three they passed moved up a row each."""
    old = _listed({"a": 1600, "b": 1550, "c": 1540, "d": 1530, "e": 1500})
    assert _diff(old, old).height == 0
    new = _listed({"a": 1600, "b": 1520, "c": 1540, "d": 1530, "e": 1500})
    diff = _diff(old, new)
    assert diff.select("player_id", "old", "new", "change").rows() == [("b", 1550.0, 1520.0, -30.0)]


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.text(alphabet="abAB9é", min_size=1, max_size=4),
        st.one_of(st.none(), st.integers(min_value=1498, max_value=1502)),
        min_size=1,
        max_size=25,
    ),
    st.randoms(use_true_random=False),
)
def test_rows_given_in_list_order_or_not_publish_the_same_files(
    tmp_path_factory: pytest.TempPathFactory, ratings: dict[str, int | None], shuffle: Random
) -> None:
    """Rows already in list order (rating down, then player_id) are not sorted again; in any
    other order they are: both publish the same bytes."""
    ordered = _listed(ratings)
    mixed = list(range(ordered.height))
    shuffle.shuffle(mixed)
    written = []
    for rows in (ordered, ordered[mixed]):
        lake = tmp_path_factory.mktemp("lake")
        publish_list(lake, "site-elo", "2024-01", rows, reason=REASON, input_digest="d",
                     code_version="1")  # fmt: skip
        folder = lake / "lists" / "site-elo" / "2024-01" / "v1"
        written.append((folder / "list.csv").read_bytes())
    assert written[0] == written[1]
    assert pl.read_csv(written[0]).get_column("player_id").cast(pl.String).to_list() == [
        str(k) for k in ordered["player_id"]
    ]


def test_integer_keys_are_put_in_numeric_order() -> None:
    """Integer keys in string order (10 before 9 at one rating) are sorted as numbers."""
    rows = pl.DataFrame(
        {"player_id": [10, 9, 11], "rating": [1500, 1500, 1400]},
        schema={"player_id": pl.Int64, "rating": pl.Int32},
    )
    (prepared,) = _prepare_all(
        [ListRelease("site-elo", "2024-01", rows, REASON, "d", "1", key="player_id")]
    )
    assert prepared.canonical.get_column("player_id").to_list() == ["9", "10", "11"]
