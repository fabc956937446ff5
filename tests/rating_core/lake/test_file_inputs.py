"""Each period's inbox files and their digests, found without reading the games
(rating_core.lake.file_inputs): what a site or FIBS version names (issue 31 item 1)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from rating_core import tables
from rating_core.lake import file_inputs, ingest_store
from rating_core.lake.storage import write_partitioned
from rating_core.schemas import MATCHES_SCHEMA, conform
from tests.support.pgn_text import blitz_game, write_pgn


def test_platform_files_of_each_period_and_a_digest_that_follows_their_games(
    tmp_path: Path,
) -> None:
    inbox, lake = tmp_path / "inbox", tmp_path / "lake"
    write_pgn(inbox / "platform" / "a.pgn", [blitz_game(i) for i in range(4)])
    write_pgn(inbox / "platform" / "b.pgn", [blitz_game(10 + i) for i in range(4)])
    (inbox / "federation").mkdir()
    (inbox / "federation" / "open.csv").write_text(
        "game_id,tournament_id,round,played_on,white_id,black_id,result,rating_list\n"
        "t1,open,1,2025-05-03,a,b,1-0,standard\n"
    )
    ingest_store.ingest_games(inbox, lake)
    first = file_inputs.platform_game_files(lake, ["2025-04", "2025-05"])
    assert first.select("period", "name").rows() == [
        ("2025-05", "platform/a.pgn"),
        ("2025-05", "platform/b.pgn"),
    ]  # the federation folder is no platform file; April has no games
    write_pgn(inbox / "platform" / "b.pgn", [blitz_game(10 + i) for i in range(5)])
    ingest_store.ingest_games(inbox, lake)
    again = file_inputs.platform_game_files(lake, ["2025-05"])
    changed = again.join(first, on=["period", "name"]).filter(
        pl.col("digest") != pl.col("digest_right")
    )
    assert changed.get_column("name").to_list() == ["platform/b.pgn"]


def test_backgammon_digests_per_period_and_file_ignore_moved_lines(tmp_path: Path) -> None:
    def matches(lines: list[int], loser: str = "b") -> pl.DataFrame:
        return conform(
            pl.DataFrame(
                {
                    "match_id": ["m1", "m2"],
                    "period": ["2026-03", "2026-04"],
                    "winner_id": ["a", "a"],
                    "loser_id": [loser, "b"],
                    "length": [3, 3],
                    "source_file": ["backgammon/x.csv"] * 2,
                    "source_line": lines,
                }
            ),
            MATCHES_SCHEMA,
        )

    write_partitioned(tmp_path, tables.MATCHES, matches([2, 3]))
    first = file_inputs.backgammon_match_files(tmp_path, ["2026-03", "2026-04"])
    write_partitioned(tmp_path, tables.MATCHES, matches([7, 9]))
    assert file_inputs.backgammon_match_files(tmp_path, ["2026-03", "2026-04"]).equals(first)
    write_partitioned(tmp_path, tables.MATCHES, matches([2, 3], loser="c"))
    after = file_inputs.backgammon_match_files(tmp_path, ["2026-03", "2026-04"])
    assert (after["digest"] != first["digest"]).to_list() == [True, False]
