"""The ledger follows PostgreSQL when HIPPO_PG_DSN is set (issue 25 item 9): `build_resources` puts it in
the schema `hippo_ledger` beside the other stores, every method answers as on SQLite, and the backup
registry dumps it with pg_dump."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg2
import pytest

from hippo_resources import build_resources
from hippo_resources.ledger import Ledger
from hippo_resources.stores import integrity_check, registered_stores, snapshot
from hippo_settings import HippoSettings

PG_DSN = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.fixture
def pg_schema() -> Iterator[str]:
    try:
        psycopg2.connect(PG_DSN, connect_timeout=3).close()
    except psycopg2.Error as exc:
        pytest.skip(f"no local PostgreSQL at 127.0.0.1:5432/test: {exc}")
    name = f"hippo_t_{uuid.uuid4().hex[:10]}"
    yield name
    with psycopg2.connect(PG_DSN) as conn, conn.cursor() as cur:
        cur.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_every_ledger_method_answers_alike_on_both_backends(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if backend == "sqlite":
        ledger = Ledger(path=str(tmp_path / "ledger.sqlite"))
    else:
        ledger = Ledger(pg_dsn=PG_DSN, pg_schema=request.getfixturevalue("pg_schema"))
    ledger.record_query("q1 sk-ant-api03-" + "x" * 40, {"k": 3}, "ok", 2, 0.7, "g1")
    ledger.record_query("q2", {}, "ok", 0, None, "g1")
    assert [r["query"] for r in ledger.recent_queries()][0] == "q2"
    assert "sk-ant" not in ledger.recent_queries()[1]["query"]  # scrubbed before it is stored
    ledger.record_gap("capital of mongolia", "Capital of Mongolia?", "zero-hit", [])
    ledger.record_gap("capital of mongolia", "capital of mongolia", "weak", ["a.md#x"])
    (gap,) = ledger.gaps()
    assert (gap["times_asked"], gap["kind"], gap["nearest"]) == (2, "weak", ["a.md#x"])
    ledger.mark_gap_answered("capital of mongolia", "20-wiki/mongolia.md")
    assert ledger.gaps() == [] and ledger.gaps(status="answered")[0]["answered_by"] == "20-wiki/mongolia.md"
    ledger.record_feedback("q1", "HOME.md", True)
    assert [(f["query"], f["useful"]) for f in ledger.feedback()] == [("q1", 1)]
    ledger.cache_bundle("g1", "k", {"a": 1})
    ledger.cache_bundle("g1", "k", {"a": 2})
    assert ledger.cached_bundle("g1", "k") == {"a": 2}
    ledger.cache_bundle("g2", "k2", {"b": 1})  # a new generation drops the old ones
    assert ledger.cached_bundle("g1", "k") is None
    first = ledger.record_eval("fp", "sig", {"hit@1": 0.5}, accepted=True)
    second = ledger.record_eval("fp", "sig", {"hit@1": 0.6}, accepted=False)
    assert second > first and ledger.latest_eval()["metrics"] == {"hit@1": 0.6}
    assert ledger.baseline_before("fp", second)["id"] == first
    ledger.accept_eval(second)
    assert ledger.baseline_before("fp", second + 1)["id"] == second


def test_build_resources_puts_the_ledger_in_postgres_and_the_backup_dumps_it(
    tmp_path: Path, pg_schema: str
) -> None:
    settings = HippoSettings(vault=tmp_path / "vault", home=tmp_path / "home", pg_dsn=PG_DSN)
    ledger = build_resources(settings)["ledger"]
    assert ledger.backend == "postgres" and ledger.pg_schema == "hippo_ledger"
    mine = ledger.model_copy(update={"pg_schema": pg_schema})  # a throwaway schema for this test
    mine.record_feedback("q", "HOME.md", True)
    assert not (tmp_path / "home" / "ledger.sqlite").exists()
    (store,) = registered_stores({"ledger": mine})
    assert store.backend == "postgres" and store.snapshot_name == "ledger.pgdump"
    dumped = snapshot(store, tmp_path / "snap")
    assert dumped is not None and integrity_check(dumped).ok
