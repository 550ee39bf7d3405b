"""The UserPromptSubmit hook as the agent runs it (a real `hippo hook claude-code` process): bad input, a
secret in the prompt, a librarian that is down or slow (a real HTTP server on loopback), and a real answer
from the indexed fixture vault."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hippo_search.client import store_id
from tests.reliability.servers import free_port

REPO_ROOT = Path(__file__).parent.parent.parent
SECRET = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"


def hook_env(home: Path, vault: Path, port: int, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HIPPO_", "DAGSTER_"))}
    env |= {
        "HIPPO_HOME": str(home), "HIPPO_VAULT": str(vault), "HIPPO_PORT": str(port), "HIPPO_HOOK_INGEST": "false",
        "PYTHONPATH": str(REPO_ROOT), "HOME": str(home / "user-home"), **extra,
    }  # fmt: skip
    return env


def run_hook(
    env: dict[str, str], stdin: str | bytes, *flags: str
) -> tuple[subprocess.CompletedProcess[bytes], float]:
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, *flags, "-m", "hippo_cli.main", "hook", "claude-code"],
        input=stdin.encode() if isinstance(stdin, str) else stdin, capture_output=True, env=env, timeout=120,
        check=False,
    )  # fmt: skip
    return result, time.monotonic() - started


def prompt_payload(prompt: str, cwd: Path) -> str:
    return json.dumps(
        {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "cwd": str(cwd), "prompt": prompt}
    )


def log_of(home: Path) -> str:
    path = home / "logs" / "hooks.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


@pytest.mark.parametrize(
    ("stdin", "logged"),
    [
        ("", "not JSON"),
        ("{not json", "not JSON"),
        ('["a list"]', "not a JSON object"),
        ('{"hook_event_name": "UserPromptSubmit", "prompt": 7}', "bad fields"),
        ('{"hook_event_name": "UserPromptSubmit", "prompt": "   "}', "prompt: empty"),
        (
            '{"hook_event_name": "UserPromptSubmit", "prompt": "' + "a" * (2 * 1024 * 1024) + '"}',
            "larger than 1 MiB",
        ),
        ("[" * 100_000, "nested too deep"),
        (b"\xff\xfe\x00garbage", "error: "),
    ],
)
def test_bad_input_exits_0_prints_nothing_and_logs_the_reason(
    tmp_path: Path, stdin: str | bytes, logged: str
) -> None:
    env = hook_env(tmp_path / "home", tmp_path / "vault", free_port(), HIPPO_RECALL_LOCAL="false")
    result, _ = run_hook(env, stdin)
    assert (result.returncode, result.stdout) == (0, b"")
    assert logged in log_of(tmp_path / "home")


def test_a_secret_in_the_prompt_is_never_logged_and_no_librarian_means_nothing(tmp_path: Path) -> None:
    env = hook_env(tmp_path / "home", tmp_path / "vault", free_port(), HIPPO_RECALL_LOCAL="false")
    for payload in (
        prompt_payload(f"deploy with token {SECRET} please", tmp_path),
        '{"hook_event_name": "UserPromptSubmit", "prompt": ["' + SECRET + '"]}',  # a bad field holding it
        '{"hook_event_name": 5, "prompt": "' + SECRET + '"}',
    ):
        result, _ = run_hook(env, payload)
        assert (result.returncode, result.stdout) == (0, b"")
    log = log_of(tmp_path / "home")
    assert log.count("\n") == 3 and SECRET not in log and SECRET[:12] not in log


class SlowLibrarian(ThreadingHTTPServer):
    """A librarian that serves the hook's stores (its /health says so) and then never answers in time."""

    daemon_threads = True

    def __init__(self, port: int, store: str) -> None:
        self.store = store
        self.release = threading.Event()
        self.recall_calls = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                body = json.dumps({"status": "ok", "service": "hippocampus", "store": server.store}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:  # noqa: N802
                server.recall_calls += 1
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                server.release.wait(60)  # slower than any budget; released at teardown

        super().__init__(("127.0.0.1", port), Handler)


@pytest.fixture
def slow_librarian(tmp_path: Path) -> Iterator[tuple[SlowLibrarian, int]]:
    port = free_port()
    server = SlowLibrarian(port, store_id(tmp_path / "home"))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server, port
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()


def test_a_slow_librarian_cannot_hold_the_agent_and_the_hook_imports_no_pipeline(
    tmp_path: Path, slow_librarian: tuple[SlowLibrarian, int]
) -> None:
    server, port = slow_librarian
    # a budget that process start fits in on a loaded machine; the server holds the request 60 s
    env = hook_env(tmp_path / "home", tmp_path / "vault", port, HIPPO_RECALL_BUDGET_MS="8000")
    result, elapsed = run_hook(
        env, prompt_payload("what did we decide about the retry policy?", tmp_path), "-X", "importtime"
    )
    assert (result.returncode, result.stdout) == (0, b"")
    assert server.recall_calls == 1  # it did ask, and stopped waiting
    assert "over budget" in log_of(tmp_path / "home")
    assert elapsed < 40  # the server holds the request 60 s: the hook left long before
    imported = {
        line.split("|")[-1].strip().split(".")[0]
        for line in result.stderr.decode().splitlines()
        if "|" in line
    }
    assert not imported & {"dagster", "chromadb", "kiwipiepy", "polars", "numpy"}, imported & {
        "dagster",
        "chromadb",
    }


def test_no_librarian_and_a_vault_never_indexed_prints_nothing(tmp_path: Path) -> None:
    env = hook_env(tmp_path / "home", tmp_path / "vault", free_port(), HIPPO_RECALL_BUDGET_MS="1500")
    result, _ = run_hook(env, prompt_payload("what did we decide about the retry policy?", tmp_path))
    assert (result.returncode, result.stdout) == (0, b"")
    assert "prompt:" in log_of(tmp_path / "home")
