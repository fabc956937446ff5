"""FIDE conversion tables (RULES §3.1 and §3.2), declared once, in integer hundredths.

Table 8.1.2 turns a rating difference D into the expected score PD of the higher-rated (H) and
lower-rated (L = 1 - H) side; table 8.1.1 turns a score fraction p into a rating difference dp.
Both are held as exact integers (PD in hundredths) and exposed as lookup arrays indexed by |D|
or by p in hundredths, so the engines look values up without floats and without Python loops:

- `PD_HIGH_BY_ABS_D[d]` is H in hundredths for |D| = d, d in 0..`PD_MAX_INDEX` (736 = "> 735").
- `pd_hundredths(d)` / `pd_hundredths_expr(expr)`: PD in hundredths for the player whose
  opponent's rating minus own is `d` (d > 0: the player is the lower side and gets L).
- `dp_for_p_hundredths(p)` / `dp_expr(expr)`: dp for p in hundredths 0..100 (dp(p) = -dp(1-p)).

UKD (RULES §4) uses the same table 8.1.2 and table 8.1.1.
"""

from __future__ import annotations

import numpy as np
import polars as pl

# --- Table 8.1.2 (RULES §3.1): rows (lowest |D|, highest |D|, H in hundredths) --------------------

PD_TABLE: tuple[tuple[int, int, int], ...] = (
    (0, 3, 50),
    (4, 10, 51),
    (11, 17, 52),
    (18, 25, 53),
    (26, 32, 54),
    (33, 39, 55),
    (40, 46, 56),
    (47, 53, 57),
    (54, 61, 58),
    (62, 68, 59),
    (69, 76, 60),
    (77, 83, 61),
    (84, 91, 62),
    (92, 98, 63),
    (99, 106, 64),
    (107, 113, 65),
    (114, 121, 66),
    (122, 129, 67),
    (130, 137, 68),
    (138, 145, 69),
    (146, 153, 70),
    (154, 162, 71),
    (163, 170, 72),
    (171, 179, 73),
    (180, 188, 74),
    (189, 197, 75),
    (198, 206, 76),
    (207, 215, 77),
    (216, 225, 78),
    (226, 235, 79),
    (236, 245, 80),
    (246, 256, 81),
    (257, 267, 82),
    (268, 278, 83),
    (279, 290, 84),
    (291, 302, 85),
    (303, 315, 86),
    (316, 328, 87),
    (329, 344, 88),
    (345, 357, 89),
    (358, 374, 90),
    (375, 391, 91),
    (392, 411, 92),
    (412, 432, 93),
    (433, 456, 94),
    (457, 484, 95),
    (485, 517, 96),
    (518, 559, 97),
    (560, 619, 98),
    (620, 735, 99),
)
PD_ABOVE_TABLE = 100
"""H for |D| > 735 (PD 1.0 for the higher side, .00 for the lower)."""

PD_MAX_INDEX = PD_TABLE[-1][1] + 1
"""Index of the "> 735" entry in `PD_HIGH_BY_ABS_D`; larger |D| are clipped to it."""


def _build_pd_array() -> np.ndarray:
    """Expand table 8.1.2 into an array indexed by |D| (checked contiguous, so a typo fails)."""
    arr = np.full(PD_MAX_INDEX + 1, -1, dtype=np.int64)
    expected_low = 0
    for low, high, h in PD_TABLE:
        if low != expected_low or high < low:
            raise ValueError(f"table 8.1.2 is not contiguous at {low}-{high}")
        arr[low : high + 1] = h
        expected_low = high + 1
    arr[PD_MAX_INDEX] = PD_ABOVE_TABLE
    return arr


PD_HIGH_BY_ABS_D: np.ndarray = _build_pd_array()
_PD_HIGH_SERIES = pl.Series("pd_high", PD_HIGH_BY_ABS_D, dtype=pl.Int64)


def pd_hundredths(d: int) -> int:
    """PD in hundredths for a player whose opponent is `d` points above them (d < 0: below)."""
    h = int(PD_HIGH_BY_ABS_D[min(abs(int(d)), PD_MAX_INDEX)])
    if d > 0:
        return 100 - h
    return h


def pd_hundredths_expr(d: pl.Expr) -> pl.Expr:
    """Vectorized `pd_hundredths`: H for d <= 0 (the player is the higher side), else L = 100 - H.

    d in 0..3 gives 50 either way, so equal ratings always give .50.
    """
    high = pl.lit(_PD_HIGH_SERIES).gather(d.abs().clip(0, PD_MAX_INDEX).cast(pl.Int64))
    return pl.when(d > 0).then(100 - high).otherwise(high).cast(pl.Int64)


# --- Table 8.1.1 (RULES §3.2): p (hundredths, >= 50) -> dp ------------------------------------

DP_TABLE: tuple[int, ...] = (
    0, 7, 14, 21, 29, 36, 43, 50, 57, 65, 72,  # .50 - .60
    80, 87, 95, 102, 110, 117, 125, 133, 141, 149,  # .61 - .70
    158, 166, 175, 184, 193, 202, 211, 220, 230, 240,  # .71 - .80
    251, 262, 273, 284, 296, 309, 322, 336, 351, 366,  # .81 - .90
    383, 401, 422, 444, 470, 501, 538, 589, 677, 800,  # .91 - 1.0
)  # fmt: skip
"""dp for p = .50, .51, ..., 1.00 (index = p in hundredths - 50)."""


def _build_dp_array() -> np.ndarray:
    """dp for p in hundredths 0..100, with dp(p) = -dp(1 - p) below .50."""
    if len(DP_TABLE) != 51:
        raise ValueError("table 8.1.1 must have 51 entries (.50 to 1.00)")
    arr = np.zeros(101, dtype=np.int64)
    for i, dp in enumerate(DP_TABLE):
        arr[50 + i] = dp
        arr[50 - i] = -dp
    return arr


DP_BY_P_HUNDREDTHS: np.ndarray = _build_dp_array()
_DP_SERIES = pl.Series("dp", DP_BY_P_HUNDREDTHS, dtype=pl.Int64)


def dp_for_p_hundredths(p: int) -> int:
    """dp for a score fraction given in hundredths (0..100)."""
    if not 0 <= p <= 100:
        raise ValueError(f"p must be 0..100 hundredths, got {p}")
    return int(DP_BY_P_HUNDREDTHS[p])


def dp_expr(p_hundredths: pl.Expr) -> pl.Expr:
    """Vectorized `dp_for_p_hundredths`."""
    return pl.lit(_DP_SERIES).gather(p_hundredths.clip(0, 100).cast(pl.Int64))
