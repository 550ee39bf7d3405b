"""Helpers for the compile loop: run its assets on a real vault, with the real or offline LLM resource."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
from dagster import DagsterInstance, materialize

from hippo_assets.compile.assets import approval_requests, gate_verdicts, promotion_gates_hold, staging_cards
from hippo_assets.publish.assets import canonical_sectors_match, canonical_wiki, index_pages
from hippo_assets.publish.janitor import janitor
from hippo_core.wiki.compile_queue import PARTITIONS, partition_key_for
from hippo_resources import build_resources
from hippo_resources.llm import LLM
from hippo_settings import HippoSettings
from sensors.compile import pending_sources

LLM_FIXTURES = Path(__file__).parent.parent / "fixtures" / "llm"
COMPILE = [staging_cards, gate_verdicts, approval_requests, promotion_gates_hold]
PROMOTE = [canonical_wiki, index_pages, canonical_sectors_match]


class Recorded:
    """An httpx2 transport that replays recorded Messages API responses, in order, and keeps the requests."""

    def __init__(self, *names: str) -> None:
        self.responses = [json.loads((LLM_FIXTURES / n).read_text(encoding="utf-8")) for n in names]
        self.requests: list[dict[str, Any]] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.content))
        if len(self.requests) > len(self.responses):
            return httpx2.Response(
                500, json={"type": "error", "error": {"type": "api_error", "message": "no more recordings"}}
            )
        assert request.url.path == "/v1/messages"
        return httpx2.Response(200, json=self.responses[len(self.requests) - 1])


_RECORDINGS: dict[str, Recorded] = {}


class RecordedLLM(LLM):
    """The real LLM resource; only the HTTP transport under the anthropic SDK replays recordings."""

    recording: str

    def http_client(self) -> Any:
        return httpx2.Client(transport=httpx2.MockTransport(_RECORDINGS[self.recording].handler))


def recorded_llm(*names: str, **kwargs: Any) -> tuple[RecordedLLM, Recorded]:
    rec = Recorded(*names)
    key = f"rec-{id(rec)}"
    _RECORDINGS[key] = rec
    return RecordedLLM(api_key="test-key", recording=key, model="claude-test", **kwargs), rec


def loop_resources(settings: HippoSettings, llm: LLM | None = None) -> dict[str, Any]:
    return {**build_resources(settings), "llm": llm or LLM(api_key=None)}


def compile_source(
    settings: HippoSettings, instance: DagsterInstance, source: str, llm: LLM | None = None, **kwargs: Any
):
    key = partition_key_for(source)
    instance.add_dynamic_partitions(PARTITIONS, [key])
    return materialize(
        COMPILE, resources=loop_resources(settings, llm), instance=instance, partition_key=key, **kwargs
    )


def compile_all(settings: HippoSettings, instance: DagsterInstance, llm: LLM | None = None) -> list[str]:
    from hippo_resources import Vault

    done = []
    for src, _, _ in pending_sources(Vault(root=str(settings.vault))):
        assert compile_source(settings, instance, src, llm).success
        done.append(src)
    return done


def promote(settings: HippoSettings, instance: DagsterInstance, **kwargs: Any):
    return materialize(PROMOTE, resources=loop_resources(settings), instance=instance, **kwargs)


def run_janitor(settings: HippoSettings, instance: DagsterInstance, **config: Any):
    return materialize(
        [janitor],
        resources=loop_resources(settings),
        instance=instance,
        run_config={"ops": {"janitor": {"config": config}}},
    )
