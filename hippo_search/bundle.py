"""Evidence bundles: the top sections for a question (one search through the pipeline), with a sufficiency
score and the reason.

Identical questions against an unchanged index come from the ledger's cache (keyed by generation);
weak bundles feed the gap radar like weak searches do.
"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, Field

from hippo_core.ranking.evidence import Evidence, content_terms, normalize_query, sufficiency
from hippo_core.safety.text_input import validate_query
from hippo_search.envelope import UNTRUSTED_NOTICE, SearchRequest, SearchResponse
from hippo_search.pipeline import SearchEngine, Snapshot

SECTION_CHARS = 1200


class BundleSection(BaseModel):
    anchor: str
    title: str
    text: str
    score: float
    coverage: float
    semantic_similarity: float | None


class EvidenceBundle(BaseModel):
    kind: str = "hippocampus.bundle"
    untrusted: bool = True
    notice: str = UNTRUSTED_NOTICE
    question: str
    generation: str | None
    sufficiency: float = Field(description="0..1: how well the sections cover the question.")
    reason: str
    cached: bool = False
    sections: list[BundleSection]


def _search_and_snapshot(engine: SearchEngine, request: SearchRequest) -> tuple[SearchResponse, Snapshot]:
    """The search and the generation it ran on: the section texts are read from the same rows the hits
    came from. A generation published during the search means asking once more (not logged twice)."""
    response = engine.search(request)
    snap = engine.snapshot()
    for _ in range(2):
        if snap.generation == response.generation:
            break
        response = engine.search(request, log=False)
        snap = engine.snapshot()
    return response, snap


def build_bundle(engine: SearchEngine, question: str, k: int = 5) -> EvidenceBundle:
    request = SearchRequest(query=question, limit=k)  # validates the question like a search
    snap = engine.snapshot()
    key = hashlib.sha256(f"{normalize_query(request.query)}\x00{k}".encode()).hexdigest()
    if engine.ledger is not None:
        cached = engine.ledger.cached_bundle(snap.generation, key)
        if cached is not None:
            return EvidenceBundle.model_validate({**cached, "question": request.query, "cached": True})
    response, snap = _search_and_snapshot(engine, request)
    sections = []
    tokens = []
    for hit in response.results:
        if hit.chunk_id not in snap.row_of:  # only when generations kept changing under the search
            continue
        row = snap.rows[snap.row_of[hit.chunk_id]]
        text = row["text"][:SECTION_CHARS]
        tokens.append(engine.tokenizer.tokenize(f"{row['title']}\n{row['heading'] or ''}\n{row['text']}"))
        sections.append(
            BundleSection(
                anchor=hit.anchor,
                title=hit.title,
                text=text,
                score=hit.score,
                coverage=hit.coverage,
                semantic_similarity=hit.semantic_similarity,
            )
        )
    q_terms = content_terms(engine.tokenizer.query_tokens(request.query))
    evidence = [
        Evidence(anchor=s.anchor, coverage=s.coverage, semantic_similarity=s.semantic_similarity)
        for s in sections
    ]
    score, reason = sufficiency(evidence, q_terms, tokens, engine.evidence_params)
    bundle = EvidenceBundle(
        question=request.query,
        generation=snap.generation,
        sufficiency=score,
        reason=reason,
        sections=sections,
    )
    if engine.ledger is not None:
        if score < engine.evidence_params.sufficient and response.gap is None:
            engine.ledger.record_gap(
                normalize_query(request.query), request.query, "weak", [s.anchor for s in sections[:3]]
            )
        engine.ledger.cache_bundle(snap.generation, key, bundle.model_dump(exclude={"cached"}))
    return bundle


def record_feedback(engine: SearchEngine, query: str, anchor: str, useful: bool) -> None:
    """Store a usefulness judgement; the anchor must be one the index knows."""
    validate_query(query)
    snap = engine.snapshot()
    if anchor not in {snap.rows.value("anchor", i) for i in snap.row_of.values()}:  # live rows only
        raise ValueError(f"unknown anchor {anchor!r}: give an anchor returned by a search")
    if engine.ledger is None:
        raise ValueError("no ledger configured")
    engine.ledger.record_feedback(query, anchor, useful)
