"""The librarian over MCP: the official SDK's in-memory client against our server, and HTTP auth on /mcp."""

from __future__ import annotations

import anyio
from fastapi.testclient import TestClient
from mcp import Client

from hippo_search.pipeline import open_engine
from hippo_server.app import create_app
from hippo_server.mcp import build_mcp
from hippo_settings import HippoSettings
from tests.server.conftest import TOKEN


def call(settings: HippoSettings, tool: str, args: dict):  # noqa: ANN201
    async def go():  # noqa: ANN202
        async with Client(build_mcp(open_engine(settings))) as client:
            tools = await client.list_tools()
            return [t.name for t in tools.tools], await client.call_tool(tool, args)

    return anyio.run(go)


def test_tools_are_listed_and_search_returns_the_envelope(indexed: HippoSettings) -> None:
    names, result = call(indexed, "hippo_search", {"query": "침실의 온도를 어떻게 맞춰야 하나요", "limit": 3})
    assert {"hippo_get", "hippo_search", "hippo_status", "hippo_bundle", "hippo_feedback"} <= set(names)
    assert not result.is_error
    body = result.structured_content
    assert body["untrusted"] is True and body["kind"] == "hippocampus.search"
    assert body["results"][0]["anchor"] == "20-wiki/health/sleep-hygiene.md#침실 환경"


def test_get_reads_one_section_by_anchor(indexed: HippoSettings) -> None:
    _, result = call(indexed, "hippo_get", {"ref": "20-wiki/data/dagster-assets.md#Materializing"})
    body = result.structured_content
    assert (
        body["heading"] == "Materializing" and "backfills" in body["text"] and "lineage" not in body["text"]
    )


def test_status_and_bad_arguments(indexed: HippoSettings) -> None:
    _, result = call(indexed, "hippo_status", {})
    assert result.structured_content["indexed"] is True
    _, bad = call(indexed, "hippo_search", {"query": "x", "lanes": ["gossip"]})
    assert bad.is_error and "unknown lane" in bad.content[0].text
    _, missing = call(indexed, "hippo_get", {"ref": "20-wiki/nope.md"})
    assert missing.is_error and "no document" in missing.content[0].text


def test_mcp_over_streamable_http_requires_the_token(indexed: HippoSettings) -> None:
    secured = indexed.model_copy(update={"mcp_token": TOKEN})
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream"}
    with TestClient(create_app(secured)) as c:
        assert c.post("/mcp", json=init, headers=headers).status_code == 401
        ok = c.post("/mcp", json=init, headers={**headers, "Authorization": f"Bearer {TOKEN}"})
        assert ok.status_code == 200 and '"name":"hippocampus"' in ok.text.replace(" ", "")


def test_every_search_tool_parameter_is_described_and_lanes_are_enumerated(indexed: HippoSettings) -> None:
    async def go():  # noqa: ANN202
        async with Client(build_mcp(open_engine(indexed))) as client:
            return (await client.list_tools()).tools

    tools = {t.name: t for t in anyio.run(go)}
    for name in ("hippo_search", "hippo_get", "hippo_bundle", "hippo_feedback"):
        for param, schema in tools[name].input_schema["properties"].items():
            assert schema.get("description"), f"{name}.{param} has no description"
    lanes = tools["hippo_search"].input_schema["properties"]["lanes"]
    assert lanes["items"]["enum"] == ["wiki", "sources", "notes", "conversations"]


def test_an_mcp_search_is_logged_after_its_answer(indexed: HippoSettings) -> None:
    """The tool answers without waiting for the ledger; the query log still gets the search, in order."""
    engine = open_engine(indexed)
    queries = ["침실 온도", "nothing matches this zzqx mcp"]

    async def go() -> None:
        async with Client(build_mcp(engine)) as client:
            for q in queries:
                assert not (await client.call_tool("hippo_search", {"query": q, "limit": 3})).is_error

    anyio.run(go)
    engine.flush_log()
    assert engine.ledger is not None
    rows = engine.ledger.recent_queries()
    assert [r["query"] for r in rows[:2]] == queries[::-1]
