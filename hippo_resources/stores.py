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
import tarfile
from collections.abc import Mapping
from contextlib import closing, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from hippo_core.conversations.formats import FORMATS
from hippo_resources.conversation_store import ConversationStore
from hippo_resources.dream_store import DreamStore
from hippo_resources.fact_store import FactStore
from hippo_resources.ghost_store import GhostStore
from hippo_resources.ledger import Ledger
from hippo_resources.sql_store import SqlStore, checked_schema
from hippo_resources.work_store import WorkStore

CONVERSATION_SOURCES = tuple(fmt.name for fmt in FORMATS)
SQLITE_MAGIC = b"SQLite format 3\x00"
TAR_MAGIC_AT, TAR_MAGIC = 257, b"ustar"
PGDUMP_MAGIC = b"PGDMP"

# Resource keys of the non-rebuildable stores, and what each holds (for docs/agents.md and `hippo status`).
NON_REBUILDABLE: dict[str, str] = {
    "ledger": "query log, knowledge gaps, feedback, evaluation runs (and the bundle cache)",
    "work_store": "agents' work-memory checkpoints per project, with the cursor generation",
    "ghost_store": "promoted shared memories, their feedback and the append-only ghost read log",
    "dream_store": "the dream's runs, the interest profile's daily snapshots (history), lint flags and verdicts",
    "fact_store": "temporal facts, supersession proposals and the append-only resolution ledger",
    "conversation_store": "agent conversations as dlt loaded them, with dlt's incremental state (Claude Code "
    "deletes its own transcripts after 30 days: this can be the only copy)",
}


class BackupError(RuntimeError):
    pass


@dataclass(frozen=True)
class RegisteredStore:
    name: str
    resource: Any
    holds: str

    @property
    def backend(self) -> Literal["sqlite", "postgres", "files"]:
        if isinstance(self.resource, SqlStore):
            return self.resource.backend
        if isinstance(self.resource, ConversationStore):
            return "postgres" if self.resource.pg_dsn else "files"
        return "sqlite"

    @property
    def pg_dsn(self) -> str | None:
        return getattr(self.resource, "pg_dsn", None)

    @property
    def pg_schemas(self) -> list[str]:
        """The PostgreSQL schemas that hold this store (dlt's datasets for the conversation store)."""
        if isinstance(self.resource, ConversationStore):
            return [self.resource.dataset(source) for source in CONVERSATION_SOURCES]
        return [self.resource.pg_schema]

    @property
    def files_root(self) -> Path | None:
        """A store kept as files: the folder whose content the snapshot archives (dlt's destination,
        which holds the loads and dlt's incremental state)."""
        if isinstance(self.resource, ConversationStore) and not self.resource.pg_dsn:
            return self.resource.path / "dlt"
        return None

    @property
    def sqlite_path(self) -> Path | None:
        if isinstance(self.resource, SqlStore) and self.resource.backend == "sqlite":
            return Path(self.resource.path)
        return None

    @property
    def snapshot_name(self) -> str:
        suffix = {"sqlite": "sqlite", "postgres": "pgdump", "files": "tar"}[self.backend]
        return f"{self.name}.{suffix}"


def registered_stores(resources: Mapping[str, Any]) -> list[RegisteredStore]:
    """The non-rebuildable stores present in a resource dict (as `build_resources` makes it)."""
    out = []
    for key, holds in NON_REBUILDABLE.items():
        resource = resources.get(key)
        if isinstance(resource, Ledger | WorkStore | GhostStore | FactStore | DreamStore | ConversationStore):
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


