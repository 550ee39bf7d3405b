"""Tool errors are cheap (issue 22 item 3, attack-run-2 N5): 30 concurrent failing MCP calls over the real
HTTP endpoint of a real `hippo serve` leave `/health` answering at once, and each call gets its reason.

Before: every unmapped tool exception was logged by the SDK with a rich traceback rendered on the event
loop (1-5 s each): 30 at once held `/health` for ~24 s in the attack run. Now they are mapped
(`not_found: …`) and logged in one line by a thread of their own."""

from __future__ import annotations

import http.client
import json
import os
import threading
import time
from pathlib import Path

from hippo_cli.vault_init import init_vault
from hippo_settings import HippoSettings
from tests.security.conftest import TOKEN, Server
from tests.server.mcp_http import INIT, reply

STORM = 30
HEALTH_BOUND = 5.0  # seconds; the old code held /health for tens of seconds (23.8 s) under this storm


def post(port: int, body: dict, headers: dict[str, str]) -> tuple[int, http.client.HTTPMessage, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("POST", "/mcp", body=json.dumps(body), headers=headers)
    r = conn.getresponse()
    text = r.read().decode("utf-8", "replace")
    conn.close()
    return r.status, r.headers, text


def test_thirty_failing_tool_calls_leave_health_answering(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    init_vault(vault)
    os.symlink("/etc/passwd", vault / "50-ops" / "leak.md")
    settings = HippoSettings(vault=vault, home=tmp_path / "home", mcp_token=TOKEN)
    with Server(settings) as server:
        headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream"}  # fmt: skip
        status, head, text = post(server.port, INIT, headers)
        assert status == 200, text
        headers["mcp-session-id"] = head["mcp-session-id"]
        post(server.port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)

        answers: list[dict] = []
        health: list[float] = []
        done = threading.Event()

        def fail(i: int) -> None:
            call = {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                    "params": {"name": "hippo_get", "arguments": {"ref": "50-ops/leak.md"}}}  # fmt: skip
            answers.append(reply(post(server.port, call, headers)[2])["result"])

        def poll_health() -> None:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
            while not done.is_set():
                began = time.monotonic()
                conn.request("GET", "/health")
                assert json.loads(conn.getresponse().read())["status"] == "ok"
                health.append(time.monotonic() - began)
                time.sleep(0.05)

        poller = threading.Thread(target=poll_health, daemon=True)
        poller.start()
        began = time.monotonic()
        storm = [threading.Thread(target=fail, args=(i,), daemon=True) for i in range(STORM)]
        for t in storm:
            t.start()
        for t in storm:
            t.join(180)
        took = time.monotonic() - began
        done.set()
        poller.join(180)

    print(f"{STORM} failing calls in {took:.2f} s; /health max {max(health):.3f} s over {len(health)} checks")
    assert len(answers) == STORM
    for a in answers:
        assert a["isError"] and a["content"][0]["text"].startswith("not_found: "), a
        assert "passwd" not in a["content"][0]["text"].replace("50-ops/leak.md", "")
    assert health and max(health) < HEALTH_BOUND, health
