"""Dagster resources and instance: where the inbox and the lake are, where runs are kept (DESIGN §6)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import sqlalchemy

from rating_core.budget import MemoryBudget
from rating_core.lake.lock import LockHolder, hold_lake_unless_held
from rating_core.lake.storage import INSTANCE_DIR


class PipelinePaths(dg.ConfigurableResource):
    """The inbox to read and the lake to write; both default to the project's sample set."""

    inbox: str = "data_samples"
    lake: str = "lake"
    memory: int = 0
    """The run's memory budget in bytes (`ratings run --memory`; 0: none given)."""

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
        """The run's memory budget (`rating_core.budget`)."""
        return MemoryBudget(self.memory or None)

    @contextlib.contextmanager
    def yield_for_execution(self, context: dg.InitResourceContext) -> Iterator[PipelinePaths]:
        """Hold the lake's lock while the run (or, on the multiprocess executor, the step) uses
        it, so a run started from the UI, the sensor or the schedule never interleaves with a
        `ratings run` on the same lake; the steps of `ratings run` itself find the lock theirs."""

        def waiting(holder: LockHolder) -> None:
            who = f" (pid {holder.pid}: {holder.command})" if holder.pid is not None else ""
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
# `ratings run`). Safe to delete: the lake's lists do not depend on it.
telemetry:
  enabled: false
nux:
  enabled: false
compute_logs:
  module: dagster._core.storage.noop_compute_log_manager
  class: NoOpComputeLogManager
"""
"""The `dagster.yaml` written into a new `<lake>/.dagster` (an existing one is left as it is)."""


def instance_home(lake: Path | str) -> Path:
    """The Dagster home of `lake`: DAGSTER_HOME when the user set it, else `<lake>/.dagster`
    (absolute, created with its `dagster.yaml` when missing)."""
    if os.environ.get("DAGSTER_HOME"):
        return Path(os.environ["DAGSTER_HOME"])
    home = Path(lake).resolve() / INSTANCE_DIR
    config = home / "dagster.yaml"
    if not config.is_file():
        home.mkdir(parents=True, exist_ok=True)
        config.write_text(INSTANCE_YAML, encoding="utf-8")
    return home


def _sqlite_without_fsync(dbapi_connection: object, _record: object) -> None:
    """Dagster's sqlite storage opens a connection, commits and closes it (a WAL checkpoint)
    for every event; each commit and close waits for the disk (about 50 ms a period on the
    2-core machine). The run history is a record, not the lake (the lists are safe in their
    own atomic files), so `ratings run` lets sqlite leave flushing to the operating system."""
    if isinstance(dbapi_connection, sqlite3.Connection):
        dbapi_connection.execute("PRAGMA synchronous=OFF")


def _reuse_sqlite_connections(instance: dg.DagsterInstance) -> None:
    """Let the instance's sqlite event log keep one engine (and pooled connection) per file.

    Dagster's `SqliteEventLogStorage` creates an engine, connects and disposes of it for every
    event it stores, and again to ask whether a table exists; a range of 60 periods stores about
    a thousand events (each partition's planned and done materialization, for every asset), which
    made that connection churn half of the run. Each event is still its own transaction and
    commit; only the connection is kept. Any other storage (a DAGSTER_HOME configured for
    Postgres) is left as it is.
    """
    from dagster._core.storage.event_log.sqlite.sqlite_event_log import (
        INDEX_SHARD_NAME,
        SqliteEventLogStorage,
    )
    from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS

    storage = instance.event_log_storage
    if type(storage) is not SqliteEventLogStorage or hasattr(storage, "_ratings_engines"):
        return
    engines: dict[str, sqlalchemy.engine.Engine] = {}
    tables: dict[str, bool] = {}

    def engine_for(shard: str) -> sqlalchemy.engine.Engine:
        engine = engines.get(shard)
        if engine is None:
            engine = sqlalchemy.create_engine(
                storage.conn_string_for_shard(shard),
                poolclass=sqlalchemy.pool.SingletonThreadPool,
                connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS},
            )
            if shard not in storage._initialized_dbs:
                storage._initdb(engine)
                storage._initialized_dbs.add(shard)
            engines[shard] = engine
        return engine

    @contextlib.contextmanager
    def connect(shard: str) -> Iterator[sqlalchemy.engine.Connection]:
        with storage._db_lock, engine_for(shard).connect() as conn, conn.begin():
            yield conn

    def has_table(table_name: str) -> bool:
        if not tables.get(table_name):  # a table, once there, stays
            engine = engine_for(INDEX_SHARD_NAME)
            with engine.connect() as conn:
                tables[table_name] = bool(engine.dialect.has_table(conn, table_name))
        return tables[table_name]

    has_index_cols = storage._has_asset_key_index_cols_on_connection
    known_cols: list[bool] = []

    def has_asset_key_index_cols(conn: sqlalchemy.engine.Connection) -> bool:
        if not known_cols or not known_cols[0]:  # asked for every asset event; a column stays
            known_cols[:] = [has_index_cols(conn)]
        return known_cols[0]

    storage._ratings_engines = engines
    storage._connect = connect
    storage.has_table = has_table
    storage._has_asset_key_index_cols_on_connection = has_asset_key_index_cols


def lake_instance(lake: Path | str) -> dg.DagsterInstance:
    """The persistent Dagster instance `ratings run` records its runs in (see `instance_home`)."""
    if not sqlalchemy.event.contains(sqlalchemy.engine.Engine, "connect", _sqlite_without_fsync):
        sqlalchemy.event.listen(sqlalchemy.engine.Engine, "connect", _sqlite_without_fsync)
    if os.environ.get("DAGSTER_HOME"):
        instance = dg.DagsterInstance.get()
    else:
        instance = dg.DagsterInstance.from_config(str(instance_home(lake)))
    _reuse_sqlite_connections(instance)
    return instance
