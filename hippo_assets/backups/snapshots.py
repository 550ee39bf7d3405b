"""Taking, pruning and restoring backups of the non-rebuildable stores (`hippo_resources.stores`).

A backup is a folder `<backups>/<UTC timestamp>/` with one consistent snapshot per registered store
(SQLite online backup, or `pg_dump` on PostgreSQL), each checked (`PRAGMA integrity_check` /
`pg_restore --list`), and `manifest.json` (store, file, size, sha256, integrity). Next to the snapshots,
`<backups>/exports/<table>/<YYYY-MM>.jsonl` keeps feedback, gaps and the audit logs for months.
A restore checks sizes and hashes against the manifest, then puts every store back through
`stores.restore` (which rotates the work store's generation: old cursors answer `invalid_cursor`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from hippo_core.backups import (
    MANIFEST,
    BackupManifest,
    ExportFile,
    StoreSnapshot,
    export_months_to_prune,
    month_of,
    months_back,
    snapshot_name,
    snapshot_time,
    snapshots_to_keep,
)
from hippo_core.safety.scrub import scrub
from hippo_resources.sql_store import SqlStore
from hippo_resources.stores import (
    BackupError,
    IntegrityReport,
    RegisteredStore,
    integrity_check,
    registered_stores,
    restore,
    snapshot,
)

EXPORTS = "exports"


@dataclass(frozen=True)
class ExportTable:
    """A table exported as JSONL: `log` tables are append-only (rows go to the month of their `ts`);
    a `state` table is written whole into the current month's file (its latest state that month)."""

    store: str
    table: str
    mode: Literal["log", "state"]

    @property
    def key(self) -> str:
        return f"{self.store}.{self.table}"


EXPORT_TABLES = (
    ExportTable("ledger", "feedback", "log"),
    ExportTable("ledger", "gaps", "state"),
    ExportTable("ledger", "query_log", "log"),
    ExportTable("ghost_store", "read_log", "log"),
    ExportTable("ghost_store", "feedback", "log"),
)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def take_backup(
    resources: Mapping[str, Any],
    root: Path,
    now: dt.datetime,
    vault_head: str | None = None,
    export_months: int = 24,
) -> tuple[Path, BackupManifest]:
    """Snapshot every registered store into `root/<timestamp>/`, check each, write the manifest."""
    folder = root / snapshot_name(now)
    partial = root / f".{folder.name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    entries = []
    for store in registered_stores(resources):
        path = snapshot(store, partial)
        entry = StoreSnapshot(store=store.name, holds=store.holds, backend=store.backend, file=None)
        if path is not None:
            report = integrity_check(path)
            entry = entry.model_copy(
                update={
                    "file": path.name,
                    "size": path.stat().st_size,
                    "sha256": sha256_file(path),
                    "integrity_ok": report.ok,
                    "integrity": report.detail,
                }
            )
        entries.append(entry)
    manifest = BackupManifest(
        created=now.astimezone(dt.UTC).isoformat(timespec="seconds"),
        snapshot=folder.name,
        stores=entries,
        vault_head=vault_head,
    )
    manifest.exports = export_logs(resources, partial, root / EXPORTS, now, export_months)
    (partial / MANIFEST).write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
    if folder.exists():  # a second backup in the same second replaces the first
        shutil.rmtree(folder)
    partial.rename(folder)
    return folder, manifest


