"""Approval by checkbox and promotion: fingerprints, dry run, auto-approve, human_edit pages, moved pages, janitor."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance, materialize

from hippo_assets.compile.assets import approval_requests, gate_verdicts, promotion_gates_hold
from hippo_assets.definitions import build_definitions
from hippo_assets.ingest.assets import sources
from hippo_core.vault import frontmatter
from hippo_core.wiki import approvals
from hippo_resources import Vault
from hippo_settings import HippoSettings
from tests.compile.conftest import compile_source, loop_resources, promote, run_janitor
from tests.conftest import make_vault

KIWI = "10-sources/kiwi-notes.md"
CARD = "30-reviews/staging/kiwi-형태소-분석기-메모.md"


@pytest.fixture
def loop(tmp_path: Path, embed_cache: Path) -> tuple[HippoSettings, DagsterInstance, Vault]:
    """A fixture vault (no inbox, not indexed: no related pages, sector general) with the kiwi source compiled offline."""
    root = make_vault(tmp_path, with_inbox=False)
    settings = HippoSettings(vault=root, home=tmp_path / "home", embed_cache_path=embed_cache)
    instance = DagsterInstance.ephemeral()
    assert compile_source(settings, instance, KIWI).success
    return settings, instance, Vault(root=str(root))


def approval_file(vault: Vault) -> Path:
    return sorted((vault.path / "30-reviews" / "approvals").glob("*.md"))[-1]


def tick_card(vault: Vault, card: str = CARD) -> None:
    f = approval_file(vault)
    text = f.read_text(encoding="utf-8")
    [line] = [ln for ln in approvals.parse("f", text) if ln.card == card and not ln.ticked]
    f.write_text(approvals.tick(text, line.line_no), encoding="utf-8")


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.parts
    }


def meta(result, asset: str) -> dict:
    [m] = [e for e in result.get_asset_materialization_events() if e.asset_key.to_user_string() == asset]
    return {k: getattr(v, "value", v) for k, v in m.materialization.metadata.items()}


def test_edited_card_is_rejected_at_approval_and_offered_again(loop) -> None:
    settings, instance, vault = loop
    tick_card(vault)
    card = vault.path / CARD
    card.write_text(
        card.read_text(encoding="utf-8").replace("## Key points", "Checked by hand.\n\n## Key points"),
        encoding="utf-8",
    )
    result = promote(settings, instance)
    assert result.success and meta(result, "canonical_wiki")["promoted"] == 0
    text = approval_file(vault).read_text(encoding="utf-8")
    assert "✗ rejected: the card changed since it was proposed (fingerprint" in text
    assert card.exists() and not list((vault.path / "20-wiki").rglob("kiwi-*"))
    # the edited card is judged again and offered on a new line with its new fingerprint
    again = materialize(
        [gate_verdicts, approval_requests, promotion_gates_hold],
        resources=loop_resources(settings),
        instance=instance,
    )
    assert again.success
    lines = approvals.parse("f", approval_file(vault).read_text(encoding="utf-8"))
    assert len(lines) == 2 and lines[0].fingerprint != lines[1].fingerprint and not lines[1].ticked


def test_dry_run_writes_nothing(loop) -> None:
    settings, instance, vault = loop
    tick_card(vault)
    vault.commit("tick")
    before, head = snapshot(vault.path), vault.git("rev-parse", "HEAD")
    defs = build_definitions(
        HippoSettings.from_env({"HIPPO_DRY_RUN": "1"}, vault=settings.vault, home=settings.home)
    )
    result = defs.resolve_job_def("promote_job").execute_in_process(
        instance=instance, asset_selection=[AssetKey("canonical_wiki")]
    )
    assert result.success
    m = meta(result, "canonical_wiki")
    assert m["dry_run"] is True and m["promoted"] == 1
    assert m["promoted_pages"][0]["target"] == "20-wiki/general/kiwi-형태소-분석기-메모.md"
    assert snapshot(vault.path) == before and vault.git("rev-parse", "HEAD") == head


def test_auto_approve_still_runs_the_gates(tmp_path: Path, embed_cache: Path) -> None:
    root = make_vault(tmp_path, with_inbox=False)
    settings = HippoSettings(vault=root, home=tmp_path / "home", embed_cache_path=embed_cache)
    instance = DagsterInstance.ephemeral()
    auto = {"ops": {"approval_requests": {"config": {"auto_approve": True}}}}
    assert compile_source(settings, instance, KIWI, run_config=auto).success
    [line] = approvals.parse("f", approval_file(Vault(root=str(root))).read_text(encoding="utf-8"))
    assert line.ticked and line.auto
    # the source disappears before promotion: the gates run again and refuse
    (root / KIWI).unlink()
    result = promote(settings, instance)
    assert meta(result, "canonical_wiki")["promoted"] == 0
    assert "✗ rejected at promotion: gate source_copy" in approval_file(Vault(root=str(root))).read_text(
        encoding="utf-8"
    )


def test_human_edit_page_becomes_a_proposal_target(loop) -> None:
    settings, instance, vault = loop
    page = vault.path / "20-wiki" / "data" / "kiwi.md"
    original = "---\ntype: entity\nstatus: canonical\ntrust: human_edit\ntitle: Kiwi 형태소 분석기 메모\n---\n\n# Kiwi\n\nMy own notes.\n"
    page.write_text(original, encoding="utf-8")
    tick_card(vault)
    result = promote(settings, instance)
    assert result.success and meta(result, "canonical_wiki")["proposals"] == 1
    assert page.read_text(encoding="utf-8") == original
    fm, _ = frontmatter.parse((vault.path / CARD).read_text(encoding="utf-8"))
    assert fm.status == "needs-review" and fm.model_extra["proposal_for"] == "20-wiki/data/kiwi.md"
    assert "is a human_edit page" in approval_file(vault).read_text(encoding="utf-8")


def test_moved_page_is_respected_and_sector_mismatch_reported(loop) -> None:
    settings, instance, vault = loop
    tick_card(vault)
    assert promote(settings, instance).success
    promoted = vault.path / "20-wiki" / "general" / "kiwi-형태소-분석기-메모.md"
    assert promoted.exists()
    # a person moves the page to another sector folder
    moved = vault.path / "20-wiki" / "korean" / promoted.name
    moved.parent.mkdir()
    shutil.move(promoted, moved)
    result = promote(settings, instance)
    [check] = [c for c in result.get_asset_check_evaluations() if c.check_name == "canonical_sectors_match"]
    assert not check.passed
    assert check.metadata["mismatches"].value == [
        {"path": "20-wiki/korean/kiwi-형태소-분석기-메모.md", "folder": "korean", "frontmatter": "general"}
    ]
    # the source is compiled again (forced): the same-title card updates the page where it now lives
    again = compile_source(
        settings, instance, KIWI, run_config={"ops": {"staging_cards": {"config": {"force": True}}}}
    )
    assert again.success
    tick_card(vault)
    m = meta(promote(settings, instance), "canonical_wiki")
    assert m["promoted_pages"][0]["target"] == "20-wiki/korean/kiwi-형태소-분석기-메모.md"
    assert not promoted.exists()


def test_janitor_archives_stale_and_duplicate_cards_and_frees_stuck_inbox_files(loop) -> None:
    settings, instance, vault = loop
    staging = vault.path / "30-reviews" / "staging"
    dup = staging / "copy.md"
    dup.write_text(
        (vault.path / CARD).read_text(encoding="utf-8").replace("title: Kiwi", "title: Copy of Kiwi"),
        encoding="utf-8",
    )
    # a document ingested as a source (its original kept beside the Markdown copy)
    html = (
        b"<html><body><h1>Quarterly report</h1><p>Revenue grew in every region this quarter, "
        b"led by the northern stores.</p></body></html>"
    )
    (vault.path / "00-inbox" / "report.html").write_bytes(html)
    assert materialize([sources], resources=loop_resources(settings), instance=instance).success
    # inbox files whose source copy already exists (a run stopped between copy and move): a note, a document
    text = (vault.path / KIWI).read_text(encoding="utf-8")
    (vault.path / "00-inbox" / "kiwi-again.md").write_text(text, encoding="utf-8")
    (vault.path / "00-inbox" / "report-again.html").write_bytes(html)
    result = run_janitor(settings, instance)
    m = meta(result, "janitor")
    assert m["archived"] == 1 and m["inbox_released"] == 2
    assert (vault.path / "30-reviews" / "archive" / "copy.md").exists() and not dup.exists()
    assert (vault.path / "00-inbox" / ".processed" / "kiwi-again.md").exists()
    assert (vault.path / "00-inbox" / ".processed" / "report-again.html").exists()
    released = {a["path"]: a["why"] for a in m["actions"] if a["action"] == "release-inbox"}
    assert released["00-inbox/report-again.html"].startswith("already ingested as 10-sources/report.html")
    # nothing is stale yet; far in the future, the unapproved card is archived (never deleted)
    m = meta(run_janitor(settings, instance, today="2099-01-01", max_age_days=14), "janitor")
    assert m["archived"] == 1 and "unapproved since" in m["actions"][0]["why"]
    archived = vault.path / "30-reviews" / "archive" / Path(CARD).name
    assert frontmatter.parse(archived.read_text(encoding="utf-8"))[0].status == "archived"
    ledger = list((vault.path / "90-system" / "janitor").glob("*.jsonl"))
    assert sum(len(f.read_text().splitlines()) for f in ledger) == 4


def test_blocking_gate_check_fails_when_an_offered_card_no_longer_passes(loop) -> None:
    from hippo_assets.compile.assets import promotion_gates_hold

    settings, instance, vault = loop
    assert promotion_gates_hold(vault=vault).passed
    (vault.path / KIWI).unlink()  # the source copy vanishes after the card was offered
    result = promotion_gates_hold(vault=vault)
    assert not result.passed
    assert result.metadata["gate_failures"].value == [
        {
            "card": CARD,
            "gate": "source_copy",
            "why": "source copy '10-sources/kiwi-notes.md' is not in 10-sources/",
        },
        {"card": CARD, "gate": "wikilink", "why": "none of its links resolves: 10-sources/kiwi-notes"},
        {
            "card": CARD,
            "gate": "citation_anchor",
            "why": "citation 10-sources/kiwi-notes.md#Kiwi 형태소 분석기 메모: "
            "no document '10-sources/kiwi-notes.md' in 10-sources/ or 20-wiki/",
        },
    ]
