"""The LLM path: the real anthropic client and instructor over a recorded-response transport."""

from __future__ import annotations

import json

import pytest
from dagster import DagsterInstance

from hippo_core.vault import frontmatter
from hippo_core.wiki.prompts import COMPILER_SYSTEM, JUDGE_SYSTEM
from hippo_resources import Vault
from hippo_resources.llm import LLM, LLMError
from hippo_settings import HippoSettings
from tests.compile.conftest import compile_source, recorded_llm
from tests.conftest import run_graph

SOURCE = "10-sources/coffee-nap.md"


@pytest.fixture
def ingested(settings: HippoSettings) -> tuple[HippoSettings, DagsterInstance]:
    instance = DagsterInstance.ephemeral()
    assert run_graph(settings, instance).success
    return settings, instance


def _meta(result, asset: str) -> dict:
    [mat] = [m for m in result.get_asset_materialization_events() if m.asset_key.to_user_string() == asset]
    return {k: getattr(v, "value", v) for k, v in mat.materialization.metadata.items()}


def test_llm_compiles_retries_malformed_output_and_judges(ingested) -> None:
    settings, instance = ingested
    llm, rec = recorded_llm("compile_malformed.json", "compile_coffee_nap.json", "judge_accept.json")
    result = compile_source(settings, instance, SOURCE, llm)
    assert result.success
    first, retry, judge = rec.requests
    # the compiler prompt: system rules, the source as data, related canonical pages from our own search
    assert first["system"] == COMPILER_SYSTEM and first["model"] == "claude-test"
    assert first["tools"][0]["name"] == "CompileOutput"
    user = first["messages"][0]["content"]
    assert "<source>" in user and "커피를 마시고 바로 20분 동안" in user
    assert 'path="20-wiki/health/sleep-hygiene.md"' in user
    # malformed output → instructor re-asks with the validation errors
    feedback = json.dumps(retry["messages"][-1], ensure_ascii=False)
    assert "confidence" in feedback and "sector" in feedback and "Field required" in feedback
    assert judge["system"] == JUDGE_SYSTEM and judge["tools"][0]["name"] == "JudgeVerdict"
    assert '<section anchor="20-wiki/health/sleep-hygiene.md#카페인">' in judge["messages"][0]["content"]

    meta = _meta(result, "staging_cards")
    assert meta["compiler"] == "anthropic:claude-test"
    assert (meta["llm_calls"], meta["input_tokens"], meta["output_tokens"]) == (2, 1830 + 2310, 412 + 455)
    gates = _meta(result, "gate_verdicts")
    assert (gates["llm_calls"], gates["total_tokens"], gates["passed"]) == (1, 984, 1)

    card = settings.vault / "30-reviews" / "staging" / "커피냅.md"
    fm, body = frontmatter.parse(card.read_text(encoding="utf-8"))
    assert (fm.type, fm.status, fm.trust, fm.sector) == ("concept", "draft", "llm_summary", "health")
    assert fm.aliases == ["coffee nap", "카페인 낮잠"] and fm.sources == [SOURCE]
    assert f"`{SOURCE}#커피냅 실험`" in body and "- compiler: anthropic:claude-test" in body
    approvals = list((settings.vault / "30-reviews" / "approvals").glob("*.md"))
    assert "[[30-reviews/staging/커피냅|커피냅]]" in approvals[0].read_text(encoding="utf-8")


def test_judge_reject_keeps_card_out_of_approvals(ingested) -> None:
    settings, instance = ingested
    llm, rec = recorded_llm("compile_coffee_nap.json", "judge_reject.json")
    assert compile_source(settings, instance, SOURCE, llm).success
    assert len(rec.requests) == 2
    [verdict] = [
        json.loads(x)
        for f in (settings.vault / "90-system" / "gates").glob("*.jsonl")
        for x in f.read_text().splitlines()
    ]
    assert verdict["judge"]["decision"] == "reject" and not verdict["passed"]
    assert "does not support" in verdict["judge"]["reasons"][0]
    assert not list((settings.vault / "30-reviews" / "approvals").glob("*.md"))


def test_retries_exhausted_fail_clearly_and_write_nothing(ingested) -> None:
    settings, instance = ingested
    vault = Vault(root=str(settings.vault))
    head = vault.git("rev-parse", "HEAD").strip()
    llm, rec = recorded_llm("compile_malformed.json", "compile_malformed.json", max_retries=1)
    result = compile_source(settings, instance, SOURCE, llm, raise_on_error=False)
    assert not result.success
    assert len(rec.requests) == 2
    [failure] = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert "gave no valid CompileOutput after 2 attempt(s)" in failure.step_failure_data.error.message
    assert not list((settings.vault / "30-reviews" / "staging").glob("*.md"))
    assert vault.git("rev-parse", "HEAD").strip() == head
    assert vault.git("status", "--porcelain").strip() == ""


def test_compiled_source_makes_no_llm_call(ingested) -> None:
    settings, instance = ingested
    llm, rec = recorded_llm("compile_coffee_nap.json", "judge_accept.json")
    assert compile_source(settings, instance, SOURCE, llm).success
    assert len(rec.requests) == 2
    idle, idle_rec = recorded_llm()  # any call would hit "no more recordings" and fail the run
    result = compile_source(settings, instance, SOURCE, idle)
    assert result.success and idle_rec.requests == []
    assert _meta(result, "staging_cards")["skipped"] == "already compiled"
    assert _meta(result, "gate_verdicts")["llm_calls"] == 0


def test_llm_without_key_is_disabled() -> None:
    assert not LLM(api_key=None).enabled
    with pytest.raises(LLMError, match="no ANTHROPIC_API_KEY"):
        LLM(api_key=None).judge("card", {})


def test_the_llm_card_takes_the_lineage_of_its_source(ingested) -> None:
    settings, instance = ingested
    source = settings.vault / SOURCE
    source.write_text(source.read_text(encoding="utf-8").replace("---\n", "---\nlineage: experiments\n", 1))
    llm, _ = recorded_llm("compile_coffee_nap.json", "judge_accept.json")
    assert compile_source(settings, instance, SOURCE, llm).success
    fm, _ = frontmatter.parse(
        (settings.vault / "30-reviews" / "staging" / "커피냅.md").read_text(encoding="utf-8")
    )
    assert fm.model_extra["lineage"] == "experiments"  # set from the source, whatever the model said
