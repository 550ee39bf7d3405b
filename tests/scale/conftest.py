"""A throwaway database on the local PostgreSQL (127.0.0.1:5432, trust auth) for each scale-out test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg2
import pytest

PG = {"host": "127.0.0.1", "port": 5432, "user": "postgres"}


@pytest.fixture
def pg_database() -> Iterator[str]:
    try:
        admin = psycopg2.connect(dbname="postgres", connect_timeout=3, **PG)
    except psycopg2.Error as exc:
        pytest.skip(f"no local PostgreSQL at 127.0.0.1:5432: {exc}")
    admin.autocommit = True
    name = f"hippo_topo_{uuid.uuid4().hex[:8]}"
    with admin.cursor() as cur:
        cur.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()
