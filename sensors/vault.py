"""The whole-vault sensor: an edited, added or removed note anywhere in the vault starts a refresh run.

The inbox sensor covers new files in 00-inbox/; this one covers every indexed note (the folders search
reads). Its cursor is a fingerprint of each note's size and mtime, so a tick costs one stat per note and
reads nothing (`Vault.look`, the one walk of the vault); the run it starts is incremental (unchanged chunks are neither re-chunked into new ids
nor re-embedded), and its run key is the fingerprint, so one state of the vault is indexed once.
"""

from __future__ import annotations

from collections.abc import Sequence

from dagster import (
    AssetKey,
    DefaultSensorStatus,
    RunRequest,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from hippo_core.vault.vault_changes import fingerprint
from hippo_resources import Vault


def build_vault_sensor(
    job_name: str, asset_keys: Sequence[AssetKey] | None = None, minimum_interval_seconds: int = 30
):
    """The sensor that requests a run of `job_name` (limited to `asset_keys`) when any note changed."""

    @sensor(
        name="vault_sensor",
        job_name=job_name,
        minimum_interval_seconds=minimum_interval_seconds,
        default_status=DefaultSensorStatus.RUNNING,
        description=f"Starts `{job_name}` (its index part) when a note anywhere in the vault is edited, added "
        "or removed; the cursor is a fingerprint of every note's size and mtime (the inbox is the inbox "
        "sensor's).",
    )
    def vault_sensor(context: SensorEvaluationContext, vault: Vault) -> SensorResult | SkipReason:
        if not vault.path.is_dir():
            return SkipReason(f"vault not found at {vault.path}")
        look = vault.look(indexed_only=True).notes
        current = fingerprint(look)
        if current == context.cursor:
            return SkipReason(f"no note changed ({len(look)} notes)")
        request = RunRequest(
            run_key=f"vault-{current}",
            asset_selection=list(asset_keys) if asset_keys else None,
            tags={"hippo/trigger": "vault", "hippo/notes": str(len(look))},
        )
        return SensorResult(run_requests=[request], cursor=current)

    return vault_sensor
