"""The fact reviews sensor: a ticked answer line in 30-reviews/facts/ starts `fact_reviews_job`.

It only notices; the asset checks the fingerprint against both sources and writes the outcome next to
the box, so a processed line never starts another run. The run key is the set of ticked lines.
"""

from __future__ import annotations

import hashlib

from dagster import DefaultSensorStatus, RunRequest, SensorEvaluationContext, SkipReason, sensor

from hippo_core.facts.review import FACT_REVIEWS, HISTORY_STAGING, REVIEW_INDEX, ticks
from hippo_resources import Vault


def build_fact_reviews_sensor(job_name: str, minimum_interval_seconds: int = 30):
    @sensor(
        name="fact_reviews_sensor",
        job_name=job_name,
        minimum_interval_seconds=minimum_interval_seconds,
        default_status=DefaultSensorStatus.RUNNING,
        description=f"Starts `{job_name}` when a box in 30-reviews/facts/ is ticked and not yet processed.",
    )
    def fact_reviews_sensor(context: SensorEvaluationContext, vault: Vault) -> RunRequest | SkipReason:
        if not vault.path.is_dir():
            return SkipReason(f"vault not found at {vault.path}")
        found = []
        for rel, text in vault.texts([FACT_REVIEWS]).items():
            if rel == REVIEW_INDEX or rel.startswith(HISTORY_STAGING + "/"):
                continue
            found += [f"{rel}:{t.line_no}:{t.fingerprint}:{t.choice}" for t in ticks(rel, text)]
        if not found:
            return SkipReason("no ticked fact reviews waiting")
        key = hashlib.sha256("\n".join(sorted(found)).encode()).hexdigest()[:20]
        return RunRequest(
            run_key=f"fact-reviews-{key}",
            tags={"hippo/trigger": "fact_reviews", "hippo/fact_reviews": str(len(found))},
        )

    return fact_reviews_sensor
