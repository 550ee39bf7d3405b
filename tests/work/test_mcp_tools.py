"""The work and ghost MCP tools with the SDK's in-memory client: ghost feedback through hippo_feedback,
compact results and `verbose`, and capability gating when the index check fails (kept) or finds none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from hippo_resources.lexical_store import MANIFEST
from hippo_search.pipeline import open_engine
from hippo_server.mcp import build_mcp
from hippo_server.mcp.stdio import INDEX_TOOLS, capabilities, gate
from hippo_settings import HippoSettings
from hippo_work.conversations import ConversationMemory
from hippo_work.wiring import WorkServices
from tests.conftest import make_vault


def settings_for(tmp_path: Path) -> HippoSettings:
    return HippoSettings(vault=make_vault(tmp_path, with_inbox=False), home=tmp_path / "home")


def server(settings: HippoSettings):  # noqa: ANN201
    engine = open_engine(settings)
    services = WorkServices.from_settings(settings, engine.vault, None)  # no embedder: shared-word ranking
    mcp = build_mcp(engine, ConversationMemory(settings.chunks_dir, engine.vault), services)
    return mcp, engine, services


def run(mcp, calls) -> Any:  # noqa: ANN001
    async def go() -> Any:
        async with Client(mcp) as client:
            return await calls(client)

    return anyio.run(go)


def test_ghost_tools_and_feedback(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    mcp, _, services = server(settings)

    async def remember(c: Client) -> Any:
        return (await c.call_tool("hippo_remember", {
            "name": "retry once", "body": "Retry a flaky fetch once, never in a loop.",
            "project": "infra", "scope": "shared"})).structured_content  # fmt: skip

    memory = run(mcp, remember)
    services.ghost.promote()
    vault = services.ghost.vault
    allow = vault.abs("90-system/ghost-allowlist.md").read_text(encoding="utf-8")
    vault.write_text("90-system/ghost-allowlist.md", allow.replace("- [ ] ", "- [x] "))
    services.ghost.promote()

    async def use(c: Client) -> Any:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        found = (await c.call_tool("hippo_ghost_search", {
            "query": "flaky fetch", "current_project": "billing", "session_id": "s1"})).structured_content  # fmt: skip
        long = (await c.call_tool("hippo_ghost_search", {
            "query": "flaky fetch", "current_project": "billing", "verbose": True})).structured_content  # fmt: skip
        fb = await c.call_tool("hippo_feedback", {"anchor": found["results"][0]["anchor"], "useful": True})
        no_query = await c.call_tool("hippo_feedback", {"anchor": "notes/x.md#y", "useful": True})
        return tools, found, long, fb, no_query

    tools, found, long, fb, no_query = run(mcp, use)
    assert tools["hippo_remember"].input_schema["properties"]["scope"]["enum"] == ["project", "shared"]
    assert tools["hippo_capture_session"].input_schema["properties"]["kind"]["enum"][0] == "debugging"
    for name, tool in tools.items():  # the search tools' schemas belong to the search library
        if name not in INDEX_TOOLS:
            props = tool.input_schema.get("properties", {})
            assert all(p.get("description") for p in props.values()), name
    (hit,) = found["results"]
    assert hit["memory_id"] == memory["memory_id"] and "similarity" not in hit and "score" in hit
    assert {"similarity", "recency", "activation", "read_multiplier"} <= set(long["results"][0])
    assert not fb.is_error and fb.structured_content["activation"] == 1.2
    assert no_query.is_error and "needs the query" in no_query.content[0].text
    reads = services.ghost.audit().reads
    assert [(r.session_id, r.project) for r in reads] == [(None, "billing"), ("s1", "billing")]


def test_capability_gating_keeps_tools_on_a_transient_error(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    mcp, engine, _ = server(settings)
    none = capabilities(settings, engine)
    assert none.vault and not none.index and "nothing is indexed" in none.why[0]

    manifest = Path(engine.lexical_store.path) / MANIFEST
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text('{"generation": "gen-1", "chu', encoding="utf-8")  # half written: a transient state
    flaky = capabilities(settings, engine)
    assert flaky.index and "search tools kept" in flaky.why[0]
    assert gate(mcp, flaky) == []
    assert gate(mcp, none) == list(INDEX_TOOLS)

    gone = settings.model_copy(update={"vault": tmp_path / "nowhere"})
    no_vault = capabilities(gone, None)
    assert not no_vault.vault and not no_vault.index
