"""Work-memory fixtures: stores on SQLite and on the local PostgreSQL (one throwaway schema per test),
a real git vault, and a clock the tests can move."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg2
import pytest

from hippo_resources.ghost_store import GhostStore
from hippo_resources.vault import Vault
from hippo_resources.work_store import WorkStore
from tests.conftest import make_vault

PG_DSN = "postgresql://postgres@127.0.0.1:5432/test"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, start: dt.datetime) -> None:
        self.now = start

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += dt.timedelta(**delta)


@pytest.fixture
def clock() -> Clock:
    return Clock(dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC))


@pytest.fixture(scope="session")
def pg_available() -> str:
    try:
        psycopg2.connect(PG_DSN, connect_timeout=3).close()
    except psycopg2.Error as exc:
        pytest.skip(f"no local PostgreSQL at 127.0.0.1:5432/test: {exc}")
    return PG_DSN


@pytest.fixture
def pg_schema(pg_available: str) -> Iterator[str]:
    """A fresh schema name, dropped after the test."""
    name = f"hippo_t_{uuid.uuid4().hex[:10]}"
    yield name
    with psycopg2.connect(pg_available) as conn, conn.cursor() as cur:
        cur.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def make_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest, kind: type = WorkStore):  # noqa: ANN201
    if backend == "sqlite":
        return kind(path=str(tmp_path / f"{kind.__name__}.sqlite"))
    schema = request.getfixturevalue("pg_schema")
    return kind(pg_dsn=PG_DSN, pg_schema=schema)


@pytest.fixture(params=["sqlite", "postgres"])
def work_store(request: pytest.FixtureRequest, tmp_path: Path) -> WorkStore:
    return make_store(request.param, tmp_path, request, WorkStore)


@pytest.fixture(params=["sqlite", "postgres"])
def ghost_store(request: pytest.FixtureRequest, tmp_path: Path) -> GhostStore:
    return make_store(request.param, tmp_path, request, GhostStore)


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    """A real vault with git history (the project's fixture notes, no inbox)."""
    return Vault(root=str(make_vault(tmp_path, with_inbox=False)))
