"""The offline compiler and judge: deterministic stand-ins for the LLM, so the loop runs on a fresh machine.

The offline compiler only extracts (headings, lead sentences, citations, links to related canonical
pages): it never writes a claim the source does not contain word for word. Its cards say so.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel, Field

from hippo_core.index.chunking import _paragraphs, split_sections, split_sentences
from hippo_core.vault import frontmatter
from hippo_core.vault.sources import source_lineage
from hippo_core.wiki.cards import CardDraft, Citation, CompileOutput
from hippo_core.wiki.gates import CitationCheck

OFFLINE_COMPILER = "offline-extractive/1"
OFFLINE_JUDGE = "offline-judge/1"
MAX_POINTS = 6
LEAD_CHARS = 220


class RelatedPage(BaseModel):
    """A canonical page our own search found for a source (what the compiler may link to)."""

    path: str
    title: str
    sector: str | None
    excerpt: str = ""


class JudgeVerdict(BaseModel):
    """The judge's advice on one card; the deterministic gates still decide."""

    decision: Literal["accept", "revise", "reject"]
    reasons: list[str] = Field(default_factory=list, description="short reasons, one per problem found")


def link_target(path: str) -> str:
    return path.removesuffix(".md")


def card_trust(source_trusts: list[str]) -> str:
    """A compiled card is a machine summary; it never carries more trust than its weakest source."""
    return "web_staging" if "web_staging" in source_trusts else "llm_summary"


def _lead(text: str) -> str:
    paras = _paragraphs(text)
    if not paras:
        return ""
    sentences = split_sentences(paras[0])
    lead = sentences[0] if sentences else paras[0]
    lead = lead.lstrip("-*+ ").strip()
    return lead if len(lead) <= LEAD_CHARS else lead[:LEAD_CHARS].rsplit(" ", 1)[0]


def offline_compile(source_path: str, source_text: str, related: list[RelatedPage]) -> CompileOutput:
    """One source-summary card: the source's headings and lead sentences, cited, linked to related pages; of
    the source's lineage."""
    fm, body = frontmatter.parse(source_text, source_path)
    title = fm.title or source_path.rsplit("/", 1)[-1].removesuffix(".md")
    points: list[str] = []
    citations: list[Citation] = []
    for section in split_sections(body)[:MAX_POINTS]:
        lead = _lead(section.text)
        if not lead:
            continue
        label = section.heading or title
        points.append(f"- **{label}**: {lead}")
        anchor = f"{source_path}#{section.heading}" if section.heading else source_path
        citations.append(Citation(anchor=anchor, quote=lead))
    sectors = Counter(p.sector for p in related if p.sector)
    sector = sectors.most_common(1)[0][0] if sectors else "general"
    lines = [
        f"Summary of the source [[{link_target(source_path)}|{title}]], extracted without an LLM "
        "(headings and lead sentences only).",
        "",
        "## Key points",
        "",
        *(points or ["- (the source has no text to summarize)"]),
    ]
    if related:
        lines += ["", "## Related", "", *(f"- [[{link_target(p.path)}|{p.title}]]" for p in related)]
    draft = CardDraft(
        type="source-summary",
        title=title,
        sector=sector,
        aliases=[],
        body="\n".join(lines),
        citations=citations,
        confidence=0.6 if citations else 0.2,
        lineage=source_lineage(source_path, fm.model_extra or {}),
        rationale="offline extractive summary of a new source",
    )
    return CompileOutput(cards=[draft])


def offline_judge(body: str, citation_checks: list[CitationCheck], confidence: float | None) -> JudgeVerdict:
    """Deterministic judge: reject without citations, revise on a failed citation or a thin card."""
    if not citation_checks:
        return JudgeVerdict(decision="reject", reasons=["the card cites nothing"])
    bad = [f"{c.anchor}: {c.reason}" for c in citation_checks if not c.ok]
    if bad:
        return JudgeVerdict(decision="revise", reasons=bad)
    reasons = []
    if len(body.strip()) < 40:
        reasons.append("the card body is too short to be useful")
    if confidence is not None and confidence < 0.4:
        reasons.append(f"confidence {confidence:.2f} is below 0.40")
    return JudgeVerdict(decision="revise", reasons=reasons) if reasons else JudgeVerdict(decision="accept")
