"""The deterministic reader: facts a note states in its frontmatter or in structured lines, taken without
an LLM (issue 24 item 2).

Two forms, both documented in docs/facts.md:

1. Dataview inline fields, one per line, anywhere in the body (outside code fences):

       - caffeine_cutoff:: 15:00
       - lives_in:: Busan (since 2023-03-01)

   The subject is the note (its `subject:` frontmatter, else its title), resolved through the vault's
   aliases; the anchor is the section the line is in; the fact holds from the `(since …)` date, else the
   note's date (`date:`, else `created:`).

2. A `facts:` list in the frontmatter, for a subject other than the note or any other field:

       facts:
         - {subject: 춘하추동, predicate: lecture_count, object: 95, edition: "2004", since: 2004}
         - "Caffeine cutoff | caffeine_cutoff | 15:00"

Qualifiers (`edition`, `lineage`, `project`) come from the item, else the note's frontmatter. A date that
cannot be read keeps the fact with precision `unknown`, and the reason is returned for the run metadata.
Each line is matched by one anchored pattern without nested repetition (linear time).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from hippo_core.facts.dates import DatePoint, parse_date
from hippo_core.facts.model import Cardinality, Fact, FactObject, Provenance, Qualifiers, Trust
from hippo_core.facts.subjects import SubjectIndex, resolve_predicate
from hippo_core.index.chunking import FenceTracker, anchor_for, split_sections

READER_VERSION = "reader-1"
MAX_VALUE_CHARS = 300

_INLINE = re.compile(r"[-*+]?\s?([A-Za-z가-힣][\w가-힣 -]{0,59})::\s?(\S.{0,400})")
_SINCE = re.compile(r"(.{1,400}?)\s\((?:since|부터|from)\s([^()]{1,40})\)")
_NUMBER = re.compile(r"(-?\d{1,15}(?:[.,]\d{1,6})?)\s?([A-Za-z가-힣%]{1,12})?")


class ReadProblem(BaseModel):
    """A fact kept with less than it said (an unreadable date) or an item that was not a fact."""

    anchor: str
    reason: str


class NoteFacts(BaseModel):
    facts: list[Fact]
    problems: list[ReadProblem]


def typed_object(value: str, unit: str | None = None) -> FactObject:
    """A number with its unit (`6 hours`, `95강`), a date (`2024-03`), or text as written."""
    value = value.strip()[:MAX_VALUE_CHARS]
    m = _NUMBER.fullmatch(value)
    if m and not (m[2] and m[2].casefold() in ("pm", "am", "시")):
        return FactObject(kind="number", text=value, number=float(m[1].replace(",", ".")), unit=unit or m[2])
    if re.fullmatch(r"\d{4}(?:[-./]\d{1,2}){0,2}\.?|\d{4}\s?년.{0,12}", value):
        d = parse_date(value)
        if d.known:
            return FactObject(kind="date", text=value, date=d.value, date_precision=d.precision)
    return FactObject(kind="text", text=value)


def _statement(subject: str, predicate: str, value: str) -> str:
    return f"{subject}: {predicate.replace('_', ' ')} = {value}."


class _Context(BaseModel):
    path: str
    title: str
    note_date: DatePoint
    content_hash: str
    trust: Trust
    qualifiers: Qualifiers


def _make(
    ctx: _Context,
    subjects: SubjectIndex,
    subject: str,
    predicate: str,
    value: str,
    anchor: str,
    extractor: str,
    problems: list[ReadProblem],
    since: object = None,
    cardinality: Cardinality | None = None,
    qualifiers: Qualifiers | None = None,
    statement: str | None = None,
    unit: str | None = None,
) -> Fact:
    name, card = resolve_predicate(predicate, cardinality)
    valid = ctx.note_date
    if since not in (None, ""):
        valid = parse_date(since)
        if not valid.known:
            problems.append(ReadProblem(anchor=anchor, reason=f"valid_at: {valid.reason}"))
    return Fact(
        subject=subjects.key_of(subject),
        subject_label=subject,
        predicate=name,
        cardinality=card,
        object=typed_object(value, unit),
        qualifiers=qualifiers or ctx.qualifiers,
        statement=statement or _statement(subject, name, value.strip()),
        valid_at=valid,
        provenance=[
            Provenance(
                anchor=anchor,
                content_hash=ctx.content_hash,
                trust=ctx.trust,
                extractor=extractor,
                prompt_version=READER_VERSION,
                confidence=1.0,
            )
        ],
    ).with_id()


def _str(v: Any) -> str | None:
    return None if v is None else str(v)


def read_note(
    path: str,
    title: str,
    fields: dict[str, Any],
    body: str,
    content_hash: str,
    subjects: SubjectIndex,
    trust: Trust = "human_edit",
) -> NoteFacts:
    """Every fact a note states in its frontmatter `facts:` list or in inline `predicate:: value` lines."""
    problems: list[ReadProblem] = []
    raw_date = fields.get("date") or fields.get("created")
    note_date = parse_date(raw_date)
    if raw_date and not note_date.known:
        problems.append(ReadProblem(anchor=path, reason=f"note date: {note_date.reason}"))
    ctx = _Context(
        path=path,
        title=title,
        note_date=note_date,
        content_hash=content_hash,
        trust=trust,
        qualifiers=Qualifiers(
            edition=_str(fields.get("edition")),
            lineage=_str(fields.get("lineage")),
            project=_str(fields.get("project")),
        ),
    )
    note_subject = str(fields.get("subject") or title)
    out: list[Fact] = []
    items = fields.get("facts")
    if items is not None and not isinstance(items, list):
        problems.append(ReadProblem(anchor=path, reason="`facts:` is not a list; ignored"))
        items = []
    for i, item in enumerate(items or []):
        where = f"{path} facts[{i}]"
        if isinstance(item, str):
            parts = [p.strip() for p in item.split("|")]
            if len(parts) != 3 or not all(parts):
                problems.append(ReadProblem(anchor=where, reason="not `subject | predicate | object`"))
                continue
            out.append(
                _make(ctx, subjects, parts[0], parts[1], parts[2], path, "reader:frontmatter", problems)
            )
            continue
        if not isinstance(item, dict) or not item.get("predicate") or item.get("object") in (None, ""):
            problems.append(
                ReadProblem(anchor=where, reason="a `facts:` item needs `predicate` and `object`")
            )
            continue
        card = item.get("cardinality")
        q = Qualifiers(
            edition=_str(item.get("edition", ctx.qualifiers.edition)),
            lineage=_str(item.get("lineage", ctx.qualifiers.lineage)),
            project=_str(item.get("project", ctx.qualifiers.project)),
        )
        out.append(
            _make(
                ctx,
                subjects,
                str(item.get("subject") or note_subject),
                str(item["predicate"]),
                str(item["object"]),
                path,
                "reader:frontmatter",
                problems,
                since=item.get("since", item.get("valid_at")),
                cardinality=card if card in ("single", "multi") else None,
                qualifiers=q,
                statement=_str(item.get("statement")),
                unit=_str(item.get("unit")),
            )
        )
    for section in split_sections(body):
        anchor = anchor_for(path, section.heading)
        fence = FenceTracker()
        for line in section.text.splitlines():
            if fence.feed(line):
                continue
            m = _INLINE.fullmatch(line.strip())
            if not m:
                continue
            value, since = m[2].strip(), None
            if s := _SINCE.fullmatch(value):
                value, since = s[1].strip(), s[2].strip()
            out.append(
                _make(
                    ctx, subjects, note_subject, m[1].strip(), value, anchor, "reader:inline", problems, since
                )
            )
    return NoteFacts(facts=out, problems=problems)
