"""A first run's numba compiles: the line it prints so that it never sits silent, and the
warm-up processes that compile the cold kernel groups beside it.

numba compiles each kernel on its first call and caches the machine code (`cache=True`, in the
`__pycache__` folders beside the sources, or under `NUMBA_CACHE_DIR`); only a run on a fresh
machine or clone (or after a kernel's source changed) pays for it. Whether a kernel's cache is
cold is read cheaply from numba's index file for it: no compiling, no loading of machine code.
A warm-up process compiles a group for the argument types recorded in `kernel_signatures.json`,
with no data and without importing Dagster.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rating_core.ingest import pgn_scan
from rating_core.ingest.inbox import PGN_SUFFIXES
from rating_core.kernels import codes
from rating_core.systems.fibs import classification as fibs_classification
from rating_core.systems.fibs import kernel as fibs_kernel
from rating_core.systems.fibs import pairs as fibs_pairs
from rating_core.systems.fide import steps as fide
from rating_core.systems.site import classification as site_classification
from rating_core.systems.site import kernel as site_kernel


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


# Seconds: how long each group's warm-up process takes on the 2-core machine with an empty
# cache, both running side by side as a first run starts them (`python -m pipelines.cli.prepare
# GROUP` on a fresh copy of the tree, 2026-12-04): the scanner 7.4-7.6 s, the rating and coding
# kernels 5.5-5.7 s. An earlier count of numba's thread CPU inside one run said 13.0 and 9.9 s.
WARMED = (
    codes._code_views,
    codes._lookup_views,
    codes._apply_rank,
    codes._rows_where_both_zero,
    codes._order_scan,
    codes._find_views,
    site_classification._classify_kernel,
    site_kernel.replay_kernel,
    site_kernel.state_rows,
    fibs_classification._classify_matches,
    fibs_kernel.time_profile,
    fibs_kernel.replay_kernel,
    fibs_pairs.pair_times,
    fibs_pairs.keep_recent,
    fide._counted_sums_kernel,
)
"""The rating kernels: every numba entry point a run over the samples calls, besides the PGN
scanner (their helpers are compiled into them). A kernel missing here is compiled by the run
itself, on its first call."""

GROUPS = (
    KernelGroup("the PGN scanner", (pgn_scan._scan,), 8, _has_pgn),
    KernelGroup("the rating kernels", WARMED, 6, lambda inbox: True),
)
SCANNER = GROUPS[0]
"""The scanner's group: the PGN read-ahead waits for it alone."""


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
    return [_preparing_line(g) for g in cold_groups(inbox, groups)]


def _preparing_line(group: KernelGroup) -> str:
    """`preparing the PGN scanner (first run on this machine, about 8 s)`."""
    return f"preparing {group.name} (first run on this machine, about {group.seconds} s)"


SAMPLES = Path(__file__).resolve().parents[2] / "data_samples"
"""The project's sample inbox: `pipelines.cli.signatures` runs the pipeline on it."""

SIGNATURES_FILE = Path(__file__).with_name("kernel_signatures.json")
"""The argument types each kernel of `GROUPS` is compiled for in a run (numba's own reprs, a
named record's as `type_text` writes it; one list per kernel), recorded from a run over the samples by `python -m pipelines.cli.signatures`; a test checks that a run compiles exactly these."""

WARM_UP_WAIT_S = 120
"""Longest a run waits for a warm-up process (each compiles in about 6 to 8 s on the 2-core
machine, side by side)."""

WARM_UP_POLL_S = 0.05


def kernel_name(kernel: Any) -> str:
    """`module.function` of a numba kernel: its key in `SIGNATURES_FILE`."""
    return f"{kernel.py_func.__module__}.{kernel.py_func.__qualname__}"


def type_text(numba_type: Any) -> str:
    """An argument type as `SIGNATURES_FILE` records it: numba's own repr, except for a named
    tuple (a kernel's named record of arrays), whose repr names neither its class's module nor
    its arrays' layout, which is written `record('module.Class', [field types])`."""
    from numba.core import types

    # numba's two BaseNamedTuple classes: the base itself declares neither attribute read here
    if isinstance(numba_type, (types.NamedTuple, types.NamedUniTuple)):
        cls = numba_type.instance_class
        fields = ", ".join(type_text(t) for t in numba_type.types)
        return f"record({cls.__module__ + '.' + cls.__qualname__!r}, [{fields}])"
    return repr(numba_type)


def signature_text(signature: Sequence[Any]) -> str:
    """A kernel's argument types as `SIGNATURES_FILE` records them (numba's repr of the tuple
    where no argument is a named record)."""
    texts = [type_text(t) for t in signature]
    return "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"


def _record_type(name: str, fields: list[Any]) -> Any:
    """The numba type of a named record of class `name` ('module.Class') with `fields`: what
    `type_text` wrote."""
    import importlib

    from numba.core import types

    module, _, qualname = name.rpartition(".")
    return types.BaseTuple.from_types(fields, getattr(importlib.import_module(module), qualname))


def signature_of(text: str) -> tuple[Any, ...]:
    """The numba argument types that `signature_text` wrote as `text`."""
    from numba.core import types

    # the reprs are numba type constructors; `record` rebuilds a named record (`type_text`)
    names = {"__builtins__": {}, **vars(types), "record": _record_type}
    return tuple(eval(text, names))  # our own file of numba type reprs


