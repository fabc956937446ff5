"""The compiled replays against plain-Python implementations of RULES §2 and §5.

Random inputs exercise every exclusion and rejection rule, nulls, registry and tag bots, long
ids, unsorted rows, ties, chaining from a state, and (FIBS) the pair table's recycling, purges
and growth. The engines must agree exactly with the straightforward loops.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import polars as pl
import pytest

from rating_core.schemas import (
    CATEGORIES,
    GAMES_SCHEMA,
    KINDS,
    MATCHES_SCHEMA,
    PLAYERS_SCHEMA,
    STATUSES,
    TERMINATIONS,
    conform,
)
from rating_core.systems.fibs import pairs as fibs_pairs
from rating_core.systems.fibs.classification import classify_matches
from rating_core.systems.fibs.replay import FibsReplayResult, fibs_replay
from rating_core.systems.fibs.rules import FIBS_PAIR_STATE_SCHEMA, FIBS_RULES
from rating_core.systems.site import rules as site_rules
from rating_core.systems.site.replay import site_replay
from rating_core.systems.site.rules import SITE_RULES
from tests.support.fibs_reference import fibs_reference
from tests.support.scalars import as_datetime

T0 = datetime(2024, 1, 1, tzinfo=UTC)
LONG_ID = "a-player-id-longer-than-twelve-bytes"


# --- site ---------------------------------------------------------------------------------------


SiteState = dict[tuple[str, str], tuple[float, int, str]]


def _site_reference(
    rows: list[dict[str, Any]], players: list[dict[str, Any]], annulled: set[str]
) -> tuple[SiteState, list[tuple[str, str]], list[str], int]:
    """RULES §2 as a plain loop: state, excluded (game_id, reason), rejected game ids and the
    number of rating updates (history rows)."""
    r = SITE_RULES
    weights = dict(r.weights)
    registry: dict[str, dict[str, Any]] = {}
    for p in players:
        registry.setdefault(p["player_id"], p)
    is_bot = {k for k, p in registry.items() if p["is_bot"]}
    bot_rating = {
        k: float(p["bot_rating"]) for k, p in registry.items() if p["bot_rating"] is not None
    }
    rated, excluded, rejected = [], [], []
    for g in rows:
        if g["source"] not in (None, "platform"):
            continue
        w, b, term, plies, score = (
            g["white_id"],
            g["black_id"],
            g["termination"],
            g["plies"],
            g["white_score"],
        )
        wb = bool(g["white_is_bot"]) or w in is_bot
        bb = bool(g["black_is_bot"]) or b in is_bot
        wr = bot_rating.get(w, g["white_elo"])
        br = bot_rating.get(b, g["black_elo"])
        bot_no_move, human_bot = term == "bot_no_move", wb != bb
        otb = "otb" in (g["kind"], g["category"])
        reasons = [
            (g["game_id"] in annulled, site_rules.R_MODERATION),
            (g.get("unrated_reason") is not None, g.get("unrated_reason")),
            (g["rated"] is False, site_rules.R_CASUAL),
            (g["status"] == "aborted", site_rules.R_ABORTED),
            (g["status"] == "annulled", site_rules.R_STATUS_ANNULLED),
            (g["status"] == "forfeit", site_rules.R_FORFEIT),
            (g["status"] == "bye", site_rules.R_BYE),
            (term == "abort", site_rules.R_ABORT_TERMINATION),
            (plies is not None and plies < r.min_plies, site_rules.R_FEW_PLIES),
            (otb and not g["otb_confirmed"], site_rules.R_OTB),
            (wb and bb, site_rules.R_BOTH_BOTS),
            (
                bot_no_move and human_bot and plies is not None and plies < 18,
                site_rules.R_BOT_NO_MOVE,
            ),
        ]
        reason = next((why for cond, why in reasons if cond), None)
        lost_by_bot = score is not None and ((wb and score == 0.0) or (bb and score == 1.0))
        if lost_by_bot and term in ("timeout", "abandon"):
            rejected.append(g["game_id"])
            continue
        if reason is not None:
            excluded.append((g["game_id"], reason))
            continue
        missing = None in (w, b, g["played_at"], g["period"])
        if (
            missing
            or w == b
            or (bot_no_move and not (wb or bb))
            or (bot_no_move and plies is None)
            or (score is None and not (bot_no_move and human_bot))
            or (g["category"] is None and not (wb or bb))
        ):
            rejected.append(g["game_id"])
            continue
        if (wb and wr is None) or (bb and br is None):
            excluded.append((g["game_id"], site_rules.R_BOT_RATING))
            continue
        if bot_no_move and human_bot:
            score = 1.0 if wb else 0.0
        cat = "bots" if (wb or bb) else g["category"]
        key = (g["period"], g["played_at"], "" if g["game_id"] is None else "~" + g["game_id"])
        rated.append((key, w, b, wb, bb, wr, br, score, cat, g["period"]))
    rated.sort(key=lambda x: x[0])
    state: SiteState = {}
    updates = 0
    for _, w, b, wb, bb, wr, br, score, cat, period in rated:
        for number, weight in (("site-elo", weights[cat]), ("site-" + cat, 1.0)):
            rw = wr if wb else state.get((w, number), (r.start, 0, ""))[0]
            rb = br if bb else state.get((b, number), (r.start, 0, ""))[0]
            for p, me, opp, s, bot in ((w, rw, rb, score, wb), (b, rb, rw, 1.0 - score, bb)):
                if bot:
                    continue
                _, count, _ = state.get((p, number), (r.start, 0, ""))
                k = r.k_new if count < r.k_threshold else r.k_established
                e = 1.0 / (1.0 + 10.0 ** ((opp - me) / 400.0))
                state[(p, number)] = (max(r.floor, me + k * weight * (s - e)), count + 1, period)
                updates += 1
    return state, excluded, rejected, updates


def _random_games(rng: random.Random, n: int) -> tuple[list[dict[str, Any]], list[dict]]:
    people = [f"p{i}" for i in range(8)] + [LONG_ID, LONG_ID + "2"]
    ids = people + ["bot", "tagbot", None]
    rows = []
    for i in range(n):
        at = T0 + timedelta(minutes=rng.choice([1, 30]) * rng.randint(0, 3 * 24 * 30))
        period = at.strftime("%Y-%m") if rng.random() < 0.95 else rng.choice(["2024-02", None])
        white, black = rng.choice(ids), rng.choice(ids)
        rows.append(
            {
                "game_id": f"g{i}" if rng.random() < 0.95 else rng.choice(["dup", None]),
                "source": rng.choice(["platform"] * 8 + [None, "federation"]),
                "played_at": at if rng.random() < 0.98 else None,
                "period": period,
                "white_id": white,
                "black_id": black,
                "white_score": rng.choice([0.0, 0.5, 1.0, 1.0, None]),
                "category": rng.choice([*CATEGORIES, None]),
                "rated": rng.choice([True, True, True, False, None]),
                "status": rng.choice(["finished"] * 6 + STATUSES + [None]),
                "plies": rng.choice([None, 0, 1, 2, 17, 18, 40]),
                # ingest defaults a missing termination; a frame given directly may lack one
                "termination": rng.choice([*TERMINATIONS, None] + ["normal"] * 4),
                "kind": rng.choice([*KINDS, None]),
                "otb_confirmed": rng.choice([True, False, None]),
                "white_is_bot": white == "tagbot" or rng.random() < 0.02,
                "black_is_bot": black == "tagbot" or rng.random() < 0.02,
                "white_elo": rng.choice([None, 1700]),
                "black_elo": rng.choice([None, 2100]),
                "unrated_reason": rng.choice([None] * 9 + ["variant 'Atomic' is not standard"]),
            }
        )
    players = [
        {"player_id": "bot", "is_bot": True, "bot_rating": rng.choice([1400, None])},
        {"player_id": "p1", "is_bot": False, "bot_rating": rng.choice([None, 1900])},
    ]
    return rows, players


@pytest.mark.parametrize("seed", range(12))
def test_site_replay_matches_plain_loop(seed: int) -> None:
    rng = random.Random(seed)
    rows, players = _random_games(rng, rng.randint(1, 250))
    annulled = {f"g{rng.randint(0, 250)}" for _ in range(rng.randint(0, 4))}
    frame = conform(pl.DataFrame(rows, infer_schema_length=None), GAMES_SCHEMA)
    if seed % 3 == 0:
        frame = frame.sample(fraction=1.0, shuffle=True, seed=seed)
        rows = frame.with_columns(pl.col(pl.Enum).cast(pl.String)).to_dicts()
    registry = conform(pl.DataFrame(players), PLAYERS_SCHEMA)
    state, excluded, rejected, updates = _site_reference(rows, players, annulled)

    result = site_replay(frame, registry, annulled)
    got = {
        (p, num): (rating, games, last) for p, num, rating, games, last in result.state.iter_rows()
    }
    assert got == state  # exact floats: same operations in the same order
    assert result.state["player_id"].to_list() == sorted(result.state["player_id"].to_list())
    assert list(zip(*result.excluded.select("game_id", "reason"), strict=True)) == excluded
    assert result.rejected["game_id"].to_list() == rejected
    assert result.history.height == updates
    last = result.history.unique(["player_id", "number"], keep="last", maintain_order=True)
    assert {(p, n): a for p, n, a in last.select("player_id", "number", "rating_after").rows()} == {
        key: value[0] for key, value in state.items()
    }

    # Chained from the state, a second batch gives the reference's continuation.
    more, _ = _random_games(rng, 60)
    for g in more:
        g["played_at"] = (g["played_at"] or T0) + timedelta(days=120)
        g["period"] = g["played_at"].strftime("%Y-%m")
    chained = site_replay(
        conform(pl.DataFrame(more, infer_schema_length=None), GAMES_SCHEMA),
        registry,
        annulled,
        state=result.state,
        history=False,
    )
    whole, _, _, _ = _site_reference(rows + more, players, annulled)
    got = {
        (p, num): (rating, games, last) for p, num, rating, games, last in chained.state.iter_rows()
    }
    assert got == whole


# --- FIBS ---------------------------------------------------------------------------------------


def _random_matches(
    rng: random.Random, n: int, players: int, days: float, t0: datetime = T0, step: int = 1
) -> list[dict[str, Any]]:
    """Random matches over `days`, at multiples of `step` seconds (hours: exact 24 h gaps)."""
    ids = [f"p{i}" for i in range(players)] + [LONG_ID, None]
    rows = []
    for i in range(n):
        a = rng.choice(ids)
        b = rng.choice([a + "x" if a else None, rng.choice(ids)]) if rng.random() < 0.4 else None
        at = t0 + timedelta(seconds=step * rng.randint(0, int(days * 86400) // step))
        if rng.random() < 0.05:
            at = rng.choice([t0, t0 + timedelta(hours=1)])  # exact ties
        rows.append(
            {
                "match_id": f"m{i}",
                "ended_at": at if rng.random() < 0.99 else None,
                "period": at.strftime("%Y-%m") if rng.random() < 0.97 else "2023-12",
                "winner_id": a,
                "loser_id": b if b is not None else rng.choice(ids),
                "length": rng.choice([1, 3, 5, 7, 0, None]),
                "ranked": rng.choice([True, True, True, False, None]),
                "vs_ai": rng.choice([False, False, True, None]),
            }
        )
    return rows


def _check_fibs(rows: list[dict[str, Any]]) -> FibsReplayResult:
    frame = conform(pl.DataFrame(rows, infer_schema_length=None), MATCHES_SCHEMA)
    result = fibs_replay(frame)
    state, counted, _ = fibs_reference(rows)
    got = {p: (r, e, m) for p, r, e, m in result.state.iter_rows()}
    assert got == state
    assert result.history.filter(pl.col("won"))["counted"].to_list() == counted
    return result


@pytest.mark.parametrize("seed", range(8))
def test_fibs_replay_matches_plain_loop(seed: int) -> None:
    rng = random.Random(seed)
    if seed % 2:  # valid matches of 3 players, whole hours: the limit and exact 24 h gaps
        rows = _random_matches(rng, rng.randint(100, 300), players=3, days=4, step=3600)
        for m in rows:
            m["winner_id"], m["loser_id"] = rng.sample(["p0", "p1", "p2"], 2)
            m.update(ranked=True, vs_ai=False, length=rng.choice([1, 5]))
    else:
        rows = _random_matches(rng, rng.randint(1, 300), players=6, days=20)
    _check_fibs(rows)


def test_fibs_many_pairs_over_months_recycle_and_purge_the_pair_table() -> None:
    # Thousands of pairs over half a year: far more pairs than the smallest pair table holds,
    # few active at once, so stale pairs are recycled and purged; some pairs play often.
    rng = random.Random(7)
    rows = _random_matches(rng, 6000, players=200, days=180)
    for i, m in enumerate(rows):
        m["ended_at"] = m["ended_at"] or T0
        m["period"] = m["ended_at"].strftime("%Y-%m")  # time order: stale pairs can go
        if i % 3 == 0:
            m["winner_id"], m["loser_id"] = "f1", "f2"  # a pair that hits the limit
    result = _check_fibs(rows)
    assert not all(result.history["counted"].to_list())


def test_fibs_chained_pair_state_matches_plain_loop() -> None:
    rng = random.Random(3)
    jan = _random_matches(rng, 400, players=5, days=30.99)  # January (a few in 2023-12)
    feb = _random_matches(rng, 400, players=5, days=10, t0=T0 + timedelta(days=31))
    for m in feb:
        m["period"] = "2024-02"  # every match of the second replay comes after the first
    first = fibs_replay(conform(pl.DataFrame(jan, infer_schema_length=None), MATCHES_SCHEMA))
    second = fibs_replay(
        conform(pl.DataFrame(feb, infer_schema_length=None), MATCHES_SCHEMA),
        first.state,
        first.pairs,
    )
    whole, _, recent = fibs_reference(jan + feb)
    got = {p: (r, e, m) for p, r, e, m in second.state.iter_rows()}
    assert got == whole
    # The pair state keeps the recent rating-changing matches that can still matter.
    ranked, _, _ = classify_matches(
        conform(pl.DataFrame(feb, infer_schema_length=None), MATCHES_SCHEMA)
    )
    latest = max(as_datetime(ranked["ended_at"].max()), as_datetime(first.pairs["ended_at"].max()))
    horizon = latest - timedelta(microseconds=FIBS_RULES.fair_play_window_us)
    expected = sorted(
        (a, b, T0 + timedelta(microseconds=t - int(T0.timestamp()) * 1_000_000))
        for (a, b), times in recent.items()
        for t in times
        if T0 + timedelta(microseconds=t - int(T0.timestamp()) * 1_000_000) > horizon
    )
    assert second.pairs.rows() == expected
    assert second.pairs.schema == pl.Schema(FIBS_PAIR_STATE_SCHEMA)


# --- the FIBS pair table ----------------------------------------------------------------------


def _table_with(keys: np.ndarray, latest: np.ndarray, bits: int) -> np.ndarray:
    table = np.full((1 << bits, 4), fibs_pairs.EMPTY, dtype=np.int64)
    for k, t in zip(keys, latest, strict=True):
        j = fibs_pairs._find(table, int(k), bits)
        table[j] = [k, fibs_pairs.SENTINEL, t - 1, t]
    return table


def test_pair_table_purge_keeps_exactly_the_recent_pairs_reachable() -> None:
    rng = np.random.default_rng(0)
    bits = 8
    keys = rng.choice(10_000, 120, replace=False)
    latest = rng.integers(0, 100, 120)
    table = _table_with(keys, latest, bits)
    left = fibs_pairs._purge(table, 100, 40)  # stale: latest match 40 or more before t = 100
    recent = latest > 60
    assert left == recent.sum() == (table[:, 0] != fibs_pairs.EMPTY).sum()
    for k, t, keep in zip(keys, latest, recent, strict=True):
        j = fibs_pairs._find(table, int(k), bits)
        assert (table[j, 0] == k) == keep
        if keep:
            assert table[j, 3] == t


def test_pair_table_rebuild_grows_without_losing_pairs() -> None:
    keys = np.arange(0, 5_000, 37)
    table = _table_with(keys, np.full(keys.shape, 10), 8)  # 136 pairs in 256 slots
    grown, used = fibs_pairs.rebuilt(table, len(keys), 10**9, 40, gc=False)
    assert used == len(keys) and grown.shape[0] >= 4 * (len(keys) + 1)
    bits = grown.shape[0].bit_length() - 1
    assert all(grown[fibs_pairs._find(grown, int(k), bits), 0] == k for k in keys)
