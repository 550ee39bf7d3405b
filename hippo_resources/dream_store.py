"""The dream's store: when it ran and why, the interest profile's daily snapshots (never pruned), the
lint's per-note outlines (a cache keyed by content hash, so an unchanged note is not read again), the
layer-4 flags waiting for their re-check, and the layer-3 verdicts already paid for.

SQLite under HIPPO_HOME by default, PostgreSQL with HIPPO_PG_DSN; registered with the stores the vault
cannot rebuild (the snapshots are history), so the nightly backup and the restore drill include it.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from hippo_core.dream.outline import OUTLINE_VERSION, Outline
from hippo_core.dream.profile import Snapshot
from hippo_core.safety.scrub import scrub
from hippo_resources.sql_access import dialect_ddl
from hippo_resources.sql_store import SqlStore

SQLITE_DDL, PG_DDL = dialect_ddl(
    """
CREATE TABLE IF NOT EXISTS {t}dream_runs (
    id {id},
    started_at {real} NOT NULL,
    finished_at {real},
    ran INTEGER NOT NULL,
    reason TEXT NOT NULL,
    counts TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS {t}dream_profile (
    day TEXT PRIMARY KEY,
    snapshot TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS {t}dream_outlines (
    path TEXT PRIMARY KEY,
    stamp TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    version TEXT NOT NULL,
    outline TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS {t}dream_flags (
    key TEXT PRIMARY KEY,
    rule TEXT NOT NULL,
    path TEXT NOT NULL,
    detail TEXT NOT NULL,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    state TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS {t}dream_results (
    run_id {int64} NOT NULL,
    part TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, part)
);
CREATE TABLE IF NOT EXISTS {t}dream_merges (
    pair_key TEXT PRIMARY KEY,
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    card TEXT NOT NULL,
    drafted_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS {t}dream_verdicts (
    key TEXT PRIMARY KEY,
    verdict TEXT NOT NULL,
    decided_at TEXT NOT NULL
);
"""
)


def _today() -> str:
    return dt.datetime.now(dt.UTC).date().isoformat()


class DreamStore(SqlStore):
    SQLITE_DDL = SQLITE_DDL
    PG_DDL = PG_DDL

    # --- runs -----------------------------------------------------------------------------------
    def last_dream_at(self) -> float | None:
        """When the last dream that ran to its digest started (a skipped or failed one does not count)."""
        with self.tx() as tx:
            row = tx.one(
                "SELECT MAX(started_at) AS t FROM dream_runs WHERE ran = 1 AND finished_at IS NOT NULL"
            )
        return None if not row or row["t"] is None else float(row["t"])

    def record_run(self, started_at: float, ran: bool, reason: str, counts: dict[str, Any]) -> int:
        """A gate decision; returns the run's id (the digest marks it finished)."""
        with self.tx(write=True) as tx:
            tx.run(
                "INSERT INTO dream_runs (started_at, ran, reason, counts) VALUES (?, ?, ?, ?)",
                (started_at, int(ran), scrub(reason).text, json.dumps(counts, ensure_ascii=False)),
            )
            row = tx.one("SELECT MAX(id) AS id FROM dream_runs")
        assert row is not None
        return int(row["id"])

    def open_run(self) -> dict[str, Any] | None:
        """The latest run the gate let through that has no digest yet (what this dream is)."""
        with self.tx() as tx:
            row = tx.one(
                "SELECT id, started_at, reason, counts FROM dream_runs WHERE ran = 1 AND finished_at IS NULL"
                " ORDER BY id DESC LIMIT 1"
            )
        if row is None:
            return None
        return {**row, "counts": json.loads(row["counts"])}

    def finish_run(self, run_id: int, finished_at: float) -> None:
        with self.tx(write=True) as tx:
            tx.run("UPDATE dream_runs SET finished_at = ? WHERE id = ?", (finished_at, run_id))

    # --- profile --------------------------------------------------------------------------------
    def put_snapshot(self, snap: Snapshot) -> None:
        body = scrub(snap.model_dump_json()).text
        with self.tx(write=True) as tx:
            if tx.one("SELECT day FROM dream_profile WHERE day = ?", (snap.day,)):
                tx.run("UPDATE dream_profile SET snapshot = ? WHERE day = ?", (body, snap.day))
            else:
                tx.run("INSERT INTO dream_profile (day, snapshot) VALUES (?, ?)", (snap.day, body))

    def snapshots(self, since: str = "0000-00-00") -> list[Snapshot]:
        with self.tx() as tx:
            rows = tx.rows("SELECT snapshot FROM dream_profile WHERE day >= ? ORDER BY day", (since,))
        return [Snapshot.model_validate_json(r["snapshot"]) for r in rows]

    # --- outlines (a cache: losing it only costs one full re-read) -----------------------------
    def outlines(self) -> dict[str, tuple[str, Outline]]:
        """path -> (stat stamp, outline) for outlines of the current reading version."""
        with self.tx() as tx:
            rows = tx.rows(
                "SELECT path, stamp, outline FROM dream_outlines WHERE version = ?", (OUTLINE_VERSION,)
            )
        return {r["path"]: (r["stamp"], Outline.model_validate_json(r["outline"])) for r in rows}

    def save_outlines(self, changed: list[tuple[str, Outline]], removed: list[str]) -> None:
        """Store (stamp, outline) pairs and forget removed notes, in one transaction."""
        with self.tx(write=True) as tx:
            for path in removed:
                tx.run("DELETE FROM dream_outlines WHERE path = ?", (path,))
            for stamp, o in changed:
                tx.run("DELETE FROM dream_outlines WHERE path = ?", (o.path,))
                tx.run(
                    "INSERT INTO dream_outlines (path, stamp, content_hash, version, outline) VALUES (?, ?, ?, ?, ?)",
                    (o.path, stamp, o.content_hash, OUTLINE_VERSION, scrub(o.model_dump_json()).text),
                )

    # --- what each step of a run found (the digest reads them) -----------------------------------
    def put_result(self, run_id: int, part: str, body: dict[str, Any]) -> None:
        text = scrub(json.dumps(body, ensure_ascii=False)).text
        with self.tx(write=True) as tx:
            tx.run("DELETE FROM dream_results WHERE run_id = ? AND part = ?", (run_id, part))
            tx.run("INSERT INTO dream_results (run_id, part, body) VALUES (?, ?, ?)", (run_id, part, text))

    def result(self, run_id: int, part: str) -> dict[str, Any] | None:
        with self.tx() as tx:
            row = tx.one("SELECT body FROM dream_results WHERE run_id = ? AND part = ?", (run_id, part))
        return None if row is None else json.loads(row["body"])

    def latest_result(self, part: str) -> dict[str, Any] | None:
        """The part as the last finished dream wrote it (for the librarian's tools)."""
        with self.tx() as tx:
            row = tx.one(
                "SELECT r.body FROM dream_results r JOIN dream_runs d ON d.id = r.run_id"
                " WHERE r.part = ? AND d.finished_at IS NOT NULL ORDER BY d.id DESC LIMIT 1",
                (part,),
            )
        return None if row is None else json.loads(row["body"])

    # --- layer-4 flags: flag -> re-check on the next dream -> proposal ---------------------------
    def flags(self) -> dict[str, dict[str, Any]]:
        with self.tx() as tx:
            return {r["key"]: r for r in tx.rows("SELECT * FROM dream_flags")}

    def set_flag(self, key: str, rule: str, path: str, detail: str, state: str) -> None:
        today = _today()
        with self.tx(write=True) as tx:
            if tx.one("SELECT key FROM dream_flags WHERE key = ?", (key,)):
                tx.run("UPDATE dream_flags SET last_seen = ?, state = ? WHERE key = ?", (today, state, key))
            else:
                tx.run(
                    "INSERT INTO dream_flags (key, rule, path, detail, first_seen, last_seen, state)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (key, rule, scrub(path).text, scrub(detail).text, today, today, state),
                )

    def drop_flags(self, keys: list[str]) -> None:
        with self.tx(write=True) as tx:
            for key in keys:
                tx.run("DELETE FROM dream_flags WHERE key = ?", (key,))

    # --- layer-3 verdicts (an LLM answer is paid for once per pair of texts) ---------------------
    def verdict(self, key: str) -> dict[str, Any] | None:
        with self.tx() as tx:
            row = tx.one("SELECT verdict FROM dream_verdicts WHERE key = ?", (key,))
        return None if row is None else json.loads(row["verdict"])

    def put_verdict(self, key: str, verdict: dict[str, Any]) -> None:
        with self.tx(write=True) as tx:
            tx.run("DELETE FROM dream_verdicts WHERE key = ?", (key,))
            tx.run(
                "INSERT INTO dream_verdicts (key, verdict, decided_at) VALUES (?, ?, ?)",
                (key, scrub(json.dumps(verdict, ensure_ascii=False)).text, _today()),
            )

    # --- merge cards drafted (one per pair of notes) ----------------------------------------------
    def merges(self) -> dict[str, dict[str, Any]]:
        with self.tx() as tx:
            return {r["pair_key"]: r for r in tx.rows("SELECT * FROM dream_merges")}

    def put_merge(self, pair_key: str, a: str, b: str, card: str) -> None:
        with self.tx(write=True) as tx:
            tx.run("DELETE FROM dream_merges WHERE pair_key = ?", (pair_key,))
            tx.run(
                "INSERT INTO dream_merges (pair_key, a, b, card, drafted_at) VALUES (?, ?, ?, ?, ?)",
                (pair_key, scrub(a).text, scrub(b).text, scrub(card).text, _today()),
            )
