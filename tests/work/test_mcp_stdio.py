"""Two agents through `hippo mcp` over stdio, with the official MCP client (mcp.client.stdio): the
server is a real subprocess on a real git vault and a SQLite work store; no index, so search is gated."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from hippo_resources.work_store import WorkStore
from tests.conftest import make_vault

REPO_ROOT = Path(__file__).parent.parent.parent
AWS_KEY = "AKIA" + "QWERTYUIOPASDFGH"  # an AWS-shaped access key id, built so this file holds none


def server(home: Path, vault: Path | None) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIPPO_")}
    env.update(HIPPO_HOME=str(home), PYTHONPATH=str(REPO_ROOT), OMP_NUM_THREADS="1")
    env["HIPPO_VAULT"] = str(vault) if vault else str(home / "no-vault-here")
    return StdioServerParameters(command=sys.executable, args=["-m", "hippo_cli.main", "mcp"], env=env)


async def session_run(params: StdioServerParameters, calls) -> Any:  # noqa: ANN001
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await calls(s)


def data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    return result.structured_content


def test_two_agents_share_work_memory_over_stdio(tmp_path: Path) -> None:
    home, vault = tmp_path / "home", make_vault(tmp_path, with_inbox=False)
    params = server(home, vault)
    project = "payments-api"

    async def agent_a(s: ClientSession) -> dict[str, Any]:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        first = data(await s.call_tool("hippo_checkpoint", {
            "project": project, "kind": "work", "summary": "Pool timeout raised to 30 s; flaky test next.",
            "session_id": "sess-a", "event_id": "e1", "agent": "claude-code"}))  # fmt: skip
        resent = data(await s.call_tool("hippo_checkpoint", {
            "project": project, "kind": "work", "summary": "Pool timeout raised to 30 s; flaky test next.",
            "session_id": "sess-a", "event_id": "e1", "agent": "claude-code"}))  # fmt: skip
        for i in range(2, 6):
            data(await s.call_tool("hippo_checkpoint", {
                "project": project, "kind": "conversation", "summary": f"Conversation step {i}.",
                "session_id": "sess-a", "event_id": f"e{i}"}))  # fmt: skip
        secret = await s.call_tool("hippo_checkpoint", {
            "project": project, "kind": "work", "summary": f"deploy with key {AWS_KEY}",
            "session_id": "sess-a", "event_id": "e-secret"})  # fmt: skip
        bad_slug = await s.call_tool("hippo_sync", {"project": "Payments API"})
        return {"tools": tools, "first": first, "resent": resent, "secret": secret, "bad_slug": bad_slug}

    a = anyio.run(session_run, params, agent_a)
    schema = a["tools"]["hippo_checkpoint"].input_schema
    assert schema["properties"]["kind"]["enum"] == ["work", "conversation"]
    assert all(p.get("description") for p in schema["properties"].values())
    assert {"hippo_search", "hippo_get", "hippo_bundle"}.isdisjoint(a["tools"])  # nothing indexed: gated
    assert {"hippo_resume", "hippo_sync", "hippo_worklog", "hippo_handoff", "hippo_remember"} <= set(
        a["tools"]
    )
    assert a["first"]["seq"] == 1 and a["first"]["duplicate"] is False
    assert a["resent"] == {**a["first"], "duplicate": True}  # the first record, never a second
    assert "unseen" not in a["first"] and "base_cursor" not in a["first"]  # compact: no nulls, no verbose
    assert a["secret"].is_error and "refused: summary holds a credential" in a["secret"].content[0].text
    assert a["bad_slug"].is_error and "must be lowercase" in a["bad_slug"].content[0].text

    async def agent_b(s: ClientSession) -> dict[str, Any]:
        resume = data(await s.call_tool("hippo_resume", {"project": project, "session_id": "sess-b"}))
        pages, since = [], "0"
        while True:
            page = data(await s.call_tool("hippo_sync", {"project": project, "since": since, "limit": 2}))
            pages.append(page)
            since = page["cursor"]
            if not page["has_more"]:
                break
        stale = data(await s.call_tool("hippo_checkpoint", {
            "project": project, "kind": "work", "summary": "Reviewed the pool change.",
            "session_id": "sess-b", "event_id": "b1", "base_cursor": pages[0]["cursor"], "verbose": True}))  # fmt: skip
        log = data(await s.call_tool("hippo_worklog", {
            "project": project, "entry": "Reviewed the pool change", "next": "merge it", "agent": "codex"}))  # fmt: skip
        return {"resume": resume, "pages": pages, "stale": stale, "log": log}

    b = anyio.run(session_run, params, agent_b)
    seen = {c["summary"] for c in b["resume"]["checkpoints"]}
    assert "Pool timeout raised to 30 s; flaky test next." in seen and "Conversation step 5." in seen
    generation = b["resume"]["cursor"].split(":")[0]
    assert b["resume"]["cursor"] == f"{generation}:5"
    assert [len(p["entries"]) for p in b["pages"]] == [2, 2, 1]
    assert [e["seq"] for p in b["pages"] for e in p["entries"]] == [1, 2, 3, 4, 5]
    assert b["stale"]["seq"] == 6 and [e["seq"] for e in b["stale"]["unseen"]] == [3, 4, 5]
    assert b["stale"]["base_cursor"] == f"{generation}:2"  # verbose: the long form
    assert b["log"]["path"] == f"50-ops/{project}/worklog.md" and b["log"]["commit"]
    text = (vault / b["log"]["path"]).read_text(encoding="utf-8")
    assert "(codex): Reviewed the pool change. Next: merge it." in text

    store = WorkStore(path=str(home / "work.sqlite"))
    assert [e.event_id for e in store.after(project, 0, 100)] == ["e1", "e2", "e3", "e4", "e5", "b1"]
    store.after_restore()  # what `hippo restore` does: a new generation

    async def after_restore(s: ClientSession) -> Any:
        return await s.call_tool("hippo_sync", {"project": project, "since": b["pages"][-1]["cursor"]})

    old = anyio.run(session_run, params, after_restore)
    assert old.is_error and "invalid_cursor: cursor is from store generation" in old.content[0].text


def test_without_a_vault_the_vault_tools_are_not_offered(tmp_path: Path) -> None:
    params = server(tmp_path / "home", None)

    async def listing(s: ClientSession) -> tuple[set[str], Any]:
        names = {t.name for t in (await s.list_tools()).tools}
        cp = await s.call_tool("hippo_checkpoint", {
            "project": "p", "kind": "work", "summary": "works without a vault", "session_id": "s", "event_id": "1"})  # fmt: skip
        return names, cp

    names, cp = anyio.run(session_run, params, listing)
    assert {"hippo_worklog", "hippo_handoff", "hippo_remember", "hippo_capture_session"}.isdisjoint(names)
    assert {"hippo_search", "hippo_get", "hippo_bundle"}.isdisjoint(names)
    assert {"hippo_resume", "hippo_sync", "hippo_checkpoint", "hippo_ghost_search", "hippo_feedback"} <= names
    assert data(cp)["seq"] == 1