def _rows(store: RegisteredStore, snapshot_dir: Path, table: str) -> list[dict[str, Any]]:
    """Every row of a table: from the SQLite snapshot just taken (consistent with it), or from the live
    PostgreSQL schema."""
    snap = snapshot_dir / store.snapshot_name
    if store.backend == "sqlite":
        if not snap.exists():
            return []
        with closing(sqlite3.connect(f"file:{snap}?mode=ro", uri=True)) as conn:
            conn.row_factory = sqlite3.Row
            try:
                return [dict(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY rowid")]  # noqa: S608
            except sqlite3.OperationalError:  # the table does not exist yet
                return []
    resource: SqlStore = store.resource
    with resource.tx() as tx:
        return tx.rows(f"SELECT * FROM {table}")  # noqa: S608 - a name from EXPORT_TABLES


def _clean(value: Any) -> Any:
    """A value as JSON can hold it; strings pass the scrubber (nothing is exported raw)."""
    if isinstance(value, str):
        return scrub(value).text
    if isinstance(value, bytes | memoryview):
        return None  # vectors and other blobs are not part of an export
    return value


def export_logs(
    resources: Mapping[str, Any],
    snapshot_dir: Path,
    exports_root: Path,
    now: dt.datetime,
    export_months: int = 24,
) -> list[ExportFile]:
    """Write this and last month's JSONL files of every export table (older months are final: their rows
    never change) and any month file that is missing and not past its time. Returns what was written."""
    by_name = {s.name: s for s in registered_stores(resources)}
    written = []
    this_month, last_month = months_back(now, 0), months_back(now, 1)
    for spec in EXPORT_TABLES:
        store = by_name.get(spec.store)
        if store is None:
            continue
        rows = [{k: _clean(v) for k, v in r.items()} for r in _rows(store, snapshot_dir, spec.table)]
        months: dict[str, list[dict[str, Any]]] = {}
        if spec.mode == "state":
            months[this_month] = rows
        else:
            for r in rows:
                months.setdefault(month_of(r["ts"]), []).append(r)
        folder = exports_root / spec.key
        expired = set(export_months_to_prune(months, now, export_months))
        for month, month_rows in sorted(months.items()):
            target = folder / f"{month}.jsonl"
            if month in expired or (target.exists() and month < last_month):
                continue
            folder.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.tmp")
            with tmp.open("w", encoding="utf-8") as f:
                for r in month_rows:
                    f.write(json.dumps(r, ensure_ascii=False, sort_keys=True, default=str) + "\n")
            tmp.replace(target)
            written.append(
                ExportFile(
                    table=spec.key,
                    file=f"{spec.key}/{target.name}",
                    rows=len(month_rows),
                    sha256=sha256_file(target),
                )
            )
    return written


def prune(root: Path, now: dt.datetime, daily: int, weekly: int, export_months: int) -> list[str]:
    """Delete the snapshots the retention rule does not keep and export months past their time; returns
    what was deleted (relative to `root`)."""
    folders = {t: p for p in root.iterdir() if p.is_dir() and (t := snapshot_time(p.name)) is not None}
    keep = snapshots_to_keep(folders, daily, weekly)
    deleted = []
    for t, path in sorted(folders.items()):
        if t not in keep:
            shutil.rmtree(path)
            deleted.append(path.name)
    exports = root / EXPORTS
    if exports.is_dir():
        for table in sorted(p for p in exports.iterdir() if p.is_dir()):
            months = {p.stem: p for p in table.glob("*.jsonl")}
            for month in export_months_to_prune(months, now, export_months):
                months[month].unlink()
                deleted.append(f"{EXPORTS}/{table.name}/{month}.jsonl")
    return deleted


def read_manifest(folder: Path) -> BackupManifest:
    path = folder / MANIFEST
    if not path.is_file():
        raise BackupError(f"{folder} is not a backup: it has no {MANIFEST}")
    return BackupManifest.model_validate_json(path.read_text(encoding="utf-8"))


def verify(folder: Path) -> BackupManifest:
    """The manifest, after every snapshot file's size and sha256 matched it."""
    manifest = read_manifest(folder)
    for entry in manifest.stores:
        if entry.file is None:
            continue
        path = folder / entry.file
        if not path.is_file():
            raise BackupError(f"{entry.file} is listed in the manifest but missing from {folder}")
        if path.stat().st_size != entry.size or sha256_file(path) != entry.sha256:
            raise BackupError(f"{entry.file} does not match the manifest (size or sha256): refusing it")
    return manifest


def restore_backup(folder: Path, resources: Mapping[str, Any]) -> list[tuple[str, IntegrityReport]]:
    """Put every store of a verified backup back in place through `stores.restore`; returns each store's
    integrity report of the snapshot it restored."""
    manifest = verify(folder)
    by_name = {s.name: s for s in registered_stores(resources)}
    out = []
    for entry in manifest.stores:
        if entry.file is None:
            continue
        store = by_name.get(entry.store)
        if store is None:
            raise BackupError(f"the backup holds {entry.store!r}, which this configuration has no store for")
        if store.snapshot_name != entry.file:
            raise BackupError(
                f"{entry.store} is a {store.backend} store here but the backup holds {entry.file}: "
                "restore into a configuration on the same backend"
            )
        out.append((entry.store, restore(store, folder / entry.file)))
    return out


def live_integrity(resources: Mapping[str, Any]) -> list[tuple[str, IntegrityReport]]:
    """The integrity check of every registered SQLite store as it is now (after a restore)."""
    out = []
    for store in registered_stores(resources):
        path = store.sqlite_path
        if path is not None and path.exists():
            out.append((store.name, integrity_check(path)))
    return out


def backups_in(root: Path) -> Sequence[Path]:
    """The snapshot folders under `root`, oldest first."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and snapshot_time(p.name) is not None)
