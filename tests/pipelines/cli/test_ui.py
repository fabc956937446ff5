"""`ratings ui --lake L` serves the Dagster instance `ratings run --lake L` recorded its runs in.

One `ratings run` on a small inbox, then the web server is asked, through its GraphQL endpoint,
for the materializations of an ingest asset and of a period asset, their data and code versions
and their stale status. The server runs in its own process group, killed at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from assets.period_io import INPUT_DIGEST, code_version
from pipelines.cli.app import ui_environment
from rating_core import tables
from rating_core.lake import ingest_store
from rating_core.lake import publishing as publish
from rating_core.lake.storage import clean_interrupted_writes, read_period, read_table

pytestmark = pytest.mark.e2e

RATINGS = Path(sys.executable).with_name("ratings")
ROOT = Path(__file__).resolve().parents[3]
SAMPLES_DIR = ROOT / "data_samples"

QUERY = """
query Asset($key: AssetKeyInput!, $partition: String) {
  assetNodeOrError(assetKey: $key) {
    __typename
    ... on AssetNode {
      opVersion
      dataVersion(partition: $partition)
      staleStatus(partition: $partition)
      assetChecksOrError {
        ... on AssetChecks { checks { name executionForLatestMaterialization { status } } }
      }
    }
  }
  assetOrError(assetKey: $key) {
    __typename
    ... on Asset {
      assetMaterializations(limit: 20) {
        partition
        runId
        metadataEntries { label ... on TextMetadataEntry { text } }
      }
    }
  }
}
"""


def _env() -> dict[str, str]:
    """This environment without DAGSTER_HOME: the lake's own instance is what is tested."""
    return {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _ask(port: int, query: str, variables: dict | None = None) -> dict:
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=body,
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        answer = json.load(response)
    assert "errors" not in answer, answer
    return answer["data"]


@pytest.fixture(scope="module")
def inbox(tmp_path_factory: pytest.TempPathFactory, samples: Path) -> Path:
    """The sample registry and backgammon matches: ingest assets and one system, kept small
    so that the run and the server together take well under a minute."""
    inbox = tmp_path_factory.mktemp("inbox")
    shutil.copy(samples / "players.csv", inbox / "players.csv")
    shutil.copytree(samples / "backgammon", inbox / "backgammon")
    return inbox


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory, inbox: Path) -> Path:
    lake = tmp_path_factory.mktemp("ui") / "lake"
    proc = subprocess.run(
        [str(RATINGS), "run", "--inbox", str(inbox), "--lake", str(lake)],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return lake


@contextmanager
def _serving(inbox: Path, lake: Path, dagster_home: Path | None = None) -> Iterator[int]:
    """The web server `ratings ui` starts (`dagster dev` without its daemon, which a query does
    not need: half the start-up time), with `ratings ui`'s environment, once it answers; on the
    lake's own instance, or on the one `dagster_home` configures (as a user's DAGSTER_HOME)."""
    port = _free_port()
    with pytest.MonkeyPatch.context() as patch:
        if dagster_home is None:
            patch.delenv("DAGSTER_HOME", raising=False)
        else:
            patch.setenv("DAGSTER_HOME", str(dagster_home))
        env = ui_environment(inbox, lake)
    dagster_webserver = Path(sys.executable).with_name("dagster-webserver")
    proc = subprocess.Popen(
        [str(dagster_webserver), "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # the webserver starts a code server: kill the whole group
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, "ratings ui exited"
            try:
                if _ask(port, "{ assetNodes { id } }")["assetNodes"]:
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            assert time.monotonic() < deadline, "the web server never answered"
            time.sleep(0.5)
        yield port
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="module")
def server(lake: Path, inbox: Path) -> Iterator[int]:
    """The web server on the lake's own instance, after the small inbox's run."""
    with _serving(inbox, lake) as port:
        yield port


def _asset(port: int, name: str, partition: str | None = None) -> dict:
    data = _ask(port, QUERY, {"key": {"path": [name]}, "partition": partition})
    assert data["assetNodeOrError"]["__typename"] == "AssetNode", data
    assert data["assetOrError"]["__typename"] == "Asset", data
    return {**data["assetNodeOrError"], **data["assetOrError"]}


def test_the_run_keeps_its_instance_inside_the_lake(lake: Path) -> None:
    home = lake / ".dagster"
    assert (home / "dagster.yaml").is_file()
    assert "enabled: false" in (home / "dagster.yaml").read_text(encoding="utf-8")
    assert any(home.rglob("*.db")), "the runs are recorded in sqlite files"


def test_the_instance_is_not_read_as_part_of_the_lake(lake: Path) -> None:
    """`.dagster` is no table, no list, and nothing of it is taken for a half-written file."""
    before = sorted(p for p in (lake / ".dagster").rglob("*") if p.is_file())
    assert clean_interrupted_writes(lake) == []
    assert sorted(p for p in (lake / ".dagster").rglob("*") if p.is_file()) == before
    lists = publish.current_versions(lake)
    assert lists.height and set(lists.get_column("list")) == {"fibs"}
    with pytest.raises(ValueError, match="not valid"):  # no table can be named .dagster
        read_table(lake, ".dagster")


def test_ui_environment_serves_the_lake_instance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    env = ui_environment(tmp_path / "inbox", tmp_path / "lake")
    assert env["DAGSTER_HOME"] == str((tmp_path / "lake" / ".dagster").resolve())
    assert env["RATINGS_LAKE"] == str((tmp_path / "lake").resolve())
    assert (tmp_path / "lake" / ".dagster" / "dagster.yaml").is_file()
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "mine"))
    assert ui_environment(tmp_path, tmp_path / "lake")["DAGSTER_HOME"] == str(tmp_path / "mine")


