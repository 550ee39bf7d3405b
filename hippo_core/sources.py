"""Turning an inbox file into an immutable source copy (pure: bytes in, document text out)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from hippo_core import frontmatter
from hippo_core.fingerprints import sha256_text
from hippo_core.text_input import decode_utf8
from hippo_core.vault_layout import SOURCES

# Fields the pipeline owns on a source copy; an inbox note cannot set them.
OWNED = ("type", "status", "trust", "sha256", "original_name", "ingested", "title")


class SourceCopy(BaseModel):
    sha256: str
    path: str
    title: str
    text: str


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
