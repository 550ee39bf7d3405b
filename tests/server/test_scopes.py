"""Projects are boundaries when the person wants them (issue 22 item 8): scoped tokens from HIPPO_TOKENS on
REST and on the MCP endpoint, the single HIPPO_MCP_TOKEN unchanged, and REST checking Host and Origin as
the MCP endpoint does. Real app (TestClient), real vault and stores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from hippo_core.safety.tokens import TokenConfigError, parse_tokens
from hippo_server.app import create_app
from hippo_settings import HippoSettings
from tests.conftest import make_vault
from tests.server.mcp_http import HttpMcp, post_via

FULL = "full-token-000000001"
READER = "reader-token-0000001"
ALPHA = "alpha-token-00000001"
WRITE_TOOLS = {"hippo_checkpoint", "hippo_worklog", "hippo_handoff", "hippo_remember", "hippo_feedback",
               "hippo_capture_session"}  # fmt: skip


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = HippoSettings(
        vault=make_vault(tmp_path, with_inbox=False), home=tmp_path / "home", mcp_token=FULL,
        tokens=SecretStr(f"{READER}:read {ALPHA}:write:alpha,alpha-docs"),
        embed_url="http://127.0.0.1:9/v1", embed_retries=1,
    )  # fmt: skip
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        yield c


def checkpoint(client: TestClient, token: str, project: str, event: str):  # noqa: ANN201
    body = {
        "project": project,
        "kind": "work",
        "session_id": "s",
        "event_id": event,
        "summary": f"work on {project}",
    }
    return client.post("/api/v1/work/checkpoint", json=body, headers=bearer(token))


def test_the_single_token_keeps_every_right(client: TestClient) -> None:
    assert checkpoint(client, FULL, "beta", "e1").status_code == 201
    assert client.get("/api/v1/work/ghost/audit", headers=bearer(FULL)).status_code == 200
    assert (
        client.get(
            "/api/v1/work/resume", params={"project": "beta"}, headers={"Authorization": "Bearer nope"}
        ).status_code
        == 401
    )


def test_a_read_only_token_reads_and_is_offered_no_write_tool(client: TestClient) -> None:
    assert checkpoint(client, FULL, "beta", "e1").status_code == 201
    r = checkpoint(client, READER, "beta", "e2")
    assert r.status_code == 403 and "read-only" in r.json()["error"]["message"], r.text
    assert (
        client.get("/api/v1/work/resume", params={"project": "beta"}, headers=bearer(READER)).status_code
        == 200
    )
    r = client.post("/api/v1/work/worklog", json={"project": "beta", "entry": "x"}, headers=bearer(READER))
    assert r.status_code == 403
    mcp = HttpMcp(post_via(client), bearer(READER))
    offered = set(mcp.tools())
    assert "hippo_resume" in offered and "hippo_search" in offered and not offered & WRITE_TOOLS, offered
    is_error, text = mcp.call("hippo_checkpoint", {"project": "beta", "kind": "work", "summary": "x",
                                                   "session_id": "s", "event_id": "e3"})  # fmt: skip
    assert is_error and text.startswith("forbidden: "), text
    full = set(HttpMcp(post_via(client), bearer(FULL)).tools())
    assert full >= WRITE_TOOLS


def test_a_project_token_cannot_read_or_write_another_projects_work_memory(client: TestClient) -> None:
    assert checkpoint(client, FULL, "beta", "e1").status_code == 201
    assert checkpoint(client, ALPHA, "alpha", "e2").status_code == 201
    for path in ("/api/v1/work/resume", "/api/v1/work/sync"):
        r = client.get(path, params={"project": "beta"}, headers=bearer(ALPHA))
        assert r.status_code == 403 and "'beta' is not one" in r.json()["error"]["message"], r.text
        assert client.get(path, params={"project": "alpha"}, headers=bearer(ALPHA)).status_code == 200
    assert checkpoint(client, ALPHA, "beta", "e3").status_code == 403
    assert client.get("/api/v1/work/ghost/audit", headers=bearer(ALPHA)).status_code == 403
    r = client.post(
        "/api/v1/work/ghost/search", json={"query": "x", "current_project": "beta"}, headers=bearer(ALPHA)
    )
    assert r.status_code == 403
    mcp = HttpMcp(post_via(client), bearer(ALPHA))
    is_error, text = mcp.call("hippo_resume", {"project": "beta"})
    assert is_error and text.startswith("forbidden: ") and "beta" in text, text
    is_error, text = mcp.call("hippo_sync", {"project": "alpha"})
    assert not is_error and "work on alpha" in text and "work on beta" not in text, text
    is_error, _ = mcp.call("hippo_list_recent_conversations", {})
    assert is_error  # every project's conversations: name one


def test_rest_checks_host_and_origin_as_the_mcp_endpoint_does(client: TestClient) -> None:
    ok = client.get("/api/v1/status", headers={**bearer(FULL), "Host": "127.0.0.1:8787"})
    assert ok.status_code == 200, ok.text
    rebound = client.get("/api/v1/status", headers={**bearer(FULL), "Host": "evil.example:8787"})
    assert rebound.status_code == 421, rebound.text
    foreign = client.get("/api/v1/status", headers={**bearer(FULL), "Origin": "https://evil.example"})
    assert foreign.status_code == 403, foreign.text
    local = client.get("/api/v1/status", headers={**bearer(FULL), "Origin": "http://localhost:3000"})
    assert local.status_code == 200
    assert client.get("/health", headers={"Host": "evil.example"}).status_code == 200  # liveness stays open


def test_a_bad_tokens_setting_names_the_entry_never_the_token() -> None:
    with pytest.raises(TokenConfigError) as bad:
        parse_tokens("short:read")
    assert "entry 1" in str(bad.value) and "short" not in str(bad.value)
    with pytest.raises(TokenConfigError) as bad:
        parse_tokens(f"{READER}:admin")
    assert READER not in str(bad.value)
    assert parse_tokens(f"{ALPHA}:write:a,b")[0].access.projects == frozenset({"a", "b"})
