"""The deterministic promotion gates and citation verification, as pure functions over card + vault facts.

The gates decide; an LLM judge only advises. Each gate answers (passed, why) so a failure names the
gate, the card and the reason. `VaultFacts` is built from file texts by `build_facts`, so the rules
never touch the disk themselves. `check_card` is what must hold for a card to pass: the seven gates and
citation verification; it runs when the verdict is written and again at promotion.

Lineage: a source's lineage is its frontmatter `lineage:` or its folder (10-sources/<lineage>/); a
wiki page's is its frontmatter. Titles are unique per lineage, and a card never mixes lineages.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import PurePosixPath

from pydantic import BaseModel

from hippo_core.index.chunking import split_sections
from hippo_core.safety.scanners import find_injections, find_secrets
from hippo_core.vault import frontmatter
from hippo_core.vault.frontmatter import FrontmatterError
from hippo_core.vault.governance import CANONICAL_STATUSES
from hippo_core.vault.sources import slugify, source_lineage
from hippo_core.vault.vault_layout import SOURCES, WIKI
from hippo_core.wiki.cards import Card

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
        extra = fm.model_extra or {}
        if path.startswith(SOURCES + "/"):
            lineage[path] = source_lineage(path, extra)
        else:
            lineage[path] = None if extra.get("lineage") in (None, "") else str(extra["lineage"])
        if path.startswith(WIKI + "/") and fm.status in CANONICAL_STATUSES:
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
    """No canonical page of the card's lineage (other than the one this card would update) has the card's
    title or an alias: one term may exist once in each lineage."""
    for name in [card.title, *card.aliases]:
        clash = [
            p
            for p in facts.canonical_names.get(name.strip().lower(), [])
            if p != target and facts.lineage.get(p) == card.lineage
        ]
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


def anchor_problem(anchor: str, facts: VaultFacts) -> str | None:
    """Why an anchor does not resolve (None when it does): a URL, `path#heading` to an existing heading, or
    a whole document that has no headings."""
    if is_url(anchor):
        return None
    path, heading = split_anchor(anchor)
    secs = facts.sections.get(path)
    if secs is None:
        return f"no document {path!r} in {SOURCES}/ or {WIKI}/"
    if heading is None:
        return None if set(secs) <= {""} else f"{path} has headings: cite one as {path}#heading"
    return None if heading in secs else f"no heading {heading!r} in {path}"


def gate_citation_anchor(card: Card, facts: VaultFacts, target: str | None = None) -> GateResult:
    """The card cites something, and every citation anchor resolves now."""
    if not card.citations:
        return GateResult(
            gate="citation_anchor", passed=False, reason="no citation anchor (path#heading or URL)"
        )
    for c in card.citations:
        problem = anchor_problem(c.anchor, facts)
        if problem:
            return GateResult(gate="citation_anchor", passed=False, reason=f"citation {c.anchor}: {problem}")
    return GateResult(gate="citation_anchor", passed=True, reason="")


def gate_lineage(card: Card, facts: VaultFacts, target: str | None = None) -> GateResult:
    """A card never mixes lineages: the documents it cites or names as sources are all of its lineage when it
    has one, and of at most one lineage when it declares none."""
    cited = [split_anchor(c.anchor)[0] for c in card.citations if not is_url(c.anchor)]
    # documents the vault does not have are the source_copy and citation_anchor gates' concern
    docs = [p for p in dict.fromkeys([*cited, *card.sources]) if p in facts.lineage]
    if card.lineage:
        for path in docs:
            theirs = facts.lineage.get(path)
            if theirs != card.lineage:
                return GateResult(
                    gate="lineage",
                    passed=False,
                    reason=f"{path} belongs to lineage {theirs!r}, the card to {card.lineage!r}",
                )
        return GateResult(gate="lineage", passed=True, reason="")
    lineages = sorted({facts.lineage[p] for p in docs if facts.lineage.get(p)})
    if len(lineages) > 1:
        return GateResult(
            gate="lineage",
            passed=False,
            reason=f"the card cites documents of {len(lineages)} lineages ({', '.join(lineages)}); "
            "a card keeps to one",
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
        problem = anchor_problem(c.anchor, facts)
        if problem:
            out.append(CitationCheck(anchor=c.anchor, ok=False, reason=problem))
            continue
        path, heading = split_anchor(c.anchor)
        section = facts.sections[path].get(heading or "", "")
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


class CardCheck(BaseModel):
    """The deterministic part of a card's verdict: the gates and the citation checks."""

    gates: list[GateResult]
    citations: list[CitationCheck]

    @property
    def failures(self) -> list[str]:
        """One line per failing gate or citation, for people."""
        return [f"gate {g.gate}: {g.reason}" for g in self.gates if not g.passed] + [
            f"citation {c.anchor}: {c.reason}" for c in self.citations if not c.ok
        ]

    @property
    def passed(self) -> bool:
        return not self.failures


def check_card(
    card: Card, facts: VaultFacts, target: str | None, tokenize: Callable[[str], list[str]]
) -> CardCheck:
    """What must hold for a card to be offered and, again, to be promoted: the same check both times."""
    return CardCheck(gates=run_gates(card, facts, target), citations=verify_citations(card, facts, tokenize))


# --- where a card goes, and what was said about it ----------------------------------------------------
def page_lineage(fm: frontmatter.Frontmatter) -> str | None:
    lin = (fm.model_extra or {}).get("lineage")
    return None if lin in (None, "") else str(lin)


def protection(fm: frontmatter.Frontmatter) -> str | None:
    """Why the pipeline never overwrites a page (None when it may): a person's own page (`human_edit`) or
    one a person verified (`verified`)."""
    if fm.trust == "human_edit":
        return "human_edit"
    return "verified" if fm.status == "verified" else None


def promotion_target(
    card: Card, pages: list[tuple[str, frontmatter.Frontmatter, str]]
) -> tuple[str, str | None]:
    """Where the card goes, and why that page is protected (`human_edit` or `verified`: never overwritten,
    the card becomes a proposal for it), None when it is not.

    A page of the card's lineage with the card's title is updated where it lives now: a page a person moved
    to another sector folder stays there (the path is the truth). A page of another lineage is never the
    target: the same term gets its own page, with the lineage in its file name if the plain one is taken.
    """
    for path, fm, _ in pages:
        if (
            (fm.title or "").strip().lower() == card.title.strip().lower()
            and (fm.model_extra or {}).get("generated_by") is None
            and page_lineage(fm) == card.lineage
        ):
            return path, protection(fm)
    folder = f"{WIKI}/{card.sector or 'general'}"
    target = f"{folder}/{slugify(card.title)}.md"
    by_path = {path: fm for path, fm, _ in pages}
    if target in by_path and card.lineage and page_lineage(by_path[target]) != card.lineage:
        target = f"{folder}/{slugify(card.title)}-{slugify(card.lineage)}.md"
    return target, protection(by_path[target]) if target in by_path else None


def latest_verdicts(records: Iterable[Mapping[str, object]]) -> dict[str, dict]:
    """The newest verdict per card path, from the gate ledger's records in ledger order."""
    return {str(r["card"]): dict(r) for r in records if "card" in r}
