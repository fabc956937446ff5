"""The site classifier runs once per game (issue 33 item 2): the ingest classifies, keeps its
decisions with the games, and the rating reads them, moderation applied on top. What the rating
decides from them must be what the rules' kernel decides of the same games, whatever the
registry's bots and the moderation decisions."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rating_core.schemas import (
    CATEGORIES,
    GAMES_SCHEMA,
    KINDS,
    PLAYERS_SCHEMA,
    SITE_VERDICTS,
    STATUSES,
    TERMINATIONS,
    conform,
)
from rating_core.systems.site import classification
from rating_core.systems.site.classification import (
    SITE_RATED_COLUMNS,
    SITE_VERDICT_COLUMNS,
    Classified,
    classify,
    excluded_frame,
    rejected_frame,
    split_site_games,
)
from rating_core.systems.site.replay import site_replay
from rating_core.systems.site.rules import SITE_RULES, Exclusion

T0 = datetime(2026, 1, 1, tzinfo=UTC)
PLAYERS = ["p0", "p1", "p2", "bot", "bot-unrated", "flagged"]
REGISTRY = conform(
    pl.DataFrame(
        [
            {"player_id": "bot", "is_bot": True, "bot_rating": 1400.0},
            {"player_id": "bot-unrated", "is_bot": True, "bot_rating": None},
            {"player_id": "p2", "is_bot": False, "bot_rating": None},
        ]
    ),
    PLAYERS_SCHEMA,
)


def maybe(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A value of `values`, sometimes missing."""
    return st.none() | values


@st.composite
def site_games(draw: st.DrawFn) -> pl.DataFrame:
    """Up to 40 platform games over two months with every field the site rules read drawn,
    missing values, self-games, bots of the registry and bots by their title among them."""
    rows: list[dict[str, Any]] = []
    for i in range(draw(st.integers(1, 40))):
        at = T0 + timedelta(hours=draw(st.integers(0, 24 * 58)))
        white = draw(maybe(st.sampled_from(PLAYERS)))
        black = draw(maybe(st.sampled_from(PLAYERS)))
        timed = draw(st.integers(0, 9)) > 0
        rows.append(
            {
                "game_id": f"g{i:03d}",
                "source": "platform",
                "source_file": "platform/games.csv",
                "source_line": i + 2,
                "played_at": at if timed else None,
                "period": at.strftime("%Y-%m") if timed else None,
                "white_id": white,
                "black_id": black,
                "white_score": draw(maybe(st.sampled_from([0.0, 0.5, 1.0]))),
                "category": draw(maybe(st.sampled_from(CATEGORIES))),
                "rated": draw(maybe(st.booleans())),
                "status": draw(maybe(st.sampled_from(STATUSES))),
                "plies": draw(maybe(st.integers(0, 40))),
                "termination": draw(maybe(st.sampled_from(TERMINATIONS))),
                "kind": draw(maybe(st.sampled_from(KINDS))),
                "otb_confirmed": draw(maybe(st.booleans())),
                "white_elo": draw(maybe(st.integers(800, 2400))),
                "black_elo": draw(maybe(st.integers(800, 2400))),
                "white_is_bot": white == "flagged" or draw(maybe(st.just(False))),
                "black_is_bot": black == "flagged" or draw(maybe(st.just(False))),
                "unrated_reason": draw(maybe(st.just("a chess variant"))),
            }
        )
    return conform(pl.DataFrame(rows), GAMES_SCHEMA)


