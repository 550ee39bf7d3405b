"""Turning an inbox file into an immutable source copy (pure: bytes in, document text out)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from hippo_core.extract import ExtractionError, ExtractLimits, extract
from hippo_core.safety.text_input import decode_utf8
from hippo_core.vault import frontmatter
from hippo_core.vault.fingerprints import sha256_bytes, sha256_text
from hippo_core.vault.vault_layout import SOURCES, folder_lineage

MARKDOWN_SUFFIXES = (".md", ".markdown")

# Fields the pipeline owns on a source copy; an inbox note cannot set them.
OWNED = (
    "type", "status", "trust", "sha256", "original_name", "ingested", "title",
    "original", "original_sha256", "format", "unit", "units",
)  # fmt: skip


class SourceCopy(BaseModel):
    """A source copy about to be written by ingest."""

    sha256: str
    path: str
    title: str
    text: str


class SourceFile(BaseModel):
    """A source copy as it is in 10-sources/ now: its two hashes and its lineage.

    `declared_sha256` is what ingest wrote in the frontmatter (None for a source a person filed by hand);
    `body_sha256` is `body_hash` of the body on disk. They differ only when someone edited the copy.
    """

    path: str
    text: str
    fields: dict[str, Any]
    body: str
    declared_sha256: str | None
    body_sha256: str
    lineage: str | None

    @property
    def content_hash(self) -> str:
        """What the compile queue keys on: the declared hash, else the body's."""
        return self.declared_sha256 or self.body_sha256

    @property
    def is_ingest_copy(self) -> bool:
        """Written by ingest (it declares a hash or an original name), not filed by hand."""
        return "sha256" in self.fields or "original_name" in self.fields


def source_lineage(path: str, fields: dict[str, Any]) -> str | None:
    """A source's lineage: its frontmatter `lineage:`, else the folder it sits in (10-sources/<lineage>/)."""
    declared = fields.get("lineage")
    return str(declared) if declared not in (None, "") else folder_lineage(path)


def read_source_file(path: str, text: str) -> SourceFile:
    """Parse a source copy's text. Raises FrontmatterError when its frontmatter is unreadable."""
    raw, body = frontmatter.split(text)
    fields = frontmatter.parse_mapping(raw)
    declared = fields.get("sha256")
    return SourceFile(
        path=path,
        text=text,
        fields=fields,
        body=body,
        declared_sha256=str(declared) if declared else None,
        body_sha256=body_hash(body),
        lineage=source_lineage(path, fields),
    )


def slugify(text: str, max_len: int = 60) -> str:
    """File-name-safe slug that keeps Hangul and other letters."""
    slug = re.sub(r"[^\w]+", "-", text.lower(), flags=re.UNICODE).strip("-_")
    return (slug[:max_len].rstrip("-_")) or "note"


def _first_heading(body: str) -> str | None:
    for line in body.splitlines():
        m = re.match(r"^#\s+(.+)$", line.strip())
        if m:
            return m.group(1).strip()
    return None


def _first_line(body: str, name: str) -> str | None:
    """A plain-text note's first short line is its title."""
    if name.lower().endswith((".md", ".markdown")):
        return None
    first = next((line.strip() for line in body.splitlines() if line.strip()), "")
    return first if 0 < len(first) <= 80 else None


def body_hash(body: str) -> str:
    """The content hash of a source: its body with normalized line endings, trailing blanks trimmed."""
    return sha256_text(body.replace("\r\n", "\n").strip() + "\n")


def source_body(text: str) -> str:
    return text.replace("\r\n", "\n").strip() + "\n"


def copy_name(original_name: str) -> str:
    """The source copy keeps the inbox file's name: a Markdown note as it is, anything else + `.md`
    (`report.pdf` → `report.pdf.md`, beside the original bytes)."""
    return original_name if original_name.lower().endswith(MARKDOWN_SUFFIXES) else original_name + ".md"


def with_suffix_number(name: str, n: int) -> str:
    """`report.pdf` → `report.1.pdf`: the name of the n-th file of that name (a collision in 10-sources/)."""
    stem, dot, ext = name.rpartition(".")
    return f"{stem}.{n}.{ext}" if dot and stem else f"{name}.{n}"


