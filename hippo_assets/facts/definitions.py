"""Domain `facts`: the `facts` and `fact_reviews` assets, their checks, the review sensor and the nightly
schedule."""

from __future__ import annotations

from dagster import AssetSelection, Definitions, define_asset_job

from hippo_assets.facts.assets import (
    fact_intervals_are_ordered,
    fact_reviews,
    facts,
    facts_have_provenance,
    one_value_per_single_slot,
)
from hippo_assets.schedules import schedule
from hippo_settings import HippoSettings
from sensors.facts import build_fact_reviews_sensor

ASSETS = [facts, fact_reviews]
CHECKS = [facts_have_provenance, fact_intervals_are_ordered, one_value_per_single_slot]
FACTS_JOB = "facts_job"
FACT_REVIEWS_JOB = "fact_reviews_job"


def definitions(settings: HippoSettings) -> Definitions:
    facts_job = define_asset_job(
        FACTS_JOB,
        selection=AssetSelection.assets(facts, fact_reviews),
        description="Take facts in from the vault, documents, conversations and work memory; list proposals.",
    )
    reviews_job = define_asset_job(
        FACT_REVIEWS_JOB,
        selection=AssetSelection.assets(fact_reviews),
        description="Apply ticked supersession reviews (30-reviews/facts/); one git commit.",
    )
    nightly = schedule(
        "nightly_facts", facts_job, settings.cron_facts, settings, "Take new facts in and list proposals."
    )
    return Definitions(
        assets=ASSETS,
        asset_checks=CHECKS,
        jobs=[facts_job, reviews_job],
        schedules=[nightly],
        sensors=[build_fact_reviews_sensor(FACT_REVIEWS_JOB)],
    )
