"""The inbox sensor: new files in 00-inbox/ start ingest runs, in batches, each file once.

The cursor remembers content hashes already requested; run keys are derived from the batch's hashes,
so a file dropped twice (or a tick repeated after a crash) never starts a second run for the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import PurePosixPath

from dagster import DefaultSensorStatus, RunRequest, SensorEvaluationContext, SensorResult, SkipReason, sensor

from hippo_core.vault.vault_layout import INBOX_SUFFIXES
from hippo_resources import Vault

BATCH_SIZE = 20
MAX_REMEMBERED = 10_000


def _load_cursor(raw: str | None) -> list[str]:
    if not raw:
        return []
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        return []
    return [str(h) for h in data.get("seen", [])] if isinstance(data, dict) else []


def build_inbox_sensor(job_name: str, batch_size: int = BATCH_SIZE, minimum_interval_seconds: int = 30):
    """The sensor that watches the inbox and requests runs of `job_name`."""

    @sensor(
        name="inbox_sensor",
        job_name=job_name,
        minimum_interval_seconds=minimum_interval_seconds,
        default_status=DefaultSensorStatus.RUNNING,
        description=f"Starts `{job_name}` for new files in 00-inbox/, {batch_size} files per run, keyed by content hash.",
    )
    def inbox_sensor(context: SensorEvaluationContext, vault: Vault) -> SensorResult | SkipReason:
        if not vault.path.is_dir():
            return SkipReason(f"vault not found at {vault.path}")
        seen = _load_cursor(context.cursor)
        seen_set = set(seen)
        fresh: list[tuple[str, str]] = []
        for rel in vault.inbox_files():
            if not PurePosixPath(rel).name.lower().endswith(INBOX_SUFFIXES):
                continue
            try:
                digest = hashlib.sha256(vault.read_bytes(rel)).hexdigest()
            except FileNotFoundError:
                continue  # moved by a run that is ingesting it right now
            if digest not in seen_set:
                seen_set.add(digest)
                fresh.append((rel, digest))
        if not fresh:
            return SkipReason("no new files in the inbox")
        requests = []
        for start in range(0, len(fresh), batch_size):
            batch = fresh[start : start + batch_size]
            key = hashlib.sha256("\n".join(sorted(d for _, d in batch)).encode()).hexdigest()[:20]
            requests.append(
                RunRequest(
                    run_key=f"inbox-{key}",
                    run_config={"ops": {"sources": {"config": {"files": [rel for rel, _ in batch]}}}},
                    tags={"hippo/trigger": "inbox", "hippo/files": str(len(batch))},
                )
            )
        remembered = (seen + [d for _, d in fresh])[-MAX_REMEMBERED:]
        return SensorResult(run_requests=requests, cursor=json.dumps({"seen": remembered}))

    return inbox_sensor
