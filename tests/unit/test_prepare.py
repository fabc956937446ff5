"""The first-run line: numba's cache of a kernel read as cold or warm, and the line's text."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from pipelines.prepare import GROUPS, KernelGroup, _has_pgn, is_cached, preparing_lines

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

    from pipelines import runner

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


def test_no_warm_up_process_when_at_most_one_group_is_cold(tmp_path: Path) -> None:
    from pipelines.prepare import start_warm_up

    warm = KernelGroup("warm", (len,), 1, lambda inbox: True)  # not a numba kernel: cached
    assert start_warm_up(tmp_path, [warm, warm]) is None


def test_an_ended_warm_up_leaves_no_scratch_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warm-up is killed once the kernels are cached: the run removes its scratch folder
    (inbox copy, lake, Dagster home), which the killed process cannot."""
    import tempfile
    from types import SimpleNamespace

    from pipelines.prepare import start_warm_up

    index = SimpleNamespace(_load_index=dict, _index_path=str(tmp_path / "no-such-index"))
    kernel = SimpleNamespace(_cache=SimpleNamespace(_cache_file=index))  # never cached
    cold = KernelGroup("cold", (kernel,), 1, lambda inbox: True)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    warm_up = start_warm_up(tmp_path, [cold, cold])
    assert warm_up is not None
    assert warm_up.folder.parent == tmp_path and warm_up.folder.is_dir()
    warm_up.stop()
    assert warm_up.process.poll() is not None
    assert list(tmp_path.glob("ratings-warm-up-*")) == []


def test_the_warm_up_process_caches_the_rating_kernels_not_the_scanner(tmp_path: Path) -> None:
    """The warm-up rates the samples without their PGN files: in a fresh numba cache it leaves
    only the PGN scanner for the run itself to compile."""
    import os
    import subprocess

    from pipelines.prepare import SAMPLES, WARMED

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    env.pop("DAGSTER_HOME", None)
    probe = (
        "from pathlib import Path\n"
        "from pipelines.prepare import SAMPLES, WARMED, cold_groups, is_cached\n"
        "print([g.name for g in cold_groups(SAMPLES)])\n"
        "print([k.py_func.__name__ for k in WARMED if not is_cached(k)])\n"
    )
    root = Path(__file__).resolve().parents[2]

    def cold() -> str:
        return subprocess.run(
            [sys.executable, "-c", probe], cwd=root, env=env, capture_output=True, text=True
        ).stdout.strip()

    groups, uncached = cold().splitlines()
    assert groups == "['the PGN scanner', 'the rating kernels']"
    assert uncached == str([k.py_func.__name__ for k in WARMED])
    subprocess.run(
        [sys.executable, "-m", "pipelines.prepare"], cwd=root, env=env, check=True, timeout=600
    )
    # every kernel a run waits for is cached by the warm-up (else the run would wait for its end)
    assert cold().splitlines() == ["['the PGN scanner']", "[]"]
    assert SAMPLES.is_dir()


def test_ratings_run_starts_the_warm_up_first_and_always_ends_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ratings run` starts a first run's warm-up before importing Dagster (so it compiles
    meanwhile), hands it to the run, and ends it even when the run fails."""
    from pipelines import cli, prepare, runner

    events: list[str] = []

    class FakeWarmUp:
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
    assert events == ["start", "run", "stop"]
