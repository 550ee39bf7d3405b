"""The registry of non-rebuildable stores: snapshot, integrity check and restore on SQLite and PostgreSQL."""

from __future__ import annotations

import shutil
from pathlib import Path

import psycopg2
import pytest

from hippo_resources.ghost_store import GhostStore
from hippo_resources.ledger import Ledger
from hippo_resources.stores import (
    NON_REBUILDABLE,
    integrity_check,
    registered_stores,
    restore,
    snapshot,
)
from hippo_resources.work_store import WorkStore
from hippo_work import WorkMemory
from tests.work.conftest import PG_DSN


def test_the_registry_lists_the_ledger_the_work_store_and_the_ghost_store(tmp_path: Path) -> None:
    resources = {
        "ledger": Ledger(path=str(tmp_path / "ledger.sqlite")),
        "work_store": WorkStore(path=str(tmp_path / "work.sqlite")),
        "ghost_store": GhostStore(path=str(tmp_path / "ghost.sqlite")),
        "vault": object(),  # rebuildable or not a store: not listed
    }
    stores = registered_stores(resources)
    assert [s.name for s in stores] == ["ledger", "work_store", "ghost_store"]  # the present ones, in order
    assert list(NON_REBUILDABLE)[:3] == ["ledger", "work_store", "ghost_store"]
    resources["ledger"].record_feedback("q", "a#b", True)
    WorkMemory(resources["work_store"]).checkpoint("demo", "work", "one", "s", "e")
    resources["ghost_store"].read_log()  # creates the file and schema
    dest = tmp_path / "backups"
    for store in stores:
        snap = snapshot(store, dest)
        assert snap is not None and snap.name == f"{store.name}.sqlite"
        report = integrity_check(snap)
        assert report.ok and report.kind == "sqlite" and report.detail == "ok"
    assert (
        snapshot(registered_stores({"ledger": Ledger(path=str(tmp_path / "none.sqlite"))})[0], dest) is None
    )


def test_a_damaged_snapshot_fails_the_check_and_is_not_restored(tmp_path: Path) -> None:
    work = WorkStore(path=str(tmp_path / "work.sqlite"))
    for i in range(200):
        WorkMemory(work).checkpoint("demo", "work", f"entry {i} " + "x" * 200, "s", f"e{i}")
    (store,) = registered_stores({"work_store": work})
    snap = snapshot(store, tmp_path / "backups")
    assert snap is not None
    broken = tmp_path / "broken.sqlite"
    shutil.copy(snap, broken)
    data = bytearray(broken.read_bytes())
    data[8192:12288] = b"\xff" * 4096  # overwrite pages in the middle of the table
    broken.write_bytes(bytes(data))
    assert not integrity_check(broken).ok
    not_db = tmp_path / "notes.txt"
    not_db.write_text("hello")
    assert integrity_check(not_db).kind == "unknown" and not integrity_check(not_db).ok
    with pytest.raises(RuntimeError, match="refusing to restore"):
        restore(store, broken)
    assert work.head("demo") == 200


def test_postgres_stores_are_dumped_checked_and_restored(pg_schema: str, tmp_path: Path) -> None:
    ghost = GhostStore(pg_dsn=PG_DSN, pg_schema=pg_schema)
    ghost.read_log()  # schema exists
    (store,) = registered_stores({"ghost_store": ghost})
    assert store.backend == "postgres"
    ghost.log_reads([("infra/sops", 1, 0.9)], "sess-a", "billing", "sops")
    snap = snapshot(store, tmp_path / "backups")
    assert snap is not None and snap.name == "ghost_store.pgdump"
    report = integrity_check(snap)
    assert report.ok and report.kind == "pgdump", report.detail
    ghost.log_reads([("infra/sops", 1, 0.8)], "sess-b", "billing", "sops again")
    assert len(ghost.read_log()) == 2
    restore(store, snap)
    assert [r["session_id"] for r in ghost.read_log()] == ["sess-a"]
    ghost.log_reads([("infra/sops", 1, 0.7)], "sess-c", "billing", "after restore")
    assert len(ghost.read_log()) == 2
    conn = psycopg2.connect(PG_DSN, options=f"-c search_path={pg_schema}")
    with pytest.raises(psycopg2.Error, match="append-only"), conn.cursor() as cur:
        cur.execute("DELETE FROM read_log")  # the append-only trigger came back with the restore
    conn.close()
