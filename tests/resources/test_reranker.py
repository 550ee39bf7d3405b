"""`Reranker` against a real HTTP server started here: scores on success, fused order on any failure."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hippo_core.rerank import MalformedRerank, parse_scores, reorder
from hippo_resources.reranker import Reranker


class _Server:
    """A tiny `/rerank` server; `mode` decides the answer of the next requests."""

    def __init__(self) -> None:
        self.mode = "tei"
        self.bodies: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.bodies.append(body)
                docs = body.get("documents") or body.get("texts") or []
                # relevance: how many query words a document contains (a real, if tiny, cross-encoder)
                words = set(body["query"].lower().split())
                scores = [len(words & set(d.lower().split())) for d in docs]
                if server.mode == "slow":
                    time.sleep(1.0)
                if server.mode == "500":
                    return self._send(500, b'{"error": "model not loaded"}')
                if server.mode == "garbage":
                    return self._send(200, b"<html>not json</html>")
                if server.mode == "short":  # one document's score is missing
                    return self._send(200, json.dumps([{"index": 0, "score": 1.0}]).encode())
                if server.mode == "vllm":
                    results = [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]
                    return self._send(200, json.dumps({"results": results[::-1]}).encode())
                return self._send(
                    200, json.dumps([{"index": i, "score": s} for i, s in enumerate(scores)]).encode()
                )

            def _send(self, code: int, payload: bytes) -> None:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/rerank"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    s = _Server()
    yield s
    s.close()


DOCS = ["a cat sat", "the dog barked at the cat", "dog cat dog friends"]


@pytest.mark.parametrize(("mode", "field"), [("tei", "texts"), ("vllm", "documents")])
def test_scores_reorder_the_top_n(server: _Server, mode: str, field: str) -> None:
    server.mode = mode
    outcome = Reranker(url=server.url, documents_field=field, model="bge-reranker").rerank(
        "dog cat friends", DOCS
    )
    assert outcome.status == "ok" and outcome.reason is None
    assert outcome.scores == [1.0, 2.0, 3.0]
    assert server.bodies[-1][field] == DOCS and server.bodies[-1]["model"] == "bge-reranker"
    assert reorder(["x", "y", "z", "tail"], outcome.scores) == ["z", "y", "x", "tail"]


@pytest.mark.parametrize(
    ("mode", "reason"),
    [("slow", "timed out"), ("500", "HTTP 500"), ("garbage", "not JSON"), ("short", "malformed")],
)
def test_failures_degrade_with_a_reason(server: _Server, mode: str, reason: str) -> None:
    server.mode = mode
    outcome = Reranker(url=server.url, timeout_seconds=0.3).rerank("dog", DOCS)
    assert outcome.status == "degraded" and outcome.scores is None
    assert reason in (outcome.reason or "")


def test_unreachable_and_off() -> None:
    assert Reranker().rerank("q", DOCS).status == "off"
    outcome = Reranker(url="http://127.0.0.1:9/rerank", timeout_seconds=0.5).rerank("q", DOCS)
    assert outcome.status == "degraded" and "unreachable" in (outcome.reason or "")


def test_parse_scores_rejects_what_is_not_one_score_per_document() -> None:
    assert parse_scores(
        {"results": [{"index": 1, "relevance_score": 0.2}, {"index": 0, "score": 0.9}]}, 2
    ) == [0.9, 0.2]
    for bad in (
        {"x": 1},
        [1],
        [{"index": 5, "score": 1}],
        [{"index": 0}],
        [{"index": 0, "score": 1}] * 2,
        [],
    ):
        with pytest.raises(MalformedRerank):
            parse_scores(bad, 1)
    assert reorder([1, 2, 3], [0.5, 0.5]) == [1, 2, 3]  # ties keep the fused order
