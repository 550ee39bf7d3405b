"""Group `ingest`: inbox files become immutable source copies in 10-sources/."""

# No `from __future__ import annotations` here: Dagster reads the Config and resource
# annotations of asset functions at definition time and cannot resolve them from strings.

import datetime as dt
import hashlib
from pathlib import Path, PurePosixPath

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

import hippo_core.extract as extract_package
from expectations import check_result, suites
from hippo_assets import check_memo
from hippo_assets.ingest import GROUP
from hippo_assets.ingest.waiting import update_waiting
from hippo_core.extract import ExtractionError, ExtractLimits, format_for
from hippo_core.safety.scrub import scrub, scrub_value
from hippo_core.safety.text_input import BadTextError
from hippo_core.vault.fingerprints import sha256_bytes
from hippo_core.vault.frontmatter import FrontmatterError
from hippo_core.vault.sources import (
    check_size,
    copy_name,
    make_document_source,
    make_source_copy,
    with_suffix_number,
)
from hippo_core.vault.vault_layout import INBOX_PROCESSED, INBOX_SUFFIXES, SOURCES, is_source_copy
from hippo_resources import ChunkStore, Vault, VaultError
from hippo_resources.refusals import RefusalMemory
from hippo_resources.vault import FileTooLarge


class SourcesConfig(Config):
    files: list[str] = Field(
        default_factory=list,
        description="Vault-relative inbox files to ingest (the inbox sensor sends batches); empty = the whole inbox.",
    )


def known_sources(vault: Vault) -> dict[str, str]:
    """Declared sha256 (and a document's original_sha256) → path of every source copy already in
    10-sources/: what makes ingest idempotent."""
    copies, _ = vault.source_copies()
    known = {c.declared_sha256: c.path for c in copies if c.declared_sha256}
    known.update(
        {str(c.fields["original_sha256"]): c.path for c in copies if c.fields.get("original_sha256")}
    )
    return known


def free_name(vault: Vault, name: str, document: bool) -> tuple[str, str | None]:
    """(copy path, original path or None) in 10-sources/ under the inbox file's own name; a number is added
    only when that name is taken (`report.1.pdf`, `report.1.pdf.md`)."""
    n = 0
    while True:
        current = name if n == 0 else with_suffix_number(name, n)
        copy = f"{SOURCES}/{copy_name(current)}"
        original = f"{SOURCES}/{current}" if document else None
        if not vault.exists(copy) and (original is None or not vault.exists(original)):
            return copy, original
        n += 1


def read_inbox_file(vault: Vault, rel: str, limits: ExtractLimits) -> bytes:
    """An inbox file's bytes, never more than the limit: a bigger one is refused before it is read."""
    try:
        return vault.read_bytes(rel, max_bytes=limits.max_bytes)
    except FileTooLarge as exc:
        check_size(exc.size, limits)  # too_large, naming HIPPO_INBOX_MAX_BYTES
        raise


def refusal_memory(chunk_store: ChunkStore, limits: ExtractLimits) -> RefusalMemory:
    """Refused documents by content hash, valid while the limits and the extraction code are the same."""
    h = hashlib.sha256(limits.model_dump_json().encode("utf-8"))
    for module in sorted(Path(extract_package.__file__ or "").parent.glob("*.py")):
        h.update(module.read_bytes())
    return RefusalMemory(Path(chunk_store.path), h.hexdigest()[:16])


def _names(paths: list[str], most: int = 5) -> str:
    shown = ", ".join(PurePosixPath(p).name for p in paths[:most])
    return shown + (f" and {len(paths) - most} more" if len(paths) > most else "")


