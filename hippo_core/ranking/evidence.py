"""How strong is the evidence for a query? Gap detection and evidence-bundle sufficiency.

Pure functions over what search returned, so the thresholds can be calibrated and tested.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from pydantic import BaseModel, Field

from hippo_core.index.tokenize import is_bigram


class EvidenceParams(BaseModel, frozen=True):
    """Thresholds for "weak evidence"; `python -m eval calibrate` derives `semantic_strong` per embedder."""

    semantic_strong: float = Field(default=0.84, ge=-1, le=1)
    coverage_strong: float = Field(default=0.5, ge=0, le=1)
    sufficient: float = Field(default=0.5, ge=0, le=1)


class Evidence(BaseModel):
    """One retrieved section as evidence: what it covers of the query and how close it is."""

    anchor: str
    coverage: float
    semantic_similarity: float | None
    weak: bool = False  # a semantic-only hit under the solo-match floor: shown, but no answer


def normalize_query(query: str) -> str:
    """The identity of a question for the gap radar: NFC, case-folded, punctuation and spaces collapsed."""
    text = unicodedata.normalize("NFC", query).casefold()
    text = re.sub(r"[^\w\s]", " ", text)
    return " ".join(text.split())


def content_terms(tokens: Sequence[str]) -> set[str]:
    """Query terms that carry meaning (morphemes and words; bigrams are only a recall aid)."""
    return {t for t in tokens if not is_bigram(t)}


def coverage(query_terms: set[str], text_tokens: Sequence[str]) -> float:
    if not query_terms:
        return 0.0
    return len(query_terms & set(text_tokens)) / len(query_terms)


def strength(item: Evidence, params: EvidenceParams) -> float:
    """0..1: lexical coverage and semantic closeness, whichever is stronger."""
    lexical = min(item.coverage / params.coverage_strong, 1.0) if params.coverage_strong else 1.0
    semantic = 0.0
    if item.semantic_similarity is not None:
        floor = params.semantic_strong - 0.08  # below this a neighbour says nothing
        semantic = min(max((item.semantic_similarity - floor) / 0.08, 0.0), 1.0)
    return max(lexical, semantic)


def gap_kind(evidence: Sequence[Evidence], params: EvidenceParams) -> str | None:
    """`zero-hit`, `weak` (best evidence under the thresholds) or None when the query was answered.

    Weak hits (semantic-only, under the floor) are returned to the reader but answer nothing: results made
    of weak hits only are a zero-hit, as they were when such hits were dropped."""
    evidence = [e for e in evidence if not e.weak]
    if not evidence:
        return "zero-hit"
    best = evidence[0]
    weak_lexical = best.coverage < params.coverage_strong
    weak_semantic = best.semantic_similarity is None or best.semantic_similarity < params.semantic_strong
    return "weak" if weak_lexical and weak_semantic else None


def sufficiency(
    evidence: Sequence[Evidence],
    query_terms: set[str],
    all_tokens: Sequence[Sequence[str]],
    params: EvidenceParams,
) -> tuple[float, str]:
    """Score a bundle 0..1 with a reason a person can read."""
    if not evidence:
        return 0.0, "no section matched the question"
    covered = set().union(*(query_terms & set(t) for t in all_tokens)) if all_tokens else set()
    joint = len(covered) / len(query_terms) if query_terms else 0.0
    best = max(strength(e, params) for e in evidence)
    score = round(0.5 * best + 0.5 * min(joint / params.coverage_strong, 1.0) if query_terms else best, 3)
    sims = [e.semantic_similarity for e in evidence if e.semantic_similarity is not None]
    parts = [f"{len(evidence)} section(s) cover {len(covered)}/{len(query_terms)} query terms"]
    if sims:
        parts.append(f"best semantic similarity {max(sims):.3f}")
    missing = sorted(query_terms - covered)
    if missing:
        parts.append(f"not found: {', '.join(missing[:8])}")
    verdict = "sufficient" if score >= params.sufficient else "weak"
    return score, f"{verdict}: " + "; ".join(parts)
