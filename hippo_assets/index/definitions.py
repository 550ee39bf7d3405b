"""Domain `index`: documents, chunks, embeddings and the lexical index, their checks, `refresh_job` and
the nightly refresh, and the whole-vault sensor."""

from __future__ import annotations

from dagster import AssetSelection, Definitions, define_asset_job

from hippo_assets.index import GROUP
from hippo_assets.index.assets import (
    chunks,
    chunks_are_valid,
    embeddings,
    lexical_index,
    messages_have_vectors,
    vault_documents,
    vectors_match_chunks,
)
from hippo_assets.ingest import GROUP as INGEST
from hippo_assets.schedules import schedule
from hippo_settings import HippoSettings
from sensors.vault import build_vault_sensor

ASSETS = [vault_documents, chunks, embeddings, lexical_index]
# messages_have_vectors checks `embeddings`, so every run that embeds evaluates it (the plain run too).
CHECKS = [chunks_are_valid, vectors_match_chunks, messages_have_vectors]

refresh_job = define_asset_job(
    "refresh_job",
    selection=AssetSelection.groups(INGEST, GROUP),
    description="The whole vault: inbox → sources → documents → chunks → embeddings → lexical index "
    "(incremental: unchanged chunks are not re-embedded). What `hippo run` runs.",
)


def definitions(settings: HippoSettings) -> Definitions:
    nightly_refresh = schedule(
        "nightly_refresh",
        refresh_job,
        settings.cron_refresh,
        settings,
        "Re-index the whole vault every night (catches edits made outside the inbox).",
    )
    # Edits anywhere in the vault start the index part of refresh_job within a sensor tick.
    vault_sensor = build_vault_sensor(refresh_job.name, [a.key for a in ASSETS])
    return Definitions(
        assets=ASSETS,
        asset_checks=CHECKS,
        jobs=[refresh_job],
        schedules=[nightly_refresh],
        sensors=[vault_sensor],
    )
