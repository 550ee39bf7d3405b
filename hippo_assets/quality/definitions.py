"""Domain `quality`: the gap radar and the golden-set evaluation, their jobs and nightly schedules."""

from __future__ import annotations

from dagster import AssetSelection, Definitions, define_asset_job

from hippo_assets.quality.assets import eval_no_regression, eval_report, gap_probe, gap_report
from hippo_assets.schedules import schedule
from hippo_settings import HippoSettings

ASSETS = [gap_probe, gap_report, eval_report]
CHECKS = [eval_no_regression]

gaps_job = define_asset_job(
    "gaps_job",
    selection=AssetSelection.assets(gap_probe, gap_report),
    description="Replay open knowledge gaps, then rewrite 30-reviews/gap-queue.md.",
)
eval_job = define_asset_job(
    "eval_job", selection=AssetSelection.assets(eval_report), description="Golden-set evaluation."
)


def definitions(settings: HippoSettings) -> Definitions:
    schedules = [
        schedule(
            "nightly_eval",
            eval_job,
            settings.cron_eval,
            settings,
            "Golden-set metrics; the check blocks on a regression.",
        ),
        schedule(
            "nightly_gaps",
            gaps_job,
            settings.cron_gaps,
            settings,
            "Replay gaps after the nightly refresh, rewrite the gap queue.",
        ),
    ]
    return Definitions(assets=ASSETS, asset_checks=CHECKS, jobs=[gaps_job, eval_job], schedules=schedules)
