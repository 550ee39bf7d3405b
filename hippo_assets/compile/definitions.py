"""Jobs, schedules and sensors of the compile loop (compile → gates → approval → promotion → index pages).

Times are local to HIPPO_TIMEZONE and each cron can be overridden (HIPPO_CRON_JANITOR, HIPPO_CRON_COMPILE,
HIPPO_CRON_INDEX_PAGES, HIPPO_CRON_APPROVALS).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from dagster import (
    AssetSelection,
    DefaultScheduleStatus,
    ScheduleDefinition,
    ScheduleEvaluationContext,
    SkipReason,
    define_asset_job,
    schedule,
)

from hippo_assets.compile.assets import (
    approval_requests,
    gate_verdicts,
    promotion_gates_hold,
    source_documents,
    staging_cards,
)
from hippo_assets.publish.assets import canonical_sectors_match, canonical_wiki, index_pages
from hippo_assets.publish.janitor import janitor
from hippo_core.compile_queue import PARTITIONS
from hippo_resources import Ledger, Vault
from sensors.compile import build_compile_sensor, compile_requests
from sensors.publish import build_approvals_sensor

LOOP_ASSETS = [staging_cards, gate_verdicts, approval_requests, canonical_wiki, janitor, index_pages]
LOOP_CHECKS = [promotion_gates_hold, canonical_sectors_match]

DEFAULT_CRONS = {
    "janitor": "30 1 * * *",
    "compile": "45 1 * * *",
    "index_pages": "25 3 * * *",
    "approvals": "0 9,21 * * *",
}

compile_job = define_asset_job(
    "compile_job",
    selection=AssetSelection.assets(staging_cards, gate_verdicts, approval_requests),
    partitions_def=source_documents,
    description="One source document → staging cards → judge, citations and gates → approval lines.",
)
promote_job = define_asset_job(
    "promote_job",
    selection=AssetSelection.assets(canonical_wiki, index_pages),
    description="Ticked approvals → gates again → canonical pages (one git commit) → HOME, index, sector hubs.",
)
janitor_job = define_asset_job(
    "janitor_job", selection=AssetSelection.assets(janitor), description="Archive stale and duplicate cards."
)
index_pages_job = define_asset_job(
    "index_pages_job",
    selection=AssetSelection.assets(index_pages),
    description="HOME, index and sector hubs.",
)
LOOP_JOBS = [compile_job, promote_job, janitor_job, index_pages_job]


def crons(env: Mapping[str, str]) -> dict[str, str]:
    return {name: env.get(f"HIPPO_CRON_{name.upper()}") or cron for name, cron in DEFAULT_CRONS.items()}


def build_loop_schedules(tz: str, env: Mapping[str, str] | None = None) -> list:
    c = crons(os.environ if env is None else env)

    @schedule(
        name="nightly_compile",
        job=compile_job,
        cron_schedule=c["compile"],
        execution_timezone=tz,
        default_status=DefaultScheduleStatus.RUNNING,
        description="Compile every source not compiled at its current content (one run per source partition).",
    )
    def nightly_compile(context: ScheduleEvaluationContext, vault: Vault, ledger: Ledger):
        known = set(context.instance.get_dynamic_partitions(PARTITIONS))
        new_keys, requests = compile_requests(vault, known, ledger)
        if new_keys:
            context.instance.add_dynamic_partitions(PARTITIONS, new_keys)
        return requests or SkipReason("every source is compiled: no LLM call")

    def plain(name: str, job, key: str, description: str) -> ScheduleDefinition:  # noqa: ANN001
        return ScheduleDefinition(
            name=name,
            job=job,
            cron_schedule=c[key],
            execution_timezone=tz,
            default_status=DefaultScheduleStatus.RUNNING,
            description=description,
        )

    return [
        plain("nightly_janitor", janitor_job, "janitor", "Archive stale and duplicate staging cards."),
        nightly_compile,
        plain("nightly_index_pages", index_pages_job, "index_pages", "Rebuild HOME, index and sector hubs."),
        plain("approval_rounds", promote_job, "approvals", "Promote ticked approvals (twice a day)."),
    ]


def build_loop_sensors() -> list:
    return [build_compile_sensor(compile_job.name), build_approvals_sensor(promote_job.name)]


def schedule_job_names() -> dict[str, str]:
    """Schedule → job, for `hippo run --job`."""
    return {
        "nightly_janitor": janitor_job.name,
        "nightly_compile": compile_job.name,
        "nightly_index_pages": index_pages_job.name,
        "approval_rounds": promote_job.name,
    }
