"""LLM extraction through the real `LLM` resource (the anthropic SDK and instructor; only the HTTP transport
replays recorded responses): a quote that is not in the source is rejected by the gate, the pair the rules
cannot place is put as "same / update / different", and its direction still comes from the dates."""

from __future__ import annotations

from pathlib import Path

import pytest
from dagster import DagsterInstance, materialize

from hippo_assets.facts.assets import facts
from hippo_resources import Vault, build_resources
from hippo_settings import HippoSettings
from hippo_work import WorkMemory
from tests.compile.conftest import recorded_llm

OLD = (
    "---\ndate: 2025-01-01\nsubject: Caffeine cutoff\n---\n# Rule\n\n- caffeine_cutoff:: 6 hours before bed\n"
)
NEW = (
    "---\ntitle: 3월 건강 메모\ndate: 2026-03-10\n---\n# 카페인\n\n"
    "잠이 계속 늦어져서 3월 10일부터 커피는 오후 3시 이후로 마시지 않기로 했다. "
    "디카페인 라떼는 가끔 마신다.\n"
)
PAGE = "---\ntitle: Caffeine cutoff\naliases: [카페인 컷오프]\n---\n# Caffeine cutoff\n"


@pytest.fixture
def env(tmp_path: Path) -> HippoSettings:
    vault = tmp_path / "vault"
    for rel, text in {"a-old.md": OLD, "b-new.md": NEW, "c-page.md": PAGE}.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    Vault(root=str(vault)).init_git()
    return HippoSettings(vault=vault, home=tmp_path / "home")


def run(settings: HippoSettings, *recordings: str):  # noqa: ANN201
    llm, rec = recorded_llm(*recordings)
    result = materialize(
        [facts], resources={**build_resources(settings), "llm": llm}, instance=DagsterInstance.ephemeral()
    )
    assert result.success
    (mat,) = result.asset_materializations_for_node("facts")
    return {k: v.value for k, v in mat.metadata.items()}, rec


def test_extraction_gate_and_pair_question(env: HippoSettings) -> None:
    meta, rec = run(
        env,
        "facts_extract_none.json",
        "facts_extract_cutoff.json",
        "facts_pair_update.json",
        "facts_extract_none.json",
    )
    assert len(rec.requests) == 4
    assert not meta["llm"]["errors"], meta["llm"]
    assert '<first date="2025-01-01"' in rec.requests[2]["messages"][0]["content"]
    # the source text reaches the model as untrusted material, with its date
    assert "<untrusted-source>" in rec.requests[1]["messages"][0]["content"]
    assert "Date of the source: 2026-03-10" in rec.requests[1]["messages"][0]["content"]
    # the made-up quote is rejected; the grounded fact is taken
    assert [r["source"] for r in meta["rejected_extractions"]] == ["b-new.md"]
    assert "quote not in the source" in meta["rejected_extractions"][0]["reason"]
    assert meta["llm"]["sources_read"] == 3 and meta["llm"]["pairs_asked"] == 1
    store = build_resources(env).fact_store
    chain = store.timeline("카페인 컷오프", include_history=True)
    assert [(f.object.text, f.status) for f in chain] == [
        ("6 hours before bed", "pending_supersede"),
        ("오후 3시", "active"),
    ]
    new = chain[1]
    assert new.provenance[0].anchor == "b-new.md#카페인" and new.provenance[0].extractor == "llm:claude-test"
    (proposal,) = store.proposals()
    assert proposal.rule == "llm:claude-test" and proposal.older.fact_id == chain[0].fact_id
    assert [(r["verdict"], r["decided_by"]) for r in store.ledger()][-1] == (
        "SUPERSEDE_PENDING",
        "llm:claude-test",
    )
    # a second run reads nothing again (same content, same prompt)
    again, rec2 = run(env)
    assert again["llm"]["sources_read"] == 0 and rec2.requests == []


def test_pair_answer_with_a_made_up_quote_is_rejected(env: HippoSettings) -> None:
    meta, _ = run(
        env,
        "facts_extract_none.json",
        "facts_extract_cutoff.json",
        "facts_pair_made_up_quote.json",
        "facts_extract_none.json",
    )
    assert "quote_old not in the first statement" in meta["rejected_pair_answers"][0]["reason"]
    store = build_resources(env).fact_store
    # not merged on the model's word: the pair waits for a person, proposed by the rule that could not place it
    (proposal,) = store.proposals()
    assert proposal.rule == "rule:maybe_paraphrase"
    assert {f.status for f in store.timeline("caffeine cutoff", include_history=True)} == {
        "pending_supersede",
        "active",
    }


def test_a_work_memory_checkpoint_is_read_with_its_session(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    Vault(root=str(vault)).init_git()
    settings = HippoSettings(vault=vault, home=tmp_path / "home")
    WorkMemory(build_resources(settings).work_store).checkpoint(
        "payments-api",
        "work",
        "Today we switched payments-api from SQLAlchemy to psycopg.",
        "sess-7",
        "evt-1",
    )
    meta, rec = run(settings, "facts_extract_checkpoint.json")
    assert (
        meta["llm"]["sources_read"] == 1
        and "switched payments-api" in rec.requests[0]["messages"][0]["content"]
    )
    (f,) = build_resources(settings).fact_store.timeline("payments-api")
    src = f.provenance[0]
    assert (src.anchor, src.session_id, src.trust) == ("work/payments-api#1", "sess-7", "agent")
    assert (f.qualifiers.project, f.valid_at.value, f.valid_at.precision) == (
        "payments-api",
        "2026-03-01",
        "month",
    )
