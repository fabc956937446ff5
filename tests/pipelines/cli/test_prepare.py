"""The first-run line: numba's cache of a kernel read as cold or warm, and the line's text."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from pipelines.cli.prepare import GROUPS, KernelGroup, _has_pgn, is_cached, preparing_lines

KERNEL_SOURCE = """
import numba as nb


@nb.njit(cache=True)
def double(x):
    return 2 * x
"""


def _fresh_kernel(folder: Path, name: str):
    """A cached numba kernel defined in a new module file, so that nothing is cached for it."""
    path = folder / f"{name}.py"
    path.write_text(KERNEL_SOURCE)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module.double


def test_a_kernel_is_cold_until_its_first_call_compiles_it(tmp_path: Path) -> None:
    kernel = _fresh_kernel(tmp_path, "prepare_kernel_a")
    assert not is_cached(kernel)
    assert kernel(21) == 42
    assert is_cached(kernel)
    again = _fresh_kernel(tmp_path, "prepare_kernel_a")  # a later run of the same source
    assert is_cached(again)


def test_the_line_names_what_a_first_run_compiles(tmp_path: Path) -> None:
    kernel = _fresh_kernel(tmp_path, "prepare_kernel_b")
    groups = [KernelGroup("the test kernel", (kernel,), 3, lambda inbox: True)]
    other = _fresh_kernel(tmp_path, "prepare_kernel_d")
    groups.append(KernelGroup("the other kernel", (other,), 4, lambda inbox: True))
    assert preparing_lines(tmp_path, groups) == [
        "preparing the test kernel (first run on this machine, about 3 s)",
        "preparing the other kernel (first run on this machine, about 4 s)",
    ]
    kernel(1)
    other(1)
    assert preparing_lines(tmp_path, groups) == []


def test_only_kernels_the_run_needs_are_announced(tmp_path: Path) -> None:
    kernel = _fresh_kernel(tmp_path, "prepare_kernel_c")
    scanner = KernelGroup("the PGN scanner", (kernel,), 8, _has_pgn)
    inbox = tmp_path / "inbox"
    (inbox / "platform").mkdir(parents=True)
    (inbox / "platform" / "games.csv").write_text("")
    assert preparing_lines(inbox, [scanner]) == []
    (inbox / "platform" / "March.PGN.gz").write_bytes(b"")
    assert preparing_lines(inbox, [scanner]) == [
        "preparing the PGN scanner (first run on this machine, about 8 s)"
    ]


def test_the_groups_hold_cached_numba_kernels() -> None:
    for group in GROUPS:
        for kernel in group.kernels:
            assert getattr(kernel, "_cache", None) is not None, group.name


def test_ratings_run_prints_the_line_before_it_ingests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rich.console import Console

    from pipelines.cli import run as runner

    seen: list[Path] = []

    def lines(inbox: Path) -> list[str]:
        seen.append(inbox)
        return ["preparing the test kernel (first run on this machine, about 3 s)"]

    monkeypatch.setattr(runner, "preparing_lines", lines)
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    console = Console(record=True, width=80)
    runner.run_pipeline(inbox, tmp_path / "lake", console=console)
    assert seen == [inbox]
    assert console.export_text().splitlines()[0] == (
        "preparing the test kernel (first run on this machine, about 3 s)"
    )


def test_no_warm_up_process_when_nothing_is_cold(tmp_path: Path) -> None:
    from pipelines.cli.prepare import start_warm_up

    warm = KernelGroup("warm", (len,), 1, lambda inbox: True)  # not a numba kernel: cached
    assert start_warm_up(tmp_path, [warm, warm]) is None


def test_waiting_for_a_group_ends_when_it_is_cached_or_its_process_ends(tmp_path: Path) -> None:
    import subprocess

    from pipelines.cli.prepare import WarmUp

    kernel = _fresh_kernel(tmp_path, "prepare_kernel_w")
    group = KernelGroup("waited", (kernel,), 1, lambda inbox: True)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    warm_up = WarmUp({group.name: sleeper}, {group.name: group})
    kernel(1)  # cached meanwhile (as by the warm-up process): the wait returns at once
    warm_up.wait_for(group)
    assert sleeper.poll() is None
    warm_up.finish()  # waits for every group, then ends the processes
    assert sleeper.poll() is not None
    cold = KernelGroup("cold", (_fresh_kernel(tmp_path, "prepare_kernel_x"),), 1, lambda i: True)
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    WarmUp({cold.name: ended}, {cold.name: cold}).wait_for(cold)  # its process ended: no wait
    WarmUp({}, {}).wait_for(cold)  # nobody compiles it: no wait


def test_a_signature_with_named_records_is_read_back_as_the_same_types() -> None:
    """A kernel's named record of arrays (a NamedTuple) is recorded with its class and its
    arrays' exact types, so that the warm-up compiles it for the very types a run passes."""
    import numpy as np
    from numba import typeof

    from pipelines.cli.prepare import signature_of, signature_text
    from rating_core.kernels.arrays import readonly
    from rating_core.systems.site.kernel import RatedGames

    uniform = RatedGames(*(np.zeros(3, dtype=np.int32) for _ in RatedGames._fields))
    mixed = uniform._replace(w_score=readonly(np.zeros(3)))  # numba: NamedUniTuple, NamedTuple
    for record in (uniform, mixed):
        signature = (typeof(record), typeof(np.zeros((2, 2))), typeof(1.5), typeof(True))
        text = signature_text(signature)
        assert "rating_core.systems.site.kernel.RatedGames" in text
        assert signature_of(text) == signature
    plain = (typeof(np.zeros(1)),)
    assert signature_text(plain) == repr(plain)  # numba's repr where no record is passed
    assert signature_of(signature_text(plain)) == plain


