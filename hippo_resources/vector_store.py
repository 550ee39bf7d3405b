"""Chroma, the vector store: one vector per chunk, id = chunk id, cosine space.

The live collection holds exactly the vectors of the live chunks. Vectors of a note that left the vault
move to a second collection, the trash (`<name>_deleted`, metadata `deleted_at` in epoch seconds), so
search never sees them; a note that comes back within the retention period takes its vectors back by
embed_hash instead of being embedded again, and `purge_trash` drops what has been deleted for longer.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from dagster import ConfigurableResource

COLLECTION = "chunks"
TRASH_SUFFIX = "_deleted"
DELETED_AT = "deleted_at"


class VectorStoreCorrupt(RuntimeError):
    """The embedded Chroma folder cannot be opened or read."""


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

    def read_back(
        self, ids: Sequence[str], collection: Any | None = None
    ) -> list[tuple[str, np.ndarray, dict[str, Any]]]:
        """(id, vector, metadata) of the given ids the store holds (an id it lacks is left out)."""
        col = collection or self.collection()
        out: list[tuple[str, np.ndarray, dict[str, Any]]] = []
        for start in range(0, len(ids), 5000):
            got = col.get(ids=list(ids[start : start + 5000]), include=["embeddings", "metadatas"])
            for cid, emb, meta in zip(got["ids"], got["embeddings"], got["metadatas"] or [], strict=True):
                out.append((cid, np.asarray(emb, dtype=np.float32), dict(meta or {})))
        return out

    def update_metadata(
        self, ids: list[str], metadatas: list[dict[str, Any]], collection: Any | None = None
    ) -> None:
        """Replace the metadata stored with existing vectors (the vectors stay)."""
        col = collection or self.collection()
        for start in range(0, len(ids), 1000):
            col.update(ids=ids[start : start + 1000], metadatas=metadatas[start : start + 1000])

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

    # --- soft delete: the trash collection ------------------------------------------------------
    def trash(self) -> Any:
        """The collection of soft-deleted vectors (same space as the live one)."""
        return self.client().get_or_create_collection(
            self.collection_name + TRASH_SUFFIX,
            configuration={"hnsw": {"space": "cosine"}},
            embedding_function=None,
        )

    def move_to_trash(self, ids: list[str], collection: Any = None, deleted_at: float | None = None) -> int:
        """Soft-delete: copy vectors and metadata to the trash, then drop them from the live collection.
        A kill in between leaves a copy in both; the next run moves it again (upsert is idempotent)."""
        if not ids:
            return 0
        col = collection or self.collection()
        bin_ = self.trash()
        when = float(time.time() if deleted_at is None else deleted_at)  # sub-second: two quick runs differ
        moved = 0
        for start in range(0, len(ids), 1000):
            got = col.get(ids=ids[start : start + 1000], include=["embeddings", "metadatas"])
            if got["ids"]:
                metas = [{**(m or {}), DELETED_AT: when} for m in got["metadatas"] or []]
                bin_.upsert(ids=got["ids"], embeddings=got["embeddings"], metadatas=metas)
                moved += len(got["ids"])
            col.delete(ids=ids[start : start + 1000])
        return moved

    def from_trash(self, embed_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors in the trash by embed_hash (the text and model that made them), for reuse."""
        if not embed_hashes:
            return {}
        bin_ = self.trash()
        if bin_.count() == 0:
            return {}
        out: dict[str, np.ndarray] = {}
        wanted = list(dict.fromkeys(embed_hashes))
        for start in range(0, len(wanted), 500):
            got = bin_.get(
                where={"embed_hash": {"$in": wanted[start : start + 500]}},
                include=["embeddings", "metadatas"],
            )
            for emb, meta in zip(got["embeddings"], got["metadatas"] or [], strict=False):
                if meta and meta.get("embed_hash"):
                    out[str(meta["embed_hash"])] = np.asarray(emb, dtype=np.float32)
        return out

    def drop_from_trash(self, ids: list[str]) -> None:
        """Forget trash entries whose vectors went back to the live collection."""
        if ids:
            bin_ = self.trash()
            for start in range(0, len(ids), 1000):
                bin_.delete(ids=ids[start : start + 1000])

    def trashed(self) -> dict[str, dict[str, Any]]:
        """Every soft-deleted id with its metadata (`deleted_at`, `path`, ...)."""
        return self.existing(self.trash())

    def purge_trash(self, older_than: float | None = None, keep: Collection[str] = ()) -> list[str]:
        """Drop soft-deleted vectors for good: those deleted before `older_than` (epoch seconds), or all,
        except the ids in `keep`. Returns the ids purged.

        Chroma does not round-trip every float64 (1796171556.3232527 comes back as ...323253), so a time
        written this run may read as a hair earlier: the caller names what it trashed itself in `keep`."""
        entries = self.trashed()
        gone = [
            cid
            for cid, meta in entries.items()
            if cid not in keep and (older_than is None or float(meta.get(DELETED_AT) or 0) < older_than)
        ]
        self.drop_from_trash(gone)
        return gone

    # --- corruption ---------------------------------------------------------------------------
    def open_checked(self) -> Any:
        """The live collection after a read that touches the metadata and the index; raises
        `VectorStoreCorrupt` with the reason when the embedded folder cannot be read."""
        try:
            col = self.collection()
            total = col.count()
            if total:
                col.get(limit=1, include=["embeddings", "metadatas"])
                col.query(
                    query_embeddings=[col.get(limit=1, include=["embeddings"])["embeddings"][0]],
                    n_results=1,
                    include=["distances"],
                )
            self.trash().count()
        except Exception as exc:  # noqa: BLE001 - chromadb and sqlite3 raise many types for a broken folder
            raise VectorStoreCorrupt(f"{type(exc).__name__}: {exc}") from exc
        return col

    def set_aside(self) -> Path | None:
        """Move a broken embedded Chroma folder aside (kept for inspection, never deleted) so the next
        open starts empty; the vectors are rebuilt from the chunks. Nothing to do for a Chroma server."""
        if self.host:
            return None
        self.forget_clients()
        folder = Path(self.path)
        if not folder.exists():
            return None
        aside = folder.with_name(f"{folder.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}")
        shutil.move(str(folder), str(aside))
        return aside

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
