"""Chroma, the vector store: one vector per chunk, id = chunk id, cosine space."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from dagster import ConfigurableResource

COLLECTION = "chunks"
OVERFETCH = 4
"""`nearest` first asks for this many times `n` unfiltered results."""
MAX_OVERFETCH = 4096
"""Beyond this many unfiltered results, `nearest` lets Chroma filter instead."""
OVERFETCH_SHARE = 8
"""A filter that keeps less than 1/8 of the collection goes straight to Chroma's filter."""


class VectorStore(ConfigurableResource):
    """Embedded persistent Chroma by default; Chroma in client/server mode when `host` is set
    (HIPPO_CHROMA_URL)."""

    path: str
    host: str | None = None
    port: int = 8000
    ssl: bool = False
    collection_name: str = COLLECTION

    def client(self) -> Any:
        import chromadb
        from chromadb.config import Settings

        settings = Settings(anonymized_telemetry=False, allow_reset=False)
        if self.host:
            return chromadb.HttpClient(host=self.host, port=self.port, ssl=self.ssl, settings=settings)
        Path(self.path).mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=self.path, settings=settings)

    def collection(self) -> Any:
        return self.client().get_or_create_collection(
            self.collection_name, configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
        )

    @staticmethod
    def forget_clients() -> None:
        """Drop Chroma's per-path client cache so a reader sees another process's writes."""
        from chromadb.api.shared_system_client import SharedSystemClient

        SharedSystemClient.clear_system_cache()

    def existing(self, collection: Any | None = None) -> dict[str, dict[str, Any]]:
        """Every stored id with its metadata."""
        col = collection or self.collection()
        out: dict[str, dict[str, Any]] = {}
        total = col.count()
        for offset in range(0, total, 5000):
            got = col.get(include=["metadatas"], limit=5000, offset=offset)
            for cid, meta in zip(got["ids"], got["metadatas"] or [], strict=False):
                out[cid] = dict(meta or {})
        return out

    def vectors(
        self, ids: Sequence[str] | None = None, collection: Any | None = None
    ) -> tuple[list[str], np.ndarray]:
        """Stored vectors (all, or the given ids) for checks and cache reuse."""
        col = collection or self.collection()
        got_ids: list[str] = []
        rows: list[np.ndarray] = []
        if ids is None:
            total = col.count()
            for offset in range(0, total, 5000):
                got = col.get(include=["embeddings"], limit=5000, offset=offset)
                got_ids.extend(got["ids"])
                rows.extend(np.asarray(e, dtype=np.float32) for e in got["embeddings"])
        else:
            for start in range(0, len(ids), 5000):
                got = col.get(ids=list(ids[start : start + 5000]), include=["embeddings"])
                got_ids.extend(got["ids"])
                rows.extend(np.asarray(e, dtype=np.float32) for e in got["embeddings"])
        mat = np.vstack(rows) if rows else np.zeros((0, 0), dtype=np.float32)
        return got_ids, mat

    def upsert(
        self, ids: list[str], vectors: np.ndarray, metadatas: list[dict[str, Any]], collection: Any = None
    ) -> None:
        col = collection or self.collection()
        for start in range(0, len(ids), 1000):
            end = start + 1000
            col.upsert(ids=ids[start:end], embeddings=vectors[start:end], metadatas=metadatas[start:end])

    def delete(self, ids: list[str], collection: Any = None) -> None:
        col = collection or self.collection()
        for start in range(0, len(ids), 1000):
            col.delete(ids=ids[start : start + 1000])

    def query(
        self, vector: np.ndarray, n: int, where: dict[str, Any] | None = None, collection: Any = None
    ) -> list[tuple[str, float]]:
        """Nearest chunks as (id, cosine similarity), best first; the filter applies inside the search.

        Chroma caps `n_results` at the collection's size itself, so no `count()` per query. A `where`
        makes Chroma scan the metadata of every row (~195 ms at 100k chunks): prefer `nearest`.
        """
        if n <= 0:
            return []
        col = collection or self.collection()
        res = col.query(query_embeddings=[vector], n_results=n, where=where or None, include=["distances"])
        return [(cid, 1.0 - float(d)) for cid, d in zip(res["ids"][0], res["distances"][0], strict=True)]

    def nearest(
        self,
        vector: np.ndarray,
        n: int,
        keep: Callable[[str], bool] | None = None,
        *,
        where: dict[str, Any] | None = None,
        total: int | None = None,
        allowed: int | None = None,
        collection: Any = None,
    ) -> list[tuple[str, float]]:
        """The `n` nearest chunks that `keep` accepts, filtered in memory, best first.

        Asks Chroma for more than `n` without a filter (no metadata scan) and widens the request while
        too few survive. When the filter keeps a small share of the collection (`allowed` of `total`
        known to the caller) or widening reaches `MAX_OVERFETCH`, it falls back to Chroma's own
        filter `where`, which must select the same chunks as `keep`.
        """
        if n <= 0 or allowed == 0:
            return []
        if keep is None:
            return self.query(vector, n, collection=collection)
        col = collection or self.collection()
        if total is not None and allowed is not None and allowed * OVERFETCH_SHARE < total:
            return self._filtered_slow(vector, n, keep, where, col)
        fetch = max(n * OVERFETCH, n + 16)
        while True:
            hits = self.query(vector, fetch, collection=col)
            kept = [h for h in hits if keep(h[0])]
            exhausted = len(hits) < fetch or (total is not None and fetch >= total)
            if len(kept) >= n or exhausted:
                return kept[:n]
            if fetch >= MAX_OVERFETCH:
                return self._filtered_slow(vector, n, keep, where, col)
            fetch = min(fetch * 4, MAX_OVERFETCH)

    def _filtered_slow(
        self,
        vector: np.ndarray,
        n: int,
        keep: Callable[[str], bool],
        where: dict[str, Any] | None,
        col: Any,
    ) -> list[tuple[str, float]]:
        """Chroma's filtered search; `keep` still applies (the two filters should agree)."""
        if where is None:
            hits = self.query(vector, MAX_OVERFETCH, collection=col)
        else:
            hits = self.query(vector, n, where=where, collection=col)
        return [h for h in hits if keep(h[0])][:n]
