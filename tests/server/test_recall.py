"""hippo_route, hippo_suggest and /api/v1/recall on a real indexed vault: the deterministic engine, the LLM
engine's degraded path for each failure (real `LLM` resource, the Messages API replayed), the skill lane
kept out of ordinary search, and the server's own auth never bypassed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fastapi.testclient import TestClient

from hippo_core.index.tokenize import BIGRAM_MARKER, Tokenizer, bigram_heads
from hippo_core.recall.context import BLOCK_OPEN, REFERENCE_NOTICE
from hippo_core.recall.route import RouteCandidate, RouteParams, decide
from hippo_resources.llm import LLM
from hippo_search.envelope import SearchHit, SearchRequest
from hippo_search.pipeline import open_engine
from hippo_server.app import create_app
from hippo_settings import HippoSettings
from hippo_work.route import LLMRouter, judge_hits, route
from hippo_work.suggest import SkillLane
from tests.conftest import run_graph
from tests.reliability.servers import free_port
from tests.work.test_recall_hook import SECRET, hook_env, log_of, prompt_payload, run_hook

TOKEN = "test-token-123"
SKILL = """---
name: pdf-forms
description: Fill in PDF forms and extract their fields with pypdf; use for PDF form filling.
---
# PDF forms

Read the form's fields, fill them, flatten the result.
"""


class ReplayedLLM(LLM):
    """The real LLM resource; only the HTTP transport under the anthropic SDK answers from `replies`."""

    reply: str

    def http_client(self) -> Any:
        return httpx2.Client(transport=httpx2.MockTransport(REPLIES[self.reply]))


def _error(status: int, kind: str) -> Any:
    def handler(request: httpx2.Request) -> httpx2.Response:
        body = {"type": "error", "error": {"type": kind, "message": f"recorded {status}"}}
        return httpx2.Response(status, json=body, headers={"retry-after": "0"})

    return handler


def _tool(payload: dict[str, Any]) -> Any:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200,
            json={
                "id": "msg_rec", "type": "message", "role": "assistant", "model": "claude-test",
                "content": [{"type": "tool_use", "id": "toolu_rec", "name": "LLMRouteJudgement", "input": payload}],
                "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        )  # fmt: skip

    return handler


def _timeout(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ReadTimeout("recorded timeout", request=request)


REPLIES = {
    "401": _error(401, "authentication_error"),
    "403": _error(403, "permission_error"),
    "429": _error(429, "rate_limit_error"),
    "529": _error(529, "overloaded_error"),
    "timeout": _timeout,
    "malformed": _tool({"needs_context": True, "fits": [{"index": 99, "fit": 0.5}]}),
    "ok": _tool({"needs_context": True, "fits": [{"index": 0, "fit": 0.2}, {"index": 1, "fit": 0.9}]}),
}


@pytest.fixture
def skilled(indexed: HippoSettings, tmp_path: Path) -> HippoSettings:
    """The indexed fixture vault with a 40-skills projection and a broken skill, re-indexed."""
    skills = indexed.vault / "40-skills"
    (skills / "pdf-forms" / "references").mkdir(parents=True)
    (skills / "pdf-forms" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    (skills / "pdf-forms" / "references" / "fields.md").write_text(
        "AcroForm widgets and xfdf export.", encoding="utf-8"
    )
    (skills / "broken").mkdir()
    (skills / "broken" / "SKILL.md").write_text("no frontmatter here", encoding="utf-8")
    (skills / "latin1").mkdir()
    (skills / "latin1" / "SKILL.md").write_bytes(b"---\nname: caf\xe9\n---\n")
    assert run_graph(indexed).success
    return indexed.model_copy(update={"mcp_token": TOKEN})


def test_skill_lane_is_searched_by_suggest_only_and_broken_skills_are_reported(
    skilled: HippoSettings,
) -> None:
    engine = open_engine(skilled, log=False)
    for query in ("pdf-forms", "AcroForm xfdf", "Fill in PDF forms"):
        hits = engine.search(SearchRequest(query=query, limit=50), log=False).results
        assert not [h for h in hits if h.path.startswith("40-skills/")], query
    lane = SkillLane([skilled.vault / "40-skills"])
    result = lane.suggest("please fill this PDF form for me", 1500)
    assert [c.name for c in result.candidates] == ["pdf-forms"]
    assert len(result.problems) == 2 and any("not UTF-8" in p for p in result.problems)
    assert sum(len(c.model_dump_json()) for c in result.candidates) <= 600 + 100 * len(result.candidates)
    assert lane.suggest("xfdf export of widgets", 1500).candidates[0].name == "pdf-forms"  # via its reference
    assert lane.suggest("what is the capital of France", 1500).candidates == []


def test_route_and_recall_over_rest_behind_the_servers_own_auth(skilled: HippoSettings) -> None:
    with TestClient(create_app(skilled)) as anonymous:
        for path in ("/api/v1/route", "/api/v1/suggest", "/api/v1/recall"):
            assert anonymous.post(path, json={"query": "x", "prompt": "x"}).status_code == 401
    with TestClient(create_app(skilled), headers={"Authorization": f"Bearer {TOKEN}"}) as client:
        r = client.post("/api/v1/route", json={"query": "카페인 커피 취침 몇 시간 전까지"})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["engine"] == "deterministic" and body["status"] == "ok" and body["needs_context"] is True
        assert body["candidates"][0]["anchor"].startswith("20-wiki/health/sleep-hygiene.md")
        assert all(0 <= c["fit"] <= 1 for c in body["candidates"])
        assert client.post("/api/v1/route", json={"query": "x", "bogus": 1}).status_code == 422
        assert client.post("/api/v1/route", content=b"\xff").status_code == 400
        recall = client.post(
            "/api/v1/recall", json={"prompt": "커피는 취침 몇 시간 전까지 마셔도 돼?"}
        ).json()
        assert recall["needs_context"] and recall["items"][0]["anchor"].startswith(
            "20-wiki/health/sleep-hygiene.md"
        )
        suggest = client.post("/api/v1/suggest", json={"prompt": "fill the PDF form"}).json()
        assert [c["name"] for c in suggest["candidates"]] == ["pdf-forms"]


@pytest.mark.parametrize(
    ("reply", "cause"),
    [
        ("401", "unauthorized (401)"),
        ("403", "forbidden (403)"),
        ("429", "rate limited (429)"),
        ("529", "overloaded (529)"),
        ("timeout", "timeout"),
        ("malformed", "malformed answer"),
    ],
)
def test_llm_engine_failures_give_the_base_order_degraded_with_the_cause(
    indexed: HippoSettings, reply: str, cause: str
) -> None:
    engine = open_engine(indexed, log=False)
    llm = ReplayedLLM(api_key="test-key", model="claude-test", reply=reply, max_retries=0, timeout_seconds=2)
    result = route(engine, "카페인 커피 취침", None, LLMRouter(llm))
    base = [
        h.anchor for h in engine.search(SearchRequest(query="카페인 커피 취침", limit=8), log=False).results
    ]
    assert (result.status, result.cause, result.engine) == ("degraded", cause, "llm")
    assert [c.anchor for c in result.candidates] == base and base


def test_llm_engine_judgement_reorders_by_fit() -> None:
    def hit(anchor: str, coverage: float, lane: str) -> SearchHit:
        return SearchHit(
            anchor=anchor, chunk_id=anchor, path=anchor.split("#")[0], heading=None, title="", snippet=anchor,
            score=0.5, matched_by=[lane], lane="notes", status="canonical", trust="human_edit", sector=None,
            updated=None, coverage=coverage,
        )  # fmt: skip

    llm = ReplayedLLM(api_key="test-key", model="claude-test", reply="ok", max_retries=0)
    result = judge_hits(
        "what did we decide", [hit("a#1", 0.9, "lexical"), hit("b#2", 0.1, "semantic")], LLMRouter(llm)
    )
    assert result.status == "ok" and [c.anchor for c in result.candidates] == ["b#2", "a#1"]
    assert [c.fit for c in result.candidates] == [0.9, 0.2]


def test_deterministic_router_reads_lanes_agreement_weak_floor_and_query_shape() -> None:
    strong = RouteCandidate(
        anchor="a", coverage=1.0, semantic_similarity=0.9, matched_by=["lexical", "semantic"]
    )
    weak = RouteCandidate(
        anchor="b", coverage=0.0, semantic_similarity=0.81, matched_by=["semantic"], weak=True
    )
    assert decide("what did we decide about retries?", [strong]).needs_context
    assert not decide("what did we decide about retries?", [weak]).needs_context
    assert not decide("anything", []).needs_context
    mid = RouteCandidate(anchor="c", coverage=0.6, semantic_similarity=0.8, matched_by=["lexical"])
    assert (
        decide("when did we pick the retry policy?", [mid]).confidence
        > decide("write a python function for the retry policy", [mid]).confidence
    )
    assert (
        json.loads(json.dumps(decide("when did we agree on retries?", [strong, weak]).model_dump()))["fits"][
            0
        ]
        > 0.9
    )
    assert decide("x", [strong]).fits[0] < 0.9  # one covered term of one: weaker than two of two


def test_lexical_lane_alone_is_judged_by_coverage_against_its_own_bar_and_short_prompts_never_need_it() -> (
    None
):
    covered = RouteCandidate(anchor="a", coverage=0.8, matched_by=["lexical"])
    thin = RouteCandidate(anchor="b", coverage=0.1, matched_by=["lexical"])
    question = "when did Caroline go to the support group?"
    low, high = RouteParams(lexical_need_threshold=0.5), RouteParams(lexical_need_threshold=1.0)
    assert decide(question, [covered], low).needs_context  # no similarity anywhere: the lexical bar
    assert not decide(question, [thin], low).needs_context
    assert decide(question, [covered], low).fits == [1.0]  # coverage 0.8 >= coverage_strong
    half = RouteCandidate(anchor="d", coverage=0.45, matched_by=["lexical"])  # fit 0.75
    assert decide(question, [half], low).needs_context and not decide(question, [half], high).needs_context
    # one candidate with a similarity: both lanes answered, the other bar and the semantic share apply
    both = RouteCandidate(
        anchor="c", coverage=0.8, semantic_similarity=0.79, matched_by=["lexical", "semantic"]
    )
    assert decide(question, [both], RouteParams(need_threshold=0.5, semantic_weight=0.0)).needs_context
    assert not decide(question, [both], RouteParams(need_threshold=0.5, semantic_weight=1.0)).needs_context
    assert not decide("continue", [covered], low).needs_context  # steering words, not a question to memory
    tokens = Tokenizer(morphology=False).tokenize("커피와 카페인 coffee")  # the hook's local analyzer
    assert tokens == [
        BIGRAM_MARKER + "커피",
        BIGRAM_MARKER + "피와",
        BIGRAM_MARKER + "카페",
        BIGRAM_MARKER + "페인",
        "coffee",
    ]
    assert bigram_heads(tokens) == [
        BIGRAM_MARKER + "커피",
        BIGRAM_MARKER + "카페",
    ]  # a word's head, not its particle
    assert not decide("window?", [covered], low).needs_context


def test_local_path_answers_from_the_lexical_index_without_dagster_chroma_or_kiwi(
    indexed: HippoSettings, tmp_path: Path
) -> None:
    """No librarian: the hook process searches the lexical index in process (a real subprocess over the
    indexed fixture vault); Korean is read by its bigrams, so Kiwi's model is never loaded."""
    env = hook_env(
        indexed.home, indexed.vault, free_port(), HIPPO_RECALL_BUDGET_MS="120000", HIPPO_RECALL_SKILLS="false"
    )
    result, _ = run_hook(
        env, prompt_payload("수면 위생 규칙에서 취침 시간은 몇 시였지?", tmp_path), "-X", "importtime"
    )
    assert result.returncode == 0 and result.stdout, log_of(indexed.home)
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith(BLOCK_OPEN) and "20-wiki/health/sleep-hygiene.md" in context
    assert "(local)" in log_of(indexed.home).splitlines()[-1]
    modules = {line.split("|")[-1].strip() for line in result.stderr.decode().splitlines() if "|" in line}
    assert "hippo_search.pipeline" in modules  # it did search in process
    assert not {m.split(".")[0] for m in modules} & {"dagster", "chromadb", "torch", "scipy", "httpx"}
    assert not modules & {
        "hippo_resources.embedder",
        "hippo_resources.vector_store",
        "hippo_resources.lexical_store",
    }
    result, _ = run_hook(env, prompt_payload("Write a haiku about autumn leaves falling", tmp_path))
    assert (result.returncode, result.stdout) == (0, b"")
    assert "no context needed (local)" in log_of(indexed.home).splitlines()[-1]


