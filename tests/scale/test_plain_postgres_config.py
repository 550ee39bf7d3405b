"""The dagster-postgres configuration exactly as Dagster documents it — `postgres_db` without a driver scheme,
or a `postgres_url` — works (SQLAlchemy 2.1 would map `postgresql://` to psycopg 3 and fail; see pyproject)."""

from __future__ import annotations

from pathlib import Path

import psycopg2
import pytest
from dagster import DagsterInstance

from hippo_assets.definitions import build_definitions
from hippo_settings import HippoSettings
from tests.scale.conftest import PG

CONFIGS = {
    "postgres_db": """storage:
  postgres:
    postgres_db:
      username: postgres
      password: ""
      hostname: 127.0.0.1
      db_name: {db}
      port: 5432
""",
    "postgres_url": """storage:
  postgres:
    postgres_url: "postgresql://postgres@127.0.0.1:5432/{db}"
""",
}


@pytest.mark.parametrize("form", list(CONFIGS))
def test_the_documented_config_records_runs_in_postgres(form: str, pg_database: str, tmp_path: Path) -> None:
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(CONFIGS[form].format(db=pg_database))
    instance = DagsterInstance.from_config(str(home))
    try:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        settings = HippoSettings(vault=tmp_path / "vault", home=tmp_path / "home")
        (tmp_path / "vault").mkdir()
        job = build_definitions(settings).resolve_job_def("backup_job")
        result = job.execute_in_process(instance=instance)
        assert result.success
        with psycopg2.connect(dbname=pg_database, **PG) as conn, conn.cursor() as cur:
            cur.execute("SELECT status FROM runs WHERE run_id = %s", (result.run_id,))
            assert cur.fetchone()[0] == "SUCCESS"
            cur.execute("SELECT count(*) FROM event_logs WHERE run_id = %s", (result.run_id,))
            assert cur.fetchone()[0] > 5  # every event went through dagster-postgres's NOTIFY path
    finally:
        instance.dispose()
