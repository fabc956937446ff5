"""A real PostgreSQL server for the tests, started and stopped by them (Debian's `postgresql`).

`postgres_server()` makes a cluster in a temporary folder with `initdb`, starts it with `pg_ctl`
on a free port of 127.0.0.1 (password authentication, as a deployment has it) and stops it at the
end. PostgreSQL refuses to run as root: when the tests run as root (CI does) the server runs as
`nobody`, through `runuser`. Where the package is missing the test skips saying so, except on
CI (`CI=true`), where `.ci/run` installs it and its absence fails the test.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

SERVER_USER = "nobody"
"""The account the server runs as when the tests run as root."""


@dataclass(frozen=True)
class Postgres:
    """Where a running test server answers, and the account and database Dagster uses."""

    hostname: str
    port: int
    username: str
    password: str
    db_name: str

    def dagster_yaml(self) -> str:
        """The instance configuration Dagster's docs give for PostgreSQL, word for word: the
        run, event log and schedule storages, each with its `postgres_db` block."""
        block = (
            "    postgres_db:\n"
            f"      hostname: {self.hostname}\n"
            f"      username: {self.username}\n"
            f"      password: {self.password}\n"
            f"      db_name: {self.db_name}\n"
            f"      port: {self.port}\n"
        )
        return "".join(
            f"{storage}:\n  module: dagster_postgres.{module}\n  class: {cls}\n  config:\n{block}"
            for storage, module, cls in (
                ("run_storage", "run_storage", "PostgresRunStorage"),
                ("event_log_storage", "event_log", "PostgresEventLogStorage"),
                ("schedule_storage", "schedule_storage", "PostgresScheduleStorage"),
            )
        ) + ("telemetry:\n  enabled: false\n")


def postgres_bin() -> Path | None:
    """The newest `/usr/lib/postgresql/<version>/bin` holding `initdb` and `pg_ctl`, if any."""
    found = sorted(
        (Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    return found[-1] if found else None


def require_postgres() -> Path:
    """PostgreSQL's programs, or skip (outside CI) / fail (CI=true) naming what is missing."""
    found = postgres_bin()
    if found is not None and (os.geteuid() != 0 or shutil.which("runuser")):
        return found
    message = "Debian's postgresql package (/usr/lib/postgresql/*/bin/initdb) is not installed"
    if found is not None:
        message = "running as root, and runuser (to start PostgreSQL as nobody) is missing"
    if os.environ.get("CI", "").strip().lower() == "true":
        pytest.fail(f"{message}; with CI=true .ci/run installs it", pytrace=False)
    pytest.skip(message)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _as_server_user(command: list[str]) -> list[str]:
    """`command` run as `nobody` when this process is root (PostgreSQL refuses root)."""
    if os.geteuid() == 0:
        return ["runuser", "-u", SERVER_USER, "--", *command]
    return command


@contextmanager
def postgres_server(db_name: str = "dagster") -> Iterator[Postgres]:
    """A fresh PostgreSQL server with database `db_name` and user `dagster` (password
    `dagster`), stopped and deleted afterwards."""
    bin_dir = require_postgres()
    root = Path(tempfile.mkdtemp(prefix="ratings-pg-"))
    try:
        data, password_file = root / "data", root / "password"
        password_file.write_text("dagster\n", encoding="utf-8")
        if os.geteuid() == 0:
            shutil.chown(root, user=SERVER_USER)
            shutil.chown(password_file, user=SERVER_USER)
        run: dict[str, Any] = {"check": True, "capture_output": True, "text": True, "timeout": 120}
        subprocess.run(
            _as_server_user(
                [
                    str(bin_dir / "initdb"),
                    "-D",
                    str(data),
                    "-U",
                    "dagster",
                    f"--pwfile={password_file}",
                    "--auth=scram-sha-256",
                    "--encoding=UTF8",
                    "--no-sync",
                ]
            ),
            **run,
        )
        port = _free_port()
        options = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off"
        subprocess.run(
            _as_server_user(
                [
                    str(bin_dir / "pg_ctl"),
                    "-D",
                    str(data),
                    "-o",
                    options,
                    "-l",
                    str(root / "log"),
                    "-w",
                    "start",
                ]
            ),
            **run,
        )
        try:
            server = Postgres("127.0.0.1", port, "dagster", "dagster", db_name)
            _create_database(server)
            yield server
        finally:
            subprocess.run(
                _as_server_user(
                    [str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]
                ),
                capture_output=True,
                timeout=60,
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _create_database(server: Postgres) -> None:
    """CREATE DATABASE `server.db_name` (outside a transaction, as PostgreSQL requires)."""
    import psycopg2

    conn = psycopg2.connect(
        host=server.hostname,
        port=server.port,
        user=server.username,
        password=server.password,
        dbname="postgres",
    )
    try:
        conn.autocommit = True
        with conn.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{server.db_name}"')
    finally:
        conn.close()
