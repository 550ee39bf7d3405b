"""The approvals sensor: ticked boxes in 30-reviews/approvals/ start a promotion run.

It only notices; the promotion asset re-checks the fingerprint and every gate, and writes the outcome
next to the box, so a processed line never starts another run. The run key is the set of ticked lines.
"""

from __future__ import annotations

import hashlib

from dagster import DefaultSensorStatus, RunRequest, SensorEvaluationContext, SkipReason, sensor

from hippo_resources import Vault


def build_approvals_sensor(job_name: str, minimum_interval_seconds: int = 30):
    @sensor(
        name="approvals_sensor",
        job_name=job_name,
        minimum_interval_seconds=minimum_interval_seconds,
        default_status=DefaultSensorStatus.RUNNING,
        description=f"Starts `{job_name}` when a box in 30-reviews/approvals/ is ticked and not yet processed.",
    )
    def approvals_sensor(context: SensorEvaluationContext, vault: Vault) -> RunRequest | SkipReason:
        if not vault.path.is_dir():
            return SkipReason(f"vault not found at {vault.path}")
        lines = vault.approval_lines("ticked")
        if not lines:
            return SkipReason("no ticked approvals waiting")
        key = hashlib.sha256(
            "\n".join(sorted(f"{ln.card}:{ln.fingerprint}" for ln in lines)).encode()
        ).hexdigest()[:20]
        return RunRequest(
            run_key=f"approvals-{key}",
            tags={"hippo/trigger": "approvals", "hippo/approvals": str(len(lines))},
        )

    return approvals_sensor
