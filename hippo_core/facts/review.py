"""Supersession review in the vault (issue 24 item 4): proposals as checkbox lines in `30-reviews/facts/`,
read back with the card approvals' parser (`hippo_core.wiki.approvals`), and the History block a
canonical page gets when a supersession is applied.

A proposal is four lines, one per answer, all carrying the proposal's fingerprint (its id and both
sources' content hashes), so a tick after either source changed is refused:

    ### caffeine cutoff · caffeine_cutoff
    - older: "The cutoff is 6 hours before bed." (since 2025-01-01) [[health/caffeine#Rule]]
    - newer: "The cutoff is 15:00." (since 2026-03-10) [[health/caffeine-2026#Rule]]
    - [ ] [[health/caffeine-2026#Rule|supersede]] · fp:0a1b2c3d4e5f
    - [ ] [[health/caffeine-2026#Rule|keep both]] · fp:0a1b2c3d4e5f
    - [ ] [[health/caffeine-2026#Rule|same fact]] · fp:0a1b2c3d4e5f
    - [ ] [[health/caffeine-2026#Rule|reject]] · fp:0a1b2c3d4e5f

Nothing is applied by a timeout: a proposal waits until a person ticks; the review index lists the
overdue ones first.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel

from hippo_core.facts.model import Fact
from hippo_core.vault import frontmatter
from hippo_core.wiki import approvals

FACT_REVIEWS = "30-reviews/facts"
REVIEW_INDEX = f"{FACT_REVIEWS}/index.md"
HISTORY_STAGING = f"{FACT_REVIEWS}/staging"

Choice = Literal["supersede", "keep_both", "same", "reject"]
LABELS: dict[str, Choice] = {
    "supersede": "supersede",
    "keep both": "keep_both",
    "same fact": "same",
    "reject": "reject",
}
CHOICE_LABEL: dict[Choice, str] = {v: k for k, v in LABELS.items()}


class Proposal(BaseModel):
    """A PENDING supersession (or a pair the rules could not place), as the store holds it."""

    proposal_id: str
    older: Fact
    newer: Fact
    rule: str
    reason: str | None = None
    fingerprint: str
    created_at: str
    state: str = "pending"
    decided_at: str | None = None
    decided_by: str | None = None
    note: str | None = None


class Tick(BaseModel):
    """A ticked, unanswered answer line."""

    file: str
    line_no: int
    fingerprint: str
    choice: Choice


def review_file(date: str) -> str:
    return f"{FACT_REVIEWS}/{date}.md"


def _link(anchor: str) -> str:
    path, _, heading = anchor.partition("#")
    target = path.removesuffix(".md") + (f"#{heading}" if heading else "")
    return f"[[{target.replace('|', '/').replace(']', ')')}]]"


def _quote(text: str) -> str:
    return '"' + " ".join(text.split()).replace('"', "'")[:300] + '"'


def _fact_line(role: str, f: Fact) -> str:
    since = f"since {f.valid_at.label()}" if f.valid_at.known else "date unknown"
    anchor = f.provenance[0].anchor if f.provenance else ""
    return f"- {role}: {_quote(f.statement)} ({since}) {_link(anchor)}"


def proposal_block(p: Proposal) -> str:
    """The heading, both statements with dates and links, and the four answer lines."""
    subject = p.newer.subject_label or p.newer.subject
    q = p.newer.qualifiers
    extra = " · ".join(x for x in (q.edition, q.lineage, q.project) if x)
    anchor = p.newer.provenance[0].anchor if p.newer.provenance else p.newer.subject
    path, _, heading = anchor.partition("#")
    card = path.removesuffix(".md") + (f"#{heading}" if heading else "")
    lines = [
        f"### {subject} · {p.newer.predicate}" + (f" · {extra}" if extra else ""),
        _fact_line("older", p.older),
        _fact_line("newer", p.newer),
        f"- why: {' '.join((p.reason or p.rule).split())[:300]} ({p.rule})",
        *(approvals.render_line(card, label, p.fingerprint) for label in LABELS),
    ]
    return "\n".join(lines) + "\n"


def new_review_file(date: str) -> str:
    fields = {"type": "map", "status": "reference", "trust": "human_edit", "title": f"Fact reviews {date}"}
    return frontmatter.render(
        fields,
        f"# Fact reviews {date}\n\n"
        "Each proposal says one value replaced another. Tick one box per proposal: **supersede** (the older\n"
        "value stops holding when the newer one starts), **keep both** (both hold), **same fact** (one fact\n"
        "said twice) or **reject** (the newer statement is wrong). Nothing is applied until you tick; if a\n"
        "source changes after the proposal, the tick is refused and the reason written on its line.\n\n",
    )


def add_proposals(existing: str | None, date: str, items: list[Proposal]) -> str:
    text = existing if existing is not None else new_review_file(date)
    if not text.endswith("\n"):
        text += "\n"
    return text + "".join(f"\n{proposal_block(p)}" for p in items)


def ticks(file: str, text: str) -> list[Tick]:
    """Ticked, unanswered answer lines of a review file (read with the approvals parser)."""
    out = []
    for line in approvals.parse(file, text):
        choice = LABELS.get(line.title.strip().casefold())
        if line.state == "ticked" and choice is not None:
            out.append(Tick(file=file, line_no=line.line_no, fingerprint=line.fingerprint, choice=choice))
    return out


def open_fingerprints(text: str, file: str = "") -> set[str]:
    """Fingerprints that have an answer line not yet answered (open or ticked)."""
    return {ln.fingerprint for ln in approvals.parse(file, text) if ln.state != "answered"}


def age_days(created_at: str, today: str) -> int:
    try:
        start = dt.date.fromisoformat(created_at[:10])
        return (dt.date.fromisoformat(today) - start).days
    except ValueError:
        return 0


def index_inner(items: list[Proposal], where: dict[str, str], today: str, overdue_days: int) -> str:
    """The review index (inside hippo markers): pending proposals, the overdue ones first, oldest first."""
    if not items:
        return "No supersession waits for review."
    ranked = sorted(items, key=lambda p: (age_days(p.created_at, today) < overdue_days, p.created_at))
    lines = [
        f"{len(items)} proposal(s) wait for review; overdue after {overdue_days} days (never applied by a timeout).",
        "",
    ]
    for p in ranked:
        days = age_days(p.created_at, today)
        flag = "**overdue** · " if days >= overdue_days else ""
        file = where.get(p.fingerprint)
        link = f"[[{file.removesuffix('.md')}]]" if file else "(not listed yet)"
        subject = p.newer.subject_label or p.newer.subject
        lines.append(
            f"- {flag}{subject} · {p.newer.predicate}: {_quote(p.older.object.text)} → {_quote(p.newer.object.text)}"
            f" · {days} day(s) · {link}"
        )
    return "\n".join(lines)


def history_inner(subject: str, chain: list[Fact]) -> str:
    """A History section for a canonical page: every value of the subject, oldest first, with its span."""
    lines = ["## History", ""]
    for f in chain:
        if f.status in ("merged", "rejected"):
            continue
        start = f.valid_at.label() if f.valid_at.known else "?"
        end = f.invalid_at.label() if f.invalid_at.known else "now"
        anchor = f.provenance[0].anchor if f.provenance else ""
        lines.append(f"- {start} – {end}: {f.predicate.replace('_', ' ')} = {f.object.text} {_link(anchor)}")
    lines.append("")
    lines.append(f"_Generated from the fact store for {subject}; edit outside the markers._")
    return "\n".join(lines)
