"""The ghost store: promoted shared memories, their feedback, and the append-only read log (seed S1).

S1 "최소 권한+감사": every ghost read is recorded, "단 하나도 빠짐없이", in an append-only
`ghost_read_log` (what, when, which session). Here the log refuses UPDATE, DELETE (and on
PostgreSQL TRUNCATE) in the schema itself, with triggers, so no tool can rewrite it; feedback is
append-only the same way. Only promotion (the nightly `ghost_memories` asset) writes memories.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np

from hippo_core.agents.ghost import GhostMemory
from hippo_core.agents.work_memory import Refused, screen, validate_id, validate_project
from hippo_core.safety.scrub import scrub
from hippo_resources.sql_access import dialect_ddl
from hippo_resources.sql_store import SqlStore

DEFAULT_MEMORY_MAX_BYTES = 16 * 1024
APPEND_ONLY = ("read_log", "feedback")

SQLITE_DDL, PG_DDL = dialect_ddl(
    """
CREATE TABLE IF NOT EXISTS {t}memories (
    memory_id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    name TEXT NOT NULL,
    project TEXT NOT NULL,
    body TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    created TEXT,
    promoted_at TEXT NOT NULL,
    withdrawn_at TEXT,
    withdrawn_reason TEXT,
    vector {blob},
    embed_model TEXT
);
CREATE TABLE IF NOT EXISTS {t}feedback (
    id {id},
    ts TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    useful INTEGER NOT NULL,
    session_id TEXT,
    project TEXT
);
CREATE TABLE IF NOT EXISTS {t}read_log (
    id {id},
    ts TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    session_id TEXT,
    project TEXT,
    query TEXT,
    rank INTEGER,
    score {real}
);
CREATE INDEX IF NOT EXISTS read_log_by_memory ON {t}read_log (memory_id, ts);
""",
    append_only=("read_log", "feedback"),
)

_MEMORY_COLUMNS = (
    "memory_id, path, name, project, body, fingerprint, created, promoted_at, withdrawn_at,"
    " withdrawn_reason, vector, embed_model"
)


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _vector(value: Any) -> np.ndarray | None:
    if value is None:
        return None
    return np.frombuffer(bytes(value), dtype=np.float32)


def _blob(vector: np.ndarray | None) -> bytes | None:
    return None if vector is None else np.asarray(vector, dtype=np.float32).tobytes()


class GhostStore(SqlStore):
    """Shared memories (only promotion writes them), append-only feedback and read log."""

    pg_schema: str = "hippo_ghost"
    memory_max_bytes: int = DEFAULT_MEMORY_MAX_BYTES

    SQLITE_DDL = SQLITE_DDL
    PG_DDL = PG_DDL

    # --- memories (written by promotion only) -------------------------------------------------
    def put(
        self, memory: GhostMemory, vector: np.ndarray | None = None, embed_model: str | None = None
    ) -> None:
        """Store a promoted memory (insert, or replace its content and clear a withdrawal).

        Refuses a bad project slug, too large a memory, a secret or an injection, with the reason."""
        validate_project(memory.project)
        if memory.scope != "shared":
            raise Refused("only `scope: shared` memories enter the ghost store", "bad_field")
        screen({"name": memory.name, "body": memory.body}, self.memory_max_bytes)
        with self.tx(write=True) as tx:
            tx.run(
                f"INSERT INTO memories ({_MEMORY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?)"
                " ON CONFLICT (memory_id) DO UPDATE SET path = excluded.path, name = excluded.name,"
                " project = excluded.project, body = excluded.body, fingerprint = excluded.fingerprint,"
                " created = excluded.created, promoted_at = excluded.promoted_at, withdrawn_at = NULL,"
                " withdrawn_reason = NULL, vector = excluded.vector, embed_model = excluded.embed_model",
                (
                    memory.memory_id,
                    memory.path,
                    memory.name,
                    memory.project,
                    memory.body,
                    memory.fingerprint,
                    memory.created,
                    _now(),
                    _blob(vector),
                    embed_model,
                ),
            )

    def set_vector(self, memory_id: str, vector: np.ndarray, embed_model: str) -> None:
        with self.tx(write=True) as tx:
            tx.run(
                "UPDATE memories SET vector = ?, embed_model = ? WHERE memory_id = ?",
                (_blob(vector), embed_model, memory_id),
            )

    def withdraw(self, memory_id: str, reason: str) -> bool:
        """Take a memory out of search (kept for the audit trail); True when it was active."""
        with self.tx(write=True) as tx:
            n = tx.run(
                "UPDATE memories SET withdrawn_at = ?, withdrawn_reason = ? WHERE memory_id = ?"
                " AND withdrawn_at IS NULL",
                (_now(), scrub(reason).text[:500], memory_id),
            )
        return n > 0

    def memories(self, include_withdrawn: bool = False) -> list[dict[str, Any]]:
        where = "" if include_withdrawn else " WHERE withdrawn_at IS NULL"
        with self.tx() as tx:
            rows = tx.rows(f"SELECT {_MEMORY_COLUMNS} FROM memories{where} ORDER BY memory_id")
        for r in rows:
            r["vector"] = _vector(r["vector"])
        return rows

    def exists(self, memory_id: str) -> bool:
        with self.tx() as tx:
            return tx.one("SELECT 1 AS x FROM memories WHERE memory_id = ?", (memory_id,)) is not None

    # --- reads: the append-only log -----------------------------------------------------------
    def log_reads(
        self,
        reads: list[tuple[str, int, float]],
        session_id: str | None,
        project: str | None,
        query: str | None,
    ) -> None:
        """Append one row per returned memory: (memory_id, rank, score). The query is scrubbed first."""
        if session_id is not None:
            validate_id(session_id, "session_id")
        if project is not None:
            validate_project(project)
        clean = scrub(query).text[:1024] if query else None
        stamp = _now()
        with self.tx(write=True) as tx:
            for memory_id, rank, score in reads:
                tx.run(
                    "INSERT INTO read_log (ts, memory_id, session_id, project, query, rank, score)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (stamp, memory_id, session_id, project, clean, rank, float(score)),
                )

    def reads_since(self, since: str) -> dict[str, list[str]]:
        """Read timestamps per memory since `since` (ISO), for the read multiplier."""
        out: dict[str, list[str]] = {}
        with self.tx() as tx:
            for r in tx.rows("SELECT memory_id, ts FROM read_log WHERE ts >= ?", (since,)):
                out.setdefault(str(r["memory_id"]), []).append(str(r["ts"]))
        return out

    def read_log(
        self, limit: int = 100, since: str | None = None, memory_id: str | None = None
    ) -> list[dict[str, Any]]:
        """The read log, newest first."""
        sql = "SELECT id, ts, memory_id, session_id, project, query, rank, score FROM read_log WHERE 1 = 1"
        args: list[Any] = []
        if since:
            sql += " AND ts >= ?"
            args.append(since)
        if memory_id:
            sql += " AND memory_id = ?"
            args.append(memory_id)
        sql += " ORDER BY id DESC LIMIT ?"
        args.append(limit)
        with self.tx() as tx:
            return tx.rows(sql, args)

    # --- feedback (append-only) ---------------------------------------------------------------
    def add_feedback(self, memory_id: str, useful: bool, session_id: str | None, project: str | None) -> None:
        if session_id is not None:
            validate_id(session_id, "session_id")
        if project is not None:
            validate_project(project)
        with self.tx(write=True) as tx:
            tx.run(
                "INSERT INTO feedback (ts, memory_id, useful, session_id, project) VALUES (?, ?, ?, ?, ?)",
                (_now(), memory_id, int(useful), session_id, project),
            )

    def feedback_counts(self) -> dict[str, tuple[int, int]]:
        """(useful, not useful) per memory."""
        with self.tx() as tx:
            rows = tx.rows(
                "SELECT memory_id, SUM(useful) AS yes, SUM(1 - useful) AS no FROM feedback GROUP BY memory_id"
            )
        return {str(r["memory_id"]): (int(r["yes"] or 0), int(r["no"] or 0)) for r in rows}
