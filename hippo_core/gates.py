"""The deterministic promotion gates and citation verification, as pure functions over card + vault facts.

The gates decide; an LLM judge only advises. Each gate answers (passed, why) so a failure names the
gate, the card and the reason. `VaultFacts` is built from file texts by `build_facts`, so the rules
never touch the disk themselves.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import PurePosixPath

from pydantic import BaseModel

from hippo_core import frontmatter
from hippo_core.cards import Card
from hippo_core.chunking import split_sections
from hippo_core.frontmatter import FrontmatterError
from hippo_core.scanners import find_injections, find_secrets
from hippo_core.sources import slugify
from hippo_core.vault_layout import SOURCES, WIKI

GATES: tuple[str, ...] = (
    "promotion_meta",
    "unique_title",
    "source_copy",
    "wikilink",
    "citation_anchor",
    "lineage",
    "clean",
)


class GateResult(BaseModel):
    gate: str
    passed: bool
    reason: str


class VaultFacts(BaseModel):
    """What the gates need to know about the vault, read once per run."""

    files: list[str]
    sections: dict[str, dict[str, str]]  # path → heading ('' = text before the first heading) → text
    titles: dict[str, str]  # path → title
    canonical_names: dict[str, list[str]]  # lower-cased title/alias of a canonical page → paths
    trust: dict[str, str]
    lineage: dict[str, str | None]

    def resolve_link(self, target: str) -> str | None:
        """Obsidian resolution: a vault path (with or without .md), else a unique file name."""
        target = target.strip().removesuffix(".md")
        files = set(self.files)
        if f"{target}.md" in files:
            return f"{target}.md"
        stem = PurePosixPath(target).name
        hits = [f for f in self.files if PurePosixPath(f).stem == stem]
        return hits[0] if len(hits) == 1 else None


def build_facts(texts: Mapping[str, str]) -> VaultFacts:
    """Facts from every Markdown file of the vault (path → text); unreadable frontmatter is skipped."""
    sections: dict[str, dict[str, str]] = {}
    titles: dict[str, str] = {}
    names: dict[str, list[str]] = {}
    trust: dict[str, str] = {}
    lineage: dict[str, str | None] = {}
    for path, text in texts.items():
        if not path.startswith((SOURCES + "/", WIKI + "/")):
            continue
        try:
            fm, body = frontmatter.parse(text, path)
        except FrontmatterError:
            continue
        secs: dict[str, str] = {}
        for s in split_sections(body):
            key = s.heading or ""
            secs[key] = f"{secs[key]}\n\n{s.text}" if key in secs else s.text
        sections[path] = secs
        titles[path] = fm.title or PurePosixPath(path).stem
        trust[path] = fm.trust
        lin = (fm.model_extra or {}).get("lineage")
        lineage[path] = None if lin is None else str(lin)
        if path.startswith(WIKI + "/") and fm.status == "canonical":
            for name in [titles[path], *fm.aliases]:
                names.setdefault(name.strip().lower(), []).append(path)
    return VaultFacts(
        files=sorted(texts),
        sections=sections,
        titles=titles,
        canonical_names=names,
        trust=trust,
        lineage=lineage,
    )


def split_anchor(anchor: str) -> tuple[str, str | None]:
    path, sep, heading = anchor.partition("#")
    return path.strip(), (heading.strip() if sep else None)


def is_url(anchor: str) -> bool:
    return anchor.startswith(("http://", "https://"))


# --- the seven gates --------------------------------------------------------------------------------
def gate_promotion_meta(card: Card, facts: VaultFacts, target: str | None = None) -> GateResult:
    ok = card.has_promotion_meta
    return GateResult(
        gate="promotion_meta", passed=ok, reason="" if ok else "no `## Promotion meta` section with entries"
    )


def gate_unique_title(card: Card, facts: VaultFacts, target: str | None = None) -> GateResult:
    """No canonical page (other than the one this card would update) has the card's title or an alias."""
    for name in [card.title, *card.aliases]:
        clash = [p for p in facts.canonical_names.get(name.strip().lower(), []) if p != target]
        if clash:
            return GateResult(
                gate="unique_title",
                passed=False,
                reason=f"canonical page {clash[0]} already has the name {name!r}",
            )
    return GateResult(gate="unique_title", passed=True, reason="")


def gate_source_copy(card: Card, facts: VaultFacts, target: str | None = None) -> GateResult:
    if not card.sources:
        return GateResult(gate="source_copy", passed=False, reason="the card names no source")
    files = set(facts.files)
    for src in card.sources:
        if not src.startswith(SOURCES + "/") or src not in files:
            return GateResult(
                gate="source_copy", passed=False, reason=f"source copy {src!r} is not in {SOURCES}/"
            )
    return GateResult(gate="source_copy", passed=True, reason="")


def gate_wikilink(card: Card, facts: VaultFacts, target: str | None = None) -> GateResult:
    links = card.wikilinks()
    if any(facts.resolve_link(t) for t in links):
        return GateResult(gate="wikilink", passed=True, reason="")
    why = f"none of its links resolves: {', '.join(links[:5])}" if links else "the card has no [[wikilink]]"
    return GateResult(gate="wikilink", passed=False, reason=why)


def gate_citation_anchor(card: Card, facts: VaultFacts, target: str | None = None) -> GateResult:
    for c in card.citations:
        path, heading = split_anchor(c.anchor)
        if is_url(c.anchor) or (heading is not None and path):
            return GateResult(gate="citation_anchor", passed=True, reason="")
        if heading is None and path in facts.sections and set(facts.sections[path]) <= {""}:
            return GateResult(gate="citation_anchor", passed=True, reason="")  # a document without headings
    return GateResult(gate="citation_anchor", passed=False, reason="no citation anchor (path#heading or URL)")


