"""`merge_player_games`: the games a merges file's ids play are all `resolve_merges` needs, so the
merges asset reads those and never a platform's whole month (issue 31 item 4)."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from rating_core.ingest.merges import merge_player_games, resolve_merges
from rating_core.schemas import STARTING_LIST_SCHEMA, conform
from tests.support.merges import merges

IDS = [f"id{n}" for n in range(8)]
SOURCES = ["platform", "federation", "club"]
PERIODS = ["2026-01", "2026-02", "2026-03"]

side = st.one_of(st.none(), st.sampled_from(IDS))
game = st.tuples(st.sampled_from(SOURCES), st.sampled_from(PERIODS), side, side)
pair = st.tuples(st.sampled_from(IDS), st.sampled_from(IDS))


def _games(rows: list[tuple[str, str, str | None, str | None]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "game_id": [f"g{n}" for n in range(len(rows))],
            "source": [r[0] for r in rows],
            "source_file": [f"{r[0]}/file.csv" for r in rows],
            "source_line": list(range(2, 2 + len(rows))),
            "period": [r[1] for r in rows],
            "white_id": [r[2] for r in rows],
            "black_id": [r[3] for r in rows],
        },
        schema={
            "game_id": pl.String,
            "source": pl.String,
            "source_file": pl.String,
            "source_line": pl.Int64,
            "period": pl.String,
            "white_id": pl.String,
            "black_id": pl.String,
        },
    )


def _lists(ids: list[str]) -> pl.DataFrame:
    return conform(
        pl.DataFrame(
            {
                "list": ["fide-standard"] * len(ids),
                "period": ["2026-01"] * len(ids),
                "player_id": ids,
            },
            schema_overrides={"player_id": pl.String},
        ),
        STARTING_LIST_SCHEMA,
    )


def _sorted(quarantine: pl.DataFrame) -> pl.DataFrame:
    return quarantine.sort(pl.all(), nulls_last=True)


@settings(max_examples=150, deadline=None)
@given(
    games=st.lists(game, max_size=25),
    pairs=st.lists(pair, max_size=4),
    listed=st.lists(st.sampled_from(IDS), max_size=3),
)
def test_resolving_from_the_merged_ids_games_is_resolving_from_every_game(
    games: list[tuple[str, str, str | None, str | None]],
    pairs: list[tuple[str, str]],
    listed: list[str],
) -> None:
    """Known ids, first periods, identities across a platform and a federation, games between the
    two ids: the same from the games of the merges' ids as from the whole table."""
    decided = merges(*[(k, m) for k, m in pairs if k != m])
    every = _games(games)
    lists = _lists(listed)
    whole = resolve_merges(decided, every, lists, None)
    named = merge_player_games(every.lazy(), decided)
    assert named.height <= every.height
    narrow = resolve_merges(decided, named, lists, None)
    assert narrow.rows.equals(whole.rows)
    assert _sorted(narrow.quarantine).equals(_sorted(whole.quarantine))


def test_only_the_games_naming_a_kept_or_merged_id_are_read() -> None:
    every = _games(
        [
            ("platform", "2026-01", "x", "y"),
            ("federation", "2026-01", "a", "p"),
            ("platform", "2026-01", "q", "b"),
            ("club", "2026-02", None, "b"),
            ("federation", "2026-02", "p", None),
        ]
    )
    named = merge_player_games(every.lazy(), merges(("a", "b")))
    assert named.get_column("game_id").to_list() == ["g1", "g2", "g3"]
    assert merge_player_games(every.lazy(), merges()).height == 0
