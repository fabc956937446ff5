"""Site ratings (RULES §2): worked examples, each exclusion rule alone, K switch, lists, chaining."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rating_core.schemas import CATEGORIES, GAMES_SCHEMA, PLAYERS_SCHEMA, conform
from rating_core.systems.site import classification as site_classification
from rating_core.systems.site import kernel as site_kernel
from rating_core.systems.site import rules as site_rules
from rating_core.systems.site.calculator import site_calculator
from rating_core.systems.site.lists import site_lists, site_period_lists
from rating_core.systems.site.replay import SiteReplayResult, site_replay
from rating_core.systems.site.rules import SITE_RULES, SITE_STATE_SCHEMA
from tests.support.scalars import as_number

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def game(i: int, white: str, black: str, score: float | None, **kw: Any) -> dict[str, Any]:
    """A rated, finished live game row; keyword arguments override any column."""
    row: dict[str, Any] = {
        "game_id": f"g{i:04d}",
        "source": "platform",
        "played_at": T0 + timedelta(minutes=i),
        "period": "2024-01",
        "white_id": white,
        "black_id": black,
        "white_score": score,
        "category": "blitz",
        "rated": True,
        "status": "finished",
        "plies": 40,
        "termination": "normal",
        "kind": "live",
        "otb_confirmed": None,
        "white_is_bot": False,
        "black_is_bot": False,
    }
    row.update(kw)
    return row


def games(*rows: dict[str, Any]) -> pl.DataFrame:
    return conform(pl.DataFrame(list(rows)), GAMES_SCHEMA)


def registry(*rows: dict[str, Any]) -> pl.DataFrame:
    return conform(pl.DataFrame(list(rows)), PLAYERS_SCHEMA)


def state(rows: list[tuple[str, str, float, int]]) -> pl.DataFrame:
    return pl.DataFrame(
        [(p, n, r, g, "2023-12") for p, n, r, g in rows],
        schema=SITE_STATE_SCHEMA,
        orient="row",
    )


def value(result: SiteReplayResult, player: str, number: str) -> float:
    row = result.state.filter((pl.col("player_id") == player) & (pl.col("number") == number))
    assert row.height == 1, f"{player} {number} missing from state"
    return row["rating"][0]


BOT = registry({"player_id": "bot", "is_bot": True, "bot_rating": 1500})


# --- worked examples ------------------------------------------------------------------------


def test_blitz_new_players_category_16_site_12() -> None:
    r = site_replay(games(game(1, "a", "b", 1.0)))
    assert value(r, "a", "site-blitz") == pytest.approx(1516.0)
    assert value(r, "b", "site-blitz") == pytest.approx(1484.0)
    assert value(r, "a", "site-elo") == pytest.approx(1512.0)
    assert value(r, "b", "site-elo") == pytest.approx(1488.0)
    h = r.history.filter(pl.col("player_id") == "a").sort("number")
    assert h["number"].to_list() == ["site-blitz", "site-elo"]
    assert h["weight"].to_list() == [1.0, 0.75]
    assert h["k"].to_list() == [32.0, 32.0]
    assert h["change"].to_list() == pytest.approx([16.0, 12.0])


def test_bullet_site_elo_8() -> None:
    r = site_replay(games(game(1, "a", "b", 1.0, category="bullet")))
    assert value(r, "a", "site-elo") == pytest.approx(1508.0)
    assert value(r, "b", "site-elo") == pytest.approx(1492.0)
    assert value(r, "a", "site-bullet") == pytest.approx(1516.0)


def test_bot_rated_1500_site_elo_plus_8_and_bot_unchanged() -> None:
    r = site_replay(games(game(1, "a", "bot", 1.0, category="bots")), BOT)
    assert value(r, "a", "site-elo") == pytest.approx(1508.0)
    assert value(r, "a", "site-bots") == pytest.approx(1516.0)
    assert "bot" not in r.state["player_id"].to_list()
    assert "bot" not in r.history["player_id"].to_list()
    assert r.history["opponent_rating"].to_list() == [1500.0, 1500.0]


def test_bot_game_uses_bots_category_whatever_the_clock() -> None:
    r = site_replay(games(game(1, "a", "bot", 1.0, category="rapid")), BOT)
    assert sorted(r.state["number"].to_list()) == ["site-bots", "site-elo"]


def test_bot_known_by_pgn_title_uses_its_elo_tag() -> None:
    g = games(game(1, "a", "stockfish", 0.0, category="bots", black_is_bot=True, black_elo=1900))
    r = site_replay(g)
    e = 1 / (1 + 10 ** ((1900 - 1500) / 400))
    assert value(r, "a", "site-elo") == pytest.approx(1500 + 32 * 0.5 * (0 - e))
    assert r.history["opponent_rating"][0] == 1900.0


def test_registry_bot_rating_wins_over_elo_tag() -> None:
    g = games(game(1, "bot", "a", 0.0, category="bots", white_is_bot=True, white_elo=2500))
    r = site_replay(g, BOT)
    assert value(r, "a", "site-elo") == pytest.approx(1508.0)


def test_floor_105_after_40_classical_games_loses_to_equal() -> None:
    s = state(
        [
            ("a", "site-classical", 105.0, 40),
            ("b", "site-classical", 105.0, 40),
            ("a", "site-elo", 105.0, 40),
            ("b", "site-elo", 105.0, 40),
        ]
    )
    r = site_replay(games(game(1, "a", "b", 0.0, category="classical")), state=s)
    assert value(r, "a", "site-classical") == 100.0
    assert value(r, "a", "site-elo") == 100.0
    row = r.history.filter((pl.col("player_id") == "a") & (pl.col("number") == "site-classical"))
    assert row["k"][0] == 20.0
    assert row["raw_change"][0] == pytest.approx(-10.0)
    assert row["change"][0] == pytest.approx(-5.0)
    assert value(r, "b", "site-classical") == pytest.approx(115.0)


# --- which games are rated ------------------------------------------------------------------


def _excluded_reason(g: pl.DataFrame, **kw: Any) -> str:
    r = site_replay(g, **kw)
    assert r.state.height == 0, "an excluded game must change nobody"
    assert r.history.height == 0
    assert r.excluded.height == 1
    return r.excluded["reason"][0]


def test_casual_game_is_not_rated() -> None:
    assert _excluded_reason(games(game(1, "a", "b", 1.0, rated=False))) == site_rules.R_CASUAL


def test_abort_by_plies() -> None:
    assert _excluded_reason(games(game(1, "a", "b", 1.0, plies=1))) == site_rules.R_FEW_PLIES


def test_two_plies_is_rated() -> None:
    r = site_replay(games(game(1, "a", "b", 0.0, plies=2, termination="timeout")))
    assert value(r, "a", "site-blitz") == pytest.approx(1484.0)


def test_abort_by_termination() -> None:
    g = games(game(1, "a", "b", 1.0, plies=30, termination="abort"))
    assert _excluded_reason(g) == site_rules.R_ABORT_TERMINATION


def test_aborted_status() -> None:
    assert _excluded_reason(games(game(1, "a", "b", 1.0, status="aborted"))) == site_rules.R_ABORTED


def test_unconfirmed_otb() -> None:
    g = games(game(1, "a", "b", 1.0, kind="otb", category="otb", otb_confirmed=False))
    assert _excluded_reason(g) == site_rules.R_OTB


def test_missing_otb_confirmed_counts_as_unconfirmed() -> None:
    g = games(game(1, "a", "b", 1.0, kind="otb", category="otb", otb_confirmed=None))
    assert _excluded_reason(g) == site_rules.R_OTB


def test_confirmed_otb_is_rated_with_weight_075() -> None:
    g = games(game(1, "a", "b", 1.0, kind="otb", category="otb", otb_confirmed=True))
    r = site_replay(g)
    assert value(r, "a", "site-otb") == pytest.approx(1516.0)
    assert value(r, "a", "site-elo") == pytest.approx(1512.0)


def test_annulled_by_moderation() -> None:
    g = games(game(1, "a", "b", 1.0))
    assert _excluded_reason(g, annulled={"g0001"}) == site_rules.R_MODERATION


def test_bot_no_move_before_move_10_annuls() -> None:
    g = games(game(1, "a", "bot", 1.0, category="bots", plies=17, termination="bot_no_move"))
    assert _excluded_reason(g, players=BOT) == site_rules.R_BOT_NO_MOVE


def test_bot_no_move_from_move_10_is_a_human_loss_whatever_the_record() -> None:
    # Recorded as a human win: the rule makes it a loss for the human.
    g = games(game(1, "a", "bot", 1.0, category="bots", plies=18, termination="bot_no_move"))
    r = site_replay(g, BOT)
    assert value(r, "a", "site-elo") == pytest.approx(1492.0)
    assert value(r, "a", "site-bots") == pytest.approx(1484.0)
    assert r.history["score"].to_list() == [0.0, 0.0]


def test_bot_no_move_human_black_loses() -> None:
    g = games(game(1, "bot", "a", 0.0, category="bots", plies=25, termination="bot_no_move"))
    r = site_replay(g, BOT)
    assert value(r, "a", "site-elo") == pytest.approx(1492.0)


@pytest.mark.parametrize("termination", [None, "normal"])
def test_a_game_against_a_bot_without_a_result_is_rejected(termination: str | None) -> None:
    # only the bot no-move rule decides a missing result; a missing termination is not it
    g = games(game(1, "a", "bot", None, category="bots", termination=termination))
    r = site_replay(g, BOT)
    assert r.rejected["reason"].to_list() == [site_rules.REJ_NO_RESULT]
    assert r.history.height == 0 and r.state.height == 0


@pytest.mark.parametrize("termination", ["timeout", "abandon"])
def test_bot_losing_on_time_or_abandon_is_rejected(termination: str) -> None:
    g = games(game(1, "bot", "a", 0.0, category="bots", termination=termination))
    r = site_replay(g, BOT)
    assert r.state.height == 0
    assert r.excluded.height == 0
    assert r.rejected["game_id"].to_list() == ["g0001"]
    assert r.rejected["reason"][0] == site_rules.REJ_BOT_LOST


@pytest.mark.parametrize(
    ("players", "bot_elo"),
    [
        (registry({"player_id": "bot", "is_bot": True, "bot_rating": None}), None),
        (None, None),  # a bot known only by its BOT title and no Elo tag
    ],
)
def test_bot_without_a_fixed_rating_is_excluded_not_rejected(
    players: pl.DataFrame | None, bot_elo: int | None
) -> None:
    # the game is kept (excluded with a reason, shown by `ratings history`), not quarantined,
    # and nobody is rated from it: the bot gets no list row, the human no change
    g = games(
        game(1, "a", "bot", 1.0, category="bots", black_is_bot=players is None, black_elo=bot_elo),
        game(2, "a", "b", 1.0),
    )
    r = site_replay(g, players)
    assert r.rejected.height == 0
    assert r.excluded.select("game_id", "reason").rows() == [("g0001", site_rules.R_BOT_RATING)]
    assert "bot" not in r.state["player_id"].to_list()
    assert r.history["game_id"].unique().to_list() == ["g0002"]
    assert value(r, "a", "site-elo") == pytest.approx(1512.0)


def test_bot_without_a_rating_losing_on_time_is_still_rejected_as_contradictory() -> None:
    players = registry({"player_id": "bot", "is_bot": True, "bot_rating": None})
    g = games(game(1, "bot", "a", 0.0, category="bots", termination="timeout"))
    r = site_replay(g, players)
    assert r.rejected["reason"].to_list() == [site_rules.REJ_BOT_LOST]
    assert r.excluded.height == 0


def test_ingest_split_rejects_the_rejected_frame_of_the_classification() -> None:
    players = registry({"player_id": "bot", "is_bot": True, "bot_rating": None})
    g = games(
        game(1, "bot", "a", 0.0, category="bots", termination="timeout"),
        game(2, "a", "b", 1.0),
        game(3, "a", "bot", 1.0, category="bots", termination="abandon"),
    )
    kept, rejected = site_classification.split_site_games(g, players)
    assert rejected["game_id"].to_list() == ["g0001", "g0003"]  # bots never lose so
    assert rejected.equals(site_classification.classify_site_games(g, players)[2])
    assert kept["game_id"].to_list() == ["g0002"]
    assert kept.row(0, named=True)["site_verdict"] == "rated"


def test_game_its_reader_kept_unrated_is_excluded_with_that_reason() -> None:
    # a chess variant or a set-up position: rated=false, but the reason is the reader's, not casual
    why = "variant 'Atomic' is not standard chess"
    g = games(
        game(1, "a", "b", 1.0, rated=False, unrated_reason=why),
        game(2, "a", "b", 1.0, rated=False),
        game(3, "a", "b", 1.0),
    )
    r = site_replay(g)
    assert r.excluded.select("game_id", "reason").rows() == [
        ("g0001", why),
        ("g0002", site_rules.R_CASUAL),
    ]
    assert r.history["game_id"].unique().to_list() == ["g0003"]
    # moderation is named first, as for every other exclusion
    r = site_replay(g, annulled={"g0001"})
    assert r.excluded["reason"][0] == site_rules.R_MODERATION


def test_unrated_reason_wins_even_when_rated_is_left_true() -> None:
    why = "starts from a set-up position (FEN)"
    r = site_replay(games(game(1, "a", "b", 1.0, unrated_reason=why)))
    assert r.state.height == 0
    assert r.excluded["reason"].to_list() == [why]


def test_human_losing_to_bot_on_time_is_rated() -> None:
    g = games(game(1, "bot", "a", 1.0, category="bots", termination="timeout"))
    r = site_replay(g, BOT)
    assert value(r, "a", "site-elo") == pytest.approx(1492.0)


def test_result_is_authoritative_over_termination() -> None:
    # White "lost on time" per termination but the recorded result says white won: white gains.
    r = site_replay(games(game(1, "a", "b", 1.0, termination="timeout")))
    assert value(r, "a", "site-blitz") == pytest.approx(1516.0)


# --- K, order, provisional ------------------------------------------------------------------


def test_k_switches_after_30_games_counted_before_the_game() -> None:
    rows = [game(i, "a", f"opp{i}", 0.5) for i in range(31)]
    r = site_replay(games(*rows))
    h = r.history.filter((pl.col("player_id") == "a") & (pl.col("number") == "site-blitz"))
    assert h["games_before"].to_list() == list(range(31))
    ks = h["k"].to_list()
    assert ks[29] == 32.0  # the 30th game: 29 games before it
    assert ks[30] == 20.0  # the 31st game: 30 before it


def test_site_elo_k_counts_all_categories_category_k_its_own() -> None:
    rows = [game(i, "a", f"opp{i}", 0.5) for i in range(30)]
    rows.append(game(30, "a", "z", 1.0, category="rapid"))
    h = site_replay(games(*rows)).history.filter(
        (pl.col("player_id") == "a") & (pl.col("game_id") == "g0030")
    )
    ks = dict(zip(h["number"].to_list(), h["k"].to_list(), strict=True))
    assert ks == {"site-elo": 20.0, "site-rapid": 32.0}


def test_order_is_played_at_then_game_id() -> None:
    same_time = T0 + timedelta(hours=1)
    rows = [
        game(3, "a", "b", 1.0, played_at=same_time, game_id="g-b"),
        game(2, "a", "b", 0.0, played_at=same_time, game_id="g-a"),
        game(1, "a", "b", 1.0, played_at=T0 + timedelta(hours=2), game_id="g-0"),
    ]
    h = site_replay(games(*rows)).history
    assert h["game_id"].unique(maintain_order=True).to_list() == ["g-a", "g-b", "g-0"]


def test_history_reconciles_with_state() -> None:
    rows = [game(i, ["a", "b", "c"][i % 3], ["b", "c", "a"][i % 3], (i % 3) / 2) for i in range(12)]
    r = site_replay(games(*rows))
    h = r.history
    assert as_number((h["rating_after"] - h["rating_before"] - h["change"]).abs().max()) < 1e-9
    totals = h.group_by("player_id", "number").agg(pl.col("change").sum())
    joined = r.state.join(totals, on=["player_id", "number"])
    assert joined.height == r.state.height
    assert as_number((joined["rating"] - 1500 - joined["change"]).abs().max()) < 1e-9


def test_provisional_under_10_games() -> None:
    rows = [game(i, "a", f"o{i}", 0.5, category="rapid") for i in range(10)]
    r9 = site_replay(games(*rows[:9]))
    r10 = site_replay(games(*rows))
    l9 = site_lists(r9.state, "2024-01").filter(
        (pl.col("player_id") == "a") & (pl.col("list") == "site-rapid")
    )
    l10 = site_lists(r10.state, "2024-01").filter(
        (pl.col("player_id") == "a") & (pl.col("list") == "site-rapid")
    )
    assert l9["provisional"][0] is True
    assert l9["display"][0] == "1500?"
    assert l9["total_games"][0] == 9
    assert l10["provisional"][0] is False
    assert l10["display"][0] == "1500"


# --- lists and chaining ----------------------------------------------------------------------


def test_lists_rounding_games_change_and_membership() -> None:
    jan = [game(1, "a", "b", 1.0), game(2, "c", "d", 1.0, category="rapid")]
    feb = [
        game(3, "a", "b", 1.0, period="2024-02", played_at=datetime(2024, 2, 3, tzinfo=UTC)),
    ]
    r1 = site_replay(games(*jan))
    r2 = site_replay(games(*feb), state=r1.state)
    lists = site_lists(r2.state, "2024-02", r1.state)
    assert set(lists["list"].unique()) == {"site-elo", "site-blitz", "site-rapid"}
    blitz_a = lists.filter((pl.col("list") == "site-blitz") & (pl.col("player_id") == "a"))
    assert blitz_a["games"][0] == 1
    assert blitz_a["total_games"][0] == 2
    assert blitz_a["change"][0] == pytest.approx(value(r2, "a", "site-blitz") - 1516.0)
    assert blitz_a["rating"][0] == round(value(r2, "a", "site-blitz"))  # not a .5 case
    # c played only in January: still on the February lists with 0 games and no change.
    rapid_c = lists.filter((pl.col("list") == "site-rapid") & (pl.col("player_id") == "c"))
    assert rapid_c["games"][0] == 0
    assert rapid_c["change"][0] == 0.0
    assert lists.filter(pl.col("list") == "site-rapid").height == 2
    assert "c" not in lists.filter(pl.col("list") == "site-blitz")["player_id"].to_list()


def test_list_rating_rounds_half_away_from_zero() -> None:
    s = state([("a", "site-elo", 1522.5, 12), ("b", "site-elo", 1521.4999, 12)])
    lst = site_lists(s, "2024-01").sort("player_id")
    assert lst["rating"].to_list() == [1523, 1521]
    assert lst["display"].to_list() == ["1523", "1521"]


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "B", "p10", "p9", "é", "zz"]),
            st.sampled_from(site_rules.SITE_NUMBERS),
            st.sampled_from([1400.0, 1500.0, 1500.25, 1612.5, 100.0]),
            st.integers(0, 12),
        ),
        unique_by=lambda row: (row[0], row[1]),
        max_size=30,
    ),
    shuffle=st.randoms(use_true_random=False),
)
def test_lists_rank_rating_down_then_player_id_whatever_the_state_order(
    rows: list[tuple[str, str, float, int]], shuffle: Any
) -> None:
    ordered = state(sorted(rows))  # a replay's state is in player_id order
    mixed = list(rows)
    shuffle.shuffle(mixed)
    jan, feb = site_period_lists([ordered, state(mixed)], ["2024-01", "2024-02"], ordered)
    # the published whole number down, then player_id: the order publishing gives a list
    expected = jan.sort(["list", "rating", "player_id"], descending=[False, True, False])
    assert jan.equals(expected)
    assert feb.drop("period", "games", "change").equals(expected.drop("period", "games", "change"))
    assert (feb["games"] == 0).all() and (feb["change"] == 0.0).all()


def test_period_by_period_equals_all_at_once() -> None:
    rows = []
    for i in range(60):
        month = 1 + i // 20
        rows.append(
            game(
                i,
                ["a", "b", "c", "d"][i % 4],
                ["b", "c", "d", "bot"][(i * 3) % 4],
                [1.0, 0.5, 0.0][i % 3],
                category=["blitz", "rapid", "bullet"][i % 3],
                played_at=datetime(2024, month, 1 + i % 20, tzinfo=UTC),
                period=f"2024-{month:02d}",
            )
        )
    g = games(*rows).with_columns(
        pl.when(pl.col("black_id") == "bot")
        .then(pl.lit("bots"))
        .otherwise(pl.col("category").cast(pl.String))
        .cast(GAMES_SCHEMA["category"])
        .alias("category")
    )
    whole = site_replay(g, BOT)
    chained = site_rules.empty_site_state()
    for p in ["2024-01", "2024-02", "2024-03"]:
        chained = site_replay(g.filter(pl.col("period") == p), BOT, state=chained).state
    assert whole.state.equals(chained)


def test_empty_input_gives_empty_outputs() -> None:
    r = site_replay(games(game(1, "a", "b", 1.0)).clear())
    assert r.state.height == 0 and r.history.height == 0
    assert site_lists(r.state, "2024-01").height == 0


# --- calculator ------------------------------------------------------------------------------


def test_site_calculator_blitz_example() -> None:
    out = site_calculator("blitz", 1500, 1500, 0, 1500, 1500, 0, "win")
    assert out["category_change"] == 16.0
    assert out["site_elo_change"] == 12.0
    assert out["weight"] == 0.75


def test_site_calculator_floor_and_k() -> None:
    out = site_calculator("classical", 105, 105, 40, 105, 105, 29, "loss")
    assert out["category_k"] == 20.0
    assert out["site_k"] == 32.0
    assert out["new_category_rating"] == 100.0
    assert out["category_floored"] is True
    assert out["new_site_elo"] == 100.0


def test_site_calculator_matches_replay() -> None:
    s = state([("a", "site-rapid", 1612.3, 31), ("b", "site-rapid", 1540.0, 3)])
    s = pl.concat([s, state([("a", "site-elo", 1700.0, 50), ("b", "site-elo", 1450.0, 5)])])
    r = site_replay(games(game(1, "a", "b", 0.5, category="rapid")), state=s)
    calc = site_calculator("rapid", 1612.3, 1540.0, 31, 1700.0, 1450.0, 50, 0.5)
    assert value(r, "a", "site-rapid") == calc["new_category_rating_exact"]
    assert value(r, "a", "site-elo") == calc["new_site_elo_exact"]


def test_rules_object_holds_the_constants() -> None:
    assert SITE_RULES.start == 1500 and SITE_RULES.floor == 100
    assert (SITE_RULES.k_new, SITE_RULES.k_established, SITE_RULES.k_threshold) == (32, 20, 30)
    assert SITE_RULES.weight("bullet") == 0.5
    with pytest.raises(AttributeError):
        SITE_RULES.start = 1200  # type: ignore[misc]  # frozen: the error is what is tested


# --- replay order -------------------------------------------------------------------------


def test_unsorted_input_gives_the_same_replay_as_sorted_input() -> None:
    rows = [
        game(i, f"p{i % 3}", f"p{(i + 1) % 3}", [1.0, 0.5, 0.0][i % 3], period=f"2024-0{1 + i % 2}")
        for i in range(12)
    ] + [game(20, "p0", "bot", 1.0), game(21, "p1", "p2", 1.0, rated=False)]
    ordered = games(*rows)
    shuffled = ordered.reverse()
    a, b = site_replay(ordered, BOT), site_replay(shuffled, BOT)
    assert a.history.equals(b.history)
    assert a.state.equals(b.state)
    assert a.excluded.equals(b.excluded)


def test_reason_texts_follow_the_rules_object() -> None:
    rules = dataclasses.replace(SITE_RULES, min_plies=4, bot_no_move_min_plies=20)
    g = games(
        game(1, "a", "b", 1.0, plies=3),
        game(2, "a", "bot", 1.0, category="bots", termination="bot_no_move", plies=19),
    )
    r = site_replay(g, BOT, rules=rules)
    assert r.excluded["reason"].to_list() == [
        "aborted before both sides moved (fewer than 4 plies)",
        "bot move missing before move 11: annulled",
    ]
    assert site_rules.R_FEW_PLIES == "aborted before both sides moved (fewer than 2 plies)"
    assert site_rules.R_BOT_NO_MOVE == "bot move missing before move 10: annulled"


def test_reason_codes_are_one_table_of_distinct_codes_and_texts() -> None:
    for table in (site_rules.Exclusion, site_rules.Rejection):
        codes = [e.code for e in table]
        assert sorted(codes) == list(range(1, len(codes) + 1))  # 0 means none
        assert len({e.text() for e in table}) == len(codes)
    # the kernel's integer constants are the table's codes
    assert site_rules.Exclusion.FEW_PLIES.code == site_classification.X_FEW_PLIES
    assert site_rules.Rejection.NO_CATEGORY.code == site_classification.J_NO_CATEGORY


# --- the kernel's player record -----------------------------------------------------------


def _field_spans(layout: np.dtype) -> list[tuple[int, int]]:
    return sorted((off, off + dt.itemsize) for dt, off, *_ in (layout.fields or {}).values())


@pytest.mark.parametrize("n_numbers", [site_kernel.N_NUMBERS, site_kernel.N_NUMBERS + 1, 17, 40])
def test_record_layout_grows_with_the_numbers_instead_of_overlapping(n_numbers: int) -> None:
    layout = site_kernel.site_record(n_numbers)
    spans = _field_spans(layout)
    pairs = zip(spans, spans[1:], strict=False)
    assert all(end <= start for (_, end), (start, _) in pairs)  # no overlap
    assert spans[-1][1] <= layout.itemsize and layout.itemsize % 64 == 0
    assert all(layout[name].shape == (n_numbers,) for name in ("rating", "games", "last"))


def test_kernel_record_holds_every_number_of_every_category() -> None:
    # A record written through the kernel's views at every number leaves the next one untouched
    # and each field keeps what was written: the layout and CATEGORIES agree.
    assert site_kernel.N_NUMBERS == len(site_rules.SITE_NUMBERS) == 1 + len(CATEGORIES)
    assert site_kernel.SITE_RECORD["rating"].shape == (site_kernel.N_NUMBERS,)
    records = np.zeros((2, site_kernel.RECORD_SLOTS), dtype=np.float64)
    games_view, last_view = records.view(np.int32), records.view(np.int16)
    n = site_kernel.N_NUMBERS
    records[0, :n] = 1234.5
    games_view[0, site_kernel.GAMES_SLOT : site_kernel.GAMES_SLOT + n] = 77
    last_view[0, site_kernel.LAST_SLOT : site_kernel.LAST_SLOT + n] = -1
    assert (records[1] == 0).all()
    typed = records[:1].copy().view(site_kernel.SITE_RECORD)[0]
    assert (typed["rating"] == 1234.5).all()
    assert (typed["games"] == 77).all() and (typed["last"] == -1).all()


def test_history_rows_are_game_then_side_then_number_and_chain_per_number() -> None:
    # the kernel writes the history rows in place: a game's rows are white (site Elo, then its
    # category) before black, a bot side has none, and each row starts where its number's
    # previous row ended
    rng = np.random.default_rng(5)
    players = ["a", "b", "c", "bot"]
    rows = []
    for i in range(120):
        white, black = rng.choice(players, 2, replace=False)
        category = str(rng.choice(["blitz", "rapid", "bullet", "classical"]))
        rows.append(
            game(i, str(white), str(black), float(rng.choice([0.0, 0.5, 1.0])), category=category)
        )
    frame = games(*rows).sample(fraction=1.0, shuffle=True, seed=3)
    r = site_replay(frame, BOT)
    rated, _, _ = site_classification.classify_site_games(frame, BOT)
    expected = []
    for g in rated.iter_rows(named=True):
        sides = [(g["white_id"], g["black_id"], g["w_bot"], g["b_bot"], g["white_score"])]
        sides.append((g["black_id"], g["white_id"], g["b_bot"], g["w_bot"], 1.0 - g["white_score"]))
        for me, opp, me_bot, opp_bot, score in sides:
            if me_bot:
                continue
            weight = SITE_RULES.weight(g["category"])
            for number, w in (("site-elo", weight), (f"site-{g['category']}", 1.0)):
                expected.append((g["game_id"], me, number, opp, opp_bot, w, score))
    got = r.history.select(
        "game_id", "player_id", "number", "opponent_id", "opponent_is_bot", "weight", "score"
    ).rows()
    assert got == expected
    assert any(row[4] for row in expected) and "bot" not in r.history["player_id"]
    for (_, _), h in r.history.group_by("player_id", "number", maintain_order=True):
        assert h["rating_before"][0] == SITE_RULES.start
        assert h["rating_before"][1:].to_list() == h["rating_after"][:-1].to_list()
        assert h["games_before"].to_list() == list(range(h.height))


def test_a_range_of_lists_takes_states_of_other_integer_widths() -> None:
    """States read from elsewhere (an Int32 `games`) list a range as each period alone would."""
    jan = site_replay(games(game(1, "a", "b", 1.0))).state
    feb = site_replay(
        games(game(2, "a", "c", 0.0, period="2024-02", played_at=datetime(2024, 2, 3, tzinfo=UTC))),
        state=jan,
    ).state
    narrow = jan.with_columns(pl.col("games").cast(pl.Int32))
    at_once = site_period_lists([narrow, feb], ["2024-01", "2024-02"])
    assert at_once[0].equals(site_lists(narrow, "2024-01"))
    assert at_once[1].equals(site_lists(feb, "2024-02", narrow))
    assert at_once[1].filter(pl.col("player_id") == "c").height > 0
