"""Domain `dream`: the dream assets, `dream_job` and its nightly schedule (after the refresh, the index
pages and the gap probe, so it sees what the night brought in)."""

from __future__ import annotations

from dagster import AssetSelection, Definitions, define_asset_job

from hippo_assets.compile.assets import approval_requests, gate_verdicts, promotion_gates_hold
from hippo_assets.dream.assets import (
    dream_consolidation,
    dream_digest,
    dream_gate,
    dream_lint,
    dream_merges,
    interest_profile,
)
from hippo_assets.schedules import schedule
from hippo_settings import HippoSettings

ASSETS = [dream_gate, dream_lint, dream_merges, dream_consolidation, interest_profile, dream_digest]
# The compile domain's own gates and approval lines, run by the dream job over its merge cards (one path for
# every card: judged, gated, listed for a tick; a person's tick promotes it through promote_job).
COMPILE_STEPS = [gate_verdicts, approval_requests]
COMPILE_CHECKS = [promotion_gates_hold]
JOB_ASSETS = [*ASSETS, *COMPILE_STEPS, *COMPILE_CHECKS]  # what dream_job materializes (tests use it)
CHECKS: list = []
DREAM_JOB = "dream_job"


def run_config(settings: HippoSettings, force: bool = False) -> dict:
    """The job's config from the settings; `force` lets the gate through (`hippo run --job dream_job --force`)."""
    return {
        "ops": {
            "dream_gate": {
                "config": {
                    "force": force,
                    "min_hours": settings.dream_min_hours,
                    "min_changes": settings.dream_min_changes,
                }
            },
            "dream_lint": {
                "config": {
                    "reconfirm_days": settings.dream_reconfirm_days,
                    "review_deadline_days": settings.dream_review_deadline_days,
                    "llm_pairs": settings.dream_llm_pairs,
                    "neighbours": settings.dream_neighbours,
                    "similarity_floor": settings.dream_similarity_floor,
                    "similar_pairs": settings.dream_similar_pairs,
                }
            },
            "dream_consolidation": {"config": {"apply": settings.dream_apply}},
            # never ticked by the dream itself, whatever HIPPO_AUTO_APPROVE says: a merge waits for a person
            "approval_requests": {"config": {"auto_approve": False}},
        }
    }


def definitions(settings: HippoSettings) -> Definitions:
    job = define_asset_job(
        DREAM_JOB,
        selection=AssetSelection.assets(*ASSETS, *COMPILE_STEPS) | AssetSelection.checks(*COMPILE_CHECKS),
        config=run_config(settings),
        description="The nightly dream: gate, lint by layer, consolidation, interest profile, digest. "
        "Skipped (with the reason) until enough is new; `hippo run --job dream_job --force` runs it anyway.",
    )
    nightly = schedule(
        "nightly_dream",
        job,
        settings.cron_dream,
        settings,
        "Look back over the day: lint, consolidate, profile, and write the digest in 50-ops/digest/.",
    )
    return Definitions(assets=ASSETS, asset_checks=CHECKS, jobs=[job], schedules=[nightly])
