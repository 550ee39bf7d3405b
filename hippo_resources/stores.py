"""The one registry of stores that cannot be rebuilt from the vault, and how to back each one up.

S0 §7.1: the shared summaries, feedback, gaps and audit logs "볼트에서 재생성할 수 없으므로" are
snapshotted (7 daily, weekday rotation) and a restore is checked (`quick_check = ok`) and then
invalidates every sync cursor. The backup asset iterates `registered_stores(resources)` and calls
`snapshot`, `integrity_check` and `restore` without knowing what each store holds.

SQLite files are copied with the online backup API (consistent while writers run, WAL included);
a PostgreSQL store's schema is dumped with `pg_dump --format=custom`, and checked with
`pg_restore --list`. The DSN never appears on a command line: it reaches the tools as PG* variables.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from collections.abc import Mapping
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from hippo_resources.dream_store import DreamStore
from hippo_resources.fact_store import FactStore
from hippo_resources.ghost_store import GhostStore
from hippo_resources.ledger import Ledger
from hippo_resources.sql_store import SqlStore, checked_schema
from hippo_resources.work_store import WorkStore

SQLITE_MAGIC = b"SQLite format 3\x00"
PGDUMP_MAGIC = b"PGDMP"

# Resource keys of the non-rebuildable stores, and what each holds (for docs/agents.md and `hippo status`).
NON_REBUILDABLE: dict[str, str] = {
    "ledger": "query log, knowledge gaps, feedback, evaluation runs (and the bundle cache)",
    "work_store": "agents' work-memory checkpoints per project, with the cursor generation",
    "ghost_store": "promoted shared memories, their feedback and the append-only ghost read log",
    "dream_store": "the dream's runs, the interest profile's daily snapshots (history), lint flags and verdicts",
    "fact_store": "temporal facts, supersession proposals and the append-only resolution ledger",
}


class BackupError(RuntimeError):
    pass


@dataclass(frozen=True)
class RegisteredStore:
    name: str
    resource: Any
    holds: str

    @property
    def backend(self) -> Literal["sqlite", "postgres"]:
        if isinstance(self.resource, SqlStore):
            return self.resource.backend
        return "sqlite"

    @property
    def sqlite_path(self) -> Path | None:
        if isinstance(self.resource, Ledger):
            return Path(self.resource.path)
        if isinstance(self.resource, SqlStore) and self.resource.backend == "sqlite":
            return Path(self.resource.path)
        return None

    @property
    def snapshot_name(self) -> str:
        return f"{self.name}.sqlite" if self.backend == "sqlite" else f"{self.name}.pgdump"


def registered_stores(resources: Mapping[str, Any]) -> list[RegisteredStore]:
    """The non-rebuildable stores present in a resource dict (as `build_resources` makes it)."""
    out = []
    for key, holds in NON_REBUILDABLE.items():
        resource = resources.get(key)
        if isinstance(resource, Ledger | WorkStore | GhostStore | FactStore | DreamStore):
            out.append(RegisteredStore(name=key, resource=resource, holds=holds))
    return out


def _pg_env(dsn: str) -> dict[str, str]:
    """PG* variables for pg_dump/pg_restore/psql from a DSN (key=value or URL form)."""
    from psycopg2.extensions import parse_dsn

    names = {
        "host": "PGHOST",
        "port": "PGPORT",
        "user": "PGUSER",
        "password": "PGPASSWORD",
        "dbname": "PGDATABASE",
        "sslmode": "PGSSLMODE",
    }
    parsed = parse_dsn(dsn)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update({names[k]: str(v) for k, v in parsed.items() if k in names})
    return env


def _tool(name: str) -> str:
    found = shutil.which(name)
    if not found:
        raise BackupError(f"{name} is not installed; it is needed to back up a PostgreSQL store")
    return found


def _run(args: list[str], env: dict[str, str]) -> str:
    proc = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BackupError(f"{Path(args[0]).name} failed: {proc.stderr.strip()[:500]}")
    return proc.stdout


def snapshot(store: RegisteredStore, dest_dir: Path) -> Path | None:
    """Write a consistent snapshot of one store into `dest_dir`; None when the store has no data yet."""
    dest_dir.mkdir(parents=True, exist_ok=True)
    target = dest_dir / store.snapshot_name
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.unlink(missing_ok=True)
    if store.backend == "sqlite":
        src_path = store.sqlite_path
        assert src_path is not None
        if not src_path.exists():
            return None
        with closing(sqlite3.connect(src_path, timeout=30)) as src, closing(sqlite3.connect(tmp)) as dst:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode = DELETE")  # one self-contained file, no -wal/-shm beside it
    else:
        res: SqlStore = store.resource
        assert res.pg_dsn is not None
        _run(
            [_tool("pg_dump"), "--format=custom", f"--schema={res.pg_schema}", "--no-owner", f"--file={tmp}"],
            _pg_env(res.pg_dsn),
        )
    os.replace(tmp, target)
    return target


class IntegrityReport(BaseModel):
    path: str
    kind: Literal["sqlite", "pgdump", "unknown"]
    ok: bool
    detail: str


def integrity_check(path: Path) -> IntegrityReport:
    """`PRAGMA integrity_check` for a SQLite file, `pg_restore --list` for a pg_dump archive."""
    head = path.read_bytes()[:16] if path.exists() else b""
    if head.startswith(SQLITE_MAGIC):
        try:
            with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
                rows = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
        except sqlite3.DatabaseError as exc:
            return IntegrityReport(path=str(path), kind="sqlite", ok=False, detail=str(exc))
        ok = rows == ["ok"]
        return IntegrityReport(path=str(path), kind="sqlite", ok=ok, detail="; ".join(rows)[:500])
    if head.startswith(PGDUMP_MAGIC):
        proc = subprocess.run(
            [_tool("pg_restore"), "--list", str(path)], capture_output=True, text=True, check=False
        )
        entries = [ln for ln in proc.stdout.splitlines() if ln and not ln.startswith(";")]
        ok = proc.returncode == 0 and bool(entries)
        detail = f"{len(entries)} archive entries" if ok else (proc.stderr.strip()[:500] or "empty archive")
        return IntegrityReport(path=str(path), kind="pgdump", ok=ok, detail=detail)
    return IntegrityReport(
        path=str(path), kind="unknown", ok=False, detail="not a SQLite database nor a pg_dump archive"
    )


def restore(store: RegisteredStore, snapshot_path: Path) -> IntegrityReport:
    """Put a snapshot back in place (after checking it), then let the store react (the work store gets a
    new generation, so every cursor handed out before answers `invalid_cursor`)."""
    report = integrity_check(snapshot_path)
    if not report.ok:
        raise BackupError(f"refusing to restore {snapshot_path}: {report.detail}")
    if store.backend == "sqlite":
        live = store.sqlite_path
        assert live is not None
        live.parent.mkdir(parents=True, exist_ok=True)
        with (
            closing(sqlite3.connect(snapshot_path)) as src,
            closing(sqlite3.connect(live, timeout=30)) as dst,
        ):
            src.backup(dst)
    else:
        res: SqlStore = store.resource
        assert res.pg_dsn is not None
        env = _pg_env(res.pg_dsn)
        _run(
            [
                _tool("psql"),
                "-v",
                "ON_ERROR_STOP=1",
                "-q",
                "-c",
                f"DROP SCHEMA IF EXISTS {checked_schema(res.pg_schema)} CASCADE",
            ],
            env,
        )
        _run(
            [
                _tool("pg_restore"),
                "--no-owner",
                "--exit-on-error",
                f"--dbname={env.get('PGDATABASE', '')}",
                str(snapshot_path),
            ],
            env,
        )
    after = getattr(store.resource, "after_restore", None)
    if callable(after):
        after()
    return report
