"""The work feed: each project's append-only change feed of checkpoints (S0 `workspace_checkpoints`).

Not rebuildable from the vault, so it is in the backup registry (`hippo_resources.stores`). Every
project has its own `seq` (1, 2, 3 …, no gaps); a store **generation** (a random id made with the
store and changed by a restore) makes cursors from before a restore fail loudly. A resend of
`(project, session_id, event_id)` returns the first record: a unique constraint guarantees it, and
writers of one project queue on the project's head row, so concurrent resends make one record.

`WorkFeed` is the behaviour without Dagster (the hooks use `PlainWorkFeed`); `hippo_resources.work_store.
WorkStore` is the same as a Dagster resource.
"""

from __future__ import annotations

import datetime as dt
import secrets
from typing import Any

from hippo_core.agents.work_memory import (
    Checkpoint,
    CheckpointKind,
    Refused,
    screen,
    validate_agent,
    validate_id,
    validate_project,
)
from hippo_resources.sql_access import Plain, SqlAccess, Tx, dialect_ddl

DEFAULT_SUMMARY_MAX_BYTES = 8 * 1024

SQLITE_DDL, PG_DDL = dialect_ddl(
    """
CREATE TABLE IF NOT EXISTS {t}meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS {t}heads (project TEXT PRIMARY KEY, seq {int64} NOT NULL);
CREATE TABLE IF NOT EXISTS {t}checkpoints (
    project TEXT NOT NULL,
    seq {int64} NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('work', 'conversation')),
    summary TEXT NOT NULL,
    session_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    agent TEXT,
    ts TEXT NOT NULL,
    base_seq {int64},
    PRIMARY KEY (project, seq),
    UNIQUE (project, session_id, event_id)
);
CREATE INDEX IF NOT EXISTS checkpoints_by_session ON {t}checkpoints (project, session_id, kind, seq);
""",
    append_only=("checkpoints",),
)

_COLUMNS = "seq, kind, summary, session_id, event_id, agent, ts, project, base_seq"


def new_generation() -> str:
    return secrets.token_hex(6)


def _checkpoint(row: dict[str, Any]) -> Checkpoint:
    return Checkpoint.model_validate(row)


