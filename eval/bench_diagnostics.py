"""Lane names, timing statistics and the diagnostics that help read a benchmark's numbers.

Kept apart from `eval.bench` (which builds and queries) so the runner stays readable: the rank_bm25
speed/ranking check, exact cosine against Chroma's HNSW, why fused lost where a lane won, and which
code produced the numbers.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hippo_core.index.bm25 import BM25Index
from hippo_core.ranking.ranking import RankingParams

LANES: tuple[str, ...] = ("lexical", "semantic", "fused")
NO_FLOOR = "fused_no_floor"
"""Diagnostic row: the same fusion with the semantic floor switched off, to show what the floor costs."""
EXACT = "semantic_exact"
"""Diagnostic row: exact cosine over the same vectors, to separate Chroma's HNSW approximation (which
also varies from build to build) from what the embedding model can do."""
DIAGNOSTICS: tuple[str, ...] = (NO_FLOOR, EXACT)
EVAL_DEPTH = 10


def ms_stats(seconds: Sequence[float]) -> dict[str, float | None]:
    """p50/p95/mean in milliseconds; None when nothing was timed (JSON has no NaN)."""
    if not seconds:
        return {"p50_ms": None, "p95_ms": None, "mean_ms": None}
    arr = np.asarray(seconds, dtype=np.float64) * 1000.0
    return {
        "p50_ms": float(np.percentile(arr, 50)),
        "p95_ms": float(np.percentile(arr, 95)),
        "mean_ms": float(arr.mean()),
    }


def _ratio(num: float | None, den: float | None) -> float | None:
    return num / den if num is not None and den else None


def reference_top(scores: np.ndarray, k: int) -> list[int]:
    """rank_bm25's ranking under our `top_k` contract: score > 0, score desc, doc index asc."""
    idx = np.flatnonzero(scores > 0)
    return [int(i) for i in idx[np.lexsort((idx, -scores[idx]))][:k]]


def same_ranking(ours: list[int], ref_scores: np.ndarray, k: int, rel: float = 1e-12) -> bool:
    """Our top k is rank_bm25's, up to the order of docs whose reference scores differ by at most `rel`
    (relative): our `average_idf` is a canonical sum (`hippo_core.index.bm25.canonical_average_idf`), rank_bm25's
    a running one, so a floored idf may differ in the last bit and flip docs rank_bm25 scores alike."""
    want = reference_top(ref_scores, k)
    if ours == want:
        return True
    if len(ours) != len(want):
        return False
    return bool(np.allclose(ref_scores[ours], ref_scores[want], rtol=rel, atol=0.0))


def ratio_check(
    index: BM25Index,
    corpus_tokens: list[list[str]],
    sample: Sequence[tuple[str, list[str]]],
    k: int,
) -> dict[str, Any]:
    """Time our `top_k` against `BM25Okapi.get_scores` + the same sort, on the same tokens, whole corpus."""
    from rank_bm25 import BM25Okapi

    t0 = time.perf_counter()
    ref = BM25Okapi(corpus_tokens)
    ref_build = time.perf_counter() - t0
    ours_s: list[float] = []
    ref_s: list[float] = []
    identical = near_ties = 0
    max_rel_diff = 0.0
    mismatched: list[str] = []
    for qid, toks in sample:
        t0 = time.perf_counter()
        top = index.top_k(toks, k)
        ours_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ref_scores = ref.get_scores(toks)
        ref_top = reference_top(ref_scores, k)
        ref_s.append(time.perf_counter() - t0)
        ids = [d for d, _ in top]
        if ids == ref_top:
            identical += 1
        elif same_ranking(ids, ref_scores, k):
            identical += 1
            near_ties += 1
        else:
            mismatched.append(qid)
        diff = np.abs(index.scores(toks) - ref_scores) / np.maximum(np.abs(ref_scores), 1e-12)
        max_rel_diff = max(max_rel_diff, float(diff.max(initial=0.0)))
    ours_stats, ref_stats = ms_stats(ours_s), ms_stats(ref_s)
    return {
        "queries": len(sample),
        "depth": k,
        "rank_bm25_build_s": ref_build,
        "ours": ours_stats,
        "rank_bm25": ref_stats,
        "speedup_p50": _ratio(ref_stats["p50_ms"], ours_stats["p50_ms"]),
        "speedup_mean": _ratio(ref_stats["mean_ms"], ours_stats["mean_ms"]),
        "identical": identical,  # near-ties in either order included
        "near_ties_reordered": near_ties,
        "max_rel_score_diff": max_rel_diff,
        "mismatched_query_ids": mismatched[:10],
    }


def exact_top(vectors: np.ndarray, query: np.ndarray, allowed: np.ndarray | None, k: int) -> list[int]:
    """Rows of the k most cosine-similar vectors (unit vectors: a dot product), inside `allowed`."""
    sims = vectors @ query
    cand = np.arange(len(sims)) if allowed is None else np.flatnonzero(allowed)
    order = np.lexsort((cand, -sims[cand]))[:k]
    return [int(cand[i]) for i in order]


def fusion_losses(per_query: dict[str, dict[str, dict[str, float]]], qids: Sequence[str]) -> dict[str, int]:
    """Count queries where the fused list does worse than a single lane (at MRR@10 and Hit@10)."""
    fused, lex, sem = per_query["fused"], per_query["lexical"], per_query["semantic"]
    return {
        "fused_mrr_below_lexical": sum(fused[q]["mrr@10"] < lex[q]["mrr@10"] for q in qids),
        "fused_mrr_below_semantic": sum(fused[q]["mrr@10"] < sem[q]["mrr@10"] for q in qids),
        "fused_mrr_below_both": sum(
            fused[q]["mrr@10"] < min(lex[q]["mrr@10"], sem[q]["mrr@10"]) for q in qids
        ),
        "fused_miss_lexical_hit10": sum(fused[q]["hit@10"] < lex[q]["hit@10"] for q in qids),
        "fused_miss_semantic_hit10": sum(fused[q]["hit@10"] < sem[q]["hit@10"] for q in qids),
        "fused_hit10_beyond_both": sum(
            fused[q]["hit@10"] > max(lex[q]["hit@10"], sem[q]["hit@10"]) for q in qids
        ),
    }


# --- report -------------------------------------------------------------------------------------


def git_version() -> str:
    """Which ranking code produced the numbers: the commit, and whether the hybrid path was edited."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    paths = [
        "hippo_core/ranking/ranking.py",
        "hippo_core/index/bm25.py",
        "hippo_core/index/tokenize.py",
        "hippo_resources",
    ]
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", *paths],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}+uncommitted ranking/index changes" if dirty else head


def variant_diff(vp: RankingParams, base: RankingParams) -> list[str]:
    return [k for k in RankingParams.model_fields if getattr(vp, k) != getattr(base, k)]
