"""The deployment files agree with the code (docker is not available here, so check what can be checked)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml

from hippo_settings import env_names

ROOT = Path(__file__).parents[1]


def test_compose_services_and_files_line_up() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert set(services) == {"postgres", "code", "webserver", "daemon", "librarian"}
    assert "hippo_assets.definitions" in services["code"]["command"]
    assert services["librarian"]["command"][:2] == ["hippo", "serve"]
    env = compose["x-hippo-env"]
    instance = yaml.safe_load((ROOT / "deploy/dagster-postgres.yaml").read_text())
    for key, value in instance["storage"]["postgres"]["postgres_db"].items():
        if isinstance(value, dict):
            assert value["env"] in env, f"{key} reads {value['env']}, which compose does not set"
    workspace = yaml.safe_load((ROOT / "deploy/workspace-docker.yaml").read_text())
    assert workspace["load_from"][0]["grpc_server"]["host"] == "code"
    dockerfile = (ROOT / "Dockerfile").read_text()
    for package in (
        "hippo_core",
        "hippo_resources",
        "hippo_assets",
        "sensors",
        "expectations",
        "hippo_server",
        "hippo_cli",
    ):
        assert f"COPY {package} {package}" in dockerfile


def test_workspace_loads_the_definitions_module() -> None:
    workspace = yaml.safe_load((ROOT / "workspace.yaml").read_text())
    module = workspace["load_from"][0]["python_module"]["module_name"]
    defs = __import__(module, fromlist=["defs"]).defs
    repo = defs.get_repository_def()
    assert {
        "sources",
        "vault_documents",
        "chunks",
        "embeddings",
        "lexical_index",
    } <= {k.to_user_string() for k in repo.assets_defs_by_key}
    assert defs.get_sensor_def("inbox_sensor") and defs.get_schedule_def("nightly_refresh")


def test_compose_runs_the_workspace_code_location_as_the_image_user() -> None:
    """The compose services, the compose workspace file, pyproject and the settings agree (the topology itself
    runs without Docker in tests/scale/test_postgres_topology.py), and the image does not run as root."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    dagster = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["dagster"]
    (grpc,) = [
        entry["grpc_server"]
        for entry in yaml.safe_load((ROOT / "deploy/workspace-docker.yaml").read_text())["load_from"]
    ]
    code = services["code"]["command"]
    assert code[:3] == ["dagster", "code-server", "start"]
    assert code[code.index("-m") + 1] == dagster["module_name"]
    assert grpc["host"] == "code" and str(grpc["port"]) == code[code.index("-p") + 1]
    assert grpc["location_name"] == dagster["code_location_name"]
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "COPY deploy/workspace-docker.yaml /opt/dagster/workspace.yaml" in dockerfile
    for name in ("webserver", "daemon"):
        command = services[name]["command"]
        assert command[command.index("-w") + 1] == "/opt/dagster/workspace.yaml"
    # every HIPPO_* name compose sets is a setting, spelled as the settings object reads it
    env = compose["x-hippo-env"]
    settings_names = set(env_names().values())
    assert {k for k in env if k.startswith("HIPPO_")} <= settings_names
    assert env["HIPPO_EXECUTOR"] == "multiprocess"  # Postgres instance storage: a process per step
    assert services["librarian"]["environment"]["HIPPO_MCP_TOKEN"].startswith("${HIPPO_MCP_TOKEN:?")
    # not root: the last USER is a named, unprivileged user the image creates
    users = [line.split()[1] for line in dockerfile.splitlines() if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0") and "useradd" in dockerfile and users[-1] in dockerfile
