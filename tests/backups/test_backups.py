"""The backups asset's I/O: pruning real folders by the retention rule, and a backup of stores on the local
PostgreSQL (pg_dump), exports included."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from hippo_assets.backups.snapshots import EXPORTS, backups_in, prune, take_backup, verify
from hippo_core.backups import snapshot_name
from hippo_resources import GhostStore, Ledger, WorkStore
from hippo_work import WorkMemory
from tests.work.conftest import PG_DSN

NOW = dt.datetime(2026, 11, 30, 4, 0, tzinfo=dt.UTC)


def test_prune_keeps_what_the_rule_keeps_and_old_export_months_go(tmp_path: Path) -> None:
    for days in range(40):
        (tmp_path / snapshot_name(NOW - dt.timedelta(days=days))).mkdir()
    (tmp_path / ".20261130T050000Z.partial").mkdir()  # an unfinished backup is not a snapshot
    months = tmp_path / EXPORTS / "ledger.feedback"
    months.mkdir(parents=True)
    for month in ("2024-10", "2024-12", "2025-01", "2026-11"):
        (months / f"{month}.jsonl").write_text("{}\n")
    deleted = prune(tmp_path, NOW, daily=7, weekly=4, export_months=24)
    kept = [p.name[:8] for p in backups_in(tmp_path)]
    # 24–30 Nov (daily) and the newest of ISO weeks 46 and 47 (weeks 48 and 49 end inside the daily ones)
    assert kept == ["20261115", "20261122", *(f"202611{d}" for d in range(24, 31))]
    assert len(deleted) == 40 - len(kept) + 1  # 24 months back from Nov 2026 starts at Dec 2024
    assert sorted(p.stem for p in months.iterdir()) == ["2024-12", "2025-01", "2026-11"]


def test_a_backup_of_postgres_stores_is_a_checked_pg_dump_with_exports(
    pg_schema: str, tmp_path: Path
) -> None:
    work = WorkStore(pg_dsn=PG_DSN, pg_schema=pg_schema)
    ghost = GhostStore(pg_dsn=PG_DSN, pg_schema=f"{pg_schema}_g")
    try:
        WorkMemory(work).checkpoint("demo", "work", "on postgres", "s", "e1")
        ghost.log_reads([("infra/sops", 1, 0.5)], "s", "demo", "token ghp_" + "a" * 36)
        ledger = Ledger(path=str(tmp_path / "ledger.sqlite"))
        ledger.record_feedback("q", "a#b", True)
        stores = {"ledger": ledger, "work_store": work, "ghost_store": ghost}
        folder, manifest = take_backup(stores, tmp_path / "backups", NOW)
        assert {s.store: s.file for s in manifest.stores} == {
            "ledger": "ledger.sqlite",
            "work_store": "work_store.pgdump",
            "ghost_store": "ghost_store.pgdump",
        }
        assert manifest.ok and verify(folder) == manifest
        assert all("archive entries" in s.integrity for s in manifest.stores if s.backend == "postgres")
        (read_log,) = [e for e in manifest.exports if e.table == "ghost_store.read_log"]
        row = json.loads((tmp_path / "backups" / EXPORTS / read_log.file).read_text())
        assert row["memory_id"] == "infra/sops"
        assert "ghp_" not in row["query"] and "[REDACTED" in row["query"]  # exports pass the scrubber
    finally:
        import psycopg2

        with psycopg2.connect(PG_DSN) as conn, conn.cursor() as cur:
            cur.execute(f"DROP SCHEMA IF EXISTS {pg_schema}_g CASCADE")
