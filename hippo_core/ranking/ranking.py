"""Hybrid ranking: score fusion of the two lanes, governance boost, freshness decay, sections.

All knobs live in `RankingParams`, so evaluation can sweep them without touching code.
"""

from __future__ import annotations

import datetime as dt
import math
import statistics
from collections.abc import Callable, Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, Field

CONVERSATION_CONTEXT = (
    "conversation_neighbour_weight",
    "conversation_reply_weight",
    "conversation_speaker_boost",
)
"""The weights of the conversation-context stage (`RankingParams.without_conversation_context` sets them to 0)."""


class RankingParams(BaseModel, frozen=True):
    """Every parameter that changes the order of search results."""

    # How the lanes are combined. "convex": lexical_share × (BM25 / best BM25) + (1 − lexical_share) ×
    # (similarity min-max scaled over the semantic pool). Unlike RRF it keeps how far ahead a lane's
    # best hit is: on KorQuAD, RRF (k 10) fell 7 points of Hit@1 below BM25 alone, convex fusion beat it
    # (docs/search.md, "Why the defaults are what they are"). "rrf": weighted reciprocal-rank fusion, rrf_k and lane weights.
    # "adaptive": convex fusion with a lexical share decided per query from the lanes' own signals
    # (hippo_core/ranking/adaptive_fusion.py, weights in adaptive_fusion.json, chosen by `python -m eval.loso`).
    fusion: Literal["convex", "rrf", "adaptive"] = "convex"
    # 0.6: the best golden-set MRR@10 of 0.5-0.8, and the share at which fused beats both lanes on MS MARCO-ko
    # as well as on KorQuAD, ko-welfare and LoCoMo (0.7 loses MS MARCO-ko to the semantic lane).
    lexical_share: float = Field(
        default=0.6, ge=0, le=1, description="convex fusion: weight of the lexical lane"
    )
    # RRF knobs (fusion="rrf"), chosen by `python -m eval sweep` on the golden set (hippo_assets/quality/golden.jsonl): rrf_k 60 → 10 took
    # MRR@10 from 0.606 to 0.795 — with k=60 every rank scores alike and the governance multipliers decided.
    rrf_k: int = Field(default=10, ge=1)
    lexical_weight: float = Field(default=0.7, ge=0)
    semantic_weight: float = Field(default=1.0, ge=0)
    lexical_pool: int = Field(default=60, ge=1)
    semantic_pool: int = Field(default=60, ge=1)
    # A chunk found only by the semantic lane must be at least this similar (cosine) to count:
    # dense retrievers always return *something*, and a far neighbour is not evidence.
    # multilingual-e5-small packs similarities into ~0.75-0.92 and an unrelated query still finds
    # neighbours at ~0.80-0.84, so a semantic-only hit must clear an absolute floor *and* stand out
    # from the query's own background: its margin over the median similarity of the candidate pool.
    semantic_floor: float = Field(default=0.80, ge=-1, le=1)
    semantic_margin: float = Field(default=0.04, ge=0)
    # Semantic-only hits under that floor are kept after every other hit, marked weak, rather than dropped:
    # a question in one language about a note in another has no lexical evidence and often a low similarity.
    weak_hits: bool = True
    # Conversation context (hippo_core/ranking/conversation_context.py): a candidate turn gains from the best fused
    # score of the turn before and after it (neighbour) and of the one after it once more (reply), and a
    # turn of the one speaker the query names is lifted. Chosen leaving one LoCoMo conversation out
    # (`python -m eval.locomo_context`, CHANGELOG.md "Conversation context"): left out, fused Hit@1 0.325 → 0.380
    # and Hit@10 0.789 → 0.809 over 997 questions; these values are the grid point chosen on all five.
    conversation_neighbour_weight: float = Field(default=0.5, ge=0)
    conversation_reply_weight: float = Field(default=0.2, ge=0)
    conversation_speaker_boost: float = Field(default=0.1, ge=0)
    # Query-side weight of Hangul character bigrams relative to morphemes (recall fallback).
    bigram_weight: float = Field(default=0.25, ge=0)
    status_boost: Mapping[str, float] = Field(
        default_factory=lambda: {
            "canonical": 1.25,
            "reference": 1.0,
            "raw-source": 1.0,
            "draft": 0.9,
            "needs-review": 0.85,
        }
    )
    trust_boost: Mapping[str, float] = Field(
        default_factory=lambda: {
            "human_edit": 1.1,
            "source": 1.05,
            "llm_summary": 1.0,
            "llm_context": 0.95,
            "web_staging": 0.9,
        }
    )
    # Navigation pages (HOME, index, log, hubs) list every title: they match everything a little.
    type_boost: Mapping[str, float] = Field(default_factory=lambda: {"map": 0.7})
    excluded_statuses: tuple[str, ...] = ("archived",)
    # Ranking features, each switchable (0 / False = off) and measured by `python -m eval sweep`.
    title_boost: float = Field(
        default=0.0, ge=0, description="× (1 + b · share of query terms in title/heading)"
    )
    alias_boost: float = Field(
        default=1.3, ge=1, description="× when the query names one of the document's aliases"
    )
    one_section_per_document: bool = Field(
        default=True, description="collapse a document's sections into one hit"
    )
    section_by_coverage: bool = Field(
        default=True, description="the section shown for a document is the one covering most query terms"
    )
    freshness: bool = True
    governance: bool = True
    freshness_half_life_days: float = Field(default=365.0, gt=0)
    freshness_floor: float = Field(default=0.85, ge=0, le=1)
    # Time (hippo_core/ranking/time.py newest_first): a dated result moves above an older one it scores
    # within this ratio of; > 1 turns it off. Chosen with the reported questions left out (docs/time.md).
    stale_factor: float = Field(
        default=0.5, ge=0, le=1, description="× for a section whose facts were all superseded (marked stale)"
    )
    time_past_cues: bool = Field(
        default=False, description="no newest-first for a question about the past (time.about_the_past)"
    )
    time_window: float = Field(
        default=0.4, ge=0, description="newest first among results scoring ≥ window × each other"
    )
    time_coverage_share: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="newest first: a newer result passes an older one only covering ≥ share × its query terms",
    )
    time_by_day: bool = Field(
        default=True,
        description="newest first: only a source of a later day is newer (one day's keep their order)",
    )
    time_depth: int = Field(
        default=5, ge=0, description="newest first only reorders the top N results: it never pushes one out"
    )
    time_ref_boost: float = Field(
        default=3.0,
        ge=0,
        description="× (1 + boost) for the best sections dated in the span a question names ('a week ago')",
    )
    time_ref_slots: int = Field(
        default=1, ge=0, description="how many sections dated in a question's named span are lifted; 0 is off"
    )

    def without_conversation_context(self) -> RankingParams:
        """These parameters with the conversation-context stage off (each lane alone, fusion alone)."""
        return self.model_copy(update=dict.fromkeys(CONVERSATION_CONTEXT, 0.0))


