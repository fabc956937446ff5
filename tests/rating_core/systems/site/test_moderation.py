"""Moderation causes (issue 9 item 16): a list version names what changed since its parent."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from rating_core.schemas import MODERATION_SCHEMA
from rating_core.systems.site.moderation import (
    annulled_games_until,
    annulment_causes,
    annulment_reason,
)

GAMES = pl.DataFrame(
    {
        "game_id": ["g1", "g2", "g3"],
        "period": ["2026-03", "2026-03", "2026-04"],
        "white_id": ["a", "c", "a"],
        "black_id": ["b", "d", "c"],
    }
)


def decisions(*rows: tuple[str, str, int]) -> pl.DataFrame:
    """Annul decisions (game id, file, line), decided on 2026-04-02."""
    return pl.DataFrame(
        [
            {
                "game_id": game,
                "decided_at": datetime(2026, 4, 2, tzinfo=UTC),
                "decision": "annul",
                "reason": "engine use",
                "source_file": f"platform/moderation/{file}",
                "source_line": line,
            }
            for game, file, line in rows
        ],
        schema=MODERATION_SCHEMA,
    )


FIRST = decisions(("g1", "first.csv", 2))
BOTH = decisions(("g1", "first.csv", 2), ("g2", "second.csv", 2))


def test_without_a_previous_publication_every_annulment_is_named() -> None:
    causes = annulment_causes(BOTH, GAMES, "2026-03")
    assert causes.get_column("player_id").to_list() == ["a", "b", "c", "d"]
    assert annulment_reason(BOTH, GAMES, "2026-03").endswith("annulled games g1, g2")


def test_only_annulments_new_since_the_last_publication_are_named() -> None:
    applied = annulled_games_until(FIRST, GAMES, "2026-03")  # what v2 applied
    causes = annulment_causes(BOTH, GAMES, "2026-03", applied)
    assert causes.to_dicts() == [
        {
            "player_id": player,
            "cause": "moderation decision of 2026-04-02 (engine use, "
            "platform/moderation/second.csv line 2): annulled g2",
        }
        for player in ("c", "d")
    ]
    reason = annulment_reason(BOTH, GAMES, "2026-03", applied)
    assert reason == "computed from the inbox; moderation annulled games g2"


def test_nothing_new_names_no_annulment() -> None:
    applied = annulled_games_until(BOTH, GAMES, "2026-03")
    assert annulment_causes(BOTH, GAMES, "2026-03", applied).height == 0
    assert annulment_reason(BOTH, GAMES, "2026-03", applied) == "computed from the inbox"


def test_a_withdrawn_annulment_is_named_as_such() -> None:
    applied = annulled_games_until(BOTH, GAMES, "2026-03")
    causes = annulment_causes(FIRST, GAMES, "2026-03", applied)
    assert causes.get_column("player_id").to_list() == ["c", "d"]
    assert causes.get_column("cause").str.contains("withdrawn, rated again g2").all()
    assert annulment_reason(FIRST, GAMES, "2026-03", applied) == (
        "computed from the inbox; moderation decisions withdrawn, games rated again: g2"
    )


def test_later_periods_see_an_old_periods_annulment_once() -> None:
    applied_april = annulled_games_until(pl.DataFrame(schema=MODERATION_SCHEMA), GAMES, "2026-04")
    assert annulment_reason(FIRST, GAMES, "2026-04", applied_april).endswith("games g1")
    again = annulled_games_until(FIRST, GAMES, "2026-04")
    assert annulment_reason(FIRST, GAMES, "2026-04", again) == "computed from the inbox"
