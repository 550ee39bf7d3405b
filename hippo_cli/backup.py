"""`hippo backup` (runs backup_job, prints the snapshot's folder last) and `hippo restore SNAPSHOT --into DIR`."""

from __future__ import annotations

import sys
from pathlib import Path

from dagster import AssetKey, DagsterInstance

from hippo_settings import HippoSettings


def backup(settings: HippoSettings, instance: DagsterInstance) -> int:
    """Run `backup_job` on the instance (so the run shows in the UI); print the snapshot folder last."""
    from hippo_assets.backups.definitions import BACKUP_JOB
    from hippo_assets.definitions import build_definitions
    from hippo_cli.runner import run_job

    job = build_definitions(settings).resolve_job_def(BACKUP_JOB)
    if not run_job(job, instance):
        return 1
    event = instance.get_latest_materialization_event(AssetKey("backups"))
    materialization = event.asset_materialization if event else None
    if materialization is None:
        print("hippo backup: the run succeeded but recorded no snapshot", file=sys.stderr)
        return 1
    print(materialization.metadata["snapshot"].value)
    return 0


def restore(settings: HippoSettings, snapshot: Path, into: Path | None, yes: bool) -> int:
    """Put a backup's stores into the home `into` (a new one) or, with --yes, over the live HIPPO_HOME.
    A snapshot or a target that cannot be read or written is a message and exit 2, never a traceback."""
    from pydantic import ValidationError

    try:
        return _restore(settings, snapshot, into, yes)
    except ValidationError as exc:
        print(f"hippo restore: {snapshot} is not a backup: its manifest does not read as one "
              f"({exc.error_count()} problem(s), first: {exc.errors()[0]['msg']})", file=sys.stderr)  # fmt: skip
    except UnicodeError:
        print(f"hippo restore: {snapshot} is not a backup: its manifest is not UTF-8 text", file=sys.stderr)
    except RecursionError:
        print(f"hippo restore: {snapshot} is not a backup: its manifest nests too deeply", file=sys.stderr)
    except (OSError, ValueError) as exc:
        where = getattr(exc, "filename", None)
        why = getattr(exc, "strerror", None) or str(exc)
        print(f"hippo restore: cannot restore {snapshot} into {into or settings.home}: "
              f"{why}{f' ({where})' if where else ''}", file=sys.stderr)  # fmt: skip
    return 2


def _restore(settings: HippoSettings, snapshot: Path, into: Path | None, yes: bool) -> int:
    from hippo_assets.backups.snapshots import live_integrity, restore_backup, verify
    from hippo_resources import build_resources
    from hippo_resources.stores import BackupError, registered_stores

    live = settings.home.resolve()
    target = (into or live).resolve()
    try:
        manifest = verify(snapshot)
    except BackupError as exc:
        print(f"hippo restore: {exc}", file=sys.stderr)
        return 2
    if not yes:
        if target == live:
            print(
                f"hippo restore: {target} is the live HIPPO_HOME: restoring replaces its ledger, work, ghost, "
                "fact, dream and conversation stores. Stop the librarian and the daemon, then add --yes (or restore --into a new "
                "folder).",
                file=sys.stderr,
            )
            return 2
        at_target = registered_stores(build_resources(settings.model_copy(update={"home": target})))
        present = [
            s.name
            for s in at_target
            if (s.sqlite_path is not None and s.sqlite_path.exists())
            or (s.files_root is not None and s.files_root.is_dir() and any(s.files_root.iterdir()))
        ]
        if present:
            print(
                f"hippo restore: {target} already holds {', '.join(present)}; use an empty folder or add --yes",
                file=sys.stderr,
            )
            return 2
        if settings.pg_dsn is not None and any(s.backend == "postgres" for s in manifest.stores):
            print(
                "hippo restore: the stores live in PostgreSQL (HIPPO_PG_DSN): a restore replaces their schemas "
                "whatever --into says. Add --yes to go on.",
                file=sys.stderr,
            )
            return 2
    target.mkdir(parents=True, exist_ok=True)
    resources = build_resources(settings.model_copy(update={"home": target}))
    try:
        restored = restore_backup(snapshot, resources)
    except BackupError as exc:
        print(f"hippo restore: {exc}", file=sys.stderr)
        return 1
    for name, report in restored:
        print(f"restored {name:12s} snapshot check: {report.detail}", file=sys.stderr)
    checks = live_integrity(resources)
    for name, report in checks:
        print(f"restored {name:12s} integrity check in place: {report.detail}", file=sys.stderr)
    if not all(r.ok for _, r in checks):
        return 1
    print(
        f"Work-memory cursors from before the restore now answer invalid_cursor (clients re-read from 0).\n"
        f"Chunks, vectors and the BM25 index are not in a backup: `HIPPO_HOME={target} hippo run` rebuilds "
        "them from the vault.",
        file=sys.stderr,
    )
    print(target)
    return 0
