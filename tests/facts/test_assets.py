"""The fact assets on a real vault (files + git) and a real Dagster run: the deterministic reader, subjects
resolved through aliases, the blocking checks, review lines ticked like a person does, a tick refused after
its source changed, the History block, one git commit per run, and no key = no LLM, no failure."""

from __future__ import annotations

from pathlib import Path

import pytest
from dagster import DagsterInstance, materialize

from hippo_assets.facts.assets import (
    fact_intervals_are_ordered,
    fact_reviews,
    facts,
    facts_have_provenance,
    one_value_per_single_slot,
)
from hippo_cli.vault_init import init_vault
from hippo_core.facts.review import REVIEW_INDEX, review_file
from hippo_core.wiki import approvals
from hippo_resources import LLM, Vault, build_resources
from hippo_settings import HippoSettings

PAGE = "20-wiki/health/caffeine-cutoff.md"
OLD_NOTE = "notes/2025-01-01.md"
NEW_NOTE = "notes/2026-03-10.md"


def note(fields: str, body: str) -> str:
    return f"---\n{fields.strip()}\n---\n{body}"


NOTES = {
    PAGE: note(
        "title: Caffeine cutoff\naliases: [카페인 컷오프]\ntype: concept\nstatus: canonical\ntrust: llm_summary",
        "# Caffeine cutoff\n\nNo coffee late in the day.\n",
    ),
    OLD_NOTE: note(
        "date: 2025-01-01\nsubject: Caffeine cutoff", "# Rule\n\n- caffeine_cutoff:: 6 hours before bed\n"
    ),
    NEW_NOTE: note("date: 2026-03-10\nsubject: 카페인 컷오프", "# 규칙\n\n- caffeine_cutoff:: 15:00\n"),
    "notes/kim.md": note(
        "title: Kim\ndate: 2024-05-01\nfacts:\n  - {predicate: role, object: mentor, since: last spring}\n"
        "  - {predicate: role, object: team lead, since: 2025-02}",
        "# Kim\n\n```\nrole:: not a fact inside a fence\n```\n",
    ),
    "notes/home.md": note("title: Me\ndate: 2020-01-01", "# Home\n\n- lives_in:: Seoul\n"),
}


@pytest.fixture
def env(tmp_path: Path) -> HippoSettings:
    vault = tmp_path / "vault"
    init_vault(vault)
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    Vault(root=str(vault)).commit("notes")
    return HippoSettings(vault=vault, home=tmp_path / "home")


def run(settings: HippoSettings, *assets, checks=()):  # noqa: ANN201
    res = {**build_resources(settings), "llm": LLM(api_key=None)}
    return materialize([*assets, *checks], resources=res, instance=DagsterInstance.ephemeral())


def commits(vault: Vault) -> int:
    return int(vault.git("rev-list", "--count", "HEAD").strip())


def meta(result, key: str):  # noqa: ANN201
    (mat,) = [m for m in result.asset_materializations_for_node(key)]
    return {k: v.value for k, v in mat.metadata.items()}


def tick(vault: Vault, label: str, card: str = "") -> str:
    rel = review_file_of(vault)
    text = vault.read_text(rel)
    line = next(
        ln
        for ln in approvals.parse(rel, text)
        if ln.title == label and ln.state == "open" and ln.card.startswith(card)
    )
    vault.write_text(rel, approvals.tick(text, line.line_no))
    vault.commit("a person ticks", [rel])
    return rel


def review_file_of(vault: Vault) -> str:
    files = sorted(p for p in vault.texts(["30-reviews/facts"]) if p != REVIEW_INDEX)
    return files[-1]