@asset(
    group_name=GROUP,
    kinds={"markdown", "git"},
    description="Each inbox note (Markdown, text) and document (PDF, DOCX, XLSX, PPTX, HWPX, HTML) becomes a "
    "source in 10-sources/ under its own file name: notes as a copy with status raw-source, sha256, original "
    "name and ingest time; documents as the original bytes unchanged beside `<name>.md`, the extracted "
    "Markdown with `## Page N` / `## Slide N` / `## Sheet X` anchors. The inbox file moves to "
    "00-inbox/.processed/. Same bytes twice make one source. Files over the size limits, encrypted, corrupt, "
    "scanned without text or empty stay in the inbox with the reason; symlinks there are reported, not followed.",
)
def sources(
    context: AssetExecutionContext, config: SourcesConfig, vault: Vault, chunk_store: ChunkStore
) -> MaterializeResult:
    vault.check_exists()
    vault.ensure_layout()
    inbox, inbox_skipped = vault.inbox_scan()
    wanted = [f for f in inbox if not config.files or f in set(config.files)]
    missing = sorted(set(config.files) - set(inbox) - {s["path"] for s in inbox_skipped})
    known = known_sources(vault)
    limits = vault.extract_limits()
    refused_before = refusal_memory(chunk_store, limits)
    remembered: list[str] = []
    ingested: list[str] = []
    duplicates: list[str] = []
    rejected: list[dict[str, str]] = []
    skipped: list[str] = []
    warnings: list[dict[str, str]] = []
    now = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    touched: list[str] = []
    moved: set[str] = set()
    waiting_found = [
        {
            "file": s["path"],
            "kind": "symlink" if s["reason"].startswith("symlink") else "unreadable",
            "reason": s["reason"],
        }
        for s in inbox_skipped
    ]
    for rel in wanted:
        name = PurePosixPath(rel).name
        if not name.lower().endswith(INBOX_SUFFIXES):
            skipped.append(rel)
            waiting_found.append({"file": rel, "kind": "unsupported", "reason": "not a type ingest reads"})
            continue
        document = format_for(name) is not None
        original_sha = None
        try:
            data = read_inbox_file(vault, rel, limits)
            if document:
                original_sha = sha256_bytes(data)
                verdict = refused_before.verdict(original_sha)
                if verdict is not None:  # the same bytes were refused already: not extracted again
                    rejected.append({"file": rel, **verdict})
                    waiting_found.append({"file": rel, **verdict})
                    remembered.append(rel)
                    continue
                doc = make_document_source(data, name, now, limits)
                digests: tuple[str, ...] = (doc.sha256, doc.original_sha256)
            else:
                copy = make_source_copy(data, name, now, limits)
                digests = (copy.sha256,)
        except (BadTextError, FrontmatterError, ExtractionError, OSError, VaultError) as exc:
            reason = exc.reason if isinstance(exc, ExtractionError) else str(exc)
            kind = exc.kind if isinstance(exc, ExtractionError) else type(exc).__name__
            rejected.append({"file": rel, "kind": kind, "reason": reason})
            waiting_found.append({"file": rel, "kind": kind, "reason": reason})
            if isinstance(exc, ExtractionError) and original_sha is not None:
                refused_before.remember(original_sha, kind, scrub(reason).text)
            context.log.warning(f"left in the inbox: {rel}: {scrub(reason).text}")
            continue
        seen = next((known[d] for d in digests if d in known), None)
        if seen:
            duplicates.append(f"{rel} = {seen}")
        else:
            path, original = free_name(vault, name, document)
            if original is not None:
                vault.write_bytes(original, data)
                vault.write_text(path, doc.text(original))
                touched.append(original)
                warnings += [{"file": rel, "warning": w} for w in doc.warnings]
            else:
                vault.write_text(path, copy.text)
            touched.append(path)
            known.update(dict.fromkeys(digests, path))
            ingested.append(path)
            context.log.info(f"ingested {rel} → {path}")
        touched += [rel, vault.move(rel, f"{INBOX_PROCESSED}/{name}")]
        moved.add(rel)
    inbox_now = set(inbox) | {s["path"] for s in inbox_skipped}
    looked_at = set(wanted) | {s["path"] for s in inbox_skipped}
    waiting_paths, waiting, waiting_page_note = update_waiting(
        vault, waiting_found, looked_at, inbox_now - moved, now
    )
    touched += waiting_paths
    if touched:
        what = f"ingest: {len(ingested)} new source(s)"
        if ingested:
            what += f" ({_names(ingested)})"
        if duplicates:
            what += f", {len(duplicates)} duplicate(s) moved to .processed"
        vault.commit_at_run_end(what, touched)
    refused_before.save()
    vault_skipped = vault.look().skipped
    return MaterializeResult(
        metadata={
            "ingested": len(ingested),
            "duplicates": len(duplicates),
            "rejected": len(rejected),
            "new_sources": MetadataValue.json(ingested),
            "duplicate_files": MetadataValue.json(duplicates),
            "rejected_files": MetadataValue.json(scrub_value(rejected)),
            "rejected_as_before": MetadataValue.json(remembered),
            "unsupported_files": MetadataValue.json(skipped),
            "inbox_symlinks": MetadataValue.json(
                [s for s in inbox_skipped if s["reason"].startswith("symlink")]
            ),
            "inbox_skipped": MetadataValue.json(scrub_value(inbox_skipped)),
            "vault_skipped": MetadataValue.json(scrub_value(vault_skipped)),
            "extraction_warnings": MetadataValue.json(scrub_value(warnings)),
            "not_in_inbox": MetadataValue.json(missing),
            "waiting_in_inbox": MetadataValue.json(waiting),
            "waiting_page": waiting_page_note or "30-reviews/inbox-waiting.md",
            "total_sources": len(set(known.values())),
        }
    )


@asset_check(
    asset=sources, blocking=True, description="Every source copy's sha256 matches its body (GX suite)."
)
def source_hashes_match(vault: Vault, chunk_store: ChunkStore) -> AssetCheckResult:
    stamp = sorted(
        (rel, *st) for rel, st in vault.look(indexed_only=True).notes.items() if is_source_copy(rel)
    )
    if check_memo.passed_on(chunk_store, "source_hashes_match", stamp):
        return check_memo.unchanged_pass("every source copy's size and mtime are")
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
    return check_memo.remember(
        chunk_store, "source_hashes_match", stamp, check_result("source_hashes", frame, suites.source_suite())
    )
