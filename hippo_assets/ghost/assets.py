"""Group `ghost`: `ghost_memories` promotes the memories that pass all three walls into the shared store.

Default-deny: a memory reaches other projects only with `scope: shared` in its file **and** a ticked line
with its current fingerprint in `90-system/ghost-allowlist.md` (a person's edit), **and** a clean content
scan. Every other candidate is listed in the run metadata with the reason it did not pass; new shared
memories get an unticked allowlist line (the run's one git commit).
"""

# No `from __future__ import annotations` here: Dagster reads the resource annotations at definition time.

from dagster import AssetExecutionContext, Failure, MaterializeResult, MetadataValue, asset

from hippo_assets.ghost import GROUP
from hippo_core.agents.work_memory import WorkMemoryError
from hippo_resources import Embedder, GhostStore, Vault
from hippo_work.ghost import GhostLayer


@asset(
    group_name=GROUP,
    kinds={"markdown", "sqlite", "postgres"},
    deps=["vault_documents"],  # the memory files are vault notes: read after the vault's scan
    description="Shared lessons agents wrote (50-ops/<project>/memory/, notes of the vault: after "
    "vault_documents), promoted to the ghost store only "
    "with both `scope: shared` and a ticked, fingerprint-matching line in 90-system/ghost-allowlist.md, "
    "after the content scanner; the reason for every memory not promoted is in the metadata.",
)
def ghost_memories(
    context: AssetExecutionContext, vault: Vault, ghost_store: GhostStore, embedder: Embedder
) -> MaterializeResult:
    layer = GhostLayer(ghost_store, vault, embedder)
    try:
        report = layer.promote()
    except WorkMemoryError as exc:
        raise Failure(f"ghost promotion: {exc.reason}") from exc
    for d in report.not_promoted:
        context.log.info(f"not promoted {d.memory_id}: {d.reason}")
    return MaterializeResult(
        metadata={
            "promoted": len(report.promoted),
            "not_promoted": len(report.not_promoted),
            "withdrawn": len(report.withdrawn),
            "proposed": MetadataValue.json(report.proposed),
            "decisions": MetadataValue.json(
                {
                    "promoted": [d.dump() for d in report.promoted],
                    "not_promoted": [d.dump() for d in report.not_promoted],
                    "kept": [d.dump() for d in report.kept],
                    "withdrawn": [d.dump() for d in report.withdrawn],
                    "unreadable": [u.dump() for u in report.unreadable],
                }
            ),
            "allowlist_commit": report.commit or "",
        }
    )