class WorkFeed(SqlAccess):
    """Checkpoints per project, with a generation and a per-project `seq`."""

    summary_max_bytes: int

    SQLITE_DDL = SQLITE_DDL
    PG_DDL = PG_DDL

    def _after_schema(self, conn: Any) -> None:
        sql = "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING"
        if self.pg_dsn:
            with conn.cursor() as cur:
                cur.execute(sql.replace("?", "%s"), ("generation", new_generation()))
            conn.commit()
        else:
            conn.execute(sql, ("generation", new_generation()))

    # --- generation ---------------------------------------------------------------------------
    def generation(self) -> str:
        with self.tx() as tx:
            row = tx.one("SELECT value FROM meta WHERE key = 'generation'")
        assert row is not None, "the generation row is written with the schema"
        return str(row["value"])

    def rotate_generation(self) -> str:
        """Give the store a new generation: every cursor handed out before is now `invalid_cursor`.

        The backup registry calls this after a restore (`after_restore`)."""
        generation = new_generation()
        with self.tx(write=True) as tx:
            tx.run("UPDATE meta SET value = ? WHERE key = 'generation'", (generation,))
        return generation

    def after_restore(self) -> None:
        self.forget_schema()
        self.rotate_generation()

    # --- writes -------------------------------------------------------------------------------
    def append(
        self,
        project: str,
        kind: CheckpointKind,
        summary: str,
        session_id: str,
        event_id: str,
        agent: str | None = None,
        base_seq: int | None = None,
        ts: str | None = None,
    ) -> tuple[Checkpoint, bool]:
        """Append a checkpoint; returns (record, created). A resend returns the first record, created=False.

        Refuses (nothing stored) a bad project slug, a bad id, too large a summary, a secret or an
        injection, with the reason."""
        validate_project(project)
        validate_id(session_id, "session_id")
        validate_id(event_id, "event_id")
        if kind not in ("work", "conversation"):
            raise Refused(f"kind {kind!r} is not 'work' or 'conversation'", "bad_field")
        agent = validate_agent(agent, default="agent") if agent is not None else None
        if not isinstance(summary, str) or not summary.strip():
            raise Refused("summary is empty", "bad_field")
        screen({"summary": summary, "agent": agent}, self.summary_max_bytes)
        stamp = ts or dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        with self.tx(write=True) as tx:
            self._lock_head(tx, project)
            found = self._find(tx, project, session_id, event_id)
            if found is not None:
                return found, False
            tx.run("UPDATE heads SET seq = seq + 1 WHERE project = ?", (project,))
            head = tx.one("SELECT seq FROM heads WHERE project = ?", (project,))
            assert head is not None
            seq = int(head["seq"])
            tx.run(
                f"INSERT INTO checkpoints ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (seq, kind, summary.strip(), session_id, event_id, agent, stamp, project, base_seq),
            )
            created = self._find(tx, project, session_id, event_id)
        assert created is not None
        return created, True

    def _lock_head(self, tx: Tx, project: str) -> None:
        tx.run("INSERT INTO heads (project, seq) VALUES (?, 0) ON CONFLICT (project) DO NOTHING", (project,))
        if tx.postgres:  # SQLite's BEGIN IMMEDIATE already holds the write lock
            tx.run("SELECT seq FROM heads WHERE project = ? FOR UPDATE", (project,))

    @staticmethod
    def _find(tx: Tx, project: str, session_id: str, event_id: str) -> Checkpoint | None:
        row = tx.one(
            f"SELECT {_COLUMNS} FROM checkpoints WHERE project = ? AND session_id = ? AND event_id = ?",
            (project, session_id, event_id),
        )
        return _checkpoint(row) if row else None

    # --- reads --------------------------------------------------------------------------------
    def head(self, project: str) -> int:
        with self.tx() as tx:
            row = tx.one("SELECT seq FROM heads WHERE project = ?", (project,))
        return int(row["seq"]) if row else 0

    def state(self, project: str) -> tuple[str, int]:
        """(generation, head seq) read in one transaction."""
        with self.tx() as tx:
            gen = tx.one("SELECT value FROM meta WHERE key = 'generation'")
            row = tx.one("SELECT seq FROM heads WHERE project = ?", (project,))
        assert gen is not None
        return str(gen["value"]), int(row["seq"]) if row else 0

    def after(self, project: str, seq: int, limit: int) -> list[Checkpoint]:
        """Entries with seq > `seq`, oldest first, at most `limit`."""
        with self.tx() as tx:
            rows = tx.rows(
                f"SELECT {_COLUMNS} FROM checkpoints WHERE project = ? AND seq > ? ORDER BY seq LIMIT ?",
                (project, seq, limit),
            )
        return [_checkpoint(r) for r in rows]

    def between(
        self, project: str, after_seq: int, before_seq: int, exclude_session: str | None, limit: int
    ) -> list[Checkpoint]:
        """Entries with after_seq < seq < before_seq, not written by `exclude_session`, oldest first."""
        with self.tx() as tx:
            rows = tx.rows(
                f"SELECT {_COLUMNS} FROM checkpoints WHERE project = ? AND seq > ? AND seq < ?"
                " AND session_id != ? ORDER BY seq LIMIT ?",
                (project, after_seq, before_seq, exclude_session or "", limit),
            )
        return [_checkpoint(r) for r in rows]

    def resume_state(self, project: str, sessions: int = 40) -> tuple[str, int, list[Checkpoint]]:
        """(generation, head, latest per session) read in one transaction, for `resume`."""
        with self.tx() as tx:
            gen = tx.one("SELECT value FROM meta WHERE key = 'generation'")
            row = tx.one("SELECT seq FROM heads WHERE project = ?", (project,))
            latest = self._latest_per_session(tx, project, sessions)
        assert gen is not None
        return str(gen["value"]), int(row["seq"]) if row else 0, latest

    def latest_per_session(self, project: str, sessions: int = 40) -> list[Checkpoint]:
        """The latest work and the latest conversation checkpoint of each of the `sessions` most recently
        active sessions, newest first."""
        with self.tx() as tx:
            return self._latest_per_session(tx, project, sessions)

    @staticmethod
    def _latest_per_session(tx: Tx, project: str, sessions: int) -> list[Checkpoint]:
        # One scan with window functions: the plan does not depend on fresh table statistics.
        rows = tx.rows(
            f"SELECT {_COLUMNS} FROM (SELECT {_COLUMNS},"
            " ROW_NUMBER() OVER (PARTITION BY session_id, kind ORDER BY seq DESC) AS rn,"
            " MAX(seq) OVER (PARTITION BY session_id) AS session_last"
            " FROM checkpoints WHERE project = ?) t"
            " WHERE rn = 1 ORDER BY session_last DESC, seq DESC LIMIT ?",
            (project, 2 * sessions),
        )
        return sorted((_checkpoint(r) for r in rows), key=lambda c: c.seq, reverse=True)

    def written_since(self, ts: str) -> list[tuple[str, str]]:
        """(project, ts) of every checkpoint written after `ts` (ISO 8601), for the dream's gate and profile."""
        with self.tx() as tx:
            rows = tx.rows("SELECT project, ts FROM checkpoints WHERE ts > ? ORDER BY ts", (ts,))
        return [(str(r["project"]), str(r["ts"])) for r in rows]

    def projects(self) -> list[str]:
        with self.tx() as tx:
            return [
                str(r["project"]) for r in tx.rows("SELECT project FROM heads WHERE seq > 0 ORDER BY project")
            ]


class PlainWorkFeed(Plain, WorkFeed):
    """The work feed for a process that must start fast (the agent hooks): no Dagster import."""

    pg_schema = "hippo_work"
    summary_max_bytes = DEFAULT_SUMMARY_MAX_BYTES