class Candidate(BaseModel):
    """A chunk drawn by one or both lanes, with the evidence of each lane."""

    chunk_id: str
    score: float = 0.0  # the fused score (convex or RRF, per RankingParams.fusion)
    lexical_rank: int | None = None
    lexical_score: float | None = None
    semantic_rank: int | None = None
    semantic_score: float | None = None
    weak: bool = False  # semantic-only and under the solo-match floor: returned after every other hit

    @property
    def lanes(self) -> list[str]:
        out = []
        if self.lexical_rank is not None:
            out.append("lexical")
        if self.semantic_rank is not None:
            out.append("semantic")
        return out


def fuse(
    lexical: Iterable[tuple[str, float]],
    semantic: Iterable[tuple[str, float]],
    params: RankingParams,
) -> list[Candidate]:
    """Combine the two ranked lists (each best-first) into one, best first.

    Semantic-only hits count only above the solo-match floor (absolute similarity and margin over the
    pool's median similarity): a dense retriever always returns neighbours, and a far one is no evidence.
    """
    lexical, semantic = list(lexical), list(semantic)
    floor = solo_match_floor([s for _, s in semantic], params)
    lex_part, sem_part = _lane_parts(lexical, semantic, params)
    by_id: dict[str, Candidate] = {}
    for rank, (cid, score) in enumerate(lexical, start=1):
        c = by_id.setdefault(cid, Candidate(chunk_id=cid))
        c.lexical_rank, c.lexical_score = rank, score
        c.score += lex_part(rank, score)
    for rank, (cid, score) in enumerate(semantic, start=1):
        c = by_id.setdefault(cid, Candidate(chunk_id=cid))
        c.semantic_rank, c.semantic_score = rank, score
        c.score += sem_part(rank, score)
    kept = [
        c
        for c in by_id.values()
        if c.lexical_rank is not None or (c.semantic_score is not None and c.semantic_score >= floor)
    ]
    return sorted(kept, key=lambda c: (-c.score, c.chunk_id))


