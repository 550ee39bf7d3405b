"""The docker-compose topology without Docker, on 127.0.0.1 against the local PostgreSQL: the code location as
a gRPC server (the compose `code` service's own command), the webserver and the daemon loading it from the
compose workspace file, Postgres instance storage from `deploy/dagster-postgres.yaml` (the plain
dagster-postgres config, no driver scheme), a run launched through the webserver's GraphQL API, queued,
dequeued by the daemon's QueuedRunCoordinator and executed by the multiprocess executor, and a `hippo run`
killed mid-flight failed by the daemon's run monitoring instead of staying STARTED."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml
from dagster import DagsterEventType, DagsterInstance, DagsterRunStatus, RunsFilter

from tests.conftest import make_vault
from tests.scale.conftest import PG

ROOT = Path(__file__).parents[2]
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Processes:
    """Real subprocesses, each in its own process group, all killed at the end."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.procs: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(self, name: str, args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        with (self.logs / f"{name}.log").open("wb") as out:
            proc = subprocess.Popen(
                args, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, cwd=self.logs
            )
        self.procs.append((name, proc))
        return proc

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")[-3000:]

    def stop(self) -> None:
        for _, proc in reversed(self.procs):
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        for _, proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def local(command: list[str], **values: str) -> list[str]:
    """A compose command run here: its program from this venv, option values replaced (`h="127.0.0.1"`)."""
    out = [str(BIN / command[0]), *command[1:]]
    for flag, value in values.items():
        out[out.index(f"-{flag}") + 1] = value
    return out


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def graphql(url: str, query: str, variables: dict | None = None) -> dict:
    resp = httpx.post(f"{url}/graphql", json={"query": query, "variables": variables or {}}, timeout=60)
    resp.raise_for_status()
    return resp.json()


JOBS = """{ repositoriesOrError { __typename ... on RepositoryConnection { nodes { name location { name }
  jobs { name } } } ... on PythonError { message } } }"""

LAUNCH = """mutation($p: ExecutionParams!) { launchPipelineExecution(executionParams: $p) { __typename
  ... on LaunchRunSuccess { run { runId status } } ... on PythonError { message }
  ... on RunConfigValidationInvalid { errors { message } } } }"""


def wait_for(what: str, check, timeout: float, procs: Processes):  # noqa: ANN001, ANN201
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name, proc in procs.procs:
            if proc.poll() is not None and name != "hippo-run":
                pytest.fail(
                    f"{name} exited with {proc.returncode} while waiting for {what}:\n{procs.log(name)}"
                )
        try:
            found = check()
        except (httpx.HTTPError, OSError):
            found = None
        if found:
            return found
        time.sleep(0.5)
    logs = "\n".join(f"--- {n}\n{procs.log(n)}" for n, _ in procs.procs)
    pytest.fail(f"timed out waiting for {what}\n{logs}")


