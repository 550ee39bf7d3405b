"""Any LLM (issue 25 item 8): the same `LLM.structured(...)` over an OpenAI-compatible endpoint (a local
server), chosen by settings; the real openai client and instructor run, only the HTTP transport under
them replays recorded chat-completion responses (as tests/compile/conftest.py does for Anthropic)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2

from hippo_core.wiki.compile_offline import JudgeVerdict
from hippo_resources import build_resources
from hippo_resources.llm import LLM
from hippo_settings import HippoSettings

LLM_FIXTURES = Path(__file__).parents[1] / "fixtures" / "llm"


class Replay:
    def __init__(self, *names: str) -> None:
        self.responses = [json.loads((LLM_FIXTURES / n).read_text(encoding="utf-8")) for n in names]
        self.requests: list[httpx2.Request] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        if len(self.requests) > len(self.responses):
            return httpx2.Response(500, json={"error": {"message": "no more recordings"}})
        return httpx2.Response(200, json=self.responses[len(self.requests) - 1])


REPLAYS: dict[str, Replay] = {}


class ReplayedLLM(LLM):
    """The real resource; only the transport under the openai SDK is replaced."""

    replay: str

    def http_client(self) -> Any:
        return httpx2.Client(transport=httpx2.MockTransport(REPLAYS[self.replay].handler))


def test_settings_choose_the_openai_compatible_endpoint(tmp_path: Path) -> None:
    settings = HippoSettings.from_env(
        {"HIPPO_LLM_BASE_URL": "http://127.0.0.1:11434/v1", "HIPPO_LLM_MODEL": "qwen2.5-7b-instruct"},
        vault=tmp_path / "v",
        home=tmp_path / "h",
    )
    llm = build_resources(settings)["llm"]
    assert (llm.provider, llm.base_url, llm.model) == (
        "openai",
        "http://127.0.0.1:11434/v1",
        "qwen2.5-7b-instruct",
    )
    assert llm.enabled and llm.api_key is None  # a local server needs no key
    anthropic = build_resources(HippoSettings(vault=tmp_path / "v", home=tmp_path / "h"))["llm"]
    assert anthropic.provider == "anthropic" and not anthropic.enabled


def test_structured_over_a_local_server_re_asks_and_counts_every_attempt() -> None:
    REPLAYS["judge"] = replay = Replay("openai_judge_malformed.json", "openai_judge_revise.json")
    llm = ReplayedLLM(
        provider="openai",
        base_url="http://127.0.0.1:8000/v1",
        model="qwen2.5-7b-instruct",
        max_retries=2,
        replay="judge",
    )
    verdict, usage = llm.structured(JudgeVerdict, "You judge cards.", "Card text here.")
    assert verdict.model_dump() == {
        "decision": "revise",
        "reasons": ["the claim about 15:00 cites no source"],
    }
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (2, 880, 33)
    first = json.loads(replay.requests[0].content)
    assert str(replay.requests[0].url) == "http://127.0.0.1:8000/v1/chat/completions"
    assert first["model"] == "qwen2.5-7b-instruct"
    assert [m["role"] for m in first["messages"]][:2] == ["system", "user"]
    assert "Card text here." in first["messages"][1]["content"]
    second = json.loads(replay.requests[1].content)
    assert len(second["messages"]) > len(first["messages"])  # the re-ask shows the model its error
    assert replay.requests[0].headers["authorization"] == "Bearer unused"