def gate_lineage(card: Card, facts: VaultFacts, target: str | None = None) -> GateResult:
    """A card that declares a lineage cites only documents of that lineage."""
    if not card.lineage:
        return GateResult(gate="lineage", passed=True, reason="")
    for c in card.citations:
        if is_url(c.anchor):
            continue
        path, _ = split_anchor(c.anchor)
        theirs = facts.lineage.get(path)
        if theirs != card.lineage:
            return GateResult(
                gate="lineage",
                passed=False,
                reason=f"citation {c.anchor} belongs to lineage {theirs!r}, the card to {card.lineage!r}",
            )
    return GateResult(gate="lineage", passed=True, reason="")


def gate_clean(card: Card, facts: VaultFacts, target: str | None = None) -> GateResult:
    secrets = find_secrets(card.text)
    if secrets:
        return GateResult(gate="clean", passed=False, reason=f"secret-shaped string ({secrets[0].kind})")
    injections = find_injections(card.text)
    if injections:
        f = injections[0]
        return GateResult(
            gate="clean", passed=False, reason=f"prompt-injection pattern ({f.kind}: {f.excerpt!r})"
        )
    return GateResult(gate="clean", passed=True, reason="")


GATE_FUNCTIONS: dict[str, Callable[[Card, VaultFacts, str | None], GateResult]] = {
    "promotion_meta": gate_promotion_meta,
    "unique_title": gate_unique_title,
    "source_copy": gate_source_copy,
    "wikilink": gate_wikilink,
    "citation_anchor": gate_citation_anchor,
    "lineage": gate_lineage,
    "clean": gate_clean,
}


def run_gates(card: Card, facts: VaultFacts, target: str | None = None) -> list[GateResult]:
    """Every gate, in order (all are evaluated, so a report lists every failure)."""
    return [GATE_FUNCTIONS[name](card, facts, target) for name in GATES]


def gate_row(card: Card, results: list[GateResult]) -> dict[str, object]:
    """One row of the gate-facts table the GX suite validates."""
    row: dict[str, object] = {"card": card.path}
    for r in results:
        row[f"gate_{r.gate}"] = r.passed
        row[f"why_{r.gate}"] = r.reason
    return row


# --- citation verification --------------------------------------------------------------------------
class CitationCheck(BaseModel):
    anchor: str
    ok: bool
    reason: str


def _norm(text: str) -> str:
    text = re.sub(r"[*_`>\[\]]", "", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def verify_citations(
    card: Card, facts: VaultFacts, tokenize: Callable[[str], list[str]], min_overlap: float = 0.5
) -> list[CitationCheck]:
    """Each cited anchor resolves to an existing heading, and that section holds the quote or the claim's terms."""
    out: list[CitationCheck] = []
    for c in card.citations:
        if is_url(c.anchor):
            out.append(CitationCheck(anchor=c.anchor, ok=True, reason="URL (not fetched)"))
            continue
        path, heading = split_anchor(c.anchor)
        secs = facts.sections.get(path)
        if secs is None:
            out.append(
                CitationCheck(
                    anchor=c.anchor, ok=False, reason=f"no document {path!r} in 10-sources/ or 20-wiki/"
                )
            )
            continue
        key = heading if heading is not None else ""
        if key not in secs:
            out.append(CitationCheck(anchor=c.anchor, ok=False, reason=f"no heading {heading!r} in {path}"))
            continue
        section = secs[key]
        if c.quote:
            ok = _norm(c.quote) in _norm(section)
            out.append(
                CitationCheck(
                    anchor=c.anchor, ok=ok, reason="" if ok else "quoted span is not in the cited section"
                )
            )
            continue
        if c.claim:
            terms = set(tokenize(c.claim))
            have = set(tokenize(section))
            share = len(terms & have) / len(terms) if terms else 0.0
            ok = share >= min_overlap
            why = "" if ok else f"only {share:.0%} of the claim's key terms are in the cited section"
            out.append(CitationCheck(anchor=c.anchor, ok=ok, reason=why))
            continue
        out.append(
            CitationCheck(anchor=c.anchor, ok=True, reason="anchor resolves (no quote or claim to check)")
        )
    return out


# --- where a card goes, and what was said about it ----------------------------------------------------
def promotion_target(card: Card, pages: list[tuple[str, frontmatter.Frontmatter, str]]) -> tuple[str, bool]:
    """Where the card goes, and whether that is a human_edit page (never overwritten).

    A page with the card's title is updated where it lives now: a page a person moved to another sector
    folder stays there (the path is the truth).
    """
    for path, fm, _ in pages:
        if (fm.title or "").strip().lower() == card.title.strip().lower() and (fm.model_extra or {}).get(
            "generated_by"
        ) is None:
            return path, fm.trust == "human_edit"
    target = f"{WIKI}/{card.sector or 'general'}/{slugify(card.title)}.md"
    for path, fm, _ in pages:
        if path == target:
            return path, fm.trust == "human_edit"
    return target, False


def latest_verdicts(records: Iterable[Mapping[str, object]]) -> dict[str, dict]:
    """The newest verdict per card path, from the gate ledger's records in ledger order."""
    return {str(r["card"]): dict(r) for r in records if "card" in r}