def _existing_schemas(dsn: str, names: list[str]) -> list[str]:
    import psycopg2

    with closing(psycopg2.connect(dsn)) as conn, conn.cursor() as cur:
        cur.execute("SELECT nspname FROM pg_namespace WHERE nspname = ANY(%s)", (names,))
        found = {row[0] for row in cur.fetchall()}
    return [n for n in names if n in found]


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
    elif store.backend == "files":
        folder = store.files_root
        assert folder is not None
        if not folder.is_dir() or not any(folder.iterdir()):
            return None
        with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as tar:
            for path in sorted(folder.rglob("*")):
                if path.is_file() and not path.is_symlink():
                    tar.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False)
    else:
        assert store.pg_dsn is not None
        present = _existing_schemas(store.pg_dsn, store.pg_schemas)
        if not present:
            return None  # nothing loaded yet (dlt makes a dataset's schema at its first load)
        schemas = [f"--schema={checked_schema(name)}" for name in present]
        _run(
            [_tool("pg_dump"), "--format=custom", *schemas, "--no-owner", f"--file={tmp}"],
            _pg_env(store.pg_dsn),
        )
    os.replace(tmp, target)
    return target


class IntegrityReport(BaseModel):
    path: str
    kind: Literal["sqlite", "pgdump", "tar", "unknown"]
    ok: bool
    detail: str


def integrity_check(path: Path) -> IntegrityReport:
    """`PRAGMA integrity_check` for a SQLite file, `pg_restore --list` for a pg_dump archive."""
    with path.open("rb") if path.is_file() else nullcontext(None) as fh:
        head = fh.read(512) if fh is not None else b""
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
    if head[TAR_MAGIC_AT : TAR_MAGIC_AT + len(TAR_MAGIC)] == TAR_MAGIC:
        return _tar_integrity(path)
    return IntegrityReport(
        path=str(path), kind="unknown", ok=False, detail="not a SQLite database, a pg_dump archive nor a tar"
    )


def _tar_integrity(path: Path) -> IntegrityReport:
    """Every member readable to its end, each a plain file with a relative path inside the archive."""
    try:
        with tarfile.open(path, "r") as tar:
            members = tar.getmembers()
            for m in members:
                rel = Path(m.name)
                if not m.isfile() or rel.is_absolute() or ".." in rel.parts:
                    return IntegrityReport(
                        path=str(path), kind="tar", ok=False, detail=f"bad member {m.name!r}"
                    )
                fh = tar.extractfile(m)
                while fh is not None and fh.read(1 << 20):
                    pass
    except (tarfile.TarError, OSError, EOFError) as exc:
        return IntegrityReport(path=str(path), kind="tar", ok=False, detail=f"damaged archive: {exc}")
    if not members:
        return IntegrityReport(path=str(path), kind="tar", ok=False, detail="empty archive")
    return IntegrityReport(path=str(path), kind="tar", ok=True, detail=f"{len(members)} files")


def _restore_files(store: RegisteredStore, snapshot_path: Path) -> None:
    """Unpack beside the live folder, then swap it in (a failed unpack leaves the live folder as it was)."""
    live = store.files_root
    assert live is not None
    live.parent.mkdir(parents=True, exist_ok=True)
    fresh = live.with_name(f".{live.name}.restoring")
    shutil.rmtree(fresh, ignore_errors=True)
    with tarfile.open(snapshot_path, "r") as tar:
        tar.extractall(fresh, filter="data")  # checked members only: relative plain files
    old = live.with_name(f".{live.name}.before-restore")
    shutil.rmtree(old, ignore_errors=True)
    if live.exists():
        live.rename(old)
    fresh.rename(live)
    shutil.rmtree(old, ignore_errors=True)


def _forget_dlt_working_state(store: RegisteredStore) -> None:
    """dlt keeps a working copy of its state beside the store; after a restore the restored destination's
    state must win (else dlt would think the messages after the backup are loaded and skip them)."""
    if isinstance(store.resource, ConversationStore):
        shutil.rmtree(store.resource.path / "pipelines", ignore_errors=True)


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
    elif store.backend == "files":
        _restore_files(store, snapshot_path)
    else:
        assert store.pg_dsn is not None
        env = _pg_env(store.pg_dsn)
        drops = "; ".join(f"DROP SCHEMA IF EXISTS {checked_schema(n)} CASCADE" for n in store.pg_schemas)
        _run([_tool("psql"), "-v", "ON_ERROR_STOP=1", "-q", "-c", drops], env)
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
    _forget_dlt_working_state(store)
    after = getattr(store.resource, "after_restore", None)
    if callable(after):
        after()
    return report
