"""`WorkStore`: the work feed (`hippo_resources.work_feed`) as a Dagster resource, in the backup registry."""

from __future__ import annotations

from hippo_resources.sql_store import SqlStore
from hippo_resources.work_feed import DEFAULT_SUMMARY_MAX_BYTES, WorkFeed, new_generation

__all__ = ["WorkStore", "new_generation"]


class WorkStore(WorkFeed, SqlStore):
    """Checkpoints per project, with a generation and a per-project `seq`."""

    pg_schema: str = "hippo_work"
    summary_max_bytes: int = DEFAULT_SUMMARY_MAX_BYTES
