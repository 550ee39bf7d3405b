"""The ledger: what cannot be rebuilt from the vault — query log, knowledge gaps, feedback, the
evidence-bundle cache and evaluation runs.

SQLite under HIPPO_HOME by default. Writes are short transactions, safe for several readers. Every
string a write stores passes the credential scrubber first (a query may hold a pasted key): the
ledger is backed up and exported, so it must never keep a secret.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from dagster import ConfigurableResource

from hippo_core.safety.scrub import scrub_value

SCHEMA = """
CREATE TABLE IF NOT EXISTS query_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    query TEXT NOT NULL,
    params TEXT NOT NULL,
    status TEXT NOT NULL,
    n_results INTEGER NOT NULL,
    top_score REAL,
    generation TEXT
);
CREATE TABLE IF NOT EXISTS gaps (
    normalized TEXT PRIMARY KEY,
    query TEXT NOT NULL,
    kind TEXT NOT NULL,
    times_asked INTEGER NOT NULL,
    first_seen REAL NOT NULL,
    last_seen REAL NOT NULL,
    nearest TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'open',
    answered_by TEXT,
    answered_at REAL
);
CREATE TABLE IF NOT EXISTS feedback (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    query TEXT NOT NULL,
    anchor TEXT NOT NULL,
    useful INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS bundle_cache (
    generation TEXT NOT NULL,
    key TEXT NOT NULL,
    body TEXT NOT NULL,
    ts REAL NOT NULL,
    PRIMARY KEY (generation, key)
);
CREATE TABLE IF NOT EXISTS eval_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    dataset_fingerprint TEXT NOT NULL,
    run_signature TEXT NOT NULL,
    metrics TEXT NOT NULL,
    accepted INTEGER NOT NULL
);
"""


_READY: set[str] = set()
_READY_LOCK = threading.Lock()


class Ledger(ConfigurableResource):
    path: str

    def _connect(self) -> sqlite3.Connection:
        """A connection, with the schema created once per process and file: `executescript` commits, so
        running it per call cost a commit (~28 ms on a busy disk) before every logged search."""
        ready = self.path in _READY and Path(self.path).exists()  # a removed file gets its tables again
        conn = sqlite3.connect(self.path, timeout=30) if ready else self._create()
        conn.row_factory = sqlite3.Row
        # A write takes the write lock when it begins: two deferred writers can each hold a read lock the
        # other waits on, and SQLite answers "database is locked" at once instead of waiting (seen with
        # several searches logged at the same moment).
        conn.isolation_level = "IMMEDIATE"
        return conn

    def _create(self) -> sqlite3.Connection:
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30)
        with _READY_LOCK:
            conn.executescript(SCHEMA)
            _READY.add(self.path)
        return conn

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        with closing(self._connect()) as conn:
            return [dict(r) for r in conn.execute(sql, args).fetchall()]

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
        with closing(self._connect()) as conn, conn:
            conn.execute(
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
        with closing(self._connect()) as conn, conn:
            conn.execute(
                "INSERT INTO gaps (normalized, query, kind, times_asked, first_seen, last_seen, nearest)"
                " VALUES (?, ?, ?, 1, ?, ?, ?)"
                " ON CONFLICT(normalized) DO UPDATE SET times_asked = times_asked + 1, last_seen = excluded.last_seen,"
                " kind = excluded.kind, nearest = excluded.nearest, status = 'open', answered_by = NULL,"
                " answered_at = NULL",
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
        with closing(self._connect()) as conn, conn:
            conn.execute(
                "UPDATE gaps SET status = 'answered', answered_by = ?, answered_at = ? WHERE normalized = ?",
                (scrub_value(answered_by), time.time(), scrub_value(normalized)),
            )

    # --- feedback -----------------------------------------------------------------------------
    def record_feedback(self, query: str, anchor: str, useful: bool) -> None:
        with closing(self._connect()) as conn, conn:
            conn.execute(
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
        with closing(self._connect()) as conn, conn:
            conn.execute("DELETE FROM bundle_cache WHERE generation != ?", (generation,))  # stale generations
            conn.execute(
                "INSERT OR REPLACE INTO bundle_cache VALUES (?, ?, ?, ?)",
                (generation, key, json.dumps(scrub_value(body), ensure_ascii=False), time.time()),
            )

    # --- evaluation runs ----------------------------------------------------------------------
    def record_eval(self, fingerprint: str, signature: str, metrics: dict[str, Any], accepted: bool) -> int:
        with closing(self._connect()) as conn, conn:
            cur = conn.execute(
                "INSERT INTO eval_runs (ts, dataset_fingerprint, run_signature, metrics, accepted) VALUES (?, ?, ?, ?, ?)",
                (time.time(), fingerprint, signature, json.dumps(scrub_value(metrics)), int(accepted)),
            )
            return int(cur.lastrowid or 0)

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
        with closing(self._connect()) as conn, conn:
            conn.execute("UPDATE eval_runs SET accepted = 1 WHERE id = ?", (run_id,))
