"""Dagster resources and instance: where the inbox and the lake are, where runs are kept (DESIGN §6)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import dagster as dg

from rating_core.budget import MemoryBudget
from rating_core.lake.lock import LockHolder, hold_lake_unless_held
from rating_core.lake.storage import INSTANCE_DIR
from rating_core.systems.late_results import (
    DEFAULT_POLICY,
    LateResultsPolicy,
    late_results_policy,
)


class PipelinePaths(dg.ConfigurableResource):
    """The inbox to read and the lake to write; both default to the project's sample set."""

    inbox: str = "data_samples"
    lake: str = "lake"
    memory: int = 0
    """The run's memory budget in bytes (`ratings run --memory`; 0: none given)."""
    late_results: str = ""
    """The late-results policy of each list family as JSON (`LateResultsPolicy.as_json`, from
    `ratings.toml`'s `[late_results]`); empty: the defaults (RULES §3.4)."""

    @property
    def inbox_path(self) -> Path:
        """The inbox as a Path."""
        return Path(self.inbox)

    @property
    def lake_path(self) -> Path:
        """The lake as a Path (created on first write)."""
        return Path(self.lake)

    @property
    def budget(self) -> MemoryBudget:
        """The run's memory budget (`rating_core.budget`), the run's base set aside: what the
        ingest's work shares out."""
        return MemoryBudget.for_run(self.memory or None)

    def rating_budget(self) -> MemoryBudget:
        """The run's memory budget with the lake's players and games set aside as well: what
        the rating's and the publishing's batches share out."""
        if not self.memory:
            return self.budget
        from rating_core.lake.run_size import run_size

        return self.budget.holding(*run_size(self.lake_path))

    @property
    def late_results_policy(self) -> LateResultsPolicy:
        """The run's late-results policy (`rating_core.systems.late_results`)."""
        if not self.late_results:
            return DEFAULT_POLICY
        return late_results_policy(json.loads(self.late_results), "the run's late_results")

    @contextlib.contextmanager
    def yield_for_execution(self, context: dg.InitResourceContext) -> Iterator[PipelinePaths]:
        """Hold the lake's lock while the run (or, on the multiprocess executor, the step) uses
        it, so a run started from the UI, the sensor or the schedule never interleaves with a
        `ratings run` on the same lake; the steps of `ratings run` itself find the lock theirs."""

        def waiting(holder: LockHolder) -> None:
            who = f" (pid {holder.pid}: {holder.command})" if holder.pid is not None else ""
            if context.log is not None:  # a run's context has one; a hand-built one may not
                context.log.info(f"waiting for the run holding lake '{self.lake}'{who} to finish")

        if context.run is None:  # a sensor's or schedule's evaluation: it reads, never writes
            yield self
            return
        command = f"dagster run {context.run.run_id}"
        with hold_lake_unless_held(self.lake_path, command, on_wait=waiting):
            yield self


INSTANCE_YAML = """\
# The Dagster instance of this lake, written by `ratings run` / `ratings ui` when DAGSTER_HOME is
# unset: both use it, so the UI shows the runs of the command line. Embedded: the storage is
# Dagster's default for a home folder, sqlite files beside this one (no server, no daemon for
# `ratings run`). Safe to delete: the lake's lists do not depend on it. To keep the runs on a
# PostgreSQL server instead, set DAGSTER_HOME to a folder whose dagster.yaml says so.
telemetry:
  enabled: false
nux:
  enabled: false
"""
"""The `dagster.yaml` written into a new `<lake>/.dagster` (an existing one is left as it is,
unless it is `EARLIER_INSTANCE_YAML`)."""


EARLIER_INSTANCE_YAML = """\
# The Dagster instance of this lake, written by `ratings run` / `ratings ui` when DAGSTER_HOME is
# unset: both use it, so the UI shows the runs of the command line. Embedded: the storage is
# Dagster's default for a home folder, sqlite files beside this one (no server, no daemon for
# `ratings run`). Safe to delete: the lake's lists do not depend on it.
telemetry:
  enabled: false
nux:
  enabled: false
compute_logs:
  module: dagster._core.storage.noop_compute_log_manager
  class: NoOpComputeLogManager
"""
"""The `dagster.yaml` earlier versions wrote, naming a class by Dagster's private module path:
found unedited in a lake, it is replaced by `INSTANCE_YAML`."""


def instance_home(lake: Path | str) -> Path:
    """The Dagster home of `lake`: DAGSTER_HOME when the user set it, else `<lake>/.dagster`
    (absolute, created with its `dagster.yaml` when missing)."""
    if os.environ.get("DAGSTER_HOME"):
        return Path(os.environ["DAGSTER_HOME"])
    home = Path(lake).resolve() / INSTANCE_DIR
    config = home / "dagster.yaml"
    if not config.is_file() or _written_by_an_earlier_version(config):
        home.mkdir(parents=True, exist_ok=True)
        config.write_text(INSTANCE_YAML, encoding="utf-8")
    return home


def _written_by_an_earlier_version(config: Path) -> bool:
    """True when `config` is, unedited, the `dagster.yaml` an earlier version wrote."""
    return config.read_text(encoding="utf-8") == EARLIER_INSTANCE_YAML


def lake_instance(lake: Path | str) -> dg.DagsterInstance:
    """The persistent Dagster instance `ratings run` records its runs in: the one DAGSTER_HOME
    configures when the user set it (sqlite, PostgreSQL, whatever its dagster.yaml says), else
    the lake's own (`instance_home`), both exactly as Dagster's storage keeps them."""
    if os.environ.get("DAGSTER_HOME"):
        return dg.DagsterInstance.get()
    return dg.DagsterInstance.from_config(str(instance_home(lake)))
