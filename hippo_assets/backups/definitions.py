"""Domain `backups`: the `backups` asset, `backup_job` (what `hippo backup` runs) and its nightly schedule."""

from __future__ import annotations

from dagster import AssetSelection, Definitions, define_asset_job

from hippo_assets.backups.assets import backups, snapshots_are_restorable
from hippo_assets.schedules import schedule
from hippo_settings import HippoSettings

ASSETS = [backups]
CHECKS = [snapshots_are_restorable]
BACKUP_JOB = "backup_job"


def backup_config(settings: HippoSettings) -> dict:
    """The backups asset's config from the settings (the check reads the same folder)."""
    config = {
        "root": str(settings.backups_dir.resolve()),
        "keep_daily": settings.backup_keep_daily,
        "keep_weekly": settings.backup_keep_weekly,
        "export_months": settings.backup_export_months,
    }
    return {"ops": {"backups": {"config": config}, "backups_snapshots_are_restorable": {"config": config}}}


def definitions(settings: HippoSettings) -> Definitions:
    job = define_asset_job(
        BACKUP_JOB,
        selection=AssetSelection.assets(backups),
        config=backup_config(settings),
        description="Snapshot the ledger, work store and ghost store; export feedback, gaps and audit logs.",
    )
    nightly = schedule(
        "nightly_backup",
        job,
        settings.cron_backup,
        settings,
        "Snapshot the stores the vault cannot rebuild (7 daily, 4 weekly kept).",
    )
    return Definitions(assets=ASSETS, asset_checks=CHECKS, jobs=[job], schedules=[nightly])
