"""The FIBS rules (RULES §5) as a plain Python loop: the one reference the tests and the replay
benchmark compare the numba engine with."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from rating_core.systems.fibs.rules import FIBS_RULES


def fibs_reference(
    rows: list[dict[str, Any]], pairs: dict[tuple[str, str], list[int]] | None = None
) -> tuple[dict[str, tuple[float, int, int]], list[bool], dict[tuple[str, str], list[int]]]:
    """RULES §5 as a plain loop, one match at a time: (state, counted per ranked match in order,
    pair windows). The oracle the FIBS engine is tested against and the baseline
    `benchmarks/replay.py` times it against."""
    r = FIBS_RULES
    ratings: dict[str, float] = defaultdict(lambda: r.start)
    exp: dict[str, int] = defaultdict(int)
    played: dict[str, int] = defaultdict(int)
    recent: dict[tuple[str, str], list[int]] = defaultdict(list)
    for k, times in (pairs or {}).items():
        recent[k] = sorted(times)[-r.fair_play_max :]
    ok = [
        m
        for m in rows
        if m["ranked"]
        and not m["vs_ai"]
        and None not in (m["winner_id"], m["loser_id"], m["ended_at"], m["period"], m["length"])
        and m["winner_id"] != m["loser_id"]
        and m["length"] >= 1
    ]
    ok.sort(key=lambda m: (m["period"], m["ended_at"], m["match_id"]))
    counted = []
    for m in ok:
        w, lo, n = m["winner_id"], m["loser_id"], m["length"]
        t = int(m["ended_at"].timestamp()) * 1_000_000 + m["ended_at"].microsecond
        pair = (min(w, lo), max(w, lo))
        window = recent[pair]
        changes = len(window) < r.fair_play_max or t - window[0] >= r.fair_play_window_us
        a, b = ratings[w], ratings[lo]
        if changes:
            p_w = 1 - 1 / (10 ** ((a - b) * math.sqrt(n) / r.scale) + 1)
            p_l = 1 - 1 / (10 ** ((b - a) * math.sqrt(n) / r.scale) + 1)
            v = r.value_factor * math.sqrt(n)
            m_w = max(r.multiplier_min, r.multiplier_max - (exp[w] + n) / r.experience_divisor)
            m_l = max(r.multiplier_min, r.multiplier_max - (exp[lo] + n) / r.experience_divisor)
            ratings[w] = a + v * (1 - p_w) * m_w
            ratings[lo] = b + -v * p_l * m_l
            recent[pair] = [*window, t][-r.fair_play_max :]
        else:
            ratings[w], ratings[lo] = a + 0.0, b + 0.0
        counted.append(changes)
        exp[w] += n
        exp[lo] += n
        played[w] += 1
        played[lo] += 1
    state = {p: (ratings[p], exp[p], played[p]) for p in played}
    return state, counted, dict(recent)
