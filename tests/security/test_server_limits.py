"""`hippo serve` as a real uvicorn process, attacked over raw sockets (issue 9, points 7 and 1).

Bodies over the cap without a Content-Length (chunked) get 413 on every body route; a client that
dribbles its headers or its body is answered 408 and disconnected; and while large adversarial
captures are being scanned, `/health` keeps answering (scanning never runs on the event loop).
"""

from __future__ import annotations

import http.client
import json
import re
import select
import socket
import statistics
import threading
import time
from collections.abc import Iterator

import pytest

from hippo_server.app import MAX_BODY_BYTES, create_app
from hippo_settings import HippoSettings
from tests.security.conftest import TOKEN, Server, routes

TIMEOUT = 2  # HIPPO_HEADER_TIMEOUT and HIPPO_BODY_TIMEOUT of the server under test


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    from hippo_cli.vault_init import init_vault

    root = tmp_path_factory.mktemp("serve")
    init_vault(root / "vault")
    settings = HippoSettings(vault=root / "vault", home=root / "home", mcp_token=TOKEN)
    with Server(settings, HIPPO_HEADER_TIMEOUT=str(TIMEOUT), HIPPO_BODY_TIMEOUT=str(TIMEOUT)) as s:
        s.settings = settings  # type: ignore[attr-defined]
        yield s


def head(method: str, path: str, *extra: str) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", f"Authorization: Bearer {TOKEN}",
             "Content-Type: application/json", "Accept: application/json, text/event-stream", *extra]  # fmt: skip
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def status_of(sock: socket.socket) -> int:
    reply = b""
    while b"\r\n" not in reply:
        chunk = sock.recv(4096)
        if not chunk:
            break
        reply += chunk
    return int(reply.split(b" ", 2)[1])


def body_routes(settings: HippoSettings) -> list[str]:
    table = routes(create_app(settings))
    return sorted({path for method, path in table if method == "POST"})


def test_a_chunked_body_over_the_cap_is_413_on_every_body_route(server: Server) -> None:
    paths = body_routes(server.settings)  # type: ignore[attr-defined]
    assert {"/mcp", "/api/v1/captures", "/api/v1/bundle", "/api/v1/search"} <= set(paths)
    chunk = b"a" * 4096
    framed = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    for path in paths:
        with server.connect(timeout=30) as sock:
            sock.sendall(head("POST", path, "Transfer-Encoding: chunked"))
            try:
                for _ in range(MAX_BODY_BYTES // len(chunk) + 2):  # 24 KiB, never a Content-Length
                    sock.sendall(framed)
            except OSError:
                pass  # the server may answer and close before the rest is sent
            assert status_of(sock) == 413, path
        with server.connect(timeout=30) as sock:  # the same with a Content-Length that tells the truth
            sock.sendall(head("POST", path, f"Content-Length: {MAX_BODY_BYTES + 1}"))
            assert status_of(sock) == 413, path


def dribble(sock: socket.socket, start: bytes, unit: bytes, limit: float = 30.0) -> tuple[float, bytes]:
    """Send `start`, then `unit` every 0.2 s; return (seconds until the server closed, what it said)."""
    began = time.monotonic()
    sock.sendall(start)
    said = b""
    while time.monotonic() - began < limit:
        readable, _, _ = select.select([sock], [], [], 0.2)
        if readable:
            try:
                data = sock.recv(4096)
            except ConnectionResetError:
                data = b""
            if not data:
                return time.monotonic() - began, said
            said += data
            continue
        try:
            sock.sendall(unit)
        except OSError:
            return time.monotonic() - began, said
    return time.monotonic() - began, said


@pytest.mark.parametrize(
    ("name", "start", "unit"),
    [
        ("headers", b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", b"a"),
        ("body", head("POST", "/api/v1/captures", "Content-Length: 4000"), b"a"),
        ("chunked body", head("POST", "/api/v1/captures", "Transfer-Encoding: chunked"), b"1\r\na\r\n"),
        ("second request", b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /health HTTP/1.1\r\n", b"a"),
    ],
)
def test_a_slow_client_is_answered_408_and_closed(
    server: Server, name: str, start: bytes, unit: bytes
) -> None:
    with server.connect() as sock:
        took, said = dribble(sock, start, unit)
    assert took < 30, f"{name}: connection still open after 30 s of dribbling"
    assert took >= TIMEOUT * 0.9, f"{name}: closed after {took:.1f} s, before the timeout"
    statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", said)
    assert statuses[-1:] == [b"408"], said


def test_health_answers_while_adversarial_captures_are_scanned(server: Server) -> None:
    """Eight clients post 12 KB captures of the scanners' slowest shapes back to back; `/health` must keep
    answering in well under the time those scans take one after another."""
    shapes = ["-----BEGIN PRIVATE KEY-----\nA ", "ignore all ", "e\u0301", '"token": "', "<tool_use>", "Aa0+"]
    bodies = [
        json.dumps({"title": "t", "summary": shape * (12 * 1024 // len(shape.encode()) - 2)}).encode()
        for shape in shapes
    ]
    stop = threading.Event()
    scanned: list[float] = []

    def flood(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
        headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
        while not stop.is_set():
            began = time.monotonic()
            conn.request("POST", "/api/v1/captures", body=bodies[i % len(bodies)], headers=headers)
            response = conn.getresponse()
            response.read()
            assert response.status in (201, 422), response.status
            scanned.append(time.monotonic() - began)

    workers = [threading.Thread(target=flood, args=(i,), daemon=True) for i in range(8)]
    for w in workers:
        w.start()
    time.sleep(1.0)  # let the flood build up
    latencies = []
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    for _ in range(20):
        began = time.monotonic()
        conn.request("GET", "/health")
        assert json.loads(conn.getresponse().read())["status"] == "ok"
        latencies.append(time.monotonic() - began)
        time.sleep(0.1)
    stop.set()
    for w in workers:
        w.join(120)
    per_capture = statistics.median(scanned)
    print(f"health p50 {statistics.median(latencies):.3f} s max {max(latencies):.3f} s; "
          f"capture p50 {per_capture:.3f} s over {len(scanned)} captures")  # fmt: skip
    assert len(scanned) >= 8
    # On the event loop, a health check waits for the captures queued before it (eight in flight).
    assert statistics.median(latencies) < per_capture, (latencies, per_capture)
