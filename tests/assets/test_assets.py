"""Asset tier: `dagster.materialize` on temporary inboxes and lakes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from assets import federation
from assets.ingest import INGEST_ASSETS, INGEST_CHECKS
from assets.resources import PipelinePaths
from pipelines.registry import PERIOD_ASSETS
from rating_core import tables
from rating_core.lake import publishing as publish
from rating_core.lake.storage import read_table, table_partitions
from rating_core.systems.fide.rules import FIDE_RULES
from tests.support.periods import materialize_period

pytestmark = pytest.mark.e2e

PLAYERS = """player_id,name,is_bot,bot_rating,email_verified,display_name,birth_date
u-a,Ann,false,,true,ann,1990
u-b,Bob,false,,true,bob,1991
bot-1,Botty,true,1500,false,,
"""

PLATFORM = """game_id,played_at,white_id,black_id,result,time_control,rated,kind,plies,termination
g1,2026-01-03T10:00:00Z,u-a,u-b,1-0,300+0,true,live,40,resign
g2,2026-01-04T10:00:00Z,u-a,u-b,2-0,300+0,true,live,40,resign
g3,2026-02-04T10:00:00Z,u-b,u-a,1/2-1/2,?,true,live,40,normal
g4,2026-02-05T10:00:00Z,u-a,bot-1,1-0,60,true,live,40,normal
g5,2026-02-06T10:00:00Z,u-a,u-b,0-1,60+1,false,live,40,normal
"""

FEDERATION = """game_id,tournament_id,round,played_on,white_id,black_id,result,rating_list
t1,T,1,2026-01-10,f1,f2,1-0,standard
t2,T,2,2026-01-11,f2,f1,1/2-1/2,standard
t3,T,3,2026-01-12,f1,f3,+-,standard
"""

FIDE_LIST = """player_id,rating,rated_games,peak_rating
f1,1800,50,1850
f2,1900,60,1950
"""


def make_inbox(root: Path) -> Path:
    inbox = root / "inbox"
    (inbox / "platform").mkdir(parents=True)
    (inbox / "federation" / "lists").mkdir(parents=True)
    (inbox / "players.csv").write_text(PLAYERS, encoding="utf-8")
    (inbox / "platform" / "games.csv").write_text(PLATFORM, encoding="utf-8")
    (inbox / "federation" / "t.csv").write_text(FEDERATION, encoding="utf-8")
    (inbox / "federation" / "lists" / "fide-standard@2025-12.csv").write_text(
        FIDE_LIST, encoding="utf-8"
    )
    return inbox


def resources(inbox: Path, lake: Path) -> dict:
    return {"paths": PipelinePaths(inbox=str(inbox), lake=str(lake))}


def test_ingest_assets_write_games_and_quarantine(tmp_path: Path) -> None:
    inbox, lake = make_inbox(tmp_path), tmp_path / "lake"
    result = dg.materialize([*INGEST_ASSETS, *INGEST_CHECKS], resources=resources(inbox, lake))
    assert result.success
    assert table_partitions(lake, tables.GAMES) == ["2026-01", "2026-02"]
    games = read_table(lake, tables.GAMES).collect()
    assert sorted(games["game_id"].to_list()) == ["g1", "g4", "g5", "t1", "t2", "t3"]
    assert games["source_file"].is_not_null().all()
    quarantine = read_table(lake, tables.QUARANTINE).collect()
    reasons = dict(zip(quarantine["record"], quarantine["reason"], strict=True))
    assert set(reasons) == {"g2", "g3"}
    assert "2-0" in reasons["g2"] and "unknown" in reasons["g3"]
    assert quarantine.filter(pl.col("record") == "g3")["line"].to_list() == [4]
    metadata = result.asset_materializations_for_node("games")[0].metadata
    assert metadata["dagster/row_count"].value == 6
    assert metadata["quarantined"].value == 2
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {"games_have_unique_ids": True, "games_are_classified": True}


def test_period_assets_publish_then_publish_nothing_new(tmp_path: Path) -> None:
    inbox, lake = make_inbox(tmp_path), tmp_path / "lake"
    res = resources(inbox, lake)
    assert dg.materialize([*INGEST_ASSETS], resources=res).success
    first = materialize_period(PERIOD_ASSETS, resources=res, partition_key="2026-01-01")
    assert first.success
    assert all(e.passed for e in first.get_asset_check_evaluations())
    assert {"fide-standard", "site-elo", "site-blitz"} <= set(publish.list_names(lake))
    fide = publish.read_list(lake, "fide-standard", "2026-01")
    ratings = dict(zip(fide["player_id"], fide["rating"], strict=True))
    # f1 (K 20) beats 1900 (PD .36) and draws 1900 (PD .36): 20 x (0.64 + 0.14) = 15.6 -> +16
    assert ratings["f1"] == 1816
    assert ratings["f2"] == 1884
    again = materialize_period(PERIOD_ASSETS, resources=res, partition_key="2026-01-01")
    assert again.success
    assert publish.latest_version(lake, "fide-standard", "2026-01") == 1
    second = materialize_period(PERIOD_ASSETS, resources=res, partition_key="2026-02-01")
    assert second.success
    site = publish.read_list(lake, "site-elo", "2026-02")
    assert "bot-1" not in site["player_id"].to_list()  # bots never get list rows
    assert set(site["player_id"].to_list()) == {"u-a", "u-b"}


def test_blocking_check_stops_publication(tmp_path: Path, monkeypatch) -> None:
    inbox, lake = make_inbox(tmp_path), tmp_path / "lake"
    res = resources(inbox, lake)
    assert dg.materialize([*INGEST_ASSETS], resources=res).success
    # a floor above every rating makes the blocking check fail: nothing may be published
    monkeypatch.setattr(
        federation,
        "rules_for_period",
        lambda period, kind="standard": replace(FIDE_RULES, floor=5000),
    )
    result = materialize_period(
        PERIOD_ASSETS,
        resources=res,
        partition_key="2026-01-01",
        raise_on_error=False,
    )
    failed = {e.check_name for e in result.get_asset_check_evaluations() if not e.passed}
    assert failed == {"fide_floor_respected"}
    assert "fide-standard" not in publish.list_names(lake)
    assert "site-elo" in publish.list_names(lake)  # other systems are not blocked


def test_a_table_write_that_fails_fails_its_ratings_step(tmp_path: Path, monkeypatch) -> None:
    """The site history is written batch by batch while the period is rated: a write that
    fails fails the step, nothing of that system is published or left staged, and the other
    systems go on."""
    from assets import systems

    inbox, lake = make_inbox(tmp_path), tmp_path / "lake"
    res = resources(inbox, lake)
    assert dg.materialize([*INGEST_ASSETS], resources=res).success
    original = systems._RangeWriter.sink

    def failing(self, table: str, period: str, rows: pl.DataFrame) -> None:  # noqa: ANN001
        if table == "history/site" and rows.height:
            raise OSError("disk full")
        original(self, table, period, rows)

    monkeypatch.setattr(systems._RangeWriter, "sink", failing)
    result = materialize_period(
        PERIOD_ASSETS, resources=res, partition_key="2026-01-01", raise_on_error=False
    )
    failures = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert [e.step_key for e in failures] == ["site_ratings"]
    assert "disk full" in str(failures[0].step_failure_data.error)
    assert "site-elo" not in publish.list_names(lake)
    assert "fide-standard" in publish.list_names(lake)
    assert not [p for p in lake.rglob(".*.tmp-*") if ".dagster" not in p.parts]


def test_moderation_decision_for_a_missing_game_is_quarantined_and_counted(
    tmp_path: Path,
) -> None:
    inbox, lake = make_inbox(tmp_path), tmp_path / "lake"
    (inbox / "platform" / "moderation").mkdir()
    (inbox / "platform" / "moderation" / "mod.csv").write_text(
        "game_id,decided_at,decision,reason\n"
        "g1,2026-02-10T09:00:00Z,annul,engine use\n"  # 2
        "g404,2026-02-10T09:00:00Z,annul,typo\n"  # 3: no such game
        "g2,2026-02-10T09:00:00Z,annul,engine use\n",  # 4: quarantined as a game, so no game
        encoding="utf-8",
    )
    result = dg.materialize([*INGEST_ASSETS, *INGEST_CHECKS], resources=resources(inbox, lake))
    assert result.success
    decisions = read_table(lake, tables.MODERATION).collect()
    assert decisions["game_id"].to_list() == ["g1"]
    quarantine = read_table(lake, tables.QUARANTINE).collect()
    mod = quarantine.filter(pl.col("source") == "moderation").sort("line")
    assert mod.select("source_file", "line", "record", "value", "reason").rows() == [
        ("platform/moderation/mod.csv", 3, "g404", "g404", "no game with this id"),
        ("platform/moderation/mod.csv", 4, "g2", "g2", "no game with this id"),
    ]
    metadata = result.asset_materializations_for_node("moderation_decisions")[0].metadata
    assert metadata["quarantined"].value == 2
    summary = read_table(lake, tables.INGEST_SUMMARY).collect()
    row = summary.filter(pl.col("source_file") == "platform/moderation/mod.csv").row(0, named=True)
    assert (row["ingested"], row["quarantined"]) == (1, 2)


def test_bot_with_an_unreadable_rating_stays_a_bot_and_is_listed_nowhere(tmp_path: Path) -> None:
    inbox, lake = make_inbox(tmp_path), tmp_path / "lake"
    (inbox / "players.csv").write_text(
        PLAYERS.replace("bot-1,Botty,true,1500,false,,", "bot-1,Botty,YES,abc,no,,"),
        encoding="utf-8",
    )
    res = resources(inbox, lake)
    assert dg.materialize([*INGEST_ASSETS, *INGEST_CHECKS], resources=res).success
    players = read_table(lake, tables.PLAYERS).collect()
    bot = players.filter(pl.col("player_id") == "bot-1").row(0, named=True)
    assert (bot["name"], bot["is_bot"], bot["bot_rating"]) == ("Botty", True, None)
    quarantine = read_table(lake, tables.QUARANTINE).collect()
    cell = quarantine.filter(pl.col("source") == "players").row(0, named=True)
    assert (cell["line"], cell["record"], cell["value"]) == (4, "bot-1", "abc")
    assert cell["reason"].startswith("column bot_rating: 'abc' is not a whole number")
    # g4 (u-a against the bot) is kept in the games table, and not rated
    assert "g4" in read_table(lake, tables.GAMES).collect()["game_id"].to_list()
    for period in ("2026-01-01", "2026-02-01"):
        run = materialize_period(PERIOD_ASSETS, resources=res, partition_key=period)
        assert run.success
        assert all(e.passed for e in run.get_asset_check_evaluations())
    excluded = read_table(lake, tables.excluded("site")).collect()
    assert excluded.filter(pl.col("game_id") == "g4")["reason"].to_list() == [
        "bot without a fixed rating"
    ]
    site = publish.read_list(lake, "site-elo", "2026-02")
    assert set(site["player_id"].to_list()) == {"u-a", "u-b"}
    assert "site-bots" not in publish.list_names(lake)


@pytest.fixture
def fide_floor_rule():
    """Set the rule of the FIDE floor check (the asset evaluates `FIDE.checks`) for one test."""
    checks = federation.FIDE.checks
    assert isinstance(checks, list)  # the spec's checks, swapped in place for one test
    index = [c.name for c in checks].index("fide_floor_respected")
    original = checks[index]

    def set_rule(bad_rows) -> None:
        checks[index] = replace(original, bad_rows=bad_rows)

    yield set_rule
    checks[index] = original


def test_a_check_failing_in_a_later_period_publishes_the_periods_before_it(
    tmp_path: Path, fide_floor_rule
) -> None:
    """One run rates 2026-01 and 2026-02 in one step; the FIDE floor check fails in 2026-02
    only: FIDE publishes 2026-01 and not 2026-02, the other systems publish both, and the
    summary names the check and the period."""
    from pipelines.cli.run import run_pipeline

    inbox, lake = make_inbox(tmp_path), tmp_path / "lake"
    fide_floor_rule(lambda check: int(check.period == "2026-02"))
    outcome = run_pipeline(inbox, lake)
    assert outcome.recomputed == ["2026-01", "2026-02"]
    assert publish.list_periods(lake, "fide-standard") == ["2026-01"]
    assert publish.list_periods(lake, "site-elo") == ["2026-01", "2026-02"]
    assert outcome.failures == [
        "fide lists published up to 2026-01 only: check fide_floor_respected failed in 2026-02"
    ]
    assert not read_table(lake, "run_inputs").collect().height  # the next run recomputes


def test_a_check_failing_in_the_first_period_of_the_range_publishes_none_of_it(
    tmp_path: Path, fide_floor_rule
) -> None:
    from pipelines.cli.run import run_pipeline

    inbox, lake = make_inbox(tmp_path), tmp_path / "lake"
    fide_floor_rule(lambda check: 1)
    outcome = run_pipeline(inbox, lake)
    assert "fide-standard" not in publish.list_names(lake)
    assert publish.list_periods(lake, "site-elo") == ["2026-01", "2026-02"]
    assert outcome.failures == [
        "fide lists not published from 2026-01 on: check fide_floor_respected failed in 2026-01"
    ]
