"""The dagster-postgres storage path: the graph materializes on an instance backed by the local PostgreSQL."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg2
import pytest
import yaml
from dagster import AssetKey, DagsterInstance

from hippo_settings import HippoSettings
from tests.conftest import run_graph

PG = {"host": os.environ.get("HIPPO_TEST_PG_HOST", "127.0.0.1"), "port": 5432, "user": "postgres"}
DEPLOY_YAML = Path(__file__).parents[2] / "deploy" / "dagster-postgres.yaml"


@pytest.fixture
def pg_database() -> Iterator[str]:
    name = f"hippo_test_{uuid.uuid4().hex[:10]}"
    admin = psycopg2.connect(dbname="postgres", **PG)
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def test_graph_materializes_on_a_postgres_instance(
    settings: HippoSettings, pg_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the documented deploy file, with its settings supplied through the environment as in docker-compose
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(DEPLOY_YAML.read_text())
    for key, value in {
        "DAGSTER_PG_USERNAME": PG["user"],
        "DAGSTER_PG_PASSWORD": "",
        "DAGSTER_PG_HOST": PG["host"],
        "DAGSTER_PG_DB": pg_database,
    }.items():
        monkeypatch.setenv(key, value)
    assert "postgres" in yaml.safe_load((home / "dagster.yaml").read_text())["storage"]
    instance = DagsterInstance.from_config(str(home))
    try:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        result = run_graph(settings, instance=instance)
        assert result.success
        # the run and its materializations are in Postgres, where the UI and the daemon read them
        assert instance.get_run_by_id(result.run_id).is_success
        event = instance.get_latest_materialization_event(AssetKey("lexical_index"))
        assert event is not None and event.run_id == result.run_id
        with psycopg2.connect(dbname=pg_database, **PG) as conn, conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM runs WHERE run_id = %s", (result.run_id,))
            assert cur.fetchone()[0] == 1
    finally:
        instance.dispose()