def test_in_process_recall_adds_quoted_results_and_no_secret(indexed: HippoSettings, tmp_path: Path) -> None:
    skills = tmp_path / "project" / ".claude" / "skills" / "sleep-coach"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text(
        "---\nname: sleep-coach\ndescription: Plan caffeine and sleep schedules (coffee cut-off times).\n---\nBody.\n",
        encoding="utf-8",
    )
    env = hook_env(
        indexed.home, indexed.vault, free_port(), HIPPO_RECALL_BUDGET_MS="120000",
        HIPPO_EMBED_CACHE=str(indexed.embed_cache),
    )  # fmt: skip
    prompt = f"caffeine and coffee cut-off before sleep? 커피 카페인 {SECRET}"
    result, _ = run_hook(env, prompt_payload(prompt, tmp_path / "project"))
    assert result.returncode == 0, log_of(indexed.home)
    out = json.loads(result.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    context = out["additionalContext"]
    assert context.startswith(BLOCK_OPEN) and REFERENCE_NOTICE in context
    assert (
        "20-wiki/health/sleep-hygiene.md" in context or "10-sources/coffee-nap.md" in context
    ) and "skill sleep-coach" in context
    assert len(context.encode()) <= 1500 and SECRET not in context and SECRET not in log_of(indexed.home)
    generic = prompt_payload("Write a haiku about autumn leaves falling", tmp_path)
    result, _ = run_hook(env, generic)
    assert (result.returncode, result.stdout) == (0, b""), result.stdout
