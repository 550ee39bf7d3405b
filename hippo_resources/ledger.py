"""The ledger: what cannot be rebuilt from the vault — query log, knowledge gaps, feedback, the
evidence-bundle cache and evaluation runs.

SQLite under HIPPO_HOME by default, the schema `hippo_ledger` of PostgreSQL when HIPPO_PG_DSN is set
(`SqlStore`, as the other non-rebuildable stores). Writes are short transactions, safe for several readers. Every
string a write stores passes the credential scrubber first (a query may hold a pasted key): the
ledger is backed up and exported, so it must never keep a secret.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, ClassVar

from hippo_core.safety.scrub import scrub_value
from hippo_resources.sql_access import dialect_ddl
from hippo_resources.sql_store import SqlStore

SQLITE_DDL, PG_DDL = dialect_ddl(
    """
CREATE TABLE IF NOT EXISTS {t}query_log (
    id {id},
    ts {real} NOT NULL,
    query TEXT NOT NULL,
    params TEXT NOT NULL,
    status TEXT NOT NULL,
    n_results INTEGER NOT NULL,
    top_score {real},
    generation TEXT
);
CREATE TABLE IF NOT EXISTS {t}gaps (
    normalized TEXT PRIMARY KEY,
    query TEXT NOT NULL,
    kind TEXT NOT NULL,
    times_asked INTEGER NOT NULL,
    first_seen {real} NOT NULL,
    last_seen {real} NOT NULL,
    nearest TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'open',
    answered_by TEXT,
    answered_at {real}
);
CREATE TABLE IF NOT EXISTS {t}feedback (
    id {id},
    ts {real} NOT NULL,
    query TEXT NOT NULL,
    anchor TEXT NOT NULL,
    useful INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS {t}bundle_cache (
    generation TEXT NOT NULL,
    key TEXT NOT NULL,
    body TEXT NOT NULL,
    ts {real} NOT NULL,
    PRIMARY KEY (generation, key)
);
CREATE TABLE IF NOT EXISTS {t}eval_runs (
    id {id},
    ts {real} NOT NULL,
    dataset_fingerprint TEXT NOT NULL,
    run_signature TEXT NOT NULL,
    metrics TEXT NOT NULL,
    accepted INTEGER NOT NULL
);
"""
)


class Ledger(SqlStore):
    """SQLite at `path`, or the schema `hippo_ledger` of PostgreSQL when HIPPO_PG_DSN is set (as the work,
    ghost and fact stores)."""

    pg_schema: str = "hippo_ledger"
    SQLITE_DDL: ClassVar[str] = SQLITE_DDL
    PG_DDL: ClassVar[str] = PG_DDL

    def _conn(self) -> Any:
        """On SQLite, a file removed under a running process (a person clearing HIPPO_HOME) gets a new
        file with its tables, not writes into the removed one."""
        if not self.pg_dsn and not Path(self.path).exists():
            self.close()
            self.forget_schema()
        return super()._conn()

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        with self.tx() as tx:
            return tx.rows(sql, args)

    def _write(self, sql: str, args: tuple[Any, ...] = ()) -> None:
        with self.tx(write=True) as tx:
            tx.run(sql, args)

    # --- query log ----------------------------------------------------------------------------
    def record_query(
        self,
        query: str,
        params: dict[str, Any],
        status: str,
        n_results: int,
        top_score: float | None,
        generation: str | None,
    ) -> None:
        self._write(
            "INSERT INTO query_log (ts, query, params, status, n_results, top_score, generation)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                time.time(),
                scrub_value(query),
                json.dumps(scrub_value(params), ensure_ascii=False),
                scrub_value(status),
                n_results,
                top_score,
                scrub_value(generation),
            ),
        )

    def recent_queries(self, limit: int = 20) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM query_log ORDER BY id DESC LIMIT ?", (limit,))

    def queries_since(self, ts: float) -> list[dict[str, Any]]:
        """Every logged query at or after `ts` (epoch seconds), oldest first (the dream's interest profile)."""
        return self._rows("SELECT ts, query, status FROM query_log WHERE ts >= ? ORDER BY ts", (ts,))

    # --- gaps ---------------------------------------------------------------------------------
    def record_gap(self, normalized: str, query: str, kind: str, nearest: list[str]) -> None:
        """Count a miss; a gap already answered opens again when it is missed again."""
        now = time.time()
        self._write(
            "INSERT INTO gaps (normalized, query, kind, times_asked, first_seen, last_seen, nearest)"
            " VALUES (?, ?, ?, 1, ?, ?, ?)"
            " ON CONFLICT (normalized) DO UPDATE SET times_asked = gaps.times_asked + 1,"
            " last_seen = excluded.last_seen, kind = excluded.kind, nearest = excluded.nearest,"
            " status = 'open', answered_by = NULL, answered_at = NULL",
            (
                *scrub_value([normalized, query, kind]),
                now,
                now,
                json.dumps(scrub_value(nearest), ensure_ascii=False),
            ),
        )

    def gaps(self, status: str | None = "open") -> list[dict[str, Any]]:
        sql = (
            "SELECT * FROM gaps"
            + (" WHERE status = ?" if status else "")
            + " ORDER BY times_asked DESC, last_seen DESC"
        )
        rows = self._rows(sql, (status,) if status else ())
        for r in rows:
            r["nearest"] = json.loads(r["nearest"])
        return rows

    def gap(self, normalized: str) -> dict[str, Any] | None:
        """One gap by its normalised question, or None."""
        rows = self._rows("SELECT * FROM gaps WHERE normalized = ?", (scrub_value(normalized),))
        return rows[0] if rows else None

    def mark_gap_answered(self, normalized: str, answered_by: str) -> None:
        self._write(
            "UPDATE gaps SET status = 'answered', answered_by = ?, answered_at = ? WHERE normalized = ?",
            (scrub_value(answered_by), time.time(), scrub_value(normalized)),
        )

    # --- feedback -----------------------------------------------------------------------------
    def record_feedback(self, query: str, anchor: str, useful: bool) -> None:
        self._write(
            "INSERT INTO feedback (ts, query, anchor, useful) VALUES (?, ?, ?, ?)",
            (time.time(), *scrub_value([query, anchor]), int(useful)),
        )

    def feedback(self) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM feedback ORDER BY id")

    # --- evidence-bundle cache ----------------------------------------------------------------
    def cached_bundle(self, generation: str, key: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT body FROM bundle_cache WHERE generation = ? AND key = ?", (generation, key))
        return json.loads(rows[0]["body"]) if rows else None

    def cache_bundle(self, generation: str, key: str, body: dict[str, Any]) -> None:
        with self.tx(write=True) as tx:
            tx.run("DELETE FROM bundle_cache WHERE generation != ?", (generation,))  # stale generations
            tx.run(
                "INSERT INTO bundle_cache (generation, key, body, ts) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (generation, key) DO UPDATE SET body = excluded.body, ts = excluded.ts",
                (generation, key, json.dumps(scrub_value(body), ensure_ascii=False), time.time()),
            )

    # --- evaluation runs ----------------------------------------------------------------------
    def record_eval(self, fingerprint: str, signature: str, metrics: dict[str, Any], accepted: bool) -> int:
        with self.tx(write=True) as tx:
            row = tx.one(
                "INSERT INTO eval_runs (ts, dataset_fingerprint, run_signature, metrics, accepted)"
                " VALUES (?, ?, ?, ?, ?) RETURNING id",
                (time.time(), fingerprint, signature, json.dumps(scrub_value(metrics)), int(accepted)),
            )
        return int(row["id"]) if row else 0

    def latest_eval(self) -> dict[str, Any] | None:
        rows = self._rows("SELECT * FROM eval_runs ORDER BY id DESC LIMIT 1")
        return {**rows[0], "metrics": json.loads(rows[0]["metrics"])} if rows else None

    def baseline_before(self, fingerprint: str, run_id: int) -> dict[str, Any] | None:
        """The last accepted run of the same dataset before `run_id`."""
        rows = self._rows(
            "SELECT * FROM eval_runs WHERE dataset_fingerprint = ? AND accepted = 1 AND id < ? ORDER BY id DESC LIMIT 1",
            (fingerprint, run_id),
        )
        return {**rows[0], "metrics": json.loads(rows[0]["metrics"])} if rows else None

    def accept_eval(self, run_id: int) -> None:
        self._write("UPDATE eval_runs SET accepted = 1 WHERE id = ?", (run_id,))