def test_grpc_code_server_webserver_daemon_queue_multiprocess_and_run_monitoring(
    pg_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = compose()["services"]
    dagster_home = tmp_path / "dagster_home"
    dagster_home.mkdir()
    instance_yaml = yaml.safe_load((ROOT / "deploy" / "dagster-postgres.yaml").read_text())
    assert "scheme" not in instance_yaml["storage"]["postgres"]["postgres_db"]  # the documented, plain form
    # the deploy file as shipped, with run monitoring quick enough for a test
    instance_yaml["run_monitoring"].update({"max_runtime_seconds": 20, "poll_interval_seconds": 1})
    (dagster_home / "dagster.yaml").write_text(yaml.safe_dump(instance_yaml))

    vault = make_vault(tmp_path, with_inbox=False)  # the daemon's inbox sensor stays idle
    grpc_port, web_port = free_port(), free_port()
    env = {
        **os.environ,
        **{k: str(v) for k, v in compose()["x-hippo-env"].items() if not str(v).startswith("${")},
        "DAGSTER_HOME": str(dagster_home),
        "DAGSTER_PG_USERNAME": PG["user"],
        "DAGSTER_PG_PASSWORD": "",
        "DAGSTER_PG_HOST": PG["host"],
        "DAGSTER_PG_DB": pg_database,
        "HIPPO_VAULT": str(vault),
        "HIPPO_HOME": str(tmp_path / "home"),
        "HIPPO_EMBED_THREADS": "1",
    }
    for key in ("DAGSTER_PG_USERNAME", "DAGSTER_PG_PASSWORD", "DAGSTER_PG_HOST", "DAGSTER_PG_DB"):
        monkeypatch.setenv(key, env[key])  # this process reads the same instance
    assert env["HIPPO_EXECUTOR"] == "multiprocess"  # what compose sets for the Postgres deployment
    # the compose workspace file, pointing at this machine instead of the `code` container
    workspace = yaml.safe_load((ROOT / "deploy" / "workspace-docker.yaml").read_text())
    workspace["load_from"][0]["grpc_server"].update({"host": "127.0.0.1", "port": grpc_port})
    workspace_file = tmp_path / "workspace.yaml"
    workspace_file.write_text(yaml.safe_dump(workspace))

    procs = Processes(tmp_path)
    try:
        # a `hippo run` on the Postgres instance, killed mid-flight: its run is left STARTED
        hippo = procs.start("hippo-run", [str(BIN / "hippo"), "run"], env)
        instance = DagsterInstance.from_config(str(dagster_home))

        def started() -> list:
            return instance.get_run_records(filters=RunsFilter(statuses=[DagsterRunStatus.STARTED]))

        (killed,) = wait_for("the hippo run to start", started, 120, procs)
        os.killpg(hippo.pid, signal.SIGKILL)
        hippo.wait(timeout=10)

        # the compose `code` command, on loopback
        procs.start("code", local(services["code"]["command"], h="127.0.0.1", p=str(grpc_port)), env)
        web = local(services["webserver"]["command"], h="127.0.0.1", p=str(web_port), w=str(workspace_file))
        procs.start("webserver", web, env)
        procs.start("daemon", local(services["daemon"]["command"], w=str(workspace_file)), env)

        url = f"http://127.0.0.1:{web_port}"

        def jobs() -> set[str] | None:
            data = graphql(url, JOBS)["data"]["repositoriesOrError"]
            if data["__typename"] != "RepositoryConnection" or not data["nodes"]:
                return None
            (repo,) = data["nodes"]
            assert repo["location"]["name"] == "hippocampus"
            return {j["name"] for j in repo["jobs"]}

        names = wait_for("the webserver to list the code location's jobs", jobs, 180, procs)
        assert {"refresh_job", "backup_job", "compile_job", "promote_job"} <= names

        launched = graphql(
            url,
            LAUNCH,
            {
                "p": {
                    "selector": {
                        "repositoryLocationName": "hippocampus",
                        "repositoryName": "__repository__",
                        "pipelineName": "backup_job",
                    },
                    "runConfigData": {},
                    # run monitoring is set to 20 s for the killed run; this one may take longer
                    "executionMetadata": {"tags": [{"key": "dagster/max_runtime", "value": "900"}]},
                }
            },
        )["data"]["launchPipelineExecution"]
        assert launched["__typename"] == "LaunchRunSuccess", launched
        run_id = launched["run"]["runId"]

        def finished():  # noqa: ANN202
            run = instance.get_run_by_id(run_id)
            return run if run and run.is_finished else None

        run = wait_for("the daemon to dequeue and finish the run", finished, 240, procs)
        assert run.status == DagsterRunStatus.SUCCESS, procs.log("daemon")
        events = {e.dagster_event_type for e in instance.all_logs(run_id)}
        # queued by the webserver, started only when the daemon's QueuedRunCoordinator dequeued it
        assert launched["run"]["status"] == "QUEUED"
        assert DagsterEventType.RUN_ENQUEUED in events and DagsterEventType.RUN_STARTING in events
        assert DagsterEventType.STEP_WORKER_STARTED in events  # each step in its own process
        assert (tmp_path / "home" / "backups").is_dir()

        # run monitoring fails the killed run instead of leaving it STARTED
        def failed():  # noqa: ANN202
            run = instance.get_run_by_id(killed.dagster_run.run_id)
            return run if run.status == DagsterRunStatus.FAILURE else None

        wait_for("run monitoring to fail the killed run", failed, 120, procs)
        instance.dispose()
    finally:
        procs.stop()
    for _, proc in procs.procs:
        assert proc.poll() is not None  # nothing left running
