"""Domain `compile`: staging cards → verdicts → approval lines, `compile_job` (one run per source partition),
the nightly compile schedule and the compile sensor."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dagster import (
    AssetSelection,
    DefaultScheduleStatus,
    Definitions,
    ScheduleEvaluationContext,
    SkipReason,
    define_asset_job,
    schedule,
)

from hippo_assets.compile import GROUP
from hippo_assets.compile.assets import (
    approval_requests,
    gate_verdicts,
    promotion_gates_hold,
    source_documents,
    staging_cards,
)
from hippo_core.wiki.compile_queue import PARTITIONS
from hippo_resources import Ledger, Vault
from hippo_settings import HippoSettings
from sensors.compile import build_compile_sensor, compile_requests

if TYPE_CHECKING:
    from dagster._core.definitions.unresolved_asset_job_definition import UnresolvedAssetJobDefinition

ASSETS = [staging_cards, gate_verdicts, approval_requests]
CHECKS = [promotion_gates_hold]
COMPILE_JOB = "compile_job"


def compile_job(settings: HippoSettings) -> UnresolvedAssetJobDefinition:
    return define_asset_job(
        COMPILE_JOB,
        selection=AssetSelection.groups(GROUP),
        partitions_def=source_documents,
        config={"ops": {"approval_requests": {"config": {"auto_approve": settings.auto_approve}}}},
        description="One source document → staging cards → judge, citations and gates → approval lines "
        "(HIPPO_AUTO_APPROVE sets `auto_approve`).",
    )


def definitions(settings: HippoSettings) -> Definitions:
    job = compile_job(settings)

    @schedule(
        name="nightly_compile",
        job=job,
        cron_schedule=settings.cron_compile,
        execution_timezone=settings.timezone,
        default_status=DefaultScheduleStatus.RUNNING,
        description="Compile every source not compiled at its current content (one run per source partition).",
    )
    def nightly_compile(context: ScheduleEvaluationContext, vault: Vault, ledger: Ledger):
        known = set(context.instance.get_dynamic_partitions(PARTITIONS))
        new_keys, requests = compile_requests(vault, known, ledger)
        if new_keys:
            context.instance.add_dynamic_partitions(PARTITIONS, new_keys)
        return requests or SkipReason("every source is compiled: no LLM call")

    return Definitions(
        assets=ASSETS,
        asset_checks=CHECKS,
        jobs=[job],
        schedules=[nightly_compile],
        sensors=[build_compile_sensor(COMPILE_JOB)],
    )
