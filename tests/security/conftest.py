"""A real librarian over a fresh vault (not indexed: the checks here run before any search), and helpers
to start `hippo serve` as a real uvicorn process where sockets and timing matter."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from hippo_cli.vault_init import init_vault
from hippo_server.app import create_app
from hippo_settings import HippoSettings

TOKEN = "sec-token-9"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def fresh(tmp_path: Path, embed_cache: Path) -> HippoSettings:
    vault = tmp_path / "vault"
    init_vault(vault)
    return HippoSettings(vault=vault, home=tmp_path / "home", embed_cache_path=embed_cache, mcp_token=TOKEN)


@pytest.fixture
def api(fresh: HippoSettings) -> Iterator[TestClient]:
    with TestClient(create_app(fresh), raise_server_exceptions=False) as client:
        yield client


def routes(app) -> list[tuple[str, str]]:  # noqa: ANN001
    """(method, path) of every route in the app's table, path parameters filled in, plus the MCP mount."""
    out = []
    for route in app.routes:
        if isinstance(route, APIRoute) or hasattr(route, "methods"):
            path = route.path.replace("{conversation_id}", "c1")
            out += [(m, path) for m in sorted(route.methods or ()) if m != "HEAD"]
    out += [("POST", "/mcp"), ("GET", "/mcp")]
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`hippo serve` in a subprocess (real uvicorn, the real server config), stopped with SIGTERM."""

    def __init__(self, settings: HippoSettings, **env: str) -> None:
        self.port = free_port()
        self.env = {
            **os.environ,
            "HIPPO_VAULT": str(settings.vault),
            "HIPPO_HOME": str(settings.home),
            "HIPPO_EMBED_CACHE": str(settings.embed_cache),
            "HIPPO_PORT": str(self.port),
            "HIPPO_MCP_TOKEN": TOKEN,
            **env,
        }
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Server:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hippo_cli.main", "serve"], env=self.env, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.proc.stderr.read().decode()  # type: ignore[union-attr]
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.2)
        raise TimeoutError("hippo serve did not start in 180 s")

    def __exit__(self, *exc: object) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def connect(self, timeout: float = 5.0) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
