"""Shared fixtures: paths to the project's sample inbox and to the external test data."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest
from hypothesis import settings

from rating_core import budget
from tests.support.inbox import write_inbox

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "data_samples"
EXTERNAL = ROOT.parent / "shared" / "external"

# Properties hold whatever the machine's load: an example's time is not what they test, and a
# shared machine (CI, several jobs on two cores) can take an example past Hypothesis's 200 ms.
settings.register_profile("ratings", deadline=None)
settings.load_profile("ratings")


@pytest.fixture(scope="session", autouse=True)
def no_heartbeat() -> Iterator[None]:
    """Commands run by tests (and by module or session fixtures) print no heartbeat lines
    (`pipelines.cli.ticker`): their stderr is exactly their own lines however busy the machine.
    A test of the heartbeat sets it again."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RATINGS_HEARTBEAT_SECONDS", "0")
        yield


@pytest.fixture(scope="session")
def samples() -> Path:
    """The sample inbox that `ratings run` uses by default."""
    return SAMPLES


def require_external() -> Path:
    """The external test data folder `../shared/external`, or skip the test when it is absent.

    A fresh clone has no `../shared` beside it, so its tests skip (naming the folder); CI sets
    `CI=true` and must have the folder, so there its absence fails the test instead.
    """
    if EXTERNAL.is_dir():
        return EXTERNAL
    message = (
        f"the external test data folder {EXTERNAL} (../shared/external beside the project) "
        "is absent"
    )
    if os.environ.get("CI", "").strip().lower() == "true":
        pytest.fail(f"{message}; with CI=true it must be there", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def external() -> Path:
    """Real files nobody here wrote (read in place, never copied into the project)."""
    return require_external()


@contextmanager
def todays_fide_rules() -> Iterator[None]:
    """Rate every FIDE period by today's rules of its list (RULES §3), without the era of its
    date nor the one-time raises (RULES §3.3): for tests of today's rules whose periods (2024) predate
    them. The eras themselves are tested in `tests/rating_core/systems/fide/test_eras.py`."""
    from rating_core.systems import federation
    from rating_core.systems.fide import period
    from rating_core.systems.fide.rules import FIDE_ERAS_BY_LIST

    def todays(_period: str, rating_list: str = "standard") -> object:
        return FIDE_ERAS_BY_LIST[rating_list][-1]

    def none(*_args: object) -> None:
        return None

    with pytest.MonkeyPatch.context() as patch:
        for module in (period, federation):
            patch.setattr(module, "rules_for_period", todays)
            patch.setattr(module, "compression_for_list", none)
            patch.setattr(module, "fast_raise_for_list", none)
        yield


@pytest.fixture(scope="module")
def fide_rules_of_today() -> Iterator[None]:
    """`todays_fide_rules` for a whole test module (`pytestmark = usefixtures(...)`)."""
    with todays_fide_rules():
        yield


_HOLDER = """
import sys
from rating_core.lake.lock import hold_lake
with hold_lake(sys.argv[1], "ratings run (another process)"):
    print("held", flush=True)
    sys.stdin.read()  # until the test closes stdin
"""


@contextmanager
def _held_elsewhere(lake: Path) -> Iterator[subprocess.Popen[str]]:
    """The lake's lock held by another process for the block (released when it ends)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(lake)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.kill()
        holder.wait()


@pytest.fixture
def lake_held_elsewhere() -> Callable[[Path], AbstractContextManager[subprocess.Popen[str]]]:
    """`with lake_held_elsewhere(lake) as holder:` another process holds the lake's lock; closing
    `holder.stdin` releases it."""
    return _held_elsewhere


@pytest.fixture
def csv_in_chunks_of_two_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bad-input case reads its CSV files two rows at a time (`budget.CSV_ROWS`, in this process):
    what a case asserts of a whole file's reading holds across chunks too (issue 31 item 2).
    The `ratings` command's cases, in a process of their own, read them whole."""
    monkeypatch.setattr(budget, "CSV_ROWS", 2)


@pytest.fixture
def inbox_factory(tmp_path: Path):
    """`inbox_factory({...})` writes an inbox in this test's temporary folder."""

    def make(files: dict[str, str | bytes]) -> Path:
        return write_inbox(tmp_path, files)

    return make
