"""One query, one envelope: a real `hippo serve` answers over REST and MCP, and `hippo search --json`
answers through it (the fast path) and in its own process; all four must be the same envelope."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client

from hippo_settings import HippoSettings
from tests.resources.test_embedder import free_port

QUERY = "침실의 온도를 어떻게 맞춰야 하나요"
HIPPO = [sys.executable, "-m", "hippo_cli.main"]
HEAVY = ("chromadb", "dagster", "kiwipiepy", "hippo_search.pipeline")


def cli_env(settings: HippoSettings, port: int) -> dict[str, str]:
    return {
        **os.environ,
        "HIPPO_VAULT": str(settings.vault),
        "HIPPO_HOME": str(settings.home),
        "HIPPO_EMBED_CACHE": str(settings.embed_cache),
        "HIPPO_HOST": "127.0.0.1",
        "HIPPO_PORT": str(port),
        "OMP_NUM_THREADS": "1",
    }


@contextmanager
def serving(settings: HippoSettings, log: Path, **extra: str) -> Iterator[tuple[str, dict[str, str]]]:
    """`hippo serve` in its own process on a free port; stopped with SIGTERM."""
    port = free_port()
    env = {**cli_env(settings, port), **extra}
    with open(log, "wb") as out:
        proc = subprocess.Popen([*HIPPO, "serve"], env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"hippo serve exited with {proc.returncode}: {log.read_text()}")
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"hippo serve did not come up: {log.read_text()}")
            time.sleep(0.1)
        yield url, env
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture
def librarian(indexed: HippoSettings, tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    with serving(indexed, tmp_path / "serve.log") as running:
        yield running


def cli_search(env: dict[str, str], *flags: str) -> tuple[dict, str]:
    """`hippo search --json` as a person runs it; returns the envelope and the modules it imported."""
    proc = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "hippo_cli.main",
            "search",
            QUERY,
            "--k",
            "5",
            "--json",
            *flags,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout), proc.stderr


def imported(importtime: str) -> set[str]:
    return {
        line.rsplit("|", 1)[-1].strip() for line in importtime.splitlines() if line.startswith("import time:")
    }


def test_rest_mcp_and_the_cli_return_the_same_envelope(librarian: tuple[str, dict[str, str]]) -> None:
    url, env = librarian
    rest = httpx.post(f"{url}/api/v1/search", json={"query": QUERY, "limit": 5}, timeout=120)
    assert rest.status_code == 200, rest.text

    async def over_mcp() -> dict:
        async with Client(f"{url}/mcp") as client:
            result = await client.call_tool("hippo_search", {"query": QUERY, "limit": 5})
            assert not result.is_error
            return result.structured_content

    mcp = anyio.run(over_mcp)
    fast, fast_imports = cli_search(env)
    local, local_imports = cli_search(env, "--local")

    envelope = rest.json()
    assert envelope["results"][0]["anchor"] == "20-wiki/health/sleep-hygiene.md#침실 환경"
    assert envelope["kind"] == "hippocampus.search" and envelope["status"] == "ok"
    assert mcp == envelope
    assert fast == envelope
    assert local == envelope
    # the fast path asked the librarian with light imports; the local one loaded the pipeline itself
    assert not imported(fast_imports) & set(HEAVY), sorted(imported(fast_imports) & set(HEAVY))
    assert set(HEAVY) <= imported(local_imports)


def test_a_librarian_of_other_stores_is_not_asked(
    librarian: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    _, env = librarian
    other = {**env, "HIPPO_HOME": str(tmp_path / "empty-home")}  # same port, other stores: never indexed
    proc = subprocess.run([*HIPPO, "search", QUERY, "--json"], env=other, capture_output=True, text=True)
    assert proc.returncode == 3 and "nothing is indexed yet" in proc.stderr


def test_a_closed_pipe_ends_quietly(librarian: tuple[str, dict[str, str]]) -> None:
    _, env = librarian
    for flags in ([], ["--local"]):
        proc = subprocess.Popen(
            [*HIPPO, "search", QUERY, "--json", *flags],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # the reader is gone before anything is written: every write meets EPIPE
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=300) == 141, err
        assert "Traceback" not in err and "Exception ignored" not in err, err
    shell = subprocess.run(
        f"{' '.join(HIPPO)} search '{QUERY}' --json --k 50 | head -c 10",
        shell=True,
        env=env,
        capture_output=True,
        text=True,
    )
    assert shell.stdout == '{\n  "kind"' and "Traceback" not in shell.stderr, shell.stderr


def test_the_fast_path_sends_the_token_and_without_it_searches_in_process(
    indexed: HippoSettings, tmp_path: Path
) -> None:
    with serving(indexed, tmp_path / "serve.log", HIPPO_MCP_TOKEN="s3cret-token") as (url, env):
        assert httpx.post(f"{url}/api/v1/search", json={"query": QUERY}).status_code == 401
        fast, fast_imports = cli_search(env)
        assert not imported(fast_imports) & set(HEAVY)  # answered by the librarian, token accepted
        without = {k: v for k, v in env.items() if k != "HIPPO_MCP_TOKEN"}
        local, local_imports = cli_search(without)  # refused by the librarian: searched in process
        assert set(HEAVY) <= imported(local_imports)
    assert local == fast and fast["results"][0]["anchor"] == "20-wiki/health/sleep-hygiene.md#침실 환경"
