"""Domain `work`: the `ghost_memories` asset, `ghost_job` and its nightly schedule."""

from __future__ import annotations

from dagster import AssetSelection, Definitions, define_asset_job

from hippo_assets.ghost.assets import ghost_memories
from hippo_assets.schedules import schedule
from hippo_settings import HippoSettings

ASSETS = [ghost_memories]
CHECKS: list = []
GHOST_JOB = "ghost_job"


def definitions(settings: HippoSettings) -> Definitions:
    job = define_asset_job(
        GHOST_JOB,
        selection=AssetSelection.assets(ghost_memories),
        description="Promote approved shared memories to the ghost store; say why the others did not pass.",
    )
    nightly = schedule(
        "nightly_ghost",
        job,
        settings.cron_ghost,
        settings,
        "Promote shared memories a person approved in 90-system/ghost-allowlist.md.",
    )
    return Definitions(assets=ASSETS, asset_checks=CHECKS, jobs=[job], schedules=[nightly])
