"""Backups of the stores the vault cannot rebuild: snapshot names, the retention rule, the manifest, and
the month files of the long-kept JSONL exports. Pure logic; the `backups` asset does the I/O.

Retention (S0 §7.1 keeps 7 daily snapshots; the issue adds 4 weekly): a snapshot is kept when it is the
newest of one of the 7 most recent days that have a snapshot, or the newest of one of the 4 most recent
ISO weeks that have one. "Days that have one", not "the last 7 calendar days": if backups stop for a
month, the last good ones are not pruned away by the first run after the gap.

The JSONL exports (feedback, gaps, the query log and the ghost read log and feedback) outlive the
snapshots: one file per table and month, kept `export_months` (default 24). They are the record of what
people asked, judged and read — the evidence golden-set candidates, gap trends and an audit come from —
and a year-over-year comparison needs more than twelve months; they are small text.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

SNAPSHOT_FORMAT = "%Y%m%dT%H%M%SZ"
MANIFEST = "manifest.json"


def snapshot_name(now: dt.datetime) -> str:
    """The folder name of a snapshot taken at `now` (UTC, sortable)."""
    return now.astimezone(dt.UTC).strftime(SNAPSHOT_FORMAT)


def snapshot_time(name: str) -> dt.datetime | None:
    """When a snapshot folder was taken, or None for a name that is not a snapshot's."""
    try:
        return dt.datetime.strptime(name, SNAPSHOT_FORMAT).replace(tzinfo=dt.UTC)
    except ValueError:
        return None


def snapshots_to_keep(taken: Iterable[dt.datetime], daily: int = 7, weekly: int = 4) -> set[dt.datetime]:
    """The snapshots the retention rule keeps (see the module docstring); the rest may be deleted."""
    newest_per_day: dict[dt.date, dt.datetime] = {}
    newest_per_week: dict[tuple[int, int], dt.datetime] = {}
    for t in taken:
        day = t.date()
        week = tuple(t.isocalendar())[:2]
        if day not in newest_per_day or t > newest_per_day[day]:
            newest_per_day[day] = t
        if week not in newest_per_week or t > newest_per_week[week]:
            newest_per_week[week] = t  # type: ignore[index]
    keep = {newest_per_day[d] for d in sorted(newest_per_day, reverse=True)[:daily]}
    keep |= {newest_per_week[w] for w in sorted(newest_per_week, reverse=True)[:weekly]}
    return keep


def month_of(ts: float | int | str) -> str:
    """`YYYY-MM` (UTC) of a row's timestamp: epoch seconds (the ledger) or ISO 8601 (the ghost store)."""
    if isinstance(ts, int | float):
        when = dt.datetime.fromtimestamp(float(ts), dt.UTC)
    else:
        when = dt.datetime.fromisoformat(str(ts).replace("Z", "+00:00"))
        if when.tzinfo is not None:
            when = when.astimezone(dt.UTC)
    return when.strftime("%Y-%m")


def months_back(now: dt.datetime, n: int) -> str:
    """The `YYYY-MM` that is `n` months before `now`'s month."""
    index = now.year * 12 + now.month - 1 - n
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def export_months_to_prune(months: Iterable[str], now: dt.datetime, keep_months: int) -> list[str]:
    """Month files older than the `keep_months` most recent calendar months; none when keep_months is 0."""
    if keep_months <= 0:
        return []
    oldest_kept = months_back(now, keep_months - 1)
    return sorted(m for m in months if m < oldest_kept)


class StoreSnapshot(BaseModel):
    """One store in a snapshot folder."""

    store: str
    holds: str
    backend: Literal["sqlite", "postgres", "files"]
    file: str | None = Field(
        description="File name inside the snapshot folder; None when the store was empty"
    )
    size: int = 0
    sha256: str | None = None
    integrity_ok: bool = False
    integrity: str = ""


class ExportFile(BaseModel):
    """One JSONL export written by this backup."""

    table: str
    file: str = Field(description="Path relative to the exports folder")
    rows: int
    sha256: str


class BackupManifest(BaseModel):
    created: str
    snapshot: str
    stores: list[StoreSnapshot]
    exports: list[ExportFile] = Field(default_factory=list)
    vault_head: str | None = Field(
        default=None, description="The vault's git HEAD when the snapshot was taken"
    )
    not_backed_up: str = (
        "chunks, Chroma vectors, BM25 generations and the embedding cache: derived from the vault, "
        "rebuilt by the next `hippo run`"
    )

    @property
    def ok(self) -> bool:
        return all(s.integrity_ok for s in self.stores if s.file)
