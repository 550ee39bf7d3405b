"""The one place where Hippocampus's Dagster definitions are assembled."""

from __future__ import annotations

import os

from dagster import (
    AssetSelection,
    DefaultScheduleStatus,
    Definitions,
    ScheduleDefinition,
    define_asset_job,
    in_process_executor,
)

from hippo_assets import index, ingest
from hippo_core.settings import HippoSettings
from hippo_resources import build_resources
from sensors.inbox import build_inbox_sensor

ASSETS = [ingest.sources, index.vault_documents, index.chunks, index.embeddings, index.lexical_index]
ASSET_CHECKS = [ingest.source_hashes_match, index.chunks_are_valid, index.vectors_match_chunks]

ingest_job = define_asset_job(
    "ingest_job",
    selection=AssetSelection.assets(ingest.sources).downstream(),
    description="Inbox → sources → documents → chunks → embeddings → lexical index.",
)
refresh_job = define_asset_job(
    "refresh_job",
    selection=AssetSelection.assets(*ASSETS),
    description="Materialize the whole graph (incremental: unchanged chunks are not re-embedded).",
)


def build_definitions(settings: HippoSettings, timezone: str | None = None) -> Definitions:
    """Definitions for one vault/home pair; tests build their own with temporary folders."""
    tz = timezone or os.environ.get("HIPPO_TIMEZONE") or "UTC"
    nightly = ScheduleDefinition(
        name="nightly_refresh",
        job=refresh_job,
        cron_schedule="10 3 * * *",
        execution_timezone=tz,
        default_status=DefaultScheduleStatus.RUNNING,
        description="Re-index the whole vault every night (catches edits made outside the inbox).",
    )
    inbox_sensor = build_inbox_sensor(ingest_job.name)
    return Definitions(
        assets=ASSETS,
        asset_checks=ASSET_CHECKS,
        jobs=[ingest_job, refresh_job],
        schedules=[nightly],
        sensors=[inbox_sensor],
        resources=build_resources(settings),
        executor=in_process_executor,
    )


defs = build_definitions(HippoSettings.from_env(os.environ))
