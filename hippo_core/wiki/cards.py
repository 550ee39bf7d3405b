"""Staging cards: the schema the compiler fills, the Markdown file a person reviews, and its fingerprint.

A card file is ordinary Markdown with frontmatter, a `## Citations` section (one `path#heading` or URL per
line) and a `## Promotion meta` section. Everything the gates need is read back from the file itself,
so a card a person edited in Obsidian is judged as it is now, not as it was proposed.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from hippo_core.index.chunking import split_sections
from hippo_core.vault import frontmatter
from hippo_core.vault.fingerprints import sha256_text
from hippo_core.vault.sources import slugify
from hippo_core.vault.vault_layout import STAGING

CardType = Literal["concept", "entity", "comparison", "query", "source-summary"]
CITATIONS = "Citations"
PROMOTION_META = "Promotion meta"
_SECTOR = re.compile(r"^[\w\-]+$", flags=re.UNICODE)
# A link part may hold a single "[" but never "[[": a scan from one "[[" stops at the next (linear time).
_WIKILINK = re.compile(
    r"!?\[\[((?:[^\[\]|#]|\[(?!\[))*+)(#(?:[^\[\]|]|\[(?!\[))*+)?(?:\|(?:[^\[\]]|\[(?!\[))*+)?\]\]"
)
_CITE_LINE = re.compile(r"^- (?:`([^`]+)`|<([^>]+)>)(?: — (?:\"(.*)\"|claim: (.*)))?\s*$")
_META_LINE = re.compile(r"^- ([\w ]+): (.*)$")


class Citation(BaseModel):
    """Where a claim comes from: `10-sources/x.md#Heading`, `20-wiki/s/p.md#Heading` or a URL."""

    anchor: str = Field(description="path#heading into 10-sources/ or 20-wiki/, or an https URL")
    quote: str | None = Field(default=None, description="a short span copied verbatim from the cited section")
    claim: str | None = Field(default=None, description="the claim this citation supports")


class CardDraft(BaseModel):
    """One proposed card, as the compiler (LLM or offline) returns it."""

    type: CardType
    title: str = Field(min_length=1, max_length=120)
    sector: str = Field(description="one lowercase word or slug, e.g. health, data")
    aliases: list[str] = Field(default_factory=list)
    body: str = Field(min_length=1, description="Markdown body with [[wikilinks]]; no top-level # title")
    citations: list[Citation] = Field(default_factory=list)
    confidence: float = Field(ge=0.0, le=1.0)
    lineage: str | None = None
    rationale: str = Field(default="", description="why this card should exist")

    @field_validator("sector")
    @classmethod
    def _sector(cls, v: str) -> str:
        v = v.strip().lower()
        if not _SECTOR.match(v):
            raise ValueError("sector must be a single slug such as 'health' or 'data'")
        return v


class CompileOutput(BaseModel):
    """What the compiler returns for one source document."""

    cards: list[CardDraft]


class Card(BaseModel):
    """A card file read back from the vault."""

    path: str
    type: str | None
    status: str
    trust: str
    title: str
    sector: str | None
    aliases: list[str]
    sources: list[str]
    lineage: str | None
    confidence: float | None
    compiler: str | None
    source_doc: str | None
    created: str | None
    proposal_for: str | None
    body: str
    citations: list[Citation]
    meta: dict[str, str]
    has_promotion_meta: bool
    text: str

    @property
    def slug(self) -> str:
        return self.path.rsplit("/", 1)[-1].removesuffix(".md")

    def wikilinks(self) -> list[str]:
        """Link targets in the card's own prose (citations and promotion meta excluded)."""
        out = []
        for section in split_sections(self.body):
            if section.heading in (CITATIONS, PROMOTION_META):
                continue
            out += [m.group(1).strip() for m in _WIKILINK.finditer(section.text) if m.group(1).strip()]
        return out


