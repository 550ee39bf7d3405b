"""`hippo gc`: purge now what soft delete keeps for the retention period (the trash of the vector store and
the deleted set of the chunk store), instead of waiting for a run after HIPPO_DELETE_RETENTION_DAYS."""

from __future__ import annotations

import time

from hippo_resources import build_resources
from hippo_resources.vector_ledger import purge_deleted
from hippo_settings import HippoSettings


def gc(settings: HippoSettings, older_than_days: float | None = None) -> int:
    """Purge every soft-deleted chunk (or those deleted more than `older_than_days` ago)."""
    res = build_resources(settings)
    deleted = res.chunk_store.deleted()
    cutoff = None if older_than_days is None else time.time() - older_than_days * 86400
    notes = deleted if cutoff is None else deleted.filter(deleted["deleted_at"] < cutoff)
    purged = purge_deleted(res.chunk_store, res.vector_store, older_than=cutoff)
    print(
        f"purged {purged} soft-deleted vector(s) of {notes['path'].n_unique() if notes.height else 0} note(s); "
        f"{len(res.vector_store.trashed())} still kept"
    )
    return 0
