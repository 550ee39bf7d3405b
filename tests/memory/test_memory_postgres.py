"""The same dlt pipelines into PostgreSQL when HIPPO_PG_DSN is set (local server, throwaway database)."""

from __future__ import annotations

import uuid

import pytest

from hippo_resources import build_resources
from hippo_settings import HippoSettings
from tests.memory.conftest import load, metadata, with_logs

psycopg2 = pytest.importorskip("psycopg2")
ADMIN_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"


@pytest.fixture
def pg_dsn():  # noqa: ANN201
    try:
        admin = psycopg2.connect(ADMIN_DSN, connect_timeout=3)
    except psycopg2.OperationalError as exc:
        pytest.skip(f"no local PostgreSQL at 127.0.0.1:5432: {exc}")
    admin.autocommit = True
    name = f"hippo_mem_{uuid.uuid4().hex[:10]}"
    with admin.cursor() as cur:
        cur.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql://postgres:unused@127.0.0.1:5432/{name}"  # trust auth; dlt wants a password field
    finally:
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def test_conversations_load_into_postgres_incrementally(settings: HippoSettings, logs, pg_dsn: str) -> None:
    resources = build_resources(with_logs(settings, logs, pg_dsn=pg_dsn))
    first = load(resources)
    assert first.success
    assert metadata(first, "claude_code_log")["destination"] == "postgres"
    with psycopg2.connect(pg_dsn) as conn, conn.cursor() as cur:
        cur.execute(
            'SELECT count(*), count(DISTINCT message_id) FROM "hippo_conversations_claude_code"."messages"'
        )
        assert cur.fetchone() == (6, 6)
        cur.execute('SELECT text FROM "hippo_conversations_chatgpt"."messages" ORDER BY position')
        assert not any("OLD BRANCH" in t for (t,) in cur.fetchall())
    assert (
        settings.home / "conversations" / "dlt"
    ).exists() is False  # nothing went to the local parquet store
    second = load(resources)
    assert metadata(second, "codex_log")["new_messages"] == 0
    assert metadata(second, "conversation_chunks")["messages"] == 22
