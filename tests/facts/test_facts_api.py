"""`GET /api/v1/facts` and MCP `hippo_facts` give the same timeline (now, as of a date, with history), find a
subject by any of its names, and refuse bad input with a clear 4xx / tool error, never a 500."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client

from hippo_cli.vault_init import init_vault
from hippo_server.app import create_app
from hippo_server.mcp import build_mcp
from hippo_settings import HippoSettings
from hippo_work.facts import fact_store
from tests.facts.conftest import fact


@pytest.fixture
def env(tmp_path: Path) -> HippoSettings:
    init_vault(tmp_path / "vault")
    settings = HippoSettings(vault=tmp_path / "vault", home=tmp_path / "home")
    store = fact_store(settings)
    store.remember_names([("카페인 컷오프", "caffeine cutoff")])
    kw = {"subject": "caffeine cutoff", "predicate": "caffeine_cutoff"}
    store.add(fact("6 hours before bed", "2025-01", "health/caffeine.md#Rule", **kw))
    store.add(fact("15:00", "2026-03-10", "daily/2026-03-10.md#카페인", **kw))
    (p,) = store.proposals()
    store.decide(p.proposal_id, "supersede")
    store.add(fact("3 pm", "2026-03-12", "daily/2026-03-12.md#Notes", **kw))  # merges
    return settings


def mcp_call(settings: HippoSettings, args: dict):  # noqa: ANN201
    async def go():  # noqa: ANN202
        async with Client(build_mcp(None, settings=settings)) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            return names, await client.call_tool("hippo_facts", args)

    return anyio.run(go)


CASES = [
    ({"subject": "caffeine cutoff"}, ["15:00"]),
    ({"subject": "카페인 컷오프", "as_of": "2025-06-01"}, ["6 hours before bed"]),
    ({"subject": "Caffeine Cutoff", "as_of": "2025"}, ["6 hours before bed"]),
    ({"subject": "caffeine cutoff", "include_history": True}, ["6 hours before bed", "15:00", "3 pm"]),
    ({"subject": "nobody"}, []),
]


@pytest.mark.parametrize(("args", "values"), CASES)
def test_rest_and_mcp_agree(env: HippoSettings, args: dict, values: list[str]) -> None:
    with TestClient(create_app(env)) as api:
        rest = api.get("/api/v1/facts", params=args)
    assert rest.status_code == 200, rest.text
    names, tool = mcp_call(env, args)
    assert "hippo_facts" in names and not tool.is_error
    assert tool.structured_content == rest.json()
    body = rest.json()
    assert [f["value"] for f in body["facts"]] == values
    assert "Untrusted" in body["notice"]


def test_the_timeline_carries_times_and_anchors(env: HippoSettings) -> None:
    with TestClient(create_app(env)) as api:
        body = api.get(
            "/api/v1/facts", params={"subject": "caffeine cutoff", "include_history": "true"}
        ).json()
    old, new, merged = body["facts"]
    assert (old["valid_at"], old["valid_precision"], old["invalid_at"], old["status"]) == (
        "2025-01-01",
        "month",
        "2026-03-10",
        "superseded",
    )
    assert old["superseded_by"] == new["fact_id"] and merged["merged_into"] == new["fact_id"]
    assert new["anchors"] == ["daily/2026-03-10.md#카페인", "daily/2026-03-12.md#Notes"]
    assert body["as_of"] is None and body["pending_proposals"] == 0


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({"subject": "caffeine cutoff", "as_of": "last spring"}, "as_of"),
        ({"subject": "caffeine cutoff", "as_of": "2025-02-30"}, "as_of"),
        ({"subject": "   "}, "subject"),
        ({"subject": "x" * 300}, "subject"),
        ({"subject": "a\x00b"}, "subject"),
        ({"subject": "caffeine cutoff", "as_of": "2025", "include_history": True}, "exclude each other"),
    ],
)
def test_bad_input_is_refused(env: HippoSettings, args: dict, needle: str) -> None:
    with TestClient(create_app(env)) as api:
        rest = api.get("/api/v1/facts", params=args)
    assert rest.status_code == 422 and needle in rest.text
    _, tool = mcp_call(env, args)
    assert tool.is_error and "refused" in tool.content[0].text and needle in tool.content[0].text
