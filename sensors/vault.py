"""The whole-vault sensor: an edited, added or removed note anywhere in the vault starts a refresh run.

The inbox sensor covers new files in 00-inbox/; this one covers every indexed note (the folders search
reads). Its cursor is a fingerprint of each note's size and mtime, so a tick costs one stat per note and
reads nothing; the run it starts is incremental (unchanged chunks are neither re-chunked into new ids
nor re-embedded), and its run key is the fingerprint, so one state of the vault is indexed once.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from dagster import (
    AssetKey,
    DefaultSensorStatus,
    RunRequest,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from hippo_core.vault.ignore import is_ignored
from hippo_core.vault.vault_changes import Stat, fingerprint
from hippo_core.vault.vault_layout import INBOX, NOT_INDEXED, NOT_INDEXED_FILES
from hippo_resources import Vault

MARKDOWN = (".md", ".markdown")


def vault_look(vault: Vault, inbox: bool = False) -> dict[str, Stat]:
    """(size, mtime_ns) of every indexed note (and, with `inbox`, of every file waiting in the inbox).

    The same files as `Vault.markdown_files` filtered by `is_indexed` (a test holds them equal), found
    with one `scandir` walk whose entries carry their stat: about 20 times cheaper on a large vault, which
    matters to a sensor tick and to every pass of `hippo watch`. Folders search never reads are not
    entered, nor are folders `.hippoignore` leaves out; notes it leaves out are not listed (inbox files
    are, as `Vault.inbox_files` lists them)."""
    root = vault.path
    rules = vault.ignore_rules()
    look: dict[str, Stat] = {}
    stack = [(root, "")]
    while stack:
        folder, prefix = stack.pop()
        in_inbox = prefix == INBOX + "/"
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue  # removed or unreadable meanwhile
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            rel = prefix + name
            try:
                if entry.is_dir(follow_symlinks=False):  # as os.walk: a linked folder is not entered
                    indexed = rel not in NOT_INDEXED and not (rules and is_ignored(rules, rel, is_dir=True))
                    if not in_inbox and (indexed or (inbox and rel == INBOX)):
                        stack.append((Path(entry.path), rel + "/"))
                    continue
                note = (
                    name.lower().endswith(MARKDOWN)
                    and rel not in NOT_INDEXED_FILES
                    and not (rules and is_ignored(rules, rel, is_dir=False))
                )
                if not (inbox if in_inbox else note):
                    continue
                if entry.is_symlink() and root not in Path(entry.path).resolve().parents:
                    continue  # leads out of the vault: never read through it
                if entry.is_file():
                    st = entry.stat()
                    look[rel] = (st.st_size, st.st_mtime_ns)
            except OSError:
                continue  # removed between the listing and the stat: the next look sees it gone
    return look


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
        look = vault_look(vault)
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
