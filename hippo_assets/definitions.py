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

from hippo_assets.compile.definitions import (
    LOOP_ASSETS,
    LOOP_CHECKS,
    LOOP_JOBS,
    build_loop_schedules,
    build_loop_sensors,
)
from hippo_assets.index import assets as index
from hippo_assets.ingest import assets as ingest
from hippo_assets.memory import assets as memory
from hippo_assets.quality import assets as quality
from hippo_core.settings import HippoSettings
from hippo_resources import build_resources
from hippo_resources.conversation_store import memory_resources
from hippo_resources.llm import build_llm
from sensors.ingest import build_inbox_sensor

ASSETS = [ingest.sources, index.vault_documents, index.chunks, index.embeddings, index.lexical_index]
ASSET_CHECKS = [
    ingest.source_hashes_match,
    index.chunks_are_valid,
    index.vectors_match_chunks,
]
MEMORY_CHECKS = [memory.messages_have_vectors]  # verify: every stored message has a vector
# Conversation memory (dlt): not in ASSETS, so `hippo run` never reads ~/.claude or ~/.codex unasked.
MEMORY_ASSETS = [
    memory.claude_code_log,
    memory.codex_log,
    memory.chatgpt_export,
    memory.claude_ai_export,
    memory.conversation_chunks,
]

ingest_job = define_asset_job(
    "ingest_job",
    selection=AssetSelection.assets(ingest.sources).downstream(),
    description="Inbox → sources → documents → chunks → embeddings → lexical index.",
)
memory_job = define_asset_job(
    "memory_job",
    selection=AssetSelection.assets(
        *MEMORY_ASSETS, index.vault_documents, index.chunks, index.embeddings, index.lexical_index
    ),
    description="Agent logs and chat exports (dlt) → conversation chunks → chunks → embeddings → lexical index.",
)
QUALITY_ASSETS = [quality.gap_probe, quality.gap_report, quality.eval_report]
QUALITY_CHECKS = [quality.eval_no_regression]
gaps_job = define_asset_job(
    "gaps_job",
    selection=AssetSelection.assets(quality.gap_probe, quality.gap_report),
    description="Replay open knowledge gaps, then rewrite 30-reviews/gap-queue.md.",
)
eval_job = define_asset_job(
    "eval_job", selection=AssetSelection.assets(quality.eval_report), description="Golden-set evaluation."
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
    quality_schedules = [
        ScheduleDefinition(
            name=name,
            job=job,
            cron_schedule=cron,
            execution_timezone=tz,
            default_status=DefaultScheduleStatus.RUNNING,
            description=text,
        )
        for name, job, cron, text in (
            ("nightly_eval", eval_job, "0 3 * * *", "Golden-set metrics; the check blocks on a regression."),
            (
                "nightly_gaps",
                gaps_job,
                "40 3 * * *",
                "Replay gaps after the nightly refresh, rewrite the gap queue.",
            ),
        )
    ]
    inbox_sensor = build_inbox_sensor(ingest_job.name)
    return Definitions(
        assets=[*ASSETS, *MEMORY_ASSETS, *LOOP_ASSETS, *QUALITY_ASSETS],
        asset_checks=[*ASSET_CHECKS, *MEMORY_CHECKS, *LOOP_CHECKS, *QUALITY_CHECKS],
        jobs=[ingest_job, refresh_job, memory_job, gaps_job, eval_job, *LOOP_JOBS],
        schedules=[nightly, *quality_schedules, *build_loop_schedules(tz)],
        sensors=[inbox_sensor, *build_loop_sensors()],
        resources={**build_resources(settings), **memory_resources(settings), "llm": build_llm(os.environ)},
        executor=in_process_executor,
    )


defs = build_definitions(HippoSettings.from_env(os.environ))