def fingerprint(text: str) -> str:
    """Fingerprint of a card's whole file (frontmatter and body): any edit changes it."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").strip().splitlines()]
    return sha256_text("\n".join(lines))[:12]


def staging_path(title: str) -> str:
    return f"{STAGING}/{slugify(title)}.md"


def render_card(
    draft: CardDraft,
    *,
    sources: list[str],
    compiler: str,
    trust: str,
    created: str,
    source_doc: str,
    extra_meta: dict[str, str] | None = None,
) -> str:
    """The staging file for a draft: status draft, the compiler named, citations and promotion meta."""
    fields: dict[str, object] = {
        "type": draft.type,
        "status": "draft",
        "trust": trust,
        "title": draft.title,
        "sector": draft.sector,
        "aliases": list(draft.aliases),
        "sources": list(sources),
        "confidence": round(draft.confidence, 2),
        "created": created,
        "updated": created,
        "compiler": compiler,
        "source_doc": source_doc,
    }
    if draft.lineage:
        fields["lineage"] = draft.lineage
    cites = []
    for c in draft.citations:
        ref = f"<{c.anchor}>" if c.anchor.startswith(("http://", "https://")) else f"`{c.anchor}`"
        if c.quote:
            cites.append(f'- {ref} — "{c.quote}"')
        elif c.claim:
            cites.append(f"- {ref} — claim: {c.claim}")
        else:
            cites.append(f"- {ref}")
    meta = {
        "compiler": compiler,
        "source": ", ".join(sources),
        "confidence": f"{draft.confidence:.2f}",
        "proposed": created,
        "rationale": draft.rationale.replace("\n", " ").strip() or "-",
        **(extra_meta or {}),
    }
    body = (
        f"# {draft.title}\n\n{draft.body.strip()}\n\n## {CITATIONS}\n\n"
        + ("\n".join(cites) or "- (none)")
        + f"\n\n## {PROMOTION_META}\n\n"
        + "\n".join(f"- {k}: {v}" for k, v in meta.items())
        + "\n"
    )
    return frontmatter.render(fields, body)


def parse_card(path: str, text: str) -> Card:
    """Read a card file. Raises FrontmatterError for a file that breaks the contract."""
    fm, body = frontmatter.parse(text, path)
    extra = fm.model_extra or {}
    citations: list[Citation] = []
    meta: dict[str, str] = {}
    has_meta = False
    for section in split_sections(body):
        if section.heading == CITATIONS:
            for line in section.text.splitlines():
                m = _CITE_LINE.match(line.strip())
                if m:
                    citations.append(
                        Citation(
                            anchor=(m.group(1) or m.group(2)).strip(), quote=m.group(3), claim=m.group(4)
                        )
                    )
        elif section.heading == PROMOTION_META:
            has_meta = True
            for line in section.text.splitlines():
                m = _META_LINE.match(line.strip())
                if m:
                    meta[m.group(1).strip()] = m.group(2).strip()
    lineage = extra.get("lineage")
    return Card(
        path=path,
        type=fm.type,
        status=fm.status,
        trust=fm.trust,
        title=fm.title or path.rsplit("/", 1)[-1].removesuffix(".md"),
        sector=fm.sector,
        aliases=fm.aliases,
        sources=fm.sources,
        lineage=None if lineage is None else str(lineage),
        confidence=fm.confidence,
        compiler=None if extra.get("compiler") is None else str(extra["compiler"]),
        source_doc=None if extra.get("source_doc") is None else str(extra["source_doc"]),
        created=fm.created,
        proposal_for=None if extra.get("proposal_for") is None else str(extra["proposal_for"]),
        body=body,
        citations=citations,
        meta=meta,
        has_promotion_meta=has_meta and bool(meta),
        text=text,
    )


def promoted_text(card: Card, promoted: str) -> str:
    """The canonical page for an approved card: same content, status canonical, promotion date."""
    raw, body = frontmatter.split(card.text)
    fields = frontmatter.parse_mapping(raw)
    fields["status"] = "canonical"
    fields["updated"] = promoted
    fields["promoted"] = promoted
    fields.pop("proposal_for", None)
    return frontmatter.render(fields, body.lstrip("\n"))