_Part = Callable[[int, float], float]


def fuse_with_weak(
    lexical: Iterable[tuple[str, float]], semantic: Iterable[tuple[str, float]], params: RankingParams
) -> tuple[list[Candidate], list[Candidate]]:
    """`fuse`, plus the semantic-only hits it drops under the floor (best similarity first): the weak hits."""
    lexical, semantic = list(lexical), list(semantic)
    kept = fuse(lexical, semantic, params)
    floor = solo_match_floor([s for _, s in semantic], params)
    lex_ids = {cid for cid, _ in lexical}
    weak = [
        Candidate(chunk_id=cid, semantic_rank=rank, semantic_score=sim)
        for rank, (cid, sim) in enumerate(semantic, start=1)
        if cid not in lex_ids and sim < floor
    ]
    return kept, weak


def _lane_parts(
    lexical: list[tuple[str, float]], semantic: list[tuple[str, float]], params: RankingParams
) -> tuple[_Part, _Part]:
    """What one (rank, score) of each lane adds to a candidate's fused score."""
    if params.fusion == "rrf":
        return (
            lambda rank, _s: params.lexical_weight / (params.rrf_k + rank),
            lambda rank, _s: params.semantic_weight / (params.rrf_k + rank),
        )
    alpha = params.lexical_share
    # BM25 has a natural zero, so it is scaled by the best score only; cosine similarities of one
    # embedder sit in a narrow band, so they are min-max scaled over this query's pool.
    lex_max = max((s for _, s in lexical), default=0.0)
    sims = [s for _, s in semantic]
    sem_lo, sem_hi = (min(sims), max(sims)) if sims else (0.0, 0.0)
    span = sem_hi - sem_lo

    def lex_part(_rank: int, score: float) -> float:
        return alpha * (score / lex_max if lex_max > 0 else 0.0)

    def sem_part(_rank: int, sim: float) -> float:
        return (1.0 - alpha) * ((sim - sem_lo) / span if span > 1e-9 else 1.0)

    return lex_part, sem_part


def solo_match_floor(similarities: list[float], params: RankingParams, min_pool: int = 5) -> float:
    """The similarity a semantic-only hit needs: the absolute floor, raised to median + margin."""
    if len(similarities) < min_pool:
        return params.semantic_floor
    return max(params.semantic_floor, statistics.median(similarities) + params.semantic_margin)


def governance_multiplier(status: str, trust: str, doc_type: str | None, params: RankingParams) -> float:
    """Canonical, human-edited and source material rank higher, maps lower; unknown values are neutral."""
    if not params.governance:
        return 1.0
    return (
        params.status_boost.get(status, 1.0)
        * params.trust_boost.get(trust, 1.0)
        * params.type_boost.get(doc_type or "", 1.0)
    )


def freshness_multiplier(updated: str | None, now: dt.date, params: RankingParams) -> float:
    """Exponential decay toward a floor: old notes sink a little, never vanish."""
    if not updated or not params.freshness:
        return 1.0
    try:
        day = dt.date.fromisoformat(str(updated)[:10])
    except ValueError:
        return 1.0
    age = max((now - day).days, 0)
    decay = math.pow(0.5, age / params.freshness_half_life_days)
    return params.freshness_floor + (1.0 - params.freshness_floor) * decay


def feature_multiplier(title_coverage: float, alias_named: bool, params: RankingParams) -> float:
    """Title/heading matches and aliases named in the query lift a section."""
    return (1.0 + params.title_boost * title_coverage) * (params.alias_boost if alias_named else 1.0)


def alias_named(normalized_query: str, aliases: list[str] | None) -> bool:
    """True when an alias (case-folded, whole words) appears in the query."""
    padded = f" {normalized_query} "
    return any(a and f" {a.casefold().strip()} " in padded for a in aliases or [])
