"""The deployment files agree with the code (docker is not available here, so check what can be checked)."""

from __future__ import annotations

from pathlib import Path

import yaml

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
