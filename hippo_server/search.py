"""The librarian's search engine: hybrid retrieval over the live index generation.

Reads only; reloads when a new generation is published, so a running server picks up every
materialization without a restart. When the embedder fails it answers from the lexical lane and says so.
"""

from __future__ import annotations

import datetime as dt
import logging
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from hippo_core import frontmatter
from hippo_core.bm25 import BM25Index
from hippo_core.chunking import split_sections
from hippo_core.evidence import Evidence, EvidenceParams, content_terms, coverage, gap_kind, normalize_query
from hippo_core.ranking import (
    Candidate,
    RankingParams,
    alias_named,
    feature_multiplier,
    freshness_multiplier,
    fuse,
    governance_multiplier,
    snippet,
)
from hippo_core.text_input import decode_utf8, validate_path_prefix
from hippo_core.tokenize import Tokenizer, TokenizerConfig, is_bigram
from hippo_resources import Embedder, EmbedderError, Ledger, LexicalStore, Vault, VectorStore
from hippo_server.schemas import SearchHit, SearchRequest, SearchResponse, Section

log = logging.getLogger(__name__)


class NotIndexedError(RuntimeError):
    """No index generation exists yet."""


class NotFoundError(LookupError):
    pass


class VectorStoreUnavailable(RuntimeError):
    """The vector store cannot answer now (cannot be opened, e.g. on a full disk, or a run is rewriting it);
    the lexical lane still can, so the search degrades instead of failing."""


@dataclass
class Snapshot:
    """One consistent view of the stores: a lexical generation and the chunk table it was built from."""

    generation: str
    index: BM25Index
    table: pl.DataFrame
    rows: list[dict[str, Any]]
    row_of: dict[str, int]
    lane: np.ndarray
    status: np.ndarray
    path: np.ndarray
    collection: Any  # None when the vector store could not be opened (see vector_error)
    row_terms: Any  # CSR docs × terms: which query terms each chunk contains
    title_tokens: dict[str, list[str]]
    vector_error: str | None = None
    pending_vectors: int = 0  # chunks of this generation indexed by keyword only (the embedder was down)


