"""What the fact assets read, as plain units: one source text with its anchor base, date, hash and trust.

Pure: the asset gathers the texts (vault notes, source copies, conversations, work-memory checkpoints)
and this module turns them into units and finds the anchor a quote sits under.
"""

from __future__ import annotations

from pydantic import BaseModel

from hippo_core.facts.dates import DatePoint
from hippo_core.facts.extract import quote_in
from hippo_core.facts.model import Trust
from hippo_core.index.chunking import anchor_for, split_sections


class SourceUnit(BaseModel):
    """One text the LLM extractor reads; `sections` maps each anchor to its text, for placing a quote."""

    source: str  # vault path, or conversations/<id>, or work/<project>#<seq>
    kind: str  # note | document | conversation | checkpoint
    text: str
    date: DatePoint
    content_hash: str
    trust: Trust
    session_id: str | None = None
    project: str | None = None
    sections: list[tuple[str, str]] = []


def note_sections(path: str, body: str) -> list[tuple[str, str]]:
    return [(anchor_for(path, s.heading), s.text) for s in split_sections(body)]


def anchor_of(unit: SourceUnit, quote: str) -> str:
    """The anchor of the first section holding the quote; the source itself when none does."""
    for anchor, text in unit.sections:
        if quote_in(quote, text):
            return anchor
    return unit.source
