"""Kernel inputs of one type: numba compiles (and caches) one machine-code version per argument
type, and a read-only array is another type than a writable one. Polars hands out read-only
arrays when it can share its memory and writable copies when it cannot (nulls filled, a cast), so
the same kernel met both and compiled twice, a second or two each time the other kind came up."""

from __future__ import annotations

import numpy as np


def readonly(array: np.ndarray) -> np.ndarray:
    """`array` as a read-only view (no copy): what every kernel input is passed as."""
    if not array.flags.writeable:
        return array
    view = array.view()
    view.flags.writeable = False
    return view
