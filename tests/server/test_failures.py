"""No 500s: every failure of a route or an MCP tool is a 4xx (or 503) with its reason, from one mapping
(`hippo_server.schemas.failure_of`), on REST and MCP alike (issue 22 item 4, attack-run-2 N7).

The librarian here is the real app (TestClient, real vault in git, real SQLite stores, nothing indexed);
the MCP calls go over its streamable HTTP endpoint."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from hippo_server.app import create_app
from hippo_settings import HippoSettings
from tests.conftest import make_vault
from tests.security.conftest import routes
from tests.server.mcp_http import HttpMcp, post_via

TOKEN = "failures-token-1"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
BAD_YAML = "---\ntitle: [unclosed\n---\n\n# Note\n\nbody\n"


@pytest.fixture
def settings(tmp_path: Path) -> HippoSettings:
    vault = make_vault(tmp_path, with_inbox=False)
    outside = tmp_path / "outside"
    outside.mkdir()
    (vault / "50-ops").mkdir(exist_ok=True)
    os.symlink(outside, vault / "50-ops" / "outlink")  # a project folder that leads out of the vault
    (vault / "50-ops" / "bad-yaml-note.md").write_text(BAD_YAML, encoding="utf-8")
    return HippoSettings(vault=vault, home=tmp_path / "home", mcp_token=TOKEN, embed_url="http://127.0.0.1:9/v1",
                         embed_retries=1)  # fmt: skip


@pytest.fixture
def client(settings: HippoSettings) -> Iterator[TestClient]:
    with TestClient(create_app(settings), headers=AUTH, raise_server_exceptions=False) as c:
        yield c


def error_of(r) -> dict:  # noqa: ANN001
    assert r.status_code < 500 or r.status_code == 503, (r.status_code, r.text)
    return r.json()["error"]


def test_the_attack_runs_500s_are_4xx_with_their_reason_on_rest_and_mcp(
    client: TestClient, settings: HippoSettings, tmp_path: Path
) -> None:
    long_query = "q" * 1025
    r = client.post("/api/v1/work/ghost/search", json={"query": long_query, "current_project": "p"})
    assert r.status_code == 422 and "bytes" in error_of(r)["message"]
    for route, body in [
        ("worklog", {"project": "outlink", "entry": "x"}),
        ("handoff", {"project": "outlink", "text": "x"}),
        ("remember", {"project": "outlink", "name": "n", "body": "b"}),
    ]:
        r = client.post(f"/api/v1/work/{route}", json=body)
        assert r.status_code == 422, (route, r.status_code, r.text)
        assert "outside the vault" in error_of(r)["message"]
    assert list((tmp_path / "outside").iterdir()) == []  # nothing written through the link
    r = client.get("/api/v1/documents", params={"ref": "50-ops/bad-yaml-note.md"})
    assert r.status_code == 422 and error_of(r)["code"] == "bad_frontmatter"
    assert "invalid YAML" in error_of(r)["message"]

    mcp = HttpMcp(post_via(client), AUTH)
    failing = {
        "hippo_ghost_search": {"query": long_query, "current_project": "p"},
        "hippo_worklog": {"project": "outlink", "entry": "x"},
        "hippo_handoff": {"project": "outlink", "text": "x"},
        "hippo_remember": {"project": "outlink", "name": "n", "body": "b"},
        "hippo_get": {"ref": "50-ops/bad-yaml-note.md"},
    }
    for tool, args in failing.items():
        is_error, text = mcp.call(tool, args)
        assert is_error, (tool, text)
        code = text.split(":", 1)[0]
        assert code in ("invalid_request", "refused", "bad_frontmatter"), (tool, text)
        assert "Error executing tool" not in text, text  # the reason is given, not the SDK's bare line


# Values that broke a route once, or would: too long, not text, a path out, a loop, deep, wrong type.
HOSTILE_VALUES: list[object] = [
    "q" * 5000, "\udcff", "../../etc/passwd", "50-ops/outlink/x.md", "50-ops/bad-yaml-note.md", "",
    " ", "\x00", -1, 10**30, 1.5e308, None, True, [], {}, [[[[[]]]]], {"a": {"b": {}}}, "0:99999999999999999999",
    "ghost/zzz", "ghp_" + "a1B2" * 9,
]  # fmt: skip
FIELDS = ["project", "query", "ref", "since", "limit", "days", "current_project", "session_id", "event_id",
          "summary", "kind", "entry", "text", "name", "body", "anchor", "useful", "question", "k", "title",
          "memory_id", "around", "window", "conversation_id", "lanes", "path_prefix", "scope", "verbose"]  # fmt: skip


def hostile_requests(method: str) -> Iterator[dict]:
    for value in HOSTILE_VALUES:
        if method == "GET":
            if isinstance(value, str | int | float) and not isinstance(value, bool) and value != "\udcff":
                yield {"params": {f: str(value)[:1500] for f in FIELDS}}  # a URL holds ~64 KB
        else:
            yield {"content": json.dumps({f: value for f in FIELDS})}
            yield {
                "content": json.dumps({"project": "p", "current_project": "p", "query": value, "ref": value})
            }
    if method == "GET":
        yield {"query": "&".join(f"{f}=%ff%ed%b3%bf" for f in FIELDS)}  # not UTF-8, a lone surrogate's bytes
    else:
        yield {"content": b"\xff\xfe not utf-8"}
        yield {"content": b"[1, 2"}
        yield {"content": json.dumps([1, 2])}
        yield {"content": json.dumps("text")}


def test_every_route_answers_hostile_input_without_a_500(client: TestClient) -> None:
    """The walk the attack run made, by the route table: a new route is walked without editing this."""
    table = [(m, p) for m, p in routes(client.app) if p != "/mcp" and not p.startswith(("/docs", "/redoc"))]
    assert len(table) >= 17, table
    seen = 0
    for method, path in table:
        for extra in hostile_requests(method):
            headers = {"Content-Type": "application/json"} if "content" in extra else {}
            url = f"{path}?{extra.pop('query')}" if "query" in extra else path
            r = client.request(method, url, headers=headers, **extra)
            seen += 1
            assert r.status_code < 500 or r.status_code == 503, (
                method,
                path,
                extra,
                r.status_code,
                r.text[:300],
            )
            if r.status_code >= 400:
                body = r.json()
                assert set(body["error"]) >= {"code", "message"}, (method, path, body)
    print(f"{seen} hostile requests over {len(table)} routes")
