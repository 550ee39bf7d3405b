"""The fact model: subject, predicate (with its cardinality), typed object, qualifiers, the statement, four
times with a precision, a status and provenance (issue 24 item 1; seed S4 §3.1, S2 §3.2).

World time is `valid_at` / `invalid_at` (when the fact held); system time is `recorded_at` / `expired_at`
(when the store learnt it and when the store stopped holding it as current). A fact is never deleted:
it is merged, superseded or rejected, and every such change is a row of the resolution ledger.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from hippo_core.facts.dates import DatePoint, Precision
from hippo_core.vault.fingerprints import sha256_text

Cardinality = Literal["single", "multi", "unknown"]
ObjectKind = Literal["text", "number", "date"]
Status = Literal["active", "pending_supersede", "superseded", "merged", "rejected"]
# Statuses of a fact that still says what holds (a pending proposal retires nothing until a person ticks).
CURRENT: tuple[Status, ...] = ("active", "pending_supersede")

_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = ".,;:!?\"'`()[]{}“”‘’「」『』"
_CLOCK = re.compile(r"(?:(오전|오후)\s?)?(\d{1,2})(?::(\d{2}))?\s?(am|pm|a\.m\.|p\.m\.|시)?", re.IGNORECASE)

# Units written differently that mean the same quantity: unit -> (canonical unit, factor).
_UNITS: dict[str, tuple[str, float]] = {
    "h": ("h", 1.0),
    "hr": ("h", 1.0),
    "hrs": ("h", 1.0),
    "hour": ("h", 1.0),
    "hours": ("h", 1.0),
    "시간": ("h", 1.0),
    "min": ("h", 1 / 60),
    "mins": ("h", 1 / 60),
    "minute": ("h", 1 / 60),
    "minutes": ("h", 1 / 60),
    "분": ("h", 1 / 60),
    "km": ("m", 1000.0),
    "m": ("m", 1.0),
    "cm": ("m", 0.01),
    "kg": ("kg", 1.0),
    "g": ("kg", 0.001),
    "mg": ("kg", 1e-6),
    "개": ("count", 1.0),
    "장": ("count", 1.0),
    "items": ("count", 1.0),
}


def norm_text(text: str) -> str:
    """Case, width and spacing folded; punctuation at the ends dropped (for comparing, never for show)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", folded).strip().strip(_EDGE_PUNCT).strip()


def clock_key(text: str) -> str | None:
    """`15:00`, `3 pm`, `오후 3시` -> `15:00`; None when the text is not a time of day."""
    m = _CLOCK.fullmatch(text.strip())
    if not m or not (m[3] or m[4] or m[1]):
        return None
    hour, minute = int(m[2]), int(m[3] or 0)
    mark = (m[4] or "").lower()
    if m[1] == "오후" or mark.startswith("p"):
        hour = hour + 12 if hour < 12 else hour
    if (m[1] == "오전" or mark.startswith("a")) and hour == 12:
        hour = 0
    if hour > 23 or minute > 59:
        return None
    return f"{hour:02d}:{minute:02d}"


class FactObject(BaseModel):
    """The value: text, a number with its unit, or a date (with its precision)."""

    kind: ObjectKind = "text"
    text: str  # as written in the source
    number: float | None = None
    unit: str | None = None
    date: str | None = None
    date_precision: Precision = "unknown"

    def key(self) -> str:
        """What two objects must share to be the same value (6 hours and 360 min are one value)."""
        if self.kind == "number" and self.number is not None:
            unit = norm_text(self.unit or "")
            canon, factor = _UNITS.get(unit, (unit, 1.0))
            return f"n:{round(self.number * factor, 6):g}{(' ' + canon) if canon else ''}"
        if self.kind == "date" and self.date:
            return f"d:{self.date}:{self.date_precision}"
        return f"t:{clock_key(self.text) or norm_text(self.text)}"

    def tokens(self) -> set[str]:
        return set(norm_text(self.text).split())


class Qualifiers(BaseModel):
    """What makes two statements about one subject different things (S2: editions and lineages coexist)."""

    edition: str | None = None
    lineage: str | None = None
    project: str | None = None

    def key(self) -> tuple[str, str, str]:
        return (norm_text(self.edition or ""), norm_text(self.lineage or ""), norm_text(self.project or ""))


# The vault's trust levels (hippo_core.vault.governance) and `agent` for conversations and work memory.
Trust = Literal["source", "human_edit", "llm_summary", "llm_context", "web_staging", "agent"]


class Provenance(BaseModel):
    """Where a statement came from: the anchor in the vault, the source's content hash at that time, the
    conversation or session, how far it is trusted, what extracted it and how sure it was."""

    anchor: str  # path#heading
    content_hash: str
    session_id: str | None = None
    trust: Trust = "human_edit"
    extractor: str  # "reader:frontmatter", "reader:inline", "llm:<model>"
    prompt_version: str | None = None
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    quote: str | None = None  # the span of the source the statement rests on (LLM extraction)

    @field_validator("anchor")
    @classmethod
    def _anchor(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("a fact needs the anchor it came from")
        return v.strip()

    @property
    def path(self) -> str:
        return self.anchor.split("#", 1)[0]


class Fact(BaseModel):
    """One statement about a subject, with its times, status and where it came from."""

    fact_id: str = ""
    subject: str  # canonical subject key (aliases resolved)
    subject_label: str = ""  # the subject as the statement names it
    predicate: str
    cardinality: Cardinality = "unknown"
    object: FactObject
    qualifiers: Qualifiers = Field(default_factory=Qualifiers)
    statement: str  # one self-contained sentence, in the source's language
    valid_at: DatePoint = Field(default_factory=DatePoint)
    invalid_at: DatePoint = Field(default_factory=DatePoint)
    recorded_at: str = ""
    expired_at: str | None = None
    status: Status = "active"
    merged_into: str | None = None
    superseded_by: str | None = None
    provenance: list[Provenance] = Field(default_factory=list)

    def identity(self) -> str:
        """A stable id: the same statement from the same anchor is one fact across runs."""
        first = self.provenance[0].anchor if self.provenance else ""
        raw = "\x1f".join(
            [
                self.subject,
                self.predicate,
                self.object.key(),
                *self.qualifiers.key(),
                self.valid_at.value or "",
                first,
            ]
        )
        return sha256_text(raw)[:16]

    def with_id(self) -> Fact:
        return self if self.fact_id else self.model_copy(update={"fact_id": self.identity()})

    def same_slot(self, other: Fact) -> bool:
        """Same subject, predicate and qualifiers: where a single-valued predicate holds one value."""
        return (
            self.subject == other.subject
            and self.predicate == other.predicate
            and self.qualifiers.key() == other.qualifiers.key()
        )

    def valid_on(self, day: str) -> bool:
        """Whether the fact held on `day` (YYYY-MM-DD) in world time: started on or before it (or when is
        unknown), not yet invalid. Merged and rejected statements hold nothing of their own."""
        if self.status in ("merged", "rejected"):
            return False
        span = self.valid_at.span()
        if span is not None and span[0] > day:
            return False
        return not (self.invalid_at.value is not None and self.invalid_at.value <= day)


def subject_key(name: str) -> str:
    """The comparable form of a subject name (callers resolve aliases first)."""
    return norm_text(name)
