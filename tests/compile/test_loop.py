"""The whole loop on a real vault, offline: inbox → staging → approval → canonical → index pages → search."""

from __future__ import annotations

from pathlib import Path

from dagster import DagsterInstance

from hippo_core.vault import frontmatter
from hippo_core.wiki import approvals
from hippo_resources import Vault
from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import open_engine
from hippo_settings import HippoSettings
from tests.compile.conftest import compile_all, promote
from tests.conftest import run_graph


def _approval_file(vault: Path) -> Path:
    [f] = sorted((vault / "30-reviews" / "approvals").glob("*.md"))
    return f


def test_inbox_to_canonical_page_found_above_its_source(settings: HippoSettings) -> None:
    instance = DagsterInstance.ephemeral()
    assert run_graph(settings, instance).success  # ingest + index: the compiler's search needs the index
    vault = Vault(root=str(settings.vault))
    compiled = compile_all(settings, instance)
    assert len(compiled) == 3  # two inbox files and the fixture source
    staged = sorted((settings.vault / "30-reviews" / "staging").glob("*.md"))
    assert len(staged) == 3
    coffee = settings.vault / "30-reviews" / "staging" / "커피냅-실험.md"
    fm, body = frontmatter.parse(coffee.read_text(encoding="utf-8"))
    assert (fm.status, fm.trust, fm.type) == ("draft", "llm_summary", "source-summary")
    assert fm.model_extra["compiler"] == "offline-extractive/1"
    assert fm.sector == "health"  # from the related canonical page our own search found
    assert "[[20-wiki/health/sleep-hygiene|수면 위생]]" in body
    assert "## Promotion meta" in body
    # a second compile of the same sources makes no new card and no call
    assert compile_all(settings, instance) == []

    approval = _approval_file(settings.vault)
    lines = approvals.parse("x", approval.read_text(encoding="utf-8"))
    assert {ln.card for ln in lines} == {f"30-reviews/staging/{p.name}" for p in staged}
    assert not any(ln.ticked for ln in lines)
    head_before = vault.git("rev-parse", "HEAD").strip()

    # a person ticks the coffee-nap box (exactly what Obsidian writes)
    text = approval.read_text(encoding="utf-8")
    [line] = [ln for ln in lines if ln.card.endswith("커피냅-실험.md")]
    approval.write_text(approvals.tick(text, line.line_no), encoding="utf-8")
    result = promote(settings, instance)
    assert result.success
    page = settings.vault / "20-wiki" / "health" / "커피냅-실험.md"
    assert page.exists() and not coffee.exists()
    pfm, _ = frontmatter.parse(page.read_text(encoding="utf-8"))
    assert pfm.status == "canonical"
    assert "promote | 커피냅 실험" in (settings.vault / "log.md").read_text(encoding="utf-8")
    assert "✓ promoted → [[20-wiki/health/커피냅-실험]]" in approval.read_text(encoding="utf-8")
    assert list((settings.vault / "90-system" / "promotions").glob("*.jsonl"))
    # exactly one commit for the promotion run, index pages included
    log = vault.git("log", "--format=%s", f"{head_before}..HEAD").splitlines()
    assert len(log) == 1 and log[0].startswith(
        "promote: 1 page(s) (커피냅 실험); index pages: HOME.md, index.md"
    )
    home = (settings.vault / "HOME.md").read_text(encoding="utf-8")
    assert "approvals waiting: 2" in home and "커피냅 실험" in home
    assert "[[20-wiki/health/커피냅-실험|커피냅 실험]]" in (settings.vault / "index.md").read_text(
        encoding="utf-8"
    )
    assert (settings.vault / "20-wiki" / "health" / "_hub.md").exists()

    # index pages are byte-identical when nothing changed
    before = {p: (settings.vault / p).read_bytes() for p in ("HOME.md", "index.md", "20-wiki/health/_hub.md")}
    head = vault.git("rev-parse", "HEAD").strip()
    assert promote(settings, instance).success
    assert {p: (settings.vault / p).read_bytes() for p in before} == before
    assert vault.git("rev-parse", "HEAD").strip() == head

    # re-index and search: the canonical page ranks above its raw source
    assert run_graph(settings, instance).success
    response = open_engine(settings).search(SearchRequest(query="커피냅 실험 낮잠", limit=10))
    paths = [h.path for h in response.results]
    source = next(p for p in paths if p.startswith("10-sources/coffee-nap"))
    assert paths.index("20-wiki/health/커피냅-실험.md") < paths.index(source), paths