def test_reader_review_and_history(env: HippoSettings) -> None:
    vault = Vault(root=str(env.vault))
    before = commits(vault)
    checks = [facts_have_provenance, fact_intervals_are_ordered, one_value_per_single_slot]
    result = run(env, facts, fact_reviews, checks=checks)
    assert result.success
    assert all(c.passed for c in result.get_asset_check_evaluations())
    m = meta(result, "facts")
    assert m["llm"]["enabled"] is False and "no LLM API key" in m["llm"]["reason"]
    # the unreadable date is kept (precision unknown) and its reason is in the metadata
    assert m["date_problem_count"] == 1 and "last spring" in m["date_problems"][0]["reason"]
    store = build_resources(env).fact_store
    kim = store.timeline("kim")
    assert sorted((f.object.text, f.valid_at.precision) for f in kim) == [
        ("mentor", "unknown"),
        ("team lead", "month"),
    ]  # roles add; nothing in a code fence is read
    # 카페인 컷오프 and Caffeine cutoff are one subject: the two values meet, a proposal waits
    chain = store.timeline("caffeine cutoff")
    assert [(f.object.text, f.status) for f in chain] == [
        ("6 hours before bed", "pending_supersede"),
        ("15:00", "active"),
    ]
    assert commits(vault) == before + 1  # one commit for the run
    rel = review_file_of(vault)
    text = vault.read_text(rel)
    lines = approvals.parse(rel, text)
    assert [ln.title for ln in lines] == ["supersede", "keep both", "same fact", "reject"]
    assert len({ln.fingerprint for ln in lines}) == 1
    assert "[[notes/2025-01-01#Rule]]" in text and "[[notes/2026-03-10#규칙]]" in text
    assert "since 2025-01-01" in text and "since 2026-03-10" in text
    assert "1 proposal(s) wait" in vault.read_text(REVIEW_INDEX)

    # a second run lists nothing new and changes nothing
    again = run(env, facts, fact_reviews)
    assert meta(again, "fact_reviews")["listed"] == 0 and commits(vault) == before + 1

    tick(vault, "supersede")
    applied = run(env, fact_reviews)
    assert meta(applied, "fact_reviews")["applied"][0]["choice"] == "supersede"
    old, new = store.timeline("caffeine cutoff", include_history=True)
    assert (old.status, old.invalid_at.value, new.status) == ("superseded", "2026-03-10", "active")
    assert [f.object.text for f in store.timeline("카페인 컷오프")] == ["15:00"]
    answered = approvals.parse(rel, vault.read_text(rel))
    assert [ln.state for ln in answered] == ["answered"] * 4
    assert "✓ supersede" in answered[0].outcome
    page = vault.read_text(PAGE)
    assert page.startswith(NOTES[PAGE])  # the person's text is untouched
    assert "## History" in page and "2025-01-01 – 2026-03-10" in page and "<!-- hippo:end -->" in page
    assert commits(vault) == before + 3  # the tick, then one commit for the review run
    assert "0 proposal(s)" not in vault.read_text(REVIEW_INDEX)
    assert "No supersession waits" in vault.read_text(REVIEW_INDEX)


def test_tick_on_a_changed_source_is_refused(env: HippoSettings) -> None:
    vault = Vault(root=str(env.vault))
    (env.vault / "notes/moved.md").write_text(
        note("date: 2023-03-01\nsubject: Me", "# Home\n\n- lives_in:: Busan\n"), encoding="utf-8"
    )
    vault.commit("moved")
    assert run(env, facts, fact_reviews).success
    rel = tick(vault, "supersede", "notes/moved")
    # the newer source changes after the proposal was made
    (env.vault / "notes/moved.md").write_text(
        note("date: 2023-03-01\nsubject: Me", "# Home\n\n- lives_in:: Busan\n\nActually only for a year.\n"),
        encoding="utf-8",
    )
    vault.commit("edit")
    result = run(env, fact_reviews)
    m = meta(result, "fact_reviews")
    assert m["applied"] == [] and "notes/moved.md changed since the proposal" in m["refused"][0]["reason"]
    lines = [ln for ln in approvals.parse(rel, vault.read_text(rel)) if ln.card.startswith("notes/moved")]
    assert lines[0].state == "answered" and lines[0].outcome.startswith("✗ refused: notes/moved.md changed")
    store = build_resources(env).fact_store
    assert [f.status for f in store.timeline("me", include_history=True)] == ["pending_supersede", "active"]
    # listed again with a fresh fingerprint, which a tick now applies
    assert [ln.state for ln in lines[:4]] == ["answered"] * 4
    fresh = [
        ln
        for ln in approvals.parse(rel, vault.read_text(rel))
        if ln.state == "open" and ln.card.startswith("notes/moved")
    ]
    assert len(fresh) == 4 and fresh[0].fingerprint != lines[0].fingerprint
    tick(vault, "supersede", "notes/moved")
    assert meta(run(env, fact_reviews), "fact_reviews")["applied"][0]["outcome"] == "applied"
    assert [f.status for f in store.timeline("me", include_history=True)] == ["superseded", "active"]


def test_a_persons_page_gets_a_staging_proposal(env: HippoSettings) -> None:
    vault = Vault(root=str(env.vault))
    text = NOTES[PAGE].replace("trust: llm_summary", "trust: human_edit")
    (env.vault / PAGE).write_text(text, encoding="utf-8")
    vault.commit("mine")
    assert run(env, facts, fact_reviews).success
    tick(vault, "supersede")
    m = meta(run(env, fact_reviews), "fact_reviews")
    assert m["history_staged"][0]["page"] == PAGE and "human_edit" in m["history_staged"][0]["reason"]
    assert vault.read_text(PAGE) == text
    staged = vault.read_text(m["history_staged"][0]["staging"])
    assert "## History" in staged and "proposal_for" in staged
    assert review_file("2000-01-01").startswith("30-reviews/facts/")
