"""A minimal MCP client over the librarian's streamable HTTP endpoint (JSON-RPC over POST, SSE or JSON
replies), for tests that need the HTTP path itself: the bearer token, its scope, the failure mapping."""

from __future__ import annotations

import json
from typing import Any

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def reply(text: str) -> dict[str, Any]:
    """The JSON-RPC reply of a POST: the body itself, or the `data:` line of an SSE stream."""
    text = text.strip()
    if text.startswith("{"):
        return json.loads(text)
    for line in text.splitlines():
        if line.startswith("data:") and '"jsonrpc"' in line:
            return json.loads(line[5:])
    raise AssertionError(f"no JSON-RPC reply in {text[:300]!r}")


class HttpMcp:
    """One MCP session over `post(path, body, headers) -> (status, headers, text)`."""

    def __init__(self, post: Any, headers: dict[str, str]) -> None:
        self.post = post
        self.headers = {**ACCEPT, **headers}
        status, head, text = post("/mcp", INIT, self.headers)
        assert status == 200, (status, text)
        self.headers["mcp-session-id"] = head["mcp-session-id"]
        self.post("/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"}, self.headers)
        self.n = 0

    def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        status, _, text = self.post("/mcp", {"jsonrpc": "2.0", "id": self.n, "method": method, "params": params},
                                    self.headers)  # fmt: skip
        assert status == 200, (status, text)
        return reply(text)["result"]

    def tools(self) -> list[str]:
        return sorted(t["name"] for t in self.rpc("tools/list", {})["tools"])

    def call(self, name: str, args: dict[str, Any]) -> tuple[bool, str]:
        """(is_error, the text of the result)."""
        out = self.rpc("tools/call", {"name": name, "arguments": args})
        return bool(out.get("isError")), out["content"][0]["text"] if out.get("content") else ""


def post_via(client: Any) -> Any:
    def post(path: str, body: Any, headers: dict[str, str]) -> tuple[int, Any, str]:
        r = client.post(path, content=json.dumps(body), headers=headers)
        return r.status_code, r.headers, r.text

    return post
