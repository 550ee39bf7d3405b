"""Domain `memory`: one dlt asset per conversation format, conversation chunks, and `memory_job`."""

from __future__ import annotations

from dagster import AssetSelection, Definitions, define_asset_job

from hippo_assets.index import GROUP as INDEX
from hippo_assets.memory import GROUP
from hippo_assets.memory.assets import (
    chatgpt_export,
    claude_ai_export,
    claude_code_log,
    codex_log,
    conversation_chunks,
)
from hippo_core.settings import HippoSettings

# Not in refresh_job: `hippo run` never reads ~/.claude or ~/.codex unasked.
ASSETS = [claude_code_log, codex_log, chatgpt_export, claude_ai_export, conversation_chunks]

memory_job = define_asset_job(
    "memory_job",
    selection=AssetSelection.groups(GROUP, INDEX),
    description="Agent logs and chat exports (dlt) → conversation chunks → chunks → embeddings → lexical index.",
)


# One job per format, for `hippo ingest KIND`: that format's loader, then conversation chunks and the index.
FORMAT_JOBS = {
    loader.key.to_user_string().rsplit("_", 1)[0]: define_asset_job(
        f"{loader.key.to_user_string().rsplit('_', 1)[0]}_job",
        selection=AssetSelection.assets(loader, conversation_chunks) | AssetSelection.groups(INDEX),
        description="One conversation format (dlt) → conversation chunks → chunks → embeddings → lexical index.",
    )
    for loader in (claude_code_log, codex_log, chatgpt_export, claude_ai_export)
}


def definitions(settings: HippoSettings) -> Definitions:
    return Definitions(assets=ASSETS, jobs=[memory_job, *FORMAT_JOBS.values()])
