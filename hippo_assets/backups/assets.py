"""Group `backups`: one asset that snapshots every registered non-rebuildable store (`hippo_resources.stores`)
and a check that every snapshot passed its integrity check.

Derived stores (chunks, vectors, BM25 generations, the embedding cache) are not backed up: the next
`hippo run` rebuilds them from the vault, whose git HEAD the manifest records.
"""

# No `from __future__ import annotations` here: Dagster reads the Config and resource
# annotations of asset functions at definition time and cannot resolve them from strings.

import datetime as dt
import json
from pathlib import Path

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    Config,
    Failure,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)
from pydantic import Field

from hippo_assets.backups import GROUP
from hippo_assets.backups.snapshots import backups_in, prune, take_backup, verify
from hippo_resources import (
    ConversationStore,
    DreamStore,
    FactStore,
    GhostStore,
    Ledger,
    Vault,
    VaultError,
    WorkStore,
)
from hippo_resources.stores import BackupError


class BackupConfig(Config):
    root: str = Field(description="Folder of the snapshots and exports (HIPPO_BACKUP_DIR)")
    keep_daily: int = Field(default=7, description="Newest snapshot of each of this many recent days")
    keep_weekly: int = Field(default=4, description="Newest snapshot of each of this many recent ISO weeks")
    export_months: int = Field(default=24, description="Months of JSONL exports kept (0 = forever)")


def _vault_head(vault: Vault) -> str | None:
    try:
        return vault.git("rev-parse", "HEAD").strip() if vault.is_git_repo() else None
    except VaultError:
        return None  # a vault without commits yet


@asset(
    group_name=GROUP,
    kinds={"sqlite", "postgres"},
    # After the assets that write the stores it snapshots. The ledger and the work store are written by
    # the librarian and the hooks (no asset): a backup takes them as they are at its time.
    deps=[
        "claude_code_log",
        "codex_log",
        "chatgpt_export",
        "claude_ai_export",
        "ghost_memories",
        "gap_report",
        "dream_consolidation",
        "interest_profile",
    ],
    description="Consistent snapshots of the ledger, the work store, the ghost store, the fact store, the dream "
    "store and the conversation store (dlt's loads and state; SQLite online backup, a tar of the files, "
    "or pg_dump) into <backups>/<UTC time>/ with a manifest (size, sha256, integrity check); JSONL exports "
    "of feedback, gaps and audit logs kept for months; 7 daily and 4 weekly snapshots kept.",
)
def backups(
    context: AssetExecutionContext,
    config: BackupConfig,
    ledger: Ledger,
    work_store: WorkStore,
    ghost_store: GhostStore,
    fact_store: FactStore,
    dream_store: DreamStore,
    conversation_store: ConversationStore,
    vault: Vault,
) -> MaterializeResult:
    root = Path(config.root)
    stores = {
        "ledger": ledger,
        "work_store": work_store,
        "ghost_store": ghost_store,
        "fact_store": fact_store,
        "dream_store": dream_store,
        "conversation_store": conversation_store,
    }
    now = dt.datetime.now(dt.UTC)
    try:
        folder, manifest = take_backup(stores, root, now, _vault_head(vault), config.export_months)
    except (BackupError, OSError) as exc:
        raise Failure(f"backup failed: {exc}") from exc
    deleted = prune(root, now, config.keep_daily, config.keep_weekly, config.export_months)
    context.log.info(f"backup {folder} written; pruned {len(deleted)} old snapshot(s) or export file(s)")
    return MaterializeResult(
        metadata={
            "snapshot": MetadataValue.path(str(folder)),
            "stores": MetadataValue.json([s.model_dump() for s in manifest.stores]),
            "integrity_ok": manifest.ok,
            "exported_rows": sum(e.rows for e in manifest.exports),
            "kept_snapshots": len(backups_in(root)),
            "pruned": MetadataValue.json(deleted),
        }
    )


@asset_check(
    asset=backups,
    blocking=True,
    description="Every store snapshot of the latest backup passed its integrity check and matches its manifest.",
)
def snapshots_are_restorable(config: BackupConfig) -> AssetCheckResult:
    folders = backups_in(Path(config.root))
    if not folders:
        return AssetCheckResult(passed=False, metadata={"reason": "no backup folder found"})
    try:
        manifest = verify(folders[-1])
    except BackupError as exc:
        return AssetCheckResult(passed=False, metadata={"reason": str(exc)})
    bad = [s.store for s in manifest.stores if s.file and not s.integrity_ok]
    return AssetCheckResult(
        passed=not bad,
        severity=AssetCheckSeverity.ERROR,
        metadata={
            "snapshot": folders[-1].name,
            "failed_stores": MetadataValue.json(bad),
            "manifest": MetadataValue.json(json.loads(manifest.model_dump_json())),
        },
    )
