"""Every schedule runs in HIPPO_TIMEZONE, is on by default, and takes its cron from the settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dagster import DefaultScheduleStatus, ScheduleDefinition

from hippo_settings import HippoSettings

if TYPE_CHECKING:
    from dagster._core.definitions.unresolved_asset_job_definition import UnresolvedAssetJobDefinition


def schedule(
    name: str, job: UnresolvedAssetJobDefinition, cron: str, settings: HippoSettings, description: str
) -> ScheduleDefinition:
    return ScheduleDefinition(
        name=name,
        job=job,
        cron_schedule=cron,
        execution_timezone=settings.timezone,
        default_status=DefaultScheduleStatus.RUNNING,
        description=description,
    )
