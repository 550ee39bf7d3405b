"""Vault documents and their chunks as plain records: the rows of the `documents` and `chunks` tables."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from pydantic import BaseModel, Field

from hippo_core.index.chunking import ChunkParams, chunk_document, index_text
from hippo_core.ranking.time import note_date
from hippo_core.safety.scrub import scrub_value
from hippo_core.safety.text_input import decode_utf8
from hippo_core.vault import frontmatter
from hippo_core.vault.fingerprints import chunk_id, embed_hash, sha256_text
from hippo_core.vault.vault_layout import lane_for_path, sector_for_path


class Document(BaseModel):
    path: str
    title: str
    doc_type: str | None
    status: str
    trust: str
    sector: str | None
    sector_declared: str | None
    aliases: list[str]
    tags: list[str]
    created: str | None
    updated: str | None
    date: str | None = None  # event time (hippo_core/ranking/time.py note_date): `date:`, else `created:`
    lane: str
    body: str
    body_hash: str
    # What did not fit the contract (reported in run metadata, not stored in the documents table).
    foreign: dict[str, str] = Field(default_factory=dict, exclude=True)
    frontmatter_problem: str | None = Field(default=None, exclude=True)


def _title(fm_title: str | None, body: str, path: str) -> str:
    if fm_title:
        return fm_title
    m = re.search(r"^#\s+(.+)$", body, flags=re.MULTILINE)
    return m.group(1).strip() if m else PurePosixPath(path).stem


def parse_document(path: str, data: bytes) -> Document:
    """Parse one vault file. Raises BadTextError (with the reason) only when it cannot be read as text.

    A value outside the contract (`status: done`) is kept as written, so ranking treats it as neutral
    (`ranking.governance_multiplier`) and the run metadata reports it (`foreign_value_report`).
    """
    text = decode_utf8(data, what=path)
    note = frontmatter.parse_note(text, path)
    fm, body = note.fm, note.body
    sector = sector_for_path(path)
    return Document(
        path=path,
        title=_title(fm.title, body, path),
        doc_type=note.foreign.get("type") or fm.type,
        status=note.foreign.get("status") or fm.status,
        trust=note.foreign.get("trust") or fm.trust,
        sector=sector or fm.sector,  # the folder is the truth; frontmatter only fills in outside 20-wiki
        sector_declared=fm.sector,
        aliases=fm.aliases,
        tags=fm.tags,
        created=fm.created,
        updated=fm.updated,
        date=note_date((fm.model_extra or {}).get("date"), fm.created),
        lane=lane_for_path(path),
        body=body,
        body_hash=sha256_text(body),
        foreign=note.foreign,
        frontmatter_problem=note.problem,
    )


# A reported value is cut to this length: the report names it, it does not store notes.
REPORTED_VALUE_CHARS = 120


def foreign_value_report(docs: list[Document]) -> list[dict[str, Any]]:
    """Frontmatter values outside the contract, once per (field, value): how many notes, and one of them.

    Values pass the scrubber (a person may keep anything in a property). Sorted by field, then value.
    """
    return foreign_value_report_from([(doc.path, doc.foreign) for doc in docs])


def foreign_value_report_from(foreign: list[tuple[str, dict[str, str]]]) -> list[dict[str, Any]]:
    """`foreign_value_report` over (path, field → value as written) pairs, as the scan cache keeps them."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for path, values in foreign:
        for field, value in values.items():
            key = (field, value[:REPORTED_VALUE_CHARS])
            entry = seen.setdefault(key, {"field": field, "value": key[1], "notes": 0, "example": path})
            entry["notes"] += 1
    return scrub_value([seen[k] for k in sorted(seen)])


def chunk_rows(doc: Document, model_id: str, params: ChunkParams | None = None) -> list[dict[str, Any]]:
    """The chunk rows of one document, with the governance fields search filters and boosts on."""
    rows = []
    for draft in chunk_document(doc.path, doc.body, params):
        idx_text = index_text(doc.title, draft.heading_path, draft.text)
        rows.append(
            {
                "chunk_id": chunk_id(doc.path, draft.anchor, draft.ordinal),
                "path": doc.path,
                "anchor": draft.anchor,
                "heading": draft.heading,
                "heading_path": draft.heading_path,
                "ordinal": draft.ordinal,
                "title": doc.title,
                "text": draft.text,
                "index_text": idx_text,
                "content_hash": sha256_text(idx_text),
                "embed_hash": embed_hash(model_id, "passage", idx_text),
                "lane": doc.lane,
                "doc_type": doc.doc_type,
                "status": doc.status,
                "trust": doc.trust,
                "sector": doc.sector,
                "aliases": doc.aliases,
                "tags": doc.tags,
                "updated": doc.updated or doc.created,
                "date": doc.date,
            }
        )
    return rows


def document_key(record: Mapping[str, Any], salt: str) -> str:
    """A key of everything a document's chunk rows are made of (every field of its `documents` row and
    `salt`: the model id, the chunk sizes and the chunking code): equal keys, equal rows, so `chunks`
    copies the rows of a document whose key is unchanged instead of chunking it again."""
    h = hashlib.blake2b(salt.encode("utf-8"), digest_size=16)
    fields = {k: v for k, v in record.items() if k != "body"}
    h.update(json.dumps(fields, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8"))
    h.update(b"\x00")
    h.update(str(record.get("body") or "").encode("utf-8"))
    return h.hexdigest()


class MassRemovalError(RuntimeError):
    """A scan would drop most of the index: usually an unmounted or wrong vault, not a real deletion."""


def removal_kind(lane: str | None) -> str:
    """The kind the mass-removal guard counts a document as: sources, conversations, or notes (the rest)."""
    return lane if lane in ("sources", "conversations") else "notes"


def check_removal(
    indexed_paths: set[str],
    current_paths: set[str],
    force: bool,
    max_fraction: float = 0.5,
    kind_of: Mapping[str, str] | None = None,
) -> int:
    """Refuse to remove more than `max_fraction` of the indexed documents of any kind unless forced
    (`kind_of`: path → notes/sources/conversations; without it every path is one kind, "documents"):
    many conversations must not hide the loss of most notes. Returns removals."""
    removed_paths = indexed_paths - current_paths
    by_kind: dict[str, list[int]] = {}  # kind → [indexed, removed]
    for path in indexed_paths:
        counts = by_kind.setdefault((kind_of or {}).get(path, "documents"), [0, 0])
        counts[0] += 1
        counts[1] += path in removed_paths
    for kind, (indexed, removed) in sorted(by_kind.items()):
        if removed > max_fraction * indexed and not force:
            raise MassRemovalError(
                f"this scan would remove {removed} of {indexed} indexed {kind} "
                f"(more than {max_fraction:.0%}). Is the vault (HIPPO_VAULT, or the config file's) the right "
                "folder? Re-run with force=true (`hippo run --force`) if the removal is intended."
            )
    return len(removed_paths)
