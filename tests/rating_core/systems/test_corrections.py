"""A rating officer's corrections (`federation/corrections.csv`, issue 11 item 5): the reader's
quarantine, and the corrected lists of a period and the period after it.

Every expected rating is computed by hand from RULES §3 (the FIDE table gives PD 0.50 for
D 0-3, 0.53 for D 18-25 and 0.56 for D 40-46).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest

from rating_core.ingest.corrections import read_corrections
from rating_core.schemas import GAMES_SCHEMA, STARTING_LIST_SCHEMA, conform
from rating_core.systems.corrections import correction_causes, correction_quarantine
from rating_core.systems.federation import fide_lists_periods, ukd_lists_periods

HEADER = "list,period,player_id,field,value,reason\n"


def corrections(tmp_path: Path, *rows: str) -> pl.DataFrame:
    path = tmp_path / "corrections.csv"
    path.write_text(HEADER + "".join(f"{r}\n" for r in rows), encoding="utf-8")
    result = read_corrections(path, "federation/corrections.csv")
    assert not result.quarantine.height, result.quarantine.to_dicts()
    return result.rows


def game(gid: str, period: str, white: str, black: str, score: float, kind: str = "standard"):
    year, month = int(period[:4]), int(period[5:])
    return {
        "game_id": gid,
        "tournament_id": f"t-{period}",
        "source": "federation",
        "played_at": dt.datetime(year, month, 10, 12, tzinfo=dt.UTC),
        "period": period,
        "white_id": white,
        "black_id": black,
        "white_score": score,
        "rating_list": kind,
        "status": "finished",
        "rated": True,
    }


# a beats b in 2026-03; in 2026-04 a beats b again
GAMES = conform(
    pl.DataFrame([game("g1", "2026-03", "a", "b", 1.0), game("g2", "2026-04", "a", "b", 1.0)]),
    GAMES_SCHEMA,
)
FIDE_START = conform(
    pl.DataFrame(
        {
            "list": ["fide-standard"] * 2,
            "period": ["2026-02"] * 2,
            "player_id": ["a", "b"],
            "rating": [1800, 1800],
            "rated_games": [50, 50],
            "peak_rating": [1900, 1900],
        }
    ),
    STARTING_LIST_SCHEMA,
)
PERIODS = ["2026-03", "2026-04"]


def fide(fixes: pl.DataFrame | None, players: pl.DataFrame | None = None):
    return dict(fide_lists_periods(GAMES, FIDE_START, {}, players, PERIODS, fixes))


def row(out, period: str, player: str, list_name: str = "fide-standard") -> dict:
    rows = out[period].list_rows.filter(
        (pl.col("list") == list_name) & (pl.col("player_id") == player)
    )
    assert rows.height == 1
    return rows.row(0, named=True)


def log(out, period: str, system: str = "fide") -> pl.DataFrame:
    return out[period].explanations[f"history/{system}-corrections"]


def test_without_corrections_the_lists_are_the_rules_own() -> None:
    out = fide(None)
    # 2026-03: D 0, PD 0.50; a +0.50 x K 20 = +10
    assert row(out, "2026-03", "a")["rating"] == 1810
    assert row(out, "2026-03", "b")["rating"] == 1790
    # 2026-04: D 20, PD 0.53; a +0.47 x 20 = 9.4 -> 9
    assert row(out, "2026-04", "a")["rating"] == 1819
    assert not log(out, "2026-03").height


def test_a_rating_correction_holds_on_its_list_and_the_next_period_starts_from_it(
    tmp_path: Path,
) -> None:
    fixes = corrections(tmp_path, "fide-standard,2026-03,a,rating,1830,arbiter's report")
    out = fide(fixes)
    a = row(out, "2026-03", "a")
    assert (a["rating"], a["change"], a["rating_exact"], a["change_exact"]) == (1830, 30, 1830, 30)
    assert a["peak_rating"] == 1900  # the start peak is higher than the corrected rating
    assert row(out, "2026-03", "b")["rating"] == 1790  # an opponent is not recomputed
    state = out["2026-03"].states["state/fide-standard"]
    assert state.filter(pl.col("player_id") == "a")["rating"].item() == 1830
    # 2026-04 from 1830 against 1790: D 40, PD 0.56; a +0.44 x 20 = 8.8 -> 9, b -8.8 -> -9
    a4 = row(out, "2026-04", "a")
    assert (a4["rating"], a4["change"]) == (1839, 9)
    assert row(out, "2026-04", "b")["rating"] == 1781
    entry = log(out, "2026-03").row(0, named=True)
    assert entry["applied"] and (entry["old"], entry["new"]) == ("1810", "1830")
    assert correction_causes(log(out, "2026-03"))["cause"].to_list() == [
        "correction: rating 1810 -> 1830 (arbiter's report)"
    ]
    assert not log(out, "2026-04").height


def test_a_k_correction_recomputes_that_periods_change(tmp_path: Path) -> None:
    fixes = corrections(tmp_path, "fide-standard,2026-03,a,k,40,junior since 2025")
    a = row(fide(fixes), "2026-03", "a")
    # +0.50 x 40 = +20
    assert (a["rating"], a["change"], a["k"], a["k_reason"]) == (1820, 20, 40, "correction")


def test_rated_games_and_peak_corrections_change_the_next_periods_k(tmp_path: Path) -> None:
    few = fide(corrections(tmp_path, "fide-standard,2026-03,a,rated_games,10,miscounted"))
    assert row(few, "2026-03", "a")["rated_games"] == 10
    assert row(few, "2026-03", "a")["rating"] == 1810
    # 2026-04: 11 career games before it, K 40: +0.47 x 40 = 18.8 -> 19
    assert row(few, "2026-04", "a")["rating"] == 1829
    top = fide(corrections(tmp_path, "fide-standard,2026-03,a,peak_rating,2450,old list"))
    assert row(top, "2026-03", "a")["peak_rating"] == 2450
    # 2026-04: peak >= 2400, K 10: +0.47 x 10 = 4.7 -> 5
    assert row(top, "2026-04", "a")["rating"] == 1815


def test_a_birth_date_correction_makes_a_junior_from_that_period(tmp_path: Path) -> None:
    fixes = corrections(tmp_path, "fide-standard,2026-03,a,birth_date,2010-05-01,passport")
    registry = pl.DataFrame({"player_id": ["a", "b"], "birth_year": [1990, 1990]})
    out = fide(fixes, registry)
    # junior (2010 + 18 >= 2026, rating < 2300): K 40 in 2026-03, +0.50 x 40 = +20
    assert row(out, "2026-03", "a")["rating"] == 1820
    # 2026-04 from 1820 against 1790: D 30, PD 0.54; +0.46 x 40 = 18.4 -> 18
    assert row(out, "2026-04", "a")["rating"] == 1838
    entry = log(out, "2026-03").row(0, named=True)
    assert entry["applied"] and (entry["old"], entry["new"]) == ("1990", "2010-05-01")
    # a later range starts from the birth years applied before it
    later = dict(
        fide_lists_periods(
            GAMES,
            FIDE_START,
            {"state/fide-standard": out["2026-03"].states["state/fide-standard"]},
            registry,
            ["2026-04"],
            fixes,
            pl.DataFrame({"player_id": ["a"], "birth_year": [2010]}),
        )
    )
    assert row(later, "2026-04", "a")["rating"] == 1838


def test_corrections_that_cannot_apply_are_logged_with_a_reason(tmp_path: Path) -> None:
    fixes = corrections(
        tmp_path,
        "fide-standard,2026-03,zz,rating,1900,wrong id",
        "fide-standard,2026-03,b,peak_rating,1700,too low",
        "fide-blitz,2026-03,a,rating,1900,no blitz",
        "fide-standard,2026-03,zz,birth_date,2010,unknown",
        "fide-standard,2026-03,a,rating,1830,good",
    )
    out = fide(fixes)
    reasons = {
        r["source_line"]: r["not_applied"]
        for r in pl.concat([log(out, p) for p in PERIODS]).iter_rows(named=True)
    }
    assert reasons[2] == "player zz is not on the fide-standard list of 2026-03"
    assert reasons[3] == "peak_rating 1700 is below the player's rating 1790 on the list"
    assert reasons[4] == "no fide-blitz list was computed for 2026-03"
    assert reasons[5] == "player zz is neither on nor playing on the fide-standard list of 2026-03"
    assert reasons[6] is None  # the good row still applies
    assert row(out, "2026-03", "a")["rating"] == 1830


def test_a_k_for_a_player_without_games_is_not_applied(tmp_path: Path) -> None:
    games = GAMES.filter(pl.col("period") == "2026-03")
    fixes = corrections(tmp_path, "fide-standard,2026-04,b,k,40,no games")
    out = dict(fide_lists_periods(games, FIDE_START, {}, None, PERIODS, fixes))
    entry = log(out, "2026-04").row(0, named=True)
    assert not entry["applied"]
    assert entry["not_applied"] == (
        "the player has no rated game on fide-standard in 2026-04: a K changes nothing"
    )
    assert row(out, "2026-04", "b")["rating"] == 1790


def test_the_quarantine_names_every_correction_not_applied(tmp_path: Path) -> None:
    fixes = corrections(
        tmp_path,
        "fide-standard,2026-03,zz,rating,1900,wrong id",
        "fide-standard,2030-01,a,rating,1900,not yet",
        "fide-standard,2026-03,a,rating,1830,good",
    )
    out = fide(fixes)
    logs = pl.concat([log(out, p).with_columns(period=pl.lit(p)) for p in PERIODS])
    quarantine = correction_quarantine(fixes, logs)
    assert quarantine.select("line", "record", "value").rows() == [
        (2, "zz", "1900"),
        (3, "a", "1900"),
    ]
    assert quarantine["reason"].to_list() == [
        "player zz is not on the fide-standard list of 2026-03",
        "no fide-standard list has been computed for 2030-01 (outside the periods with games): "
        "the correction applies once that period is rated",
    ]
    assert set(quarantine["source_file"]) == {"federation/corrections.csv"}


def test_a_ukd_rating_correction_carries_to_the_next_period(tmp_path: Path) -> None:
    start = FIDE_START.with_columns(
        pl.lit("ukd-standard").alias("list"), pl.lit(None, dtype=pl.Int32).alias("rated_games")
    )
    only_march = GAMES.filter(pl.col("period") == "2026-03")
    fixes = corrections(tmp_path, "ukd-standard,2026-03,a,rating,1850,arbiter")
    out = dict(ukd_lists_periods(only_march, start, {}, PERIODS, fixes))
    a = row(out, "2026-03", "a", "ukd-standard")
    assert (a["rating"], a["change"], a["rating_exact"]) == (1850, 50, 1850.0)
    # no game in 2026-04: the list keeps the corrected rating, change 0
    a4 = row(out, "2026-04", "a", "ukd-standard")
    assert (a4["rating"], a4["change"]) == (1850, 0)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("fide-classic,2026-03,a,rating,1830,x", "list 'fide-classic' is not one of fide-standard"),
        ("fide-standard,2026-3,a,rating,1830,x", "period '2026-3' is not a month YYYY-MM"),
        ("fide-standard,2026-03,,rating,1830,x", "the player id is empty"),
        ("fide-standard,2026-03,a,elo,1830,x", "field 'elo' is not one of rating, rated_games"),
        ("ukd-rapid,2026-03,a,k,20,x", "a ukd-rapid list has no k (UKD lists accept rating only)"),
        ("fide-standard,2026-03,a,rating,18x0,x", "rating '18x0' is not a whole number from 1400"),
        ("fide-standard,2026-03,a,rating,1399,x", "rating '1399' is not a whole number from 1400"),
        ("ukd-blitz,2026-03,a,rating,999,x", "rating '999' is not a whole number from 1000"),
        ("fide-standard,2026-03,a,k,30,x", "k '30' is not a FIDE K (10, 20, 40)"),
        ("fide-standard,2026-03,a,rated_games,-1,x", "rated_games '-1' is not a whole number"),
        (
            "fide-standard,2026-03,a,birth_date,2010-02-30,x",
            "birth_date '2010-02-30' is not a date",
        ),
        ("fide-standard,2026-03,a,birth_date,2027,x", "birth_date '2027' is after the period"),
        ("fide-standard,2026-03,a,rating,1830,", "the reason is empty: a correction must say why"),
    ],
)
def test_a_bad_row_is_quarantined_with_its_line_value_and_reason(
    tmp_path: Path, line: str, reason: str
) -> None:
    path = tmp_path / "corrections.csv"
    good = "fide-standard,2026-03,b,rating,1700,the good row around it"
    path.write_text(HEADER + f"{good}\n{line}\n{good.replace(',b,', ',c,')}\n", encoding="utf-8")
    result = read_corrections(path, "federation/corrections.csv")
    assert result.rows["player_id"].to_list() == ["b", "c"]
    (bad,) = result.quarantine.iter_rows(named=True)
    assert bad["source_file"] == "federation/corrections.csv" and bad["line"] == 3
    assert bad["reason"].startswith(reason), bad["reason"]
    assert bad["value"] is not None or "empty" in reason


def test_a_second_correction_of_the_same_value_is_quarantined(tmp_path: Path) -> None:
    path = tmp_path / "corrections.csv"
    path.write_text(
        HEADER
        + "fide-standard,2026-03,a,rating,1830,first\n"
        + "fide-standard,2026-03,a,rated_games,40,another field: fine\n"
        + "fide-standard,2026-03,a,rating,1840,second\n",
        encoding="utf-8",
    )
    result = read_corrections(path, "federation/corrections.csv")
    assert result.rows["value"].to_list() == ["1830", "40"]
    assert result.quarantine.select("line", "value", "reason").rows() == [
        (
            4,
            "1840",
            "a second correction of rating for a on fide-standard 2026-03 (first on line 2)",
        )
    ]


def test_the_inbox_reads_corrections_as_their_own_kind_not_as_games(tmp_path: Path) -> None:
    from rating_core.ingest.inbox import inbox_files, ingest_corrections, ingest_games

    federation = tmp_path / "federation"
    federation.mkdir()
    (federation / "corrections.csv").write_text(
        HEADER + "fide-standard,2026-03,a,rating,1830,arbiter\n", encoding="utf-8"
    )
    (federation / "open-2026-03.csv").write_text(
        "game_id,tournament_id,round,played_on,white_id,black_id,result,rating_list\n"
        "g1,open,1,2026-03-10,a,b,1-0,standard\n",
        encoding="utf-8",
    )
    games = ingest_games(tmp_path)
    assert games.rows["game_id"].to_list() == ["g1"] and not games.quarantine.height
    assert games.files["source_file"].to_list() == ["federation/open-2026-03.csv"]
    fixes = ingest_corrections(tmp_path)
    assert fixes.rows.select("list", "player_id", "number").rows() == [("fide-standard", "a", 1830)]
    assert fixes.files.select("kind", "source_file").rows() == [
        ("corrections", "federation/corrections.csv")
    ]
    assert federation / "corrections.csv" in inbox_files(tmp_path)  # the sensor sees it
    assert not ingest_corrections(tmp_path / "elsewhere").rows.height  # no file: no corrections
