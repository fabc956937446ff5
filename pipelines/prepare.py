"""The line a first run prints while numba compiles its kernels, so that it never sits silent.

numba compiles each kernel on its first call and caches the machine code (`cache=True`, in the
`__pycache__` folders beside the sources, or under `NUMBA_CACHE_DIR`); only a run on a fresh
machine or clone (or after a kernel's source changed) pays for it. Whether a kernel's cache is
cold is read cheaply from numba's index file for it: no compiling, no loading of machine code.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rating_core.ingest import pgn_scan
from rating_core.ingest.inbox import PGN_SUFFIXES
from rating_core.kernels import codes
from rating_core.systems.fibs import replay as fibs
from rating_core.systems.fide import steps as fide
from rating_core.systems.site import replay as site


@dataclass(frozen=True)
class KernelGroup:
    """Kernels compiled together in a run, named for people, with their measured compile time."""

    name: str
    kernels: tuple[Any, ...]
    seconds: int
    needed: Callable[[Path], bool]


def _has_pgn(inbox: Path) -> bool:
    """True when the inbox holds a PGN file (plain or compressed): only then is the scanner run."""
    return any(
        path.name.lower().endswith(PGN_SUFFIXES) for path in inbox.rglob("*") if path.is_file()
    )


# Seconds: numba's compile time of each group in a first `ratings run` over data_samples (thread
# CPU seconds, which a quiet machine spends as wall time): the scanner 13.0 s; the rating and
# coding kernels 9.9 s together (site 4.1, FIBS 2.6, id coder 3.4 with replay order, FIDE 0.7).
WARMED = (
    codes._code_views,
    codes._lookup_views,
    codes._apply_rank,
    codes._rows_where_both_zero,
    codes._order_scan,
    codes._find_views,
    site._classify_kernel,
    site._held_counts,
    site._site_kernel,
    site._state_rows,
    fibs._classify_matches,
    fibs._time_profile,
    fibs._fibs_kernel,
    fibs._pair_rows,
    fibs._keep_recent,
    fide._counted_sums_kernel,
)
"""The rating kernels: every kernel the warm-up compiles (the samples without their PGN
files). Once all are in numba's cache the run goes on, without waiting for the warm-up to
publish its throw-away lists (about 3 s). A kernel missing here only makes the run wait for the
warm-up's end, as before; a kernel the warm-up never compiles makes the run compile it itself."""

GROUPS = (
    KernelGroup("the PGN scanner", (pgn_scan._scan,), 13, _has_pgn),
    KernelGroup("the rating kernels", WARMED, 10, lambda inbox: True),
)


def is_cached(kernel: Any) -> bool:
    """True when numba's cache holds machine code for `kernel` on this CPU and its current source.

    Reads only the kernel's cache index (numba's own loader, which checks the source stamp);
    when numba's internals differ from what this expects, answers from the index file's presence.
    """
    cache = getattr(kernel, "_cache", None)
    if cache is None or not hasattr(cache, "_cache_file"):
        return True  # not a cached numba kernel: nothing to prepare
    try:
        index = cache._cache_file._load_index()  # {} when absent or for an older source
        magic = kernel.targetctx.codegen().magic_tuple()  # this CPU and its features
        return any(key[1] == magic for key in index)
    except Exception:  # numba internals changed: fall back to the index file's presence
        return Path(cache._cache_file._index_path).exists()


def cold_groups(inbox: Path, groups: Iterable[KernelGroup] = GROUPS) -> list[KernelGroup]:
    """The groups this run needs of which no kernel is cached yet (a first run on the machine)."""
    return [g for g in groups if g.needed(inbox) and not any(is_cached(k) for k in g.kernels)]


def preparing_lines(inbox: Path, groups: Iterable[KernelGroup] = GROUPS) -> list[str]:
    """One line per group a first run compiles, with about how long it takes (each fits 80
    columns); empty when everything the run needs is cached."""
    return [
        f"preparing {g.name} (first run on this machine, about {g.seconds} s)"
        for g in cold_groups(inbox, groups)
    ]


SAMPLES = Path(__file__).resolve().parents[1] / "data_samples"
"""The project's sample inbox: what the warm-up process rates (its CSV and TRF files only)."""

WARM_UP_WAIT_S = 120
"""Longest a run waits for its warm-up process before rating (it compiles in about 10 s)."""


WARM_UP_POLL_S = 0.05


@dataclass
class WarmUp:
    """A second process compiling the rating kernels while this one compiles the PGN scanner,
    in a scratch folder of its own that this process removes once the warm-up has ended (it is
    killed, so it cannot tidy up after itself)."""

    process: subprocess.Popen[bytes]
    folder: Path

    def finish(self) -> None:
        """Wait until the warm-up has cached every kernel of `WARMED`, or has ended, then end it:
        the rating step would otherwise compile the same kernels a second time. numba writes
        each cache file under a temporary name and renames it, so ending the process never
        leaves a damaged one. Stop it if it hangs."""
        deadline = time.monotonic() + WARM_UP_WAIT_S
        while self.process.poll() is None and time.monotonic() < deadline:
            if all(is_cached(kernel) for kernel in WARMED):
                break
            time.sleep(WARM_UP_POLL_S)
        self.stop()

    def stop(self) -> None:
        """End the warm-up process if it still runs (a run that ended early needs it no more)
        and remove its scratch folder."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def start_warm_up(inbox: Path, groups: Iterable[KernelGroup] = GROUPS) -> WarmUp | None:
    """When a run must compile both the PGN scanner and the rating kernels, compile the rating
    kernels in a second process meanwhile (numba's compiler holds the GIL, so only another process
    puts a second core to work); None when there is nothing to gain. The warm-up rates the sample
    inbox's CSV and TRF files through the same pipeline, so it compiles the kernels for exactly the
    argument types a real run passes (they depend on the code path, not on the data)."""
    cold = cold_groups(inbox, groups)
    if len(cold) < 2 or not SAMPLES.is_dir():
        return None
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}  # its own throw-away home
    folder = Path(tempfile.mkdtemp(prefix="ratings-warm-up-"))
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "pipelines.prepare", str(folder)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return WarmUp(process, folder)


def _not_pgn(folder: str, names: list[str]) -> list[str]:
    """`shutil.copytree`'s ignore: the PGN files (the main run compiles the scanner)."""
    return [name for name in names if name.lower().endswith(PGN_SUFFIXES)]


def warm_rating_kernels(folder: Path) -> None:
    """Rate the sample inbox without its PGN files into a throw-away lake under `folder`, so
    that numba caches the rating kernels (the warm-up process's work)."""
    from rich.console import Console

    from pipelines.runner import run_pipeline

    inbox = folder / "inbox"
    shutil.copytree(SAMPLES, inbox, ignore=_not_pgn)
    run_pipeline(inbox, folder / "lake", console=Console(file=io.StringIO()))


if __name__ == "__main__":
    if len(sys.argv) > 1:  # the folder the starting run made and removes
        warm_rating_kernels(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory(prefix="ratings-warm-up-") as scratch:
            warm_rating_kernels(Path(scratch))
