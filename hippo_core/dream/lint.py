"""Knowledge lint, cheapest layer first (seed S4 §2). Layers 1 and 2 are rules over outlines and fact rows;
layer 3 (meaning, an LLM) and layer 4 (high impact, proposals only) are driven by the dream assets.

L1 structure: orphan notes, broken links and `#heading` anchors, malformed frontmatter, exact duplicates,
facts without provenance. L2 grounding: a single-valued fact with two active values, facts whose source
is archived or gone, volatile facts not reconfirmed, supersessions pending past their deadline, dates in
the future. A finding names the note (`path`, and `line` when there is one) so the digest links to it.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import date, timedelta
from pathlib import PurePosixPath

from pydantic import BaseModel, Field

from hippo_core.dream.outline import Outline
from hippo_core.vault import vault_layout as layout
from hippo_core.vault.links import LinkResolver

INDEX_PAGES = frozenset({"HOME.md", "index.md"})
# Folders whose notes are the pipeline's or are kept as received: not expected to link or be linked.
NOT_LINKED = (
    layout.INBOX + "/",
    layout.TODO + "/",
    layout.SOURCES + "/",
    layout.REVIEWS + "/",
    layout.OPS + "/",
    layout.SYSTEM + "/",
)
NOT_DUPLICATE_CHECKED = (layout.INBOX + "/", layout.SYSTEM + "/", layout.REVIEWS + "/")
# The dream's own pages: their links point at findings (a missing note among them), not knowledge.
DREAM_PAGES = (f"{layout.OPS}/digest/", f"{layout.REVIEWS}/dream/")


class Finding(BaseModel):
    layer: int
    rule: str
    path: str
    detail: str
    line: int | None = None
    related: list[str] = Field(default_factory=list)

    @property
    def key(self) -> str:
        """Stable identity across runs (a flag re-checked on the next dream is the same finding)."""
        raw = "\x00".join([self.rule, self.path, self.detail, *sorted(self.related)])
        return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class FactView(BaseModel):
    """The fields of a fact the grounding rules read (the fact store maps its rows onto this)."""

    fact_id: str
    subject: str
    predicate: str
    single_valued: bool
    object: str
    qualifiers: str = ""
    status: str
    statement: str = ""
    valid_at: str | None = None
    recorded_at: str | None = None
    anchor: str | None = None


class PendingReview(BaseModel):
    """A supersession (or other proposal) waiting for a person's tick."""

    proposal_id: str
    created: str  # YYYY-MM-DD
    path: str  # the review file in 30-reviews/
    summary: str = ""


class LintParams(BaseModel):
    reconfirm_days: int = 180  # a volatile fact unconfirmed for longer is flagged
    volatile_changes: int = 2  # replaced this many times or more: volatile
    review_deadline_days: int = 14  # a pending review older than this is overdue


def _orphan_candidate(o: Outline) -> bool:
    return (
        o.path not in INDEX_PAGES
        and "/" in o.path
        and not o.path.startswith(NOT_LINKED)
        and o.type != "conversation"
        and (o.status or "") != "archived"
    )


def _attachment_target(target: str) -> bool:
    """A link to a file that is not a note (`diagram.png`, `paper.pdf`): it names its extension."""
    suffix = PurePosixPath(target).suffix.lower()
    return bool(suffix) and suffix not in (".md", ".markdown") and len(suffix) <= 6 and suffix[1:].isalnum()


def lint_structure(
    outlines: Mapping[str, Outline], attachments: Iterable[str] | None = None
) -> list[Finding]:
    """L1 over every note's outline: links, anchors, frontmatter, orphans, exact duplicates. Links to
    attachments are checked against `attachments` when it is given, and not checked when it is None."""
    resolver = LinkResolver(outlines, attachments or ())
    findings: list[Finding] = []
    linked: set[str] = set()
    headings = {p: {h.casefold() for h in o.headings} for p, o in outlines.items()}
    for path in sorted(outlines):
        o = outlines[path]
        if path.startswith(DREAM_PAGES):
            continue
        if o.frontmatter_problem:
            findings.append(
                Finding(layer=1, rule="malformed_frontmatter", path=path, detail=o.frontmatter_problem)
            )
        for link in o.links:
            target = resolver.note(link.target, path)
            if target is None:
                if (
                    link.target
                    and _attachment_target(link.target)
                    and (attachments is None or resolver.attachment(link.target))
                ):
                    continue
                findings.append(
                    Finding(
                        layer=1,
                        rule="broken_link",
                        path=path,
                        line=link.line,
                        detail=f"no note '{link.target}'",
                    )
                )
                continue
            if target != path:
                linked.add(target)
            heading = (link.heading or "").split("#")[-1].strip()
            if heading and not heading.startswith("^") and heading.casefold() not in headings[target]:
                findings.append(
                    Finding(
                        layer=1,
                        rule="broken_anchor",
                        path=path,
                        line=link.line,
                        detail=f"'{target}' has no heading '{heading}'",
                        related=[target],
                    )
                )
    for path in sorted(outlines):
        o = outlines[path]
        if _orphan_candidate(o) and not o.links and path not in linked:
            findings.append(
                Finding(layer=1, rule="orphan", path=path, detail="no link in or out, in no index page")
            )
    findings.extend(_duplicates(outlines))
    return findings


