"""Fact fixtures: a fact builder, and the fact store on SQLite and on the local PostgreSQL (a throwaway
schema per test)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg2
import pytest

from hippo_core.facts.dates import parse_date
from hippo_core.facts.model import Cardinality, Fact, FactObject, Provenance, Qualifiers
from hippo_resources.fact_store import FactStore

PG_DSN = "postgresql://postgres@127.0.0.1:5432/test"


def fact(
    obj: str | FactObject,
    date: str | None = "2025-01-01",
    anchor: str = "notes/a.md#A",
    predicate: str = "lives_in",
    cardinality: Cardinality = "single",
    subject: str = "me",
    statement: str | None = None,
    **qualifiers: str,
) -> Fact:
    value = obj if isinstance(obj, FactObject) else FactObject(text=obj)
    return Fact(
        subject=subject,
        predicate=predicate,
        cardinality=cardinality,
        object=value,
        qualifiers=Qualifiers(**qualifiers),
        statement=statement or f"{subject} {predicate} {value.text}",
        valid_at=parse_date(date),
        provenance=[Provenance(anchor=anchor, content_hash=f"hash-{anchor}", extractor="reader:inline")],
    ).with_id()


@pytest.fixture(params=["sqlite", "postgres"])
def fact_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FactStore]:
    if request.param == "sqlite":
        yield FactStore(path=str(tmp_path / "facts.sqlite"))
        return
    try:
        psycopg2.connect(PG_DSN, connect_timeout=3).close()
    except psycopg2.Error as exc:
        pytest.skip(f"no local PostgreSQL: {exc}")
    schema = f"hippo_t_{uuid.uuid4().hex[:10]}"
    store = FactStore(pg_dsn=PG_DSN, pg_schema=schema)
    yield store
    store.close()
    with psycopg2.connect(PG_DSN) as conn, conn.cursor() as cur:
        cur.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
