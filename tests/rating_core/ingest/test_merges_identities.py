"""A merge never joins a platform's account with a federation's player (issue 32 item 8): a FIDE
id merged into an online account would put the account on the FIDE list."""

from __future__ import annotations

import polars as pl

from rating_core.ingest.merges import resolve_merges
from rating_core.schemas import STARTING_LIST_SCHEMA, conform, empty
from tests.support.merges import merges

GAMES = pl.DataFrame(
    {
        "game_id": ["p1", "f1", "f2"],
        "source": ["platform", "federation", "club"],
        "source_file": ["platform/g.pgn", "federation/t.trf", "clubs/c/t.trf"],
        "source_line": [1, 5, 7],
        "period": ["2026-01", "2026-02", "2026-02"],
        "white_id": ["alice_online", "12345678", "club_a"],
        "black_id": ["bob_online", "87654321", "club_b"],
    }
)
LISTS = conform(
    pl.DataFrame({"list": ["fide-standard"], "period": ["2026-01"], "player_id": ["555"]}),
    STARTING_LIST_SCHEMA,
)


def test_a_fide_id_is_never_merged_into_an_online_account() -> None:
    result = resolve_merges(
        merges(
            ("alice_online", "12345678"),  # FIDE id into an account: refused
            ("555", "bob_online"),  # account into a starting list's player: refused
            ("12345678", "87654321"),  # two federation players: kept
            ("club_a", "12345678"),  # a club's player and a federation's: kept
        ),
        GAMES,
        LISTS,
        None,
    )
    assert result.rows.select("keep_id", "merge_id").rows() == [
        ("12345678", "87654321"),
        ("club_a", "12345678"),
    ]
    mine = result.quarantine.filter(pl.col("source_file") == "federation/merges.csv")
    refused = mine.select("line", "value", "reason").rows()
    assert [(line, value) for line, value, _ in refused] == [
        (2, "alice_online and 12345678"),
        (3, "555 and bob_online"),
    ]
    assert refused[0][2] == (
        "'alice_online' is an online account (platform games only) and '12345678' a federation "
        "player (federation or club games, or a starting list): a platform's and a federation's "
        "identities are never merged"
    )
    assert refused[1][2].startswith("'bob_online' is an online account")


def test_two_online_accounts_are_left_to_moderation_not_refused_here() -> None:
    result = resolve_merges(
        merges(("alice_online", "bob_online")), GAMES, empty(STARTING_LIST_SCHEMA), None
    )
    assert result.rows.height == 1 and result.quarantine.height == 0
