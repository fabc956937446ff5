"""numba plumbing shared by the kernels: a software prefetch and an unaligned 8-byte load
(intrinsics), cache-line aligned arrays and the number of CPUs this process may use. Nothing here depends on what the kernels compute.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def _prefetch(typingctx, arr, idx):
    """Ask the CPU to start loading the cache line of 1-D `arr[idx]` for writing (no effect on
    results; the replays use it to overlap the cache misses of the next few games)."""
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty, idxty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        i = context.cast(builder, args[1], idxty, types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [i], wraparound=False)
        ptr = builder.bitcast(ptr, ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [ptr.type, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        # rw 1 (the line is about to be written), locality 3 (keep in all levels), data cache.
        builder.call(fn, [ptr, ir.Constant(i32, 1), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _load8(typingctx, arr, idx):
    """The 8 bytes arr[idx:idx + 8] of a uint8 array as a little-endian uint64 (an unaligned
    load, no bounds check: the caller knows idx + 8 <= len(arr)). The PGN scanner compares
    8-byte patterns with it."""
    sig = types.uint64(arr, idx)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, signature.args[0], ary, [args[1]])
        return builder.load(builder.bitcast(ptr, ir.IntType(64).as_pointer()), align=1)

    return sig, codegen


if TYPE_CHECKING:  # what a kernel calls: numba's stub types an intrinsic with its typing context

    def prefetch(arr: np.ndarray, idx: int | np.integer) -> None:
        """See `_prefetch`."""

    def load8(arr: np.ndarray, idx: int | np.integer) -> int:
        """See `_load8`."""

else:
    prefetch = _prefetch
    load8 = _load8


@njit(cache=True)
def table_bits(table: np.ndarray) -> int:
    """log2 of a hash table's number of rows (a power of two): the slot bits of the code tables
    (`kernels.codes`) and of the fair-play pair table (`systems.fibs.pairs`)."""
    bits = 0
    while (1 << bits) < table.shape[0]:
        bits += 1
    return bits


def aligned_empty(shape: tuple[int, ...], dtype: type, align: int = 128) -> np.ndarray:
    """An uninitialised C-contiguous array whose data starts on an `align`-byte boundary, so
    that fixed-size records never straddle more cache lines than they must."""
    itemsize = np.dtype(dtype).itemsize
    nbytes = int(np.prod(shape)) * itemsize
    raw = np.empty(nbytes + align, dtype=np.uint8)
    start = (-raw.ctypes.data) % align
    return raw[start : start + nbytes].view(dtype).reshape(shape)


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask, which a container or `taskset` may
    narrow below the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
