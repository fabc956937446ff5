"""Fresh output memory mapped in ahead of a kernel, on another thread.

The first write to each page of a new array is a page fault (the system clears the page and,
in a virtual machine whose host hands memory back, first backs it): for the site replay's
history, about 290 MB on 1M games, these faults took longer than the replay's arithmetic, one
after another on the kernel's thread. `populate_behind` asks the system to map the pages in
(`MADV_POPULATE_WRITE`, Linux 5.14 and later: contents untouched, so it may race the kernel
safely) from the arrays' ends backwards while the kernel, which writes from their starts,
runs on this thread without the GIL; the two meet in the middle. Elsewhere it does nothing.
"""

from __future__ import annotations

import ctypes
import mmap
import sys
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

MADV_POPULATE_WRITE = 23
"""Linux's madvise advice that faults pages in for writing without changing their contents."""
PAGE = mmap.PAGESIZE
STEP = 4 << 20
"""Bytes mapped per call (the thread takes the GIL between calls: about a hundred calls for the
history of 1M games)."""
MIN_BYTES = 32 << 20
"""Below this the faults cost less than starting the thread."""


def _madvise() -> Any:
    """libc's `madvise` (None where there is no such call, or not Linux), from the symbols the
    process already has loaded: no library search at import."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError, TypeError):
        return None
    function.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    function.restype = ctypes.c_int
    return function


_MADVISE = _madvise()


def _spans(arrays: Sequence[np.ndarray]) -> list[tuple[int, int]]:
    """The whole pages of each array's memory, as (start, end) addresses, in the order to map
    them: every array's last step first, then the step before it, so that the kernel's many
    forward-moving streams are all met from behind."""
    chunks: list[list[tuple[int, int]]] = []
    for array in arrays:
        start = -(-array.ctypes.data // PAGE) * PAGE
        end = (array.ctypes.data + array.nbytes) // PAGE * PAGE
        pieces = []
        while end - start >= PAGE:
            low = max(start, end - STEP)
            pieces.append((low, end))
            end = low
        chunks.append(pieces)
    order: list[tuple[int, int]] = []
    for level in range(max((len(c) for c in chunks), default=0)):
        order.extend(c[level] for c in chunks if level < len(c))
    return order


class _Populating:
    """A thread mapping spans of memory in until done or stopped."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self._spans = spans
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ratings-populate", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        assert _MADVISE is not None
        for start, end in self._spans:
            if self._stop.is_set() or _MADVISE(start, end - start, MADV_POPULATE_WRITE) != 0:
                return  # an older system (EINVAL) or no memory left: the kernel faults them

    def join(self) -> None:
        """Stop after the current span and wait (the arrays stay valid: nothing was written)."""
        self._stop.set()
        self._thread.join()


class _Nothing:
    """What `populate_behind` returns when it starts no thread."""

    def join(self) -> None:
        """Nothing was started."""


def populate_behind(arrays: Sequence[np.ndarray]) -> _Populating | _Nothing:
    """Start mapping in the pages of `arrays` from their ends backwards on a thread (see the
    module's docstring); `join()` the result once the kernel that writes them returned. The
    caller keeps the arrays alive until then. Only C-contiguous arrays are mapped in: the pages
    of any other view are not all its own."""
    arrays = [a for a in arrays if a.nbytes and a.flags.c_contiguous]
    if _MADVISE is None or sum(a.nbytes for a in arrays) < MIN_BYTES:
        return _Nothing()
    return _Populating(_spans(arrays))
