"""Group `ingest`: inbox files become immutable source copies in 10-sources/."""

# No `from __future__ import annotations` here: Dagster reads the Config and resource
# annotations of asset functions at definition time and cannot resolve them from strings.

import datetime as dt
from pathlib import PurePosixPath

import polars as pl
from dagster import (
    AssetCheckResult,
    AssetExecutionContext,
    Config,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)
from pydantic import Field

from expectations import check_result, suites
from hippo_assets.ingest import GROUP
from hippo_core.frontmatter import FrontmatterError
from hippo_core.sources import make_source_copy
from hippo_core.text_input import BadTextError
from hippo_core.vault_layout import INBOX_PROCESSED, INBOX_SUFFIXES
from hippo_resources import Vault


class SourcesConfig(Config):
    files: list[str] = Field(
        default_factory=list,
        description="Vault-relative inbox files to ingest (the inbox sensor sends batches); empty = the whole inbox.",
    )


def known_sources(vault: Vault) -> dict[str, str]:
    """Declared sha256 → path of every source copy already in 10-sources/ (what makes ingest idempotent)."""
    copies, _ = vault.source_copies()
    return {c.declared_sha256: c.path for c in copies if c.declared_sha256}


@asset(
    group_name=GROUP,
    kinds={"markdown", "git"},
    description="Each inbox file (Markdown or text) becomes an immutable copy in 10-sources/ with "
    "status raw-source, its original trust, sha256, original name and ingest time; the inbox file moves "
    "to 00-inbox/.processed/. Same bytes twice make one source. Bad files stay in the inbox and are reported.",
)
def sources(context: AssetExecutionContext, config: SourcesConfig, vault: Vault) -> MaterializeResult:
    vault.check_exists()
    vault.ensure_layout()
    inbox = vault.inbox_files()
    wanted = [f for f in inbox if not config.files or f in set(config.files)]
    missing = sorted(set(config.files) - set(inbox))
    known = known_sources(vault)
    ingested: list[str] = []
    duplicates: list[str] = []
    rejected: list[dict[str, str]] = []
    skipped: list[str] = []
    now = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    touched: list[str] = []
    for rel in wanted:
        name = PurePosixPath(rel).name
        if not name.lower().endswith(INBOX_SUFFIXES):
            skipped.append(rel)
            continue
        try:
            copy = make_source_copy(vault.read_bytes(rel), name, now)
        except (BadTextError, FrontmatterError) as exc:
            rejected.append({"file": rel, "reason": str(exc)})
            context.log.warning(f"left in the inbox: {rel}: {exc}")
            continue
        if copy.sha256 in known:
            duplicates.append(f"{rel} = {known[copy.sha256]}")
        else:
            vault.write_text(copy.path, copy.text)
            touched.append(copy.path)
            known[copy.sha256] = copy.path
            ingested.append(copy.path)
            context.log.info(f"ingested {rel} → {copy.path}")
        touched += [rel, vault.move(rel, f"{INBOX_PROCESSED}/{name}")]
    if touched:
        vault.commit_at_run_end(f"ingest: {len(ingested)} new source(s)", touched)
    return MaterializeResult(
        metadata={
            "ingested": len(ingested),
            "duplicates": len(duplicates),
            "rejected": len(rejected),
            "new_sources": MetadataValue.json(ingested),
            "duplicate_files": MetadataValue.json(duplicates),
            "rejected_files": MetadataValue.json(rejected),
            "unsupported_files": MetadataValue.json(skipped),
            "not_in_inbox": MetadataValue.json(missing),
            "total_sources": len(known),
        }
    )


@asset_check(
    asset=sources, blocking=True, description="Every source copy's sha256 matches its body (GX suite)."
)
def source_hashes_match(vault: Vault) -> AssetCheckResult:
    copies, unreadable = vault.source_copies()
    rows = [
        {"path": u["path"], "declared_sha256": None, "actual_sha256": f"unreadable: {u['error']}"}
        for u in unreadable
    ]
    # A source a person filed by hand declares no hash: only ingest copies are checked.
    rows += [
        {"path": c.path, "declared_sha256": c.declared_sha256, "actual_sha256": c.body_sha256}
        for c in copies
        if c.is_ingest_copy
    ]
    rows.sort(key=lambda r: r["path"])
    frame = pl.DataFrame(rows, schema={"path": pl.Utf8, "declared_sha256": pl.Utf8, "actual_sha256": pl.Utf8})
    return check_result("source_hashes", frame, suites.source_suite())
