"""Player data, flags and rank on federation lists (issue 32 items 1 and 3): the registry wins
over the latest starting list, which wins over the tournament files, each difference counted;
FIDE's `w`, `i` and `wi` flags; competition ranking of the active players."""

from __future__ import annotations

import datetime as dt

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from rating_core.schemas import (
    GAMES_SCHEMA,
    PLAYERS_SCHEMA,
    STARTING_LIST_SCHEMA,
    conform,
)
from rating_core.systems.federation import club_lists_periods, fide_lists_periods
from rating_core.systems.player_data import (
    conflict_note,
    conflicts,
    merged_data,
    registry_data,
    starting_list_data,
    tournament_data,
    with_player_data,
)

REGISTRY = conform(
    pl.DataFrame(
        {
            "player_id": ["a", "b", "bot"],
            "federation": ["TUR", None, None],
            "sex": ["W", None, None],
            "birth_year": [1990, None, None],
            "title": ["WGM", None, "BOT"],
        }
    ),
    PLAYERS_SCHEMA,
)


def starting(period: str, ids: list[str], **columns: list) -> pl.DataFrame:
    n = len(ids)
    base = {
        "list": ["fide-standard"] * n,
        "period": [period] * n,
        "player_id": ids,
        "rating": columns.pop("rating", [1800] * n),
        "rated_games": [50] * n,
        "peak_rating": [1900] * n,
    }
    return conform(pl.DataFrame({**base, **columns}), STARTING_LIST_SCHEMA)


LISTS = pl.concat(
    [
        starting("2026-01", ["a", "b"], federation=["GEO", "AZE"], title=[None, "FM"]),
        starting("2026-02", ["b"], federation=["ARM"], birth_year=[2001]),
    ]
)
TRF = pl.DataFrame(
    {
        "player_id": ["a", "b", "c"],
        "federation": ["TUR", "ARM", "KAZ"],
        "sex": ["w", "m", "m"],
        "birth_year": [1990, 2002, 1970],
        "title": ["WGM", "CM", "IM"],
    }
)


def by_id(frame: pl.DataFrame) -> dict[str, dict]:
    return {r["player_id"]: r for r in frame.to_dicts()}


def test_the_registry_wins_then_the_latest_list_then_the_tournament_file() -> None:
    sources = [registry_data(REGISTRY), starting_list_data(LISTS, "2026-03"), tournament_data(TRF)]
    data = by_id(merged_data(sources))
    assert data["a"] | {} == {
        "player_id": "a",
        "federation": "TUR",  # the registry's, not the list's GEO
        "title": "WGM",
        "w_title": "WGM",  # FIDE prints a women's title in both columns
        "o_title": None,
        "foa_title": None,
        "sex": "F",  # the registry's W is FIDE's F
        "birth_year": 1990,
    }
    # b: the newest list's ARM over the older AZE, the older list's FM (the newest gives none)
    # over the TRF's CM, the list's birth year 2001 over the TRF's 2002
    b = data["b"]
    assert (b["federation"], b["title"], b["birth_year"], b["sex"]) == ("ARM", "FM", 2001, "M")
    assert data["c"]["federation"] == "KAZ"  # only the tournament file knows c
    assert data["bot"]["title"] is None  # a bot's BOT is no federation title


def test_a_list_after_the_period_is_not_yet_in_force() -> None:
    data = by_id(starting_list_data(LISTS, "2026-02"))
    assert data["b"]["federation"] == "AZE"


def test_every_difference_between_sources_is_counted_in_a_note() -> None:
    sources = [registry_data(REGISTRY), starting_list_data(LISTS), tournament_data(TRF)]
    found = conflicts(sources)
    assert found.rows() == [
        ("a", "federation", "TUR", "registry", "GEO", "starting list"),
        ("b", "birth_year", "2001", "starting list", "2002", "tournament file"),
        ("b", "title", "FM", "starting list", "CM", "tournament file"),
    ]
    (note,) = conflict_note(found)
    assert note.startswith("player data: 3 values differ between sources; the registry's is kept")
    assert "a federation TUR (registry) over GEO (starting list)" in note
    assert conflict_note(found.clear()) == ()


