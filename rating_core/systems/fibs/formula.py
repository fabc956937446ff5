"""The FIBS formula (RULES §5): win chance, match value and new-player multiplier, as numba
functions that are its single implementation, so the replay kernel and the calculator can never
disagree.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def fibs_win_probability(rating: float, opponent: float, length: float, scale: float) -> float:
    """P = 1 − 1 / (10^((A − B)·√N / scale) + 1): the chance of `rating` winning an N-point match."""
    return 1.0 - 1.0 / (10.0 ** ((rating - opponent) * np.sqrt(length) / scale) + 1.0)


@njit(cache=True)
def fibs_multiplier(
    experience: float, length: float, m_max: float, m_min: float, divisor: float
) -> float:
    """m = max(m_min, m_max − (E + N) / divisor), the new-player multiplier (E before the match)."""
    return max(m_min, m_max - (experience + length) / divisor)


@njit(cache=True)
def fibs_value(length: float, factor: float) -> float:
    """V = factor·√N, the match value."""
    return factor * np.sqrt(length)
