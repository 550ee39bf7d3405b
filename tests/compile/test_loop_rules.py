"""The compile loop's rules, each on a purpose-built card or vault: lineage from the source, no mixed
lineages, titles unique per lineage, `verified` names who verified, citations that resolve (at verdict
time and at promotion), one git commit per compile run and per promote run, and approval lines that
link to the page a card became."""

from __future__ import annotations

from pathlib import Path

import pytest
from dagster import DagsterInstance

from hippo_core.vault import frontmatter
from hippo_core.vault.frontmatter import FrontmatterError
from hippo_core.wiki import approvals
from hippo_core.wiki.cards import CardDraft, Citation, parse_card, render_card
from hippo_core.wiki.compile_offline import offline_compile
from hippo_core.wiki.gates import build_facts, promotion_target, run_gates
from hippo_resources import Vault
from hippo_settings import HippoSettings
from tests.compile.conftest import compile_source, promote
from tests.conftest import make_vault

TERM = "---\ntitle: Term\n---\n\n# Term\n\n## Meaning\n\nThe term means the first pillar.\n"
TEXTS = {
    "10-sources/gwanbeop/term.md": TERM,  # lineage from its folder
    "10-sources/notes.md": "---\ntitle: Notes\nlineage: sangni\n---\n\n# Notes\n\n## Meaning\n\nSangni reads it otherwise.\n",
    "10-sources/plain.md": "---\ntitle: Plain\n---\n\n# Plain\n\n## Meaning\n\nNo lineage here.\n",
    "20-wiki/terms/term.md": "---\ntype: concept\nstatus: canonical\ntrust: llm_summary\ntitle: Term\n"
    "lineage: gwanbeop\n---\n\n# Term\n\n## Meaning\n\nThe first pillar.\n",
    "20-wiki/terms/checked.md": "---\ntype: concept\nstatus: verified\nverified_by: kim\ntrust: llm_summary\n"
    "title: Checked\n---\n\n# Checked\n\n## Meaning\n\nChecked by a person.\n",
}
FACTS = build_facts(TEXTS)


def card(title: str, lineage: str | None, cites: list[str], sources: list[str] | None = None) -> str:
    draft = CardDraft(
        type="concept",
        title=title,
        sector="terms",
        body=f"{title}, see [[10-sources/plain|Plain]].",
        citations=[Citation(anchor=a) for a in cites],
        confidence=0.8,
        lineage=lineage,
    )
    return render_card(
        draft,
        sources=sources or [cites[0].split("#")[0]],
        compiler="test",
        trust="llm_summary",
        created="2026-12-01",
        source_doc=cites[0].split("#")[0],
    )


def failing(text: str) -> dict[str, str]:
    return {
        g.gate: g.reason
        for g in run_gates(parse_card("30-reviews/staging/x.md", text), FACTS)
        if not g.passed
    }


# --- pure rules --------------------------------------------------------------------------------------------


def test_the_offline_compiler_takes_the_lineage_of_the_source_or_its_folder() -> None:
    assert offline_compile("10-sources/gwanbeop/term.md", TERM, []).cards[0].lineage == "gwanbeop"
    notes = TEXTS["10-sources/notes.md"]
    assert offline_compile("10-sources/notes.md", notes, []).cards[0].lineage == "sangni"
    assert offline_compile("10-sources/plain.md", TEXTS["10-sources/plain.md"], []).cards[0].lineage is None
    assert FACTS.lineage["10-sources/gwanbeop/term.md"] == "gwanbeop"


def test_a_card_citing_two_lineages_is_blocked_even_when_it_declares_none() -> None:
    mixed = card("Mixed", None, ["10-sources/gwanbeop/term.md#Meaning", "10-sources/notes.md#Meaning"])
    assert "2 lineages (gwanbeop, sangni)" in failing(mixed)["lineage"]
    # one lineage plus documents of none is not a mix; a declared lineage must match every document
    assert "lineage" not in failing(
        card("One", None, ["10-sources/gwanbeop/term.md#Meaning", "10-sources/plain.md#Meaning"])
    )
    wrong = card("Wrong", "sangni", ["10-sources/gwanbeop/term.md#Meaning"], ["10-sources/notes.md"])
    assert "10-sources/gwanbeop/term.md belongs to lineage 'gwanbeop'" in failing(wrong)["lineage"]


def test_a_title_is_unique_per_lineage() -> None:
    same = card("Term", "gwanbeop", ["10-sources/gwanbeop/term.md#Meaning"])
    other = card("Term", "sangni", ["10-sources/notes.md#Meaning"])
    assert "20-wiki/terms/term.md" in failing(same)["unique_title"]
    assert failing(other) == {}  # the same term in another lineage
    pages = [(p, *frontmatter.parse(t, p)) for p, t in TEXTS.items() if p.startswith("20-wiki/")]
    assert promotion_target(parse_card("s.md", same), pages) == ("20-wiki/terms/term.md", None)
    # another lineage never updates that page: it gets its own, named with its lineage
    assert promotion_target(parse_card("s.md", other), pages) == ("20-wiki/terms/term-sangni.md", None)


