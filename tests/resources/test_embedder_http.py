"""The HTTP embedder against a real loopback server started by the test: one pooled client shared by
threads, retries of 429/5xx with Retry-After honoured, a clear error after the last attempt, batches by
token budget."""

from __future__ import annotations

import json
import threading
from typing import Any

import numpy as np
import pytest

from hippo_core.index.embed_batches import estimate_tokens
from hippo_resources import Embedder, EmbedderError
from hippo_resources.embedder import retry_after_seconds

DIM = 384


def vectors(body: dict[str, Any]) -> bytes:
    data = [
        {"index": i, "embedding": [1.0 if j == (i % DIM) else 0.0 for j in range(DIM)]}
        for i in range(len(body["input"]))
    ]
    return json.dumps({"object": "list", "data": data}).encode()


def ok(n: int, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    return 200, {}, vectors(body)


def fast(url: str, **kw: Any) -> Embedder:
    """An HTTP embedder with short backoff steps, so the tests wait milliseconds, not seconds."""
    return Embedder(backend="http", url=url, **{"retry_base_seconds": 0.02, "retry_max_seconds": 2.0, **kw})


def test_429_then_200_is_retried_and_retry_after_is_honoured(serve) -> None:  # noqa: ANN001
    def script(n: int, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        if n == 0:
            return 429, {"Retry-After": "1"}, b'{"error": "slow down"}'
        return ok(n, body)

    server = serve(script)
    embedder = fast(server.url)
    vecs = embedder.embed_passages(["a", "b"])
    assert vecs.shape == (2, DIM)
    assert len(server.log) == 2
    waited = server.log[1]["t"] - server.log[0]["t"]
    assert waited >= 0.95, f"the retry came {waited:.2f} s after a 429 that asked for 1 s"
    assert server.log[0]["body"] == server.log[1]["body"]  # the same batch again


def test_503_every_time_gives_up_after_the_last_attempt_with_the_reason(serve) -> None:  # noqa: ANN001
    server = serve(lambda n, body: (503, {}, b'{"error": "model loading"}'))
    embedder = fast(server.url, retry_attempts=4)
    with pytest.raises(EmbedderError, match=r"failed after 4 attempts: answered 503: .*model loading"):
        embedder.embed_passages(["a"])
    assert len(server.log) == 4
    gaps = [b["t"] - a["t"] for a, b in zip(server.log, server.log[1:], strict=False)]
    assert all(g < 1.0 for g in gaps)  # backoff capped, full jitter from 20 ms steps
    # a query gets fewer attempts: a search must fall back to the lexical lane quickly
    with pytest.raises(EmbedderError, match="failed after 2 attempts"):
        embedder.embed_query("q")
    assert len(server.log) == 6


def test_a_client_error_is_not_retried(serve) -> None:  # noqa: ANN001
    server = serve(lambda n, body: (400, {}, b'{"error": "input too long"}'))
    with pytest.raises(EmbedderError, match="answered 400: .*input too long"):
        fast(server.url).embed_passages(["a"])
    assert len(server.log) == 1


def test_a_dropped_connection_is_retried(serve) -> None:  # noqa: ANN001
    """The server hangs up without answering the first request: a transport error, retried."""

    def script(n: int, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        return (0, {}, b"") if n == 0 else ok(n, body)

    server = serve(script)
    vecs = fast(server.url, timeout_seconds=5).embed_passages(["a"])
    assert vecs.shape == (1, DIM) and len(server.log) == 2


def test_eight_threads_share_one_pooled_client(serve) -> None:  # noqa: ANN001
    server = serve(ok)
    embedder = fast(server.url, batch_size=1)
    texts = [f"text {i}" for i in range(10)]
    clients: set[int] = set()
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(5):
                assert embedder.embed(texts, role="passage", use_cache=False).shape == (10, DIM)
                clients.add(id(embedder._client))
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    assert len(server.log) == 8 * 5 * 10
    assert len(clients) == 1  # one client for every thread
    # 400 requests over at most 8 kept-alive connections (a client per call would open 400)
    assert len({r["port"] for r in server.log}) <= embedder.max_connections
    embedder.close()
    assert embedder._client is None


def test_batches_follow_the_token_budget(serve) -> None:  # noqa: ANN001
    server = serve(ok)
    long_text, short_text = "긴 문단입니다. " * 100, "short"
    texts = [long_text] * 3 + [short_text] * 40
    budget = 2 * estimate_tokens(long_text) + 10
    vecs = fast(server.url, batch_tokens=budget, batch_size=32).embed(texts, role="passage", use_cache=False)
    assert vecs.shape == (43, DIM)
    sizes = [len(r["body"]["input"]) for r in server.log]
    assert sum(sizes) == 43
    for r in server.log:
        assert sum(estimate_tokens(t) for t in r["body"]["input"]) <= budget
    assert sizes[0] == 2  # two long texts fill the budget
    assert max(sizes) == 32  # short ones go up to the item cap


def test_retry_after_accepts_seconds_and_http_dates() -> None:
    import datetime as dt

    now = dt.datetime(2026, 12, 1, 12, 0, 0, tzinfo=dt.UTC)
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds("Tue, 01 Dec 2026 12:00:30 GMT", now) == pytest.approx(30.0)
    assert retry_after_seconds("Tue, 01 Dec 2026 11:00:00 GMT", now) == 0.0
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None


def test_vectors_from_the_pooled_client_are_checked(serve) -> None:  # noqa: ANN001
    server = serve(
        lambda n, body: (200, {}, json.dumps({"data": [{"index": 0, "embedding": [2.0] * 3}]}).encode())
    )
    with pytest.raises(EmbedderError, match="shape"):
        fast(server.url).embed_passages(["a"])
    assert np.isfinite(fast(serve(ok).url).embed_query("q")).all()