def check_size(size: int, limits: ExtractLimits, unit: str = "bytes") -> None:
    """Refuse an inbox file over the size limits (the reason goes to the run metadata)."""
    limit = limits.max_bytes if unit == "bytes" else limits.max_chars
    if size > limit:
        setting = "HIPPO_INBOX_MAX_BYTES" if unit == "bytes" else "HIPPO_INBOX_MAX_CHARS"
        raise ExtractionError("too_large", f"file is {size:,} {unit}; the limit is {limit:,} ({setting})")


def make_source_copy(
    data: bytes, original_name: str, ingested: str, limits: ExtractLimits | None = None
) -> SourceCopy:
    """Build the source copy of one inbox note (Markdown or text). Raises BadTextError / FrontmatterError on
    bad input, ExtractionError("too_large") over the limits."""
    limits = limits or ExtractLimits()
    check_size(len(data), limits)
    text = decode_utf8(data, what=original_name)
    check_size(len(text), limits, "characters")
    if original_name.lower().endswith((".md", ".markdown")):
        raw, body = frontmatter.split(text)
        fields: dict[str, Any] = frontmatter.parse_mapping(raw)
        frontmatter.validate({**fields, "status": "raw-source"})  # the contract, before anything is written
    else:
        fields, body = {}, text
    body = source_body(body)
    digest = body_hash(body)
    stem = original_name.rsplit(".", 1)[0]
    title = str(fields.get("title") or _first_heading(body) or _first_line(body, original_name) or stem)
    trust = str(fields.get("trust") or "source")  # kept as declared: a move never raises trust
    meta = {
        "type": fields.get("type") or "source-summary",
        "status": "raw-source",
        "trust": trust,
        "title": title,
        "sha256": digest,
        "original_name": original_name,
        "ingested": ingested,
        **{k: v for k, v in fields.items() if k not in OWNED},
    }
    path = f"{SOURCES}/{copy_name(original_name)}"
    return SourceCopy(sha256=digest, path=path, title=title, text=frontmatter.render(meta, body))


class DocumentSource(BaseModel):
    """A document read into Markdown, about to become `10-sources/<name>` + `10-sources/<name>.md`."""

    sha256: str  # of the Markdown body, as for every source copy (`source_hashes_match` checks it)
    original_sha256: str  # of the document's bytes, kept unchanged beside the copy
    title: str
    fields: dict[str, Any]
    body: str
    warnings: list[str] = Field(default_factory=list)

    def text(self, original_path: str) -> str:
        """The copy's text, pointing at where the original bytes were written."""
        fields = dict(self.fields)
        fields["original"] = original_path
        return frontmatter.render(fields, self.body)


def make_document_source(
    data: bytes, original_name: str, ingested: str, limits: ExtractLimits | None = None
) -> DocumentSource:
    """Read one document (PDF, DOCX, XLSX, PPTX, HWPX, HTML) into a source copy.

    Raises ExtractionError with the reason: over the limits, encrypted, corrupt, a scan without a text
    layer, or no text at all (an empty source is never written).
    """
    limits = limits or ExtractLimits()
    check_size(len(data), limits)
    result = extract(data, original_name, limits)
    body = source_body(result.markdown)
    check_size(len(body), limits, "characters")
    digest = body_hash(body)
    title = (result.title or "").strip() or original_name.rsplit(".", 1)[0]
    fields: dict[str, Any] = {
        "type": "source-summary",
        "status": "raw-source",
        "trust": "source",
        "title": title,
        "sha256": digest,
        "original_name": original_name,
        "ingested": ingested,
        "original_sha256": sha256_bytes(data),
        "format": result.format,
    }
    if result.unit:
        fields["unit"] = result.unit
        fields["units"] = result.unit_count
    return DocumentSource(
        sha256=digest,
        original_sha256=fields["original_sha256"],
        title=title,
        fields=fields,
        body=body,
        warnings=result.warnings,
    )
