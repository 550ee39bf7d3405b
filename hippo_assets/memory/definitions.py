"""Domain `memory`: one dlt asset per conversation format, conversation chunks, `memory_job`, and one job
per format for `hippo ingest KIND` (all generated from `hippo_core.conversations.formats.FORMATS`)."""

from __future__ import annotations

from dagster import AssetSelection, Definitions, define_asset_job

from hippo_assets.index import GROUP as INDEX
from hippo_assets.memory import GROUP
from hippo_assets.memory.assets import LOADERS, conversation_chunks
from hippo_core.conversations.formats import FORMATS
from hippo_settings import HippoSettings

# Not in refresh_job: `hippo run` never reads ~/.claude or ~/.codex unasked.
ASSETS = [*LOADERS.values(), conversation_chunks]

memory_job = define_asset_job(
    "memory_job",
    selection=AssetSelection.groups(GROUP, INDEX),
    description="Agent logs and chat exports (dlt) → conversation chunks → chunks → embeddings → lexical index.",
)
FORMAT_JOBS = [
    define_asset_job(
        fmt.job_name,
        selection=AssetSelection.assets(LOADERS[fmt.name], conversation_chunks)
        | AssetSelection.groups(INDEX),
        description=f"{fmt.label} (dlt) → conversation chunks → chunks → embeddings → lexical index "
        f"(`hippo ingest {fmt.cli_name}`).",
    )
    for fmt in FORMATS
]


def definitions(settings: HippoSettings) -> Definitions:
    return Definitions(assets=ASSETS, jobs=[memory_job, *FORMAT_JOBS])