def test_verified_requires_verified_by_and_a_verified_page_is_never_overwritten() -> None:
    unsigned = TEXTS["20-wiki/terms/checked.md"].replace("verified_by: kim\n", "")
    with pytest.raises(FrontmatterError, match="status verified requires verified_by"):
        frontmatter.parse(unsigned, "20-wiki/terms/checked.md")
    with pytest.raises(FrontmatterError, match="verified_by"):
        parse_card(
            "30-reviews/staging/x.md",
            card("X", None, ["10-sources/plain.md#Meaning"]).replace("status: draft", "status: verified"),
        )
    assert FACTS.canonical_names["checked"] == ["20-wiki/terms/checked.md"]  # canonical knowledge
    pages = [(p, *frontmatter.parse(t, p)) for p, t in TEXTS.items() if p.startswith("20-wiki/")]
    update = parse_card("s.md", card("Checked", None, ["10-sources/plain.md#Meaning"]))
    assert promotion_target(update, pages) == ("20-wiki/terms/checked.md", "verified")


def test_the_citation_gate_checks_that_every_anchor_resolves() -> None:
    assert failing(card("Fine", None, ["10-sources/plain.md#Meaning"])) == {}
    missing = failing(card("Gone", None, ["10-sources/plain.md#Nope"]))["citation_anchor"]
    assert missing == "citation 10-sources/plain.md#Nope: no heading 'Nope' in 10-sources/plain.md"
    whole = failing(card("Whole", None, ["10-sources/plain.md"]))["citation_anchor"]
    assert "has headings: cite one" in whole


# --- on a real vault ---------------------------------------------------------------------------------------

KIWI = "10-sources/kiwi-notes.md"
KIWI_CARD = "30-reviews/staging/kiwi-형태소-분석기-메모.md"


@pytest.fixture
def fresh(tmp_path: Path, embed_cache: Path) -> tuple[HippoSettings, DagsterInstance, Vault]:
    root = make_vault(tmp_path, with_inbox=False)
    settings = HippoSettings(vault=root, home=tmp_path / "home", embed_cache_path=embed_cache)
    return settings, DagsterInstance.ephemeral(), Vault(root=str(root))


def new_commits(vault: Vault, since: str) -> list[str]:
    return vault.git("log", "--format=%s", f"{since}..HEAD").splitlines()


def tick(vault: Vault, card_path: str) -> None:
    [f] = sorted((vault.path / "30-reviews" / "approvals").glob("*.md"))
    text = f.read_text(encoding="utf-8")
    [line] = [ln for ln in approvals.parse("f", text) if ln.card == card_path]
    f.write_text(approvals.tick(text, line.line_no), encoding="utf-8")


def test_a_compile_run_and_a_promote_run_make_one_commit_each(fresh) -> None:
    settings, instance, vault = fresh
    head = vault.git("rev-parse", "HEAD").strip()
    assert compile_source(settings, instance, KIWI).success
    assert new_commits(vault, head) == [
        f"compile: 1 card(s) from {KIWI}; gates: 1 verdict(s); approvals: 1 card(s) to review"
    ]
    assert vault.git("status", "--porcelain") == ""
    tick(vault, KIWI_CARD)
    head = vault.git("rev-parse", "HEAD").strip()
    assert promote(settings, instance).success
    [message] = new_commits(vault, head)
    assert message.startswith("promote: 1 page(s) (") and "; index pages: HOME.md, index.md" in message
    assert vault.git("status", "--porcelain") == ""


def test_after_promotion_the_approval_line_links_to_the_page(fresh) -> None:
    settings, instance, vault = fresh
    assert compile_source(settings, instance, KIWI).success
    tick(vault, KIWI_CARD)
    assert promote(settings, instance).success
    page = "20-wiki/general/kiwi-형태소-분석기-메모"
    [f] = sorted((vault.path / "30-reviews" / "approvals").glob("*.md"))
    [line] = approvals.parse("f", f.read_text(encoding="utf-8"))
    assert line.card == f"{page}.md" and vault.exists(line.card)  # the staging card is gone; the link is not
    assert line.title == "Kiwi 형태소 분석기 메모" and line.outcome.startswith(f"✓ promoted → [[{page}]]")


def test_a_citation_that_stopped_resolving_is_rejected_at_promotion(fresh) -> None:
    settings, instance, vault = fresh
    assert compile_source(settings, instance, KIWI).success
    tick(vault, KIWI_CARD)
    source = vault.path / KIWI  # a person renames the cited heading after the card was approved
    source.write_text(
        source.read_text(encoding="utf-8").replace("# Kiwi 형태소 분석기 메모", "# Kiwi 메모"),
        encoding="utf-8",
    )
    assert promote(settings, instance).success
    [f] = sorted((vault.path / "30-reviews" / "approvals").glob("*.md"))
    [line] = approvals.parse("f", f.read_text(encoding="utf-8"))
    assert line.outcome.startswith(
        "✗ rejected at promotion: gate citation_anchor: citation 10-sources/kiwi-notes.md#"
    )
    assert "no heading 'Kiwi 형태소 분석기 메모'" in line.outcome
    assert not list((vault.path / "20-wiki").rglob("kiwi-*")) and vault.exists(KIWI_CARD)


def test_the_card_carries_the_lineage_of_a_source_filed_in_a_lineage_folder(fresh) -> None:
    settings, instance, vault = fresh
    vault.write_text("10-sources/gwanbeop/term.md", TERM)
    vault.commit("a person files a source in its lineage's folder")
    assert compile_source(settings, instance, "10-sources/gwanbeop/term.md").success
    fm, _ = frontmatter.parse((vault.path / "30-reviews/staging/term.md").read_text(encoding="utf-8"))
    assert fm.model_extra["lineage"] == "gwanbeop"
    [line] = approvals.parse(
        "f", next((vault.path / "30-reviews/approvals").glob("*.md")).read_text(encoding="utf-8")
    )
    assert line.card == "30-reviews/staging/term.md"  # it passed every gate, lineage included
