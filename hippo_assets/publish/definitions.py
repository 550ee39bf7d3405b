"""Domain `publish`: promotion, index pages and the janitor; their jobs, schedules and the approvals sensor.

The janitor lives here because what it tends is the approval queue that promotion consumes: it archives
staging cards that were never approved (and spares the ticked ones), and it frees inbox files a stopped
run left behind, so nothing waits forever in front of a person.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dagster import AssetSelection, Definitions, define_asset_job

from hippo_assets.publish.assets import canonical_sectors_match, canonical_wiki, index_pages
from hippo_assets.publish.janitor import janitor
from hippo_assets.schedules import schedule
from hippo_settings import HippoSettings
from sensors.publish import build_approvals_sensor

if TYPE_CHECKING:
    from dagster._core.definitions.unresolved_asset_job_definition import UnresolvedAssetJobDefinition

ASSETS = [canonical_wiki, index_pages, janitor]
CHECKS = [canonical_sectors_match]
PROMOTE_JOB = "promote_job"

janitor_job = define_asset_job(
    "janitor_job", selection=AssetSelection.assets(janitor), description="Archive stale and duplicate cards."
)
index_pages_job = define_asset_job(
    "index_pages_job",
    selection=AssetSelection.assets(index_pages),
    description="HOME, index and sector hubs.",
)


def promote_job(settings: HippoSettings) -> UnresolvedAssetJobDefinition:
    return define_asset_job(
        PROMOTE_JOB,
        selection=AssetSelection.assets(canonical_wiki, index_pages),
        config={"ops": {"canonical_wiki": {"config": {"dry_run": settings.dry_run}}}},
        description="Ticked approvals → every gate again → canonical pages → HOME, index, sector hubs "
        "(one git commit; HIPPO_DRY_RUN sets `dry_run`).",
    )


def definitions(settings: HippoSettings) -> Definitions:
    promote = promote_job(settings)
    schedules = [
        schedule(
            "nightly_janitor",
            janitor_job,
            settings.cron_janitor,
            settings,
            "Archive stale and duplicate cards.",
        ),
        schedule(
            "nightly_index_pages",
            index_pages_job,
            settings.cron_index_pages,
            settings,
            "Rebuild HOME, index and sector hubs.",
        ),
        schedule(
            "approval_rounds",
            promote,
            settings.cron_approvals,
            settings,
            "Promote ticked approvals (twice a day).",
        ),
    ]
    return Definitions(
        assets=ASSETS,
        asset_checks=CHECKS,
        jobs=[promote, janitor_job, index_pages_job],
        schedules=schedules,
        sensors=[build_approvals_sensor(PROMOTE_JOB)],
    )