def recorded_signatures() -> dict[str, list[str]]:
    """`SIGNATURES_FILE` read (empty when it is missing)."""
    try:
        return dict(json.loads(SIGNATURES_FILE.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return {}


def compile_recorded(kernels: Iterable[Any]) -> None:
    """Compile each of `kernels` for its recorded argument types (or load it from numba's cache),
    without data: what a warm-up process does. A signature numba refuses (a record older than
    the kernel's source) is skipped: the run then compiles that kernel itself."""
    recorded = recorded_signatures()
    for kernel in kernels:
        for text in recorded.get(kernel_name(kernel), ()):
            try:
                kernel.compile(signature_of(text))
            except Exception:  # a stale record costs the run one compile
                continue


def _ready(group: KernelGroup) -> bool:
    return all(is_cached(kernel) for kernel in group.kernels)


@dataclass
class WarmUp:
    """Processes compiling a first run's cold kernel groups (one each) while the run imports
    Dagster and ingests: numba's compiler holds the GIL, so only other processes put the second
    core to work, and none of them waits for data."""

    processes: dict[str, subprocess.Popen[bytes]]
    groups: dict[str, KernelGroup]

    def wait_for(self, group: KernelGroup, seconds: float = WARM_UP_WAIT_S) -> None:
        """Return once every kernel of `group` is in numba's cache, or its process has ended (a
        group nobody compiles returns at once), or after `seconds`. numba writes each cache file
        under a temporary name and renames it, so a kernel seen cached is whole."""
        process = self.processes.get(group.name)
        if process is None:
            return
        deadline = time.monotonic() + seconds
        while process.poll() is None and time.monotonic() < deadline and not _ready(group):
            time.sleep(WARM_UP_POLL_S)

    def lines(self) -> list[str]:
        """The line per group being compiled that a first run prints (`preparing_lines`)."""
        return [_preparing_line(g) for g in self.groups.values()]

    def progress(self) -> str:
        """The groups still compiling, read from numba's cache indexes (a real count, not a
        guess): `preparing the PGN scanner, the rating kernels`, and once one group is left,
        how many of its kernels are ready: `preparing the rating kernels (9 of 15 ready)`."""
        pending = [g for g in self.groups.values() if not _ready(g)]
        if not pending:
            return "preparing the kernels"
        if len(pending) > 1 or len(pending[0].kernels) == 1:
            return "preparing " + ", ".join(g.name for g in pending)
        group = pending[0]
        done = sum(is_cached(k) for k in group.kernels)
        return f"preparing {group.name} ({done} of {len(group.kernels)} ready)"

    def finish(self) -> None:
        """Wait for every group (the run needs all it started, at most WARM_UP_WAIT_S in all),
        then end the processes."""
        deadline = time.monotonic() + WARM_UP_WAIT_S
        for group in self.groups.values():
            self.wait_for(group, max(0.0, deadline - time.monotonic()))
        self.stop()

    def stop(self) -> None:
        """End the processes that still run (a run that ended early needs them no more)."""
        for process in self.processes.values():
            if process.poll() is None:
                process.kill()
                process.wait()


def start_warm_up(inbox: Path, groups: Sequence[KernelGroup] = GROUPS) -> WarmUp | None:
    """Start one process per group this run needs whose kernels are not cached yet (a first run
    on the machine), each compiling its group for the recorded argument types; None when
    everything is cached."""
    cold = cold_groups(inbox, groups)
    if not cold:
        return None
    processes: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for group in cold:
            processes[group.name] = subprocess.Popen(
                [sys.executable, "-m", "pipelines.cli.prepare", group.name],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
    except BaseException:
        WarmUp(processes, {}).stop()
        raise
    return WarmUp(processes, {g.name: g for g in cold})


def busy_line(load: float | None = None, cores: int | None = None) -> str:
    """When the machine is busy (its load average over the last minute at least its cores), the
    line saying that the estimates, measured on an idle machine, will run long; else ``."""
    load = os.getloadavg()[0] if load is None else load
    cores = (os.cpu_count() or 1) if cores is None else cores
    if load < cores:
        return ""
    return f"this machine is busy (load {load:.0f} on {cores} cores): it will take longer"


def first_import_note() -> str:
    """`, compiling their bytecode` when Dagster's modules have no bytecode yet (the first run
    of a fresh `make run`, which lets each import write its own: see the Makefile), else ``."""
    spec = importlib.util.find_spec("dagster")
    origin = spec.origin if spec is not None else None
    if origin is None or Path(importlib.util.cache_from_source(origin)).exists():
        return ""
    return ", compiling their bytecode"


def main(arguments: list[str]) -> int:
    """`python -m pipelines.cli.prepare GROUP...` compiles the named groups (a warm-up process);
    `python -m pipelines.cli.signatures` records `SIGNATURES_FILE` (it runs the pipeline, which
    imports this module: apart, so that no two CLI modules import each other)."""
    if "--record" in arguments:
        print(
            "prepare: signatures are recorded by `python -m pipelines.cli.signatures`",
            file=sys.stderr,
        )
        return 2
    by_name = {g.name: g for g in GROUPS}
    for name in arguments:
        if name in by_name:
            compile_recorded(by_name[name].kernels)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