def assert_same_decisions(got: Classified, want: Classified) -> None:
    """Every per-game decision, and the rated games' order, equal (NaN equal to NaN)."""
    for name in ("exclude", "reject", "score", "score_null", "cat", "w_bot", "b_bot", "rated"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
    np.testing.assert_array_equal(got.bot_rating, want.bot_rating)
    assert got.frame["game_id"].equals(want.frame["game_id"])


def test_each_exclusion_is_stored_under_its_own_name() -> None:
    assert SITE_VERDICTS[0] == "rated"
    assert len(SITE_VERDICTS) == len(Exclusion) + 1
    for exclusion in Exclusion:
        assert SITE_VERDICTS[exclusion.code] == exclusion.name.lower()


@pytest.mark.slow  # Hypothesis searches over classifications and whole replays
@settings(max_examples=60, deadline=None)
@given(site_games(), st.data())
def test_the_ratings_reading_of_the_ingests_decisions_is_the_kernels(
    games: pl.DataFrame, data: st.DataObject
) -> None:
    ids = games["game_id"].to_list()
    annulled = data.draw(st.lists(st.sampled_from(ids), unique=True))
    kept, rejected = split_site_games(games, REGISTRY)
    at_ingest = classify(games, REGISTRY, None, SITE_RULES, ingested=False)
    # the ingest keeps exactly the games no rule rejects, and quarantines the others
    assert kept["game_id"].to_list() == [
        i for i, r in zip(ids, at_ingest.reject, strict=True) if r == 0
    ]
    assert rejected.equals(rejected_frame(at_ingest))
    decided = kept.select("site_verdict", "site_white_bot", "site_black_bot")
    assert decided.null_count().row(0) == (0, 0, 0)  # every kept game carries its decisions
    # what the rating decided before (the kernel over the kept games, with moderation) ...
    want = classify(kept.drop(SITE_VERDICT_COLUMNS), REGISTRY, annulled, SITE_RULES)
    # ... is what it decides from the stored decisions, the whole games or what the lake gives
    for frame in (kept, kept.select(SITE_RATED_COLUMNS)):
        got = classify(frame, REGISTRY, annulled, SITE_RULES)
        assert_same_decisions(got, want)
        assert excluded_frame(got, SITE_RULES).equals(excluded_frame(want, SITE_RULES))
        assert rejected_frame(got).height == 0
    assert classify(kept, REGISTRY, annulled, SITE_RULES).rated_frame().equals(want.rated_frame())
    replayed = site_replay(kept, REGISTRY, annulled)
    reference = site_replay(kept.drop(SITE_VERDICT_COLUMNS), REGISTRY, annulled)
    for name in ("history", "state", "excluded", "rejected"):
        assert getattr(replayed, name).equals(getattr(reference, name)), name


def test_the_rating_runs_no_kernel_over_ingested_games(monkeypatch: pytest.MonkeyPatch) -> None:
    games = conform(
        pl.DataFrame(
            {
                "game_id": ["g1", "g2", "g3"],
                "source": ["platform"] * 3,
                "played_at": [T0, T0 + timedelta(days=1), T0 + timedelta(days=2)],
                "period": ["2026-01"] * 3,
                "white_id": ["p0", "p1", "bot"],
                "black_id": ["p1", "p0", "p0"],
                "white_score": [1.0, 0.5, 0.0],
                "category": ["blitz", "blitz", "bots"],
                "rated": [True] * 3,
                "status": ["finished"] * 3,
                "plies": [40] * 3,
                "termination": ["resign", "normal", "timeout"],
                "kind": ["live"] * 3,
            }
        ),
        GAMES_SCHEMA,
    )
    classified: list[str] = []
    kernel = classification._kernel_decisions

    def counting(g: pl.DataFrame, *args: Any) -> Any:
        classified.extend(g.get_column("game_id").to_list())
        return kernel(g, *args)

    monkeypatch.setattr(classification, "_kernel_decisions", counting)
    kept, rejected = split_site_games(games, REGISTRY)
    assert classified == ["g1", "g2", "g3"]
    assert rejected["game_id"].to_list() == ["g3"]  # a bot never loses on time
    result = site_replay(kept, REGISTRY, ["g2"])
    assert classified == ["g1", "g2", "g3"]  # read, not classified again
    assert result.excluded.rows() == [("g2", "2026-01", "annulled by moderation")]
    assert result.history["game_id"].unique().to_list() == ["g1"]


def test_other_rules_classify_again() -> None:
    # the stored decisions are the site rules'; a replay under other numbers decides anew
    games = conform(
        pl.DataFrame(
            {
                "game_id": ["g1"],
                "source": ["platform"],
                "played_at": [T0],
                "period": ["2026-01"],
                "white_id": ["p0"],
                "black_id": ["p1"],
                "white_score": [1.0],
                "category": ["blitz"],
                "rated": [True],
                "status": ["finished"],
                "plies": [1],
                "termination": ["resign"],
                "kind": ["live"],
            }
        ),
        GAMES_SCHEMA,
    )
    kept, _ = split_site_games(games)
    assert kept["site_verdict"].to_list() == ["few_plies"]
    lenient = dataclasses.replace(SITE_RULES, min_plies=1)
    assert classify(kept, None, None, lenient).exclude.tolist() == [0]
    assert classify(kept, None, None, SITE_RULES).exclude.tolist() == [Exclusion.FEW_PLIES.code]


def test_a_lake_read_without_decisions_or_rule_inputs_is_refused() -> None:
    games = conform(
        pl.DataFrame({"game_id": ["g1"], "source": ["platform"], "period": ["2026-01"]}),
        GAMES_SCHEMA,
    )
    with pytest.raises(AssertionError, match="lack"):
        classify(games.select(SITE_RATED_COLUMNS), None, None, SITE_RULES)