def _duplicates(outlines: Mapping[str, Outline]) -> list[Finding]:
    groups: dict[tuple[bool, str], list[str]] = defaultdict(list)
    for path, o in outlines.items():
        if o.body_hash and not path.startswith(NOT_DUPLICATE_CHECKED) and path not in INDEX_PAGES:
            groups[(layout.is_source_copy(path), o.body_hash)].append(path)
    out = []
    for (_, _), paths in sorted(groups.items(), key=lambda kv: sorted(kv[1])[0]):
        if len(paths) > 1:
            first, *rest = sorted(paths)
            out.append(
                Finding(
                    layer=1,
                    rule="exact_duplicate",
                    path=first,
                    detail=f"same text as {len(rest)} other note(s)",
                    related=rest,
                )
            )
    return out


def lint_facts_structure(facts: Iterable[FactView]) -> list[Finding]:
    """L1 for facts: every fact must say where it came from."""
    return [
        Finding(
            layer=1, rule="fact_without_provenance", path="", detail=f"fact {f.fact_id}: {f.statement[:120]}"
        )
        for f in facts
        if not (f.anchor or "").strip()
    ]


def _day(value: str | None) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def lint_grounding(
    outlines: Mapping[str, Outline],
    facts: Iterable[FactView],
    pending: Iterable[PendingReview],
    today: date,
    params: LintParams | None = None,
) -> list[Finding]:
    """L2: facts against their sources and against each other, reviews against their deadline, dates."""
    params = params or LintParams()
    facts = list(facts)
    out: list[Finding] = []
    by_key: dict[tuple[str, str, str], list[FactView]] = defaultdict(list)
    for f in facts:
        by_key[(f.subject, f.predicate, f.qualifiers)].append(f)
    for (subject, predicate, _), group in sorted(by_key.items()):
        active = [f for f in group if f.status == "active"]
        pending_here = any(f.status == "pending_supersede" for f in group)
        values = {f.object for f in active}
        anchor_path = next((f.anchor.split("#")[0] for f in active if f.anchor), "")
        if group[0].single_valued and len(values) > 1 and not pending_here:
            out.append(
                Finding(
                    layer=2,
                    rule="two_active_values",
                    path=anchor_path,
                    detail=f"{subject} {predicate}: {len(values)} current values ({', '.join(sorted(values)[:4])})",
                    related=sorted({f.anchor.split("#")[0] for f in active if f.anchor} - {anchor_path}),
                )
            )
        changes = sum(1 for f in group if f.status == "superseded")
        if changes >= params.volatile_changes and active:
            latest = max((_day(f.recorded_at) or _day(f.valid_at) or date.min) for f in active)
            if (today - latest).days > params.reconfirm_days:
                out.append(
                    Finding(
                        layer=2,
                        rule="volatile_unconfirmed",
                        path=anchor_path,
                        detail=f"{subject} {predicate} changed {changes} times; last confirmed {latest.isoformat()}",
                    )
                )
    for f in facts:
        if f.status != "active":
            continue
        path = (f.anchor or "").split("#")[0]
        if path:
            o = outlines.get(path)
            if o is None:
                out.append(
                    Finding(
                        layer=2,
                        rule="source_gone",
                        path=path,
                        detail=f"fact {f.fact_id}'s source is not in the vault",
                    )
                )
            elif (o.status or "") == "archived":
                out.append(
                    Finding(
                        layer=2,
                        rule="source_archived",
                        path=path,
                        detail=f"fact {f.fact_id}'s source is archived",
                    )
                )
        valid = _day(f.valid_at)
        if valid and valid > today + timedelta(days=1):
            out.append(
                Finding(layer=2, rule="future_date", path=path, detail=f"fact {f.fact_id} valid from {valid}")
            )
    for p in sorted(pending, key=lambda r: r.created):
        created = _day(p.created)
        if created and (today - created).days > params.review_deadline_days:
            out.append(
                Finding(
                    layer=2,
                    rule="review_overdue",
                    path=p.path,
                    detail=f"pending since {created.isoformat()}: {p.summary[:160]}",
                )
            )
    for path in sorted(outlines):
        for field, value in sorted(outlines[path].dates.items()):
            day = _day(value)
            if day and day > today + timedelta(days=1):
                out.append(
                    Finding(
                        layer=2, rule="future_date", path=path, detail=f"{field}: {value} is in the future"
                    )
                )
    return out
