"""Real outside processes the reliability tests start and stop: the OpenAI-compatible fake embedder
(`python -m eval.fake_embedder`) on a chosen port, so a test can take the embedder down and bring it back."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FakeEmbedder:
    """`eval.fake_embedder` as a subprocess on a fixed port: `start()`, `stop()` (SIGKILL), `texts()`."""

    def __init__(self, port: int | None = None, dim: int = 384) -> None:
        self.port = port or free_port()
        self.dim = dim
        self.proc: subprocess.Popen[str] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeEmbedder:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "eval.fake_embedder", "--port", str(self.port), "--dim", str(self.dim)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("PORT "), line
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=1).raise_for_status()
                return self
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError("the fake embedder did not answer")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(timeout=30)
            self.proc = None

    def texts(self) -> int:
        """Passages and queries embedded since this process started."""
        return int(httpx.get(f"http://127.0.0.1:{self.port}/stats", timeout=5).json()["texts"])
