"""Asset tier: a published FIDE list records the era it was rated by (`rules` in its manifest),
the list of 2024-02 is published compressed and 2024-03 starts from it, and the manifest field
never makes an unchanged list republish."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from assets.ingest import INGEST_ASSETS
from assets.period_io import publish_rows
from assets.resources import PipelinePaths
from pipelines.registry import PERIOD_ASSETS
from rating_core.lake import publishing as publish
from rating_core.systems.contract import LIST_COLUMN, RULES_COLUMN
from tests.support.periods import materialize_period

pytestmark = pytest.mark.e2e

FEDERATION = """game_id,tournament_id,round,played_on,white_id,black_id,result,rating_list
t1,T,1,2024-02-10,f1,f2,1-0,standard
t2,T,2,2024-02-11,f2,f1,1/2-1/2,standard
"""

FIDE_LIST = """player_id,rating,rated_games,peak_rating
f1,1800,50,1850
f2,1900,60,1950
"""


def make_inbox(root: Path) -> Path:
    inbox = root / "inbox"
    (inbox / "federation" / "lists").mkdir(parents=True)
    (inbox / "federation" / "t.csv").write_text(FEDERATION, encoding="utf-8")
    (inbox / "federation" / "lists" / "fide-standard@2024-01.csv").write_text(
        FIDE_LIST, encoding="utf-8"
    )
    return inbox


def ratings_of(lake: Path, period: str) -> dict[str, int]:
    frame = publish.read_list(lake, "fide-standard", period)
    return dict(zip(frame["player_id"], frame["rating"], strict=True))


def test_manifest_records_the_era_and_2024_03_starts_from_the_compressed_list(
    tmp_path: Path,
) -> None:
    inbox, lake = make_inbox(tmp_path), tmp_path / "lake"
    res = {"paths": PipelinePaths(inbox=str(inbox), lake=str(lake))}
    assert dg.materialize([*INGEST_ASSETS], resources=res).success
    assert materialize_period(PERIOD_ASSETS, resources=res, partition_key="2024-02-01").success
    manifest = publish.read_manifest(lake, "fide-standard", "2024-02")
    assert manifest["rules"] == "FIDE 2022-10"  # the era row in force (unchanged on standard)
    # f1 (K 20) beats and draws 1900: D +100 -> PD .36 -> 20 x (0.64 + 0.14) = 15.6 -> 1816,
    # compressed by 0.4 x 184 = 73.6 -> 1890; f2: 1884, + 0.4 x 116 = 46.4 -> 1930
    assert ratings_of(lake, "2024-02") == {"f1": 1890, "f2": 1930}
    assert RULES_COLUMN not in publish.read_list(lake, "fide-standard", "2024-02").columns
    # the same inputs again: nothing new to publish
    assert materialize_period(PERIOD_ASSETS, resources=res, partition_key="2024-02-01").success
    assert publish.latest_version(lake, "fide-standard", "2024-02") == 1
    # 2024-03, no games: the compressed ratings carry over, by the rules of 2024-03
    assert materialize_period(PERIOD_ASSETS, resources=res, partition_key="2024-03-01").success
    assert publish.read_manifest(lake, "fide-standard", "2024-03")["rules"] == "FIDE 2024-03"
    assert ratings_of(lake, "2024-03") == {"f1": 1890, "f2": 1930}


def test_a_list_published_without_rules_is_not_republished_for_the_new_field(
    tmp_path: Path,
) -> None:
    lake = tmp_path / "lake"
    rows = pl.DataFrame(
        {LIST_COLUMN: ["fide-standard"] * 2, "player_id": ["a", "b"], "rating": [1500, 2100]}
    )
    first = publish_rows(lake, "2026-01", rows, reason="rated")  # as before the eras
    assert first[0]["status"] == "published"
    assert "rules" not in publish.read_manifest(lake, "fide-standard", "2026-01")
    tagged = rows.with_columns(pl.lit("FIDE 2025-10").alias(RULES_COLUMN))
    again = publish_rows(lake, "2026-01", tagged, reason="rated")
    assert (again[0]["status"], again[0]["version"]) == ("unchanged", 1)
    moved = tagged.with_columns(pl.Series("rating", [1501, 2100]))
    third = publish_rows(lake, "2026-01", moved, reason="rated")
    assert (third[0]["status"], third[0]["version"]) == ("published", 2)
    assert publish.read_manifest(lake, "fide-standard", "2026-01")["rules"] == "FIDE 2025-10"