@pytest.mark.slow
def test_the_recorded_signatures_are_what_a_run_compiles(tmp_path: Path) -> None:
    """The warm-up processes compile every kernel group for the argument types in
    `kernel_signatures.json`, without data; a run over the samples in that fresh numba cache
    then compiles nothing (numba counts a cache miss per compile) and calls each kernel with
    exactly the recorded types. When a kernel's arguments change, `python -m
    pipelines.cli.signatures` writes the file again."""
    import json
    import os
    import subprocess

    from pipelines.cli.prepare import GROUPS, SAMPLES, recorded_signatures

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    env.pop("DAGSTER_HOME", None)
    root = Path(__file__).resolve().parents[3]
    names = [g.name for g in GROUPS]
    subprocess.run(
        [sys.executable, "-m", "pipelines.cli.prepare", *names],
        cwd=root,
        env=env,
        check=True,
        timeout=600,
    )
    probe = (
        "import io, json, sys\n"
        "from pathlib import Path\n"
        "from rich.console import Console\n"
        "from pipelines.cli.prepare import GROUPS, SAMPLES, kernel_name, signature_text\n"
        "from pipelines.cli.run import run_pipeline\n"
        "run_pipeline(SAMPLES, Path(sys.argv[1]), console=Console(file=io.StringIO()))\n"
        "kernels = [k for g in GROUPS for k in g.kernels]\n"
        "print(json.dumps({kernel_name(k): [sorted(map(signature_text, k.signatures)),\n"
        "    sum(k._cache_misses.values())] for k in kernels}))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "lake")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    seen = json.loads(ran.stdout.strip().splitlines()[-1])
    assert {name: misses for name, (_, misses) in seen.items()} == dict.fromkeys(seen, 0)
    assert {name: sigs for name, (sigs, _) in seen.items()} == recorded_signatures()
    assert SAMPLES.is_dir()


def test_ratings_run_starts_the_warm_up_first_and_always_ends_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ratings run` starts a first run's warm-up before importing Dagster (so it compiles
    meanwhile), hands it to the run, and ends it even when the run fails."""
    from pipelines.cli import app as cli
    from pipelines.cli import prepare
    from pipelines.cli import run as runner

    events: list[str] = []

    class FakeWarmUp:
        def lines(self) -> list[str]:
            events.append("said")
            return ["preparing the kernels"]

        def finish(self) -> None:
            events.append("finish")

        def stop(self) -> None:
            events.append("stop")

    def start(inbox: Path) -> FakeWarmUp:
        events.append("start")
        return FakeWarmUp()

    def failing_run(inbox: Path, lake: Path, **kwargs: object) -> None:
        assert isinstance(kwargs["warm_up"], FakeWarmUp)
        events.append("run")
        raise RuntimeError("the run failed")

    monkeypatch.setattr(prepare, "start_warm_up", start)
    monkeypatch.setattr(runner, "run_pipeline", failing_run)
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    assert cli.main(["run", "--inbox", str(inbox), "--lake", str(tmp_path / "lake")]) == 1
    assert events == ["start", "said", "run", "stop"]


def test_recording_signatures_through_prepare_names_the_module_that_does_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`prepare --record` moved to `pipelines.cli.signatures` (which runs the pipeline, so it
    cannot live in a module the run imports): the old form says where, with a non-zero exit."""
    from pipelines.cli.prepare import main

    assert main(["--record"]) == 2
    assert "python -m pipelines.cli.signatures" in capsys.readouterr().err


def test_the_wait_names_the_groups_still_compiling_then_counts_the_last_ones_kernels(
    tmp_path: Path,
) -> None:
    """The heartbeat's line while a first run waits for its kernels: real counts, read from
    numba's cache, not a guess."""
    from pipelines.cli.prepare import WarmUp

    first = _fresh_kernel(tmp_path, "prepare_kernel_p")
    second = _fresh_kernel(tmp_path, "prepare_kernel_q")
    scanner = KernelGroup("the scanner", (_fresh_kernel(tmp_path, "prepare_kernel_s"),), 8, bool)
    kernels = KernelGroup("the kernels", (first, second), 6, bool)
    warm_up = WarmUp({}, {scanner.name: scanner, kernels.name: kernels})
    assert warm_up.progress() == "preparing the scanner, the kernels"
    scanner.kernels[0](1)  # compiled and cached (as by its warm-up process)
    assert warm_up.progress() == "preparing the kernels (0 of 2 ready)"
    first(1)
    assert warm_up.progress() == "preparing the kernels (1 of 2 ready)"


def test_a_busy_machine_is_said_to_take_longer_than_the_estimates() -> None:
    from pipelines.cli.prepare import busy_line

    assert busy_line(load=1.2, cores=2) == ""
    assert busy_line(load=13.6, cores=2) == (
        "this machine is busy (load 14 on 2 cores): it will take longer"
    )