def rows(ratings: list[int], flags: list[str | None]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "player_id": [f"p{i}" for i in range(len(ratings))],
            "rating": ratings,
            "flag": flags,
        },
        schema={"player_id": pl.String, "rating": pl.Int32, "flag": pl.String},
    )


def test_rank_is_competition_ranking_of_the_active_players() -> None:
    data = pl.DataFrame(
        {"player_id": ["p1", "p3"], "sex": ["F", "F"]},
        schema={"player_id": pl.String, "sex": pl.String},
    )
    listed = with_player_data(
        rows([2500, 2400, 2400, 2600, 2300], [None, None, None, "i", None]), data, fide=True
    )
    assert listed.select("player_id", "rank", "flag").rows() == [
        ("p0", 1, None),
        ("p1", 2, "w"),
        ("p2", 2, None),
        ("p3", None, "wi"),  # inactive: not ranked, though the highest
        ("p4", 4, None),
    ]
    club = with_player_data(rows([1500, 1600], ["i", None]), data, fide=False)
    assert club.get_column("rank").to_list() == [2, 1]  # no inactivity rule off FIDE


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1400, 2900), min_size=1, max_size=30))
def test_rank_counts_the_players_rated_higher(ratings: list[int]) -> None:
    listed = with_player_data(
        rows(ratings, [None] * len(ratings)),
        pl.DataFrame(schema={"player_id": pl.String}),
        fide=True,
    )
    for rating, rank in listed.select("rating", "rank").rows():
        assert rank == 1 + sum(1 for r in ratings if r > rating)


def game(gid: str, period: str, white: str, black: str) -> dict:
    year, month = int(period[:4]), int(period[5:])
    return {
        "game_id": gid,
        "tournament_id": f"t-{period}",
        "source": "federation",
        "played_at": dt.datetime(year, month, 10, 12, tzinfo=dt.UTC),
        "period": period,
        "white_id": white,
        "black_id": black,
        "white_score": 0.5,
        "rating_list": "standard",
        "status": "finished",
        "rated": True,
    }


def test_an_inactive_flag_from_the_starting_list_stays_until_a_rated_game_clears_it() -> None:
    start = starting(
        "2026-02",
        ["idle", "back", "opp", "fresh"],
        rating=[1800, 1800, 1800, 1800],
        flag=["i", "wi", None, None],
        sex=["M", "F", "M", "F"],
    )
    games = conform(pl.DataFrame([game("g1", "2026-04", "back", "opp")]), GAMES_SCHEMA)
    out = dict(fide_lists_periods(games, start, {}, None, ["2026-03", "2026-04"]))

    def flags(period: str) -> dict[str, str | None]:
        listed = out[period].list_rows.filter(pl.col("list") == "fide-standard")
        return dict(listed.select("player_id", "flag").rows())

    assert flags("2026-03") == {"idle": "i", "back": "wi", "opp": None, "fresh": "w"}
    assert flags("2026-04") == {"idle": "i", "back": "w", "opp": None, "fresh": "w"}


def test_club_lists_carry_the_player_data() -> None:
    games = conform(
        pl.DataFrame([game("g1", "2026-03", "a", "b") | {"source": "club", "club_id": "c1"}]),
        GAMES_SCHEMA,
    )
    out = dict(club_lists_periods(games, None, REGISTRY, ["2026-03"], LISTS))
    listed = by_id(out["2026-03"].list_rows)
    assert (listed["a"]["federation"], listed["a"]["sex"], listed["b"]["federation"]) == (
        "TUR",
        "F",
        "ARM",
    )
    assert sorted(listed[p]["rank"] for p in ("a", "b")) == [1, 1]  # a draw: equal ratings
