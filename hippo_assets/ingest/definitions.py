"""Domain `ingest`: the `sources` asset and its check, `ingest_job`, and the inbox sensor that starts it."""

from __future__ import annotations

from dagster import AssetSelection, Definitions, define_asset_job

from hippo_assets.index import GROUP as INDEX
from hippo_assets.ingest import GROUP
from hippo_assets.ingest.assets import source_hashes_match, sources
from hippo_settings import HippoSettings
from sensors.ingest import build_inbox_sensor

ASSETS = [sources]
CHECKS = [source_hashes_match]

ingest_job = define_asset_job(
    "ingest_job",
    selection=AssetSelection.groups(GROUP, INDEX),
    description="Inbox → sources → documents → chunks → embeddings → lexical index (groups ingest and index).",
)


def definitions(settings: HippoSettings) -> Definitions:
    return Definitions(
        assets=ASSETS, asset_checks=CHECKS, jobs=[ingest_job], sensors=[build_inbox_sensor(ingest_job.name)]
    )
