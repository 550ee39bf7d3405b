"""The facts service behind REST `GET /api/v1/facts` and MCP `hippo_facts`: a subject's timeline with
anchors, now, as of a date, or with its whole history (issue 24). One answer shape for both faces.

The subject is resolved through the aliases the fact store has seen (Korean and English names of one
thing give one timeline). Statements come from the vault and from conversations: they are returned as
untrusted material to cite, never as instructions.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from hippo_core.facts.dates import parse_date
from hippo_core.facts.model import Fact
from hippo_core.safety.text_input import BadTextError, validate_query
from hippo_resources.fact_store import FactStore
from hippo_search.envelope import UNTRUSTED_NOTICE
from hippo_settings import HippoSettings
from hippo_work.wiring import _dsn

MAX_SUBJECT_BYTES = 200


class FactsRefused(ValueError):
    """Bad input: the message says what to send instead."""


def fact_store(settings: HippoSettings) -> FactStore:
    return FactStore(path=str(settings.fact_store_path.expanduser().resolve()), pg_dsn=_dsn(settings))


class TimelineFact(BaseModel):
    fact_id: str
    predicate: str
    value: str
    kind: str
    number: float | None = None
    unit: str | None = None
    statement: str
    valid_at: str | None = Field(description="When it started to hold (the first day its precision allows).")
    valid_precision: str
    invalid_at: str | None = Field(description="When it stopped holding; null while it holds.")
    invalid_precision: str
    status: str
    superseded_by: str | None = None
    merged_into: str | None = None
    edition: str | None = None
    lineage: str | None = None
    project: str | None = None
    anchors: list[str] = Field(description="path#heading of every source that states it.")
    recorded_at: str


class Timeline(BaseModel):
    subject: str
    asked: str
    as_of: str | None
    include_history: bool
    facts: list[TimelineFact]
    pending_proposals: int
    notice: str = UNTRUSTED_NOTICE


def _row(f: Fact) -> TimelineFact:
    return TimelineFact(
        fact_id=f.fact_id,
        predicate=f.predicate,
        value=f.object.text,
        kind=f.object.kind,
        number=f.object.number,
        unit=f.object.unit,
        statement=f.statement,
        valid_at=f.valid_at.value,
        valid_precision=f.valid_at.precision,
        invalid_at=f.invalid_at.value,
        invalid_precision=f.invalid_at.precision,
        status=f.status,
        superseded_by=f.superseded_by,
        merged_into=f.merged_into,
        edition=f.qualifiers.edition,
        lineage=f.qualifiers.lineage,
        project=f.qualifiers.project,
        anchors=list(dict.fromkeys(p.anchor for p in f.provenance)),
        recorded_at=f.recorded_at,
    )


class Facts:
    def __init__(self, store: FactStore) -> None:
        self.store = store

    def timeline(
        self, subject: str, as_of: str | None = None, include_history: bool = False
    ) -> dict[str, Any]:
        """The subject's facts oldest first: what holds now, what held on `as_of` (YYYY, YYYY-MM or
        YYYY-MM-DD: the last day it names), or every statement ever taken in (`include_history`)."""
        try:
            asked = validate_query(subject, MAX_SUBJECT_BYTES)
        except BadTextError as exc:
            raise FactsRefused(f"subject: {exc}") from None
        day = None
        if as_of is not None and as_of.strip():
            point = parse_date(as_of.strip())
            span = point.span()
            if span is None:
                raise FactsRefused(f"as_of: {point.reason}; send YYYY-MM-DD, YYYY-MM or YYYY")
            day = span[1]
        if day is not None and include_history:
            raise FactsRefused("as_of and include_history exclude each other: the history has every date")
        key = self.store.resolve_subject(asked)
        facts = self.store.timeline(key, as_of=day, include_history=include_history)
        ids = {f.fact_id for f in facts}
        pending = sum(1 for p in self.store.proposals() if p.older.fact_id in ids or p.newer.fact_id in ids)
        out = Timeline(
            subject=key,
            asked=asked,
            as_of=day,
            include_history=include_history,
            facts=[_row(f) for f in facts],
            pending_proposals=pending,
        )
        return out.model_dump()
