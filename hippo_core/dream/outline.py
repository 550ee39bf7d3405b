"""What the lint needs of one note, read once and kept by content hash (so an unchanged note is never
re-read by a later dream): its links, its headings, its frontmatter problem, its dates."""

from __future__ import annotations

import hashlib
import re

from pydantic import BaseModel, Field

from hippo_core.index.chunking import FenceTracker, clean_heading
from hippo_core.vault import frontmatter
from hippo_core.vault.links import Link, markdown_links_in_line, wikilinks_in_line

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+)$")
_DATE_FIELDS = ("date", "created", "updated")
_ISO_DAY = re.compile(r"^(\d{4}-\d{2}-\d{2})")
OUTLINE_VERSION = "2"  # part of the cache key: a new reading of notes re-reads every note once


class Outline(BaseModel):
    path: str
    content_hash: str
    links: list[Link] = Field(default_factory=list)
    headings: list[str] = Field(default_factory=list)
    frontmatter_problem: str | None = None
    dates: dict[str, str] = Field(default_factory=dict)  # field -> YYYY-MM-DD as written
    title: str | None = None
    aliases: list[str] = Field(default_factory=list)
    type: str | None = None
    status: str | None = None
    body_hash: str = ""  # of the body with surrounding whitespace removed; "" for an empty body
    merged_from: list[str] = Field(default_factory=list)  # a merge card's (or its page's) two notes


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def outline(path: str, text: str) -> Outline:
    """Read a note leniently (never raises for a readable note)."""
    note = frontmatter.parse_note(text, path)
    dates: dict[str, str] = {}
    data = {
        **(note.fm.model_extra or {}),
        **note.foreign,
        "created": note.fm.created,
        "updated": note.fm.updated,
    }
    for field in _DATE_FIELDS:
        value = data.get(field)
        if value is None:
            continue
        m = _ISO_DAY.match(str(value).strip()[:40])
        if m:
            dates[field] = m.group(1)
    links: list[Link] = []
    headings: list[str] = []
    fence = FenceTracker()
    offset = text.count("\n") - note.body.count("\n")  # body line numbers as the file's
    for i, line in enumerate(note.body.splitlines(), start=1 + offset):
        if fence.feed(line):
            continue
        m = _HEADING.match(line)
        if m:
            headings.append(clean_heading(m.group(2)))
        if "[[" in line:
            links.extend(wikilinks_in_line(line, i))
        if "](" in line:
            links.extend(markdown_links_in_line(line, i, path))
    body = note.body.strip()
    merged = (note.fm.model_extra or {}).get("merged_from")
    return Outline(
        path=path,
        content_hash=content_hash(text),
        links=links,
        headings=headings,
        frontmatter_problem=note.problem,
        dates=dates,
        title=note.fm.title,
        aliases=list(note.fm.aliases),
        type=note.fm.type,
        status=note.fm.status,
        body_hash=content_hash(body) if body else "",
        merged_from=[str(m) for m in merged][:10] if isinstance(merged, list) else [],
    )