def test_an_earlier_versions_instance_yaml_is_replaced_and_an_edited_one_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `dagster.yaml` earlier versions wrote named a class by Dagster's private module path:
    found unedited, it becomes today's; a user's edit (a PostgreSQL storage, say) stays."""
    from assets.resources import EARLIER_INSTANCE_YAML, INSTANCE_YAML, instance_home

    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    config = tmp_path / "lake" / ".dagster" / "dagster.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(EARLIER_INSTANCE_YAML, encoding="utf-8")
    instance_home(tmp_path / "lake")
    assert config.read_text(encoding="utf-8") == INSTANCE_YAML
    assert "dagster._" not in INSTANCE_YAML
    edited = EARLIER_INSTANCE_YAML + "run_retries:\n  enabled: false\n"
    config.write_text(edited, encoding="utf-8")
    instance_home(tmp_path / "lake")
    assert config.read_text(encoding="utf-8") == edited


def test_ratings_ui_starts_dagster_dev_on_the_lake_instance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipelines.cli import app as cli

    started: list[tuple[list[str], dict[str, str]]] = []
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd, cwd, env: started.append((cmd, env)))
    cli.main(["ui", "--lake", str(tmp_path / "lake"), "--port", "3999", "--create"])
    (command, env), *_ = started
    assert command[1:3] == ["dev", "-w"] and command[-2:] == ["-p", "3999"]
    assert env["DAGSTER_HOME"] == str((tmp_path / "lake" / ".dagster").resolve())


def test_the_ui_shows_the_ingest_materialization(server: int, lake: Path, inbox: Path) -> None:
    games = _asset(server, "games")
    assert games["assetMaterializations"], "games shows 'Never materialized'"
    labels = {entry["label"] for entry in games["assetMaterializations"][0]["metadataEntries"]}
    assert {"dagster/row_count", "dagster/column_schema"} <= labels
    assert games["opVersion"] == code_version()
    assert games["dataVersion"] == ingest_store.games_version(lake), "the digest of its inputs"
    assert games["staleStatus"] == "FRESH"
    checks = {
        check["name"]: (check["executionForLatestMaterialization"] or {}).get("status")
        for check in games["assetChecksOrError"]["checks"]
    }
    assert checks == {"games_have_unique_ids": "SUCCEEDED", "games_are_classified": "SUCCEEDED"}


def test_the_ui_shows_every_period_of_a_period_asset(server: int, lake: Path) -> None:
    fibs = _asset(server, "fibs_ratings", "2026-01-01")
    partitions = {m["partition"] for m in fibs["assetMaterializations"]}
    assert "2026-01-01" in partitions and len(partitions) > 1, partitions
    assert fibs["opVersion"] == code_version()
    assert fibs["staleStatus"] == "FRESH"
    rows = read_period(lake, tables.list_rows("fibs").name, "2026-01")
    # one step rates the whole range: every partition has the range's data version, and its
    # own input digest (the one its manifests record) in its metadata
    (january,) = [m for m in fibs["assetMaterializations"] if m["partition"] == "2026-01-01"]
    entries = {e["label"]: e.get("text") for e in january["metadataEntries"]}
    assert entries["input_digest"] == rows.get_column(INPUT_DIGEST)[0], "its input digest"
    # each partition has its own row count; the columns are on the range's last partition
    last = max(partitions)
    labels = {
        p: {e["label"] for e in m["metadataEntries"]}
        for m in fibs["assetMaterializations"]
        if (p := m["partition"]) in ("2026-01-01", last)
    }
    assert "dagster/row_count" in labels["2026-01-01"] and "dagster/row_count" in labels[last]
    assert "dagster/column_schema" in labels[last], labels[last]
    assert fibs["dataVersion"]
    checks = fibs["assetChecksOrError"]["checks"]
    assert checks and all(
        c["executionForLatestMaterialization"]["status"] == "SUCCEEDED" for c in checks
    ), checks
    published = _asset(server, "fibs_list_published", "2026-01-01")
    assert published["assetMaterializations"] and published["staleStatus"] == "FRESH"
    assert published["dataVersion"] and published["opVersion"] == code_version()


EVERY_ASSET = """
{
  assetNodes {
    assetKey { path }
    isPartitioned
    partitionStats { numMaterialized numPartitions numFailed }
  }
}
"""

MATERIALIZATIONS = """
query Materializations($key: AssetKeyInput!) {
  assetOrError(assetKey: $key) {
    ... on Asset { assetMaterializations(limit: 1) { runId partition } }
  }
}
"""

RUNS = """
{
  runsOrError {
    ... on Runs { results { jobName status tags { key value } } }
  }
}
"""


@pytest.fixture(scope="module", params=["embedded", "postgres"])
def full_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, samples: Path
) -> Iterator[tuple[int, Path]]:
    """`ratings run` on the whole sample inbox, then `ratings ui`'s web server: on the lake's
    own (sqlite) instance, and on a PostgreSQL instance a DAGSTER_HOME configures as Dagster's
    docs give it (a server these tests start and stop)."""
    from tests.support.postgres import postgres_server

    lake = tmp_path_factory.mktemp(f"every-{request.param}") / "lake"
    with contextlib.ExitStack() as stack:
        home = None
        env = _env()
        if request.param == "postgres":
            server = stack.enter_context(postgres_server())
            home = tmp_path_factory.mktemp("dagster-home")
            (home / "dagster.yaml").write_text(server.dagster_yaml(), encoding="utf-8")
            env["DAGSTER_HOME"] = str(home)
        proc = subprocess.run(
            [str(RATINGS), "run", "--inbox", str(samples), "--lake", str(lake)],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        if home is not None:  # the runs went to PostgreSQL: the lake holds no instance
            assert not (lake / ".dagster").exists()
        yield stack.enter_context(_serving(samples, lake, home)), lake


@pytest.mark.slow
def test_the_ui_shows_every_asset_materialized_and_every_period_filled(
    full_run: tuple[int, Path],
) -> None:
    port, _ = full_run
    nodes = _ask(port, EVERY_ASSET)["assetNodes"]
    assert len(nodes) == 17, [n["assetKey"] for n in nodes]
    never = []
    for node in nodes:
        key = {"path": node["assetKey"]["path"]}
        found = _ask(port, MATERIALIZATIONS, {"key": key})["assetOrError"]
        if not found.get("assetMaterializations"):
            never.append("/".join(key["path"]))
    assert never == [], f"'Never materialized' in the UI: {never}"
    partitioned = [n for n in nodes if n["isPartitioned"]]
    assert len(partitioned) == 10
    for node in partitioned:  # partitions end at the last period with data: 100 % filled
        stats = node["partitionStats"]
        assert stats["numPartitions"] == 6 and stats["numFailed"] == 0, node
        assert stats["numMaterialized"] == stats["numPartitions"], node


@pytest.mark.slow
def test_the_runs_carry_their_job_names_and_the_command_tags(full_run: tuple[int, Path]) -> None:
    port, lake = full_run
    runs = _ask(port, RUNS)["runsOrError"]["results"]
    assert sorted(run["jobName"] for run in runs) == ["ingest", "rate_and_publish"]
    for run in runs:
        tags = {tag["key"]: tag["value"] for tag in run["tags"]}
        assert run["status"] == "SUCCESS"
        assert tags["ratings/command"] == "run"
        assert tags["ratings/lake"] == str(lake.resolve())
        assert tags["ratings/inbox"] == str(SAMPLES_DIR.resolve())
