"""The ledger: what cannot be rebuilt from the vault (query log today; gaps and feedback later).

SQLite under HIPPO_HOME by default. Writes are short transactions, safe for several readers.
"""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from dagster import ConfigurableResource

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
"""


class Ledger(ConfigurableResource):
    path: str

    def _connect(self) -> sqlite3.Connection:
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30)
        conn.executescript(SCHEMA)
        return conn

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
                    query,
                    json.dumps(params, ensure_ascii=False),
                    status,
                    n_results,
                    top_score,
                    generation,
                ),
            )

    def recent_queries(self, limit: int = 20) -> list[dict[str, Any]]:
        with closing(self._connect()) as conn:
            conn.row_factory = sqlite3.Row
            rows = conn.execute("SELECT * FROM query_log ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [dict(r) for r in rows]
