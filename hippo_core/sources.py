"""Turning an inbox file into an immutable source copy (pure: bytes in, document text out)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from hippo_core import frontmatter
from hippo_core.fingerprints import sha256_text
from hippo_core.text_input import decode_utf8
from hippo_core.vault_layout import SOURCES, folder_lineage

# Fields the pipeline owns on a source copy; an inbox note cannot set them.
OWNED = ("type", "status", "trust", "sha256", "original_name", "ingested", "title")


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


def make_source_copy(data: bytes, original_name: str, ingested: str) -> SourceCopy:
    """Build the source copy of one inbox file. Raises BadTextError / FrontmatterError on bad input."""
    text = decode_utf8(data, what=original_name)
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
    path = f"{SOURCES}/{slugify(title)}-{digest[:8]}.md"
    return SourceCopy(sha256=digest, path=path, title=title, text=frontmatter.render(meta, body))