class SearchEngine:
    def __init__(
        self,
        lexical_store: LexicalStore,
        vector_store: VectorStore,
        embedder: Embedder,
        vault: Vault | None = None,
        ledger: Ledger | None = None,
        params: RankingParams | None = None,
        evidence_params: EvidenceParams | None = None,
        today: Callable[[], dt.date] = dt.date.today,
        calibration_status: str = "not loaded",
    ) -> None:
        self.lexical_store = lexical_store
        self.vector_store = vector_store
        self.embedder = embedder
        self.vault = vault
        self.ledger = ledger
        self.params = params or RankingParams()
        self.evidence_params = evidence_params or EvidenceParams()
        self.calibration_status = calibration_status
        self.today = today
        self._snapshot: Snapshot | None = None
        self._lock = threading.Lock()
        self._tokenizer: Tokenizer | None = None

    # --- loading ------------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """The live generation, reloaded if a newer one was published since the last call."""
        manifest = self.lexical_store.manifest()
        if manifest is None:
            raise NotIndexedError("nothing is indexed yet: run `hippo run` to build the index")
        with self._lock:
            if self._snapshot is None or self._snapshot.generation != manifest["generation"]:
                self._snapshot = self._load(manifest)
            return self._snapshot

    def _load(self, manifest: dict[str, Any]) -> Snapshot:
        index, table = self.lexical_store.load(manifest["generation"])
        tokenizer_fp = manifest.get("tokenizer")
        config = TokenizerConfig()
        if tokenizer_fp and tokenizer_fp != config.fingerprint():
            raise NotIndexedError(
                "the index was built by another analyzer version: run `hippo run` to rebuild it"
            )
        self._tokenizer = self._tokenizer or Tokenizer(config)
        collection, vector_error = self._open_vectors()
        rows = table.to_dicts()
        return Snapshot(
            generation=manifest["generation"],
            index=index,
            table=table,
            rows=rows,
            row_of={r["chunk_id"]: i for i, r in enumerate(rows)},
            lane=table["lane"].to_numpy() if table.height else np.array([], dtype=object),
            status=table["status"].to_numpy() if table.height else np.array([], dtype=object),
            path=table["path"].to_numpy() if table.height else np.array([], dtype=object),
            collection=collection,
            row_terms=index.weights.tocsr(),
            title_tokens={},
            vector_error=vector_error,
            pending_vectors=int(manifest.get("pending_vectors") or 0),
        )

    def _open_vectors(self) -> tuple[Any, str | None]:
        """The vector collection for a new generation, or None and why: a store that cannot be opened
        (a full disk, a corrupt folder before the next run rebuilds it) costs the semantic lane, not search."""
        try:
            self.vector_store.forget_clients()
            return self.vector_store.collection(), None
        except Exception as exc:  # noqa: BLE001 - chromadb, sqlite3 and OSError all mean "no vectors now"
            return None, f"{type(exc).__name__}: {str(exc)[:300]}"

    @property
    def tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            self._tokenizer = Tokenizer(TokenizerConfig())
        return self._tokenizer

    # --- search -------------------------------------------------------------------------------
    def search(
        self, request: SearchRequest, params: RankingParams | None = None, log: bool = True
    ) -> SearchResponse:
        params = params or self.params
        snap = self.snapshot()
        allowed_paths = self._allowed_paths(snap, request)
        lexical: list[tuple[str, float]] = []
        semantic: list[tuple[str, float]] = []
        status, reason = "ok", None
        q_tokens = self.tokenizer.query_tokens(request.query)
        if request.mode in ("hybrid", "lexical"):
            lexical = self._lexical(snap, request, params, q_tokens)
        if request.mode in ("hybrid", "semantic"):
            try:
                semantic = self._semantic(snap, request, params, allowed_paths)
            except (EmbedderError, VectorStoreUnavailable) as exc:
                status, reason = "degraded", f"semantic lane unavailable, lexical results only: {exc}"
            if reason is None and snap.pending_vectors:
                status = "degraded"
                reason = f"{snap.pending_vectors} chunks waiting for vectors are found by keyword only"
        if request.mode == "semantic":
            params = params.model_copy(update={"semantic_floor": -1.0, "semantic_margin": 0.0})
        candidates = fuse(lexical, semantic, params)
        hits = self._sections(snap, candidates, params, q_tokens, request.query, request.limit)
        if not hits and status == "ok":
            status = "empty"
        evidence = [
            Evidence(anchor=h.anchor, coverage=h.coverage, semantic_similarity=h.semantic_similarity)
            for h in hits
        ]
        # A miss is a gap only when the whole vault was searched by both lanes.
        judged = (
            status != "degraded"
            and request.mode == "hybrid"
            and not request.lanes
            and not request.path_prefix
        )
        gap = gap_kind(evidence, self.evidence_params) if judged else None
        response = SearchResponse(
            status=status,
            degraded_reason=reason,
            query=request.query,
            mode=request.mode,
            generation=snap.generation,
            gap=gap,
            results=hits,
        )
        if log and self.ledger is not None:
            self._record(request, status, hits, snap.generation, gap)
        return response

    def _record(
        self, request: SearchRequest, status: str, hits: list[SearchHit], generation: str, gap: str | None
    ) -> None:
        """The query log and the gap queue. Best effort: a ledger that cannot be written (a full disk) must
        not cost the person their answer."""
        assert self.ledger is not None
        try:
            self.ledger.record_query(
                request.query,
                request.model_dump(exclude={"query"}),
                status,
                len(hits),
                hits[0].score if hits else None,
                generation,
            )
            if gap:
                self.ledger.record_gap(
                    normalize_query(request.query), request.query, gap, [h.anchor for h in hits[:3]]
                )
        except (sqlite3.Error, OSError) as exc:
            log.warning("the query was answered but not logged: %s", exc)

    def _allowed_paths(self, snap: Snapshot, request: SearchRequest) -> list[str] | None:
        if not request.path_prefix:
            return None
        prefix = request.path_prefix.rstrip("/")
        return sorted({p for p in snap.path.tolist() if p == prefix or p.startswith(prefix + "/")})

    def _mask(self, snap: Snapshot, request: SearchRequest, params: RankingParams) -> np.ndarray:
        mask = ~np.isin(snap.status, list(params.excluded_statuses))
        if request.lanes:
            mask &= np.isin(snap.lane, request.lanes)
        if not request.include_tool_output and "role" in snap.table.columns:
            mask &= (snap.table["role"] != "tool").fill_null(True).to_numpy()
        if request.path_prefix:
            prefix = request.path_prefix.rstrip("/")
            mask &= np.array([p == prefix or p.startswith(prefix + "/") for p in snap.path], dtype=bool)
        return mask

    def _lexical(
        self, snap: Snapshot, request: SearchRequest, params: RankingParams, q_tokens: list[str]
    ) -> list[tuple[str, float]]:
        if not q_tokens or snap.index.n_docs == 0:
            return []
        weights = {t: params.bigram_weight for t in q_tokens if is_bigram(t)}
        top = snap.index.top_k(
            q_tokens, params.lexical_pool, allowed=self._mask(snap, request, params), term_weights=weights
        )
        return [(snap.rows[i]["chunk_id"], float(s)) for i, s in top]

    def _semantic(
        self, snap: Snapshot, request: SearchRequest, params: RankingParams, allowed_paths: list[str] | None
    ) -> list[tuple[str, float]]:
        if allowed_paths == [] or not snap.rows:
            return []
        if snap.collection is None:
            raise VectorStoreUnavailable(f"the vector store cannot be opened: {snap.vector_error}")
        vector = self.embedder.embed_query(request.query)
        clauses: list[dict[str, Any]] = [{"status": {"$nin": list(params.excluded_statuses)}}]
        if request.lanes:
            clauses.append({"lane": {"$in": request.lanes}})
        if not request.include_tool_output:
            clauses.append({"role": {"$ne": "tool"}})
        if allowed_paths is not None:
            clauses.append({"path": {"$in": allowed_paths}})
        where = clauses[0] if len(clauses) == 1 else {"$and": clauses}
        try:
            hits = self.vector_store.query(
                vector, params.semantic_pool, where=where, collection=snap.collection
            )
            hits = [(cid, sim) for cid, sim in hits if cid in snap.row_of]
            return self._same_generation(snap, hits)
        except Exception as exc:  # noqa: BLE001 - chromadb raises InternalError & co. while a run rewrites it
            raise VectorStoreUnavailable(
                f"the vector store is being rewritten by a run ({type(exc).__name__}: {str(exc)[:200]})"
            ) from exc

    def _same_generation(self, snap: Snapshot, hits: list[tuple[str, float]]) -> list[tuple[str, float]]:
        """Keep only vectors made from the text of this generation's chunks (same embed_hash): while a run
        rewrites the vector store, a changed chunk's new vector must not stand in for its old text."""
        if not hits:
            return hits
        got = snap.collection.get(ids=[cid for cid, _ in hits], include=["metadatas"])
        stored = {
            cid: (m or {}).get("embed_hash")
            for cid, m in zip(got["ids"], got["metadatas"] or [], strict=False)
        }
        return [
            (cid, sim)
            for cid, sim in hits
            if stored.get(cid) == snap.rows[snap.row_of[cid]].get("embed_hash")
        ]

    def _sections(
        self,
        snap: Snapshot,
        candidates: list[Candidate],
        params: RankingParams,
        q_tokens: list[str],
        query: str,
        limit: int,
    ) -> list[SearchHit]:
        """Score chunks (RRF × governance × freshness × features), keep the best chunk of each section,
        and optionally one section per document: the one that covers most of the query."""
        today = self.today()
        q_terms = content_terms(q_tokens)
        q_cols = [snap.index.vocab[t] for t in q_terms if t in snap.index.vocab]
        norm_query = normalize_query(query)
        best: dict[str, tuple[float, Candidate, dict[str, Any], float]] = {}
        for cand in candidates:
            idx = snap.row_of[cand.chunk_id]
            row = snap.rows[idx]
            title_cov = coverage(q_terms, self._title_tokens(snap, row)) if params.title_boost else 0.0
            score = (
                cand.score
                * governance_multiplier(row["status"], row["trust"], row["doc_type"], params)
                * freshness_multiplier(row["updated"], today, params)
                * feature_multiplier(title_cov, alias_named(norm_query, row["aliases"]), params)
            )
            cov = snap.row_terms[idx, q_cols].count_nonzero() / len(q_terms) if q_cols and q_terms else 0.0
            prev = best.get(row["anchor"])
            if prev is None or score > prev[0]:
                best[row["anchor"]] = (score, cand, row, cov)
        picked = list(best.values())
        if params.one_section_per_document:
            by_doc: dict[str, list[tuple[float, Candidate, dict[str, Any], float]]] = {}
            for item in picked:
                # A conversation is a stream of turns, not one document: each message/segment stands alone.
                key = item[2]["anchor"] if item[2]["lane"] == "conversations" else item[2]["path"]
                by_doc.setdefault(key, []).append(item)
            picked = []
            for items in by_doc.values():
                top_score = max(i[0] for i in items)
                chosen = (
                    max(items, key=lambda i: (i[3], i[0]))
                    if params.section_by_coverage
                    else max(items, key=lambda i: i[0])
                )
                picked.append((top_score, chosen[1], chosen[2], chosen[3]))
        ranked = sorted(picked, key=lambda t: (-t[0], t[2]["anchor"]))[:limit]
        return [
            SearchHit(
                anchor=row["anchor"],
                chunk_id=row["chunk_id"],
                path=row["path"],
                heading=row["heading"],
                title=row["title"],
                snippet=snippet(row["text"], set(q_tokens), self.tokenizer.tokenize),
                score=round(score, 6),
                matched_by=cand.lanes,
                lane=row["lane"],
                status=row["status"],
                trust=row["trust"],
                sector=row["sector"],
                updated=row["updated"],
                lexical_rank=cand.lexical_rank,
                semantic_rank=cand.semantic_rank,
                semantic_similarity=None if cand.semantic_score is None else round(cand.semantic_score, 4),
                coverage=round(cov, 3),
                conversation_id=row.get("conversation_id"),
                project=row.get("project"),
                role=row.get("role"),
            )
            for score, cand, row, cov in ranked
        ]

    def _title_tokens(self, snap: Snapshot, row: dict[str, Any]) -> list[str]:
        key = f"{row['title']}\n{row['heading'] or ''}"
        if key not in snap.title_tokens:
            snap.title_tokens[key] = self.tokenizer.tokenize(key)
        return snap.title_tokens[key]

    # --- documents ----------------------------------------------------------------------------
    def get(self, ref: str) -> Section:
        """A whole document (`path`) or one section (`path#heading`), read from the vault."""
        if self.vault is None:
            raise NotFoundError("no vault configured")
        path, _, heading = ref.partition("#")
        path = validate_path_prefix(path)
        if not path or not self.vault.exists(path) or not path.endswith((".md", ".markdown")):
            raise NotFoundError(f"no document at {path!r}")
        fm, body = frontmatter.parse(decode_utf8(self.vault.read_bytes(path), path), path)
        title = fm.title or path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        text = body.strip()
        if heading:
            matches = [s for s in split_sections(body) if s.heading == heading]
            if not matches:
                raise NotFoundError(f"no section {heading!r} in {path}")
            text = "\n\n".join(s.text for s in matches)
        return Section(
            anchor=ref if heading else path,
            path=path,
            heading=heading or None,
            title=title,
            status=fm.status,
            trust=fm.trust,
            text=text,
        )

    def status(self) -> dict[str, Any]:
        manifest = self.lexical_store.manifest()
        out: dict[str, Any] = {
            "indexed": manifest is not None,
            "generation": manifest and manifest.get("generation"),
            "built": manifest and manifest.get("created"),
            "chunks": manifest and manifest.get("chunks"),
            "embed_model": self.embedder.model_id,
            "embedder_error": self.embedder.health(),
            "calibration": self.calibration_status,
            "ranking": self.params.model_dump(mode="json"),
        }
        if manifest is not None:
            snap = self.snapshot()
            out["documents"] = int(snap.table["path"].n_unique()) if snap.table.height else 0
            try:
                out["vectors"] = int(snap.collection.count()) if snap.collection is not None else None
            except Exception as exc:  # noqa: BLE001 - same as a search: report, do not fail
                out["vectors"], snap.vector_error = None, f"{type(exc).__name__}: {str(exc)[:300]}"
            out["vector_error"] = snap.vector_error
            out["vector_status"] = manifest.get("status", "ok")
            out["pending_vectors"] = snap.pending_vectors
            out["by_lane"] = dict(snap.table.group_by("lane").len().iter_rows()) if snap.table.height else {}
        return out
