"""Ranking metrics with binary relevance: Hit@k, MRR@k, nDCG@k.

BEIR qrels list only relevant pairs, so relevance is binary; the ideal DCG counts every relevant doc
in the qrels (as pytrec_eval does), even one missing from the corpus, so a set with unreachable
answers cannot look better than it is.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence

__all__ = ["METRICS", "evaluate", "hit_at_k", "ndcg_at_k", "reciprocal_rank", "score_query"]

METRICS: tuple[str, ...] = ("hit@1", "hit@10", "mrr@10", "ndcg@10")


def _first_relevant_rank(ranked: Sequence[str], relevant: Collection[str], k: int) -> int | None:
    for rank, doc_id in enumerate(ranked[:k], start=1):
        if doc_id in relevant:
            return rank
    return None


def hit_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """1.0 when any relevant doc is in the first k results."""
    return 1.0 if _first_relevant_rank(ranked, relevant, k) is not None else 0.0


def reciprocal_rank(ranked: Sequence[str], relevant: Collection[str], k: int = 10) -> float:
    """1 / rank of the first relevant doc within the first k, else 0."""
    rank = _first_relevant_rank(ranked, relevant, k)
    return 1.0 / rank if rank is not None else 0.0


def ndcg_at_k(ranked: Sequence[str], relevant: Collection[str], k: int = 10) -> float:
    """Binary-gain nDCG; a doc listed twice earns gain once (a fused list should never repeat ids)."""
    if not relevant or k <= 0:
        return 0.0
    seen: set[str] = set()
    dcg = 0.0
    for rank, doc_id in enumerate(ranked[:k], start=1):
        if doc_id in relevant and doc_id not in seen:
            dcg += 1.0 / math.log2(rank + 1)
        seen.add(doc_id)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(relevant), k) + 1))
    return dcg / ideal


def score_query(ranked: Sequence[str], relevant: Collection[str]) -> dict[str, float]:
    """Every metric in `METRICS` for one query."""
    return {
        "hit@1": hit_at_k(ranked, relevant, 1),
        "hit@10": hit_at_k(ranked, relevant, 10),
        "mrr@10": reciprocal_rank(ranked, relevant, 10),
        "ndcg@10": ndcg_at_k(ranked, relevant, 10),
    }


def evaluate(
    runs: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Collection[str]],
    query_ids: Iterable[str] | None = None,
) -> dict[str, float]:
    """Mean of each metric over `query_ids` (default: every query in `runs`); a missing run scores 0."""
    ids = list(runs if query_ids is None else query_ids)
    totals = dict.fromkeys(METRICS, 0.0)
    for qid in ids:
        for name, value in score_query(runs.get(qid, ()), qrels.get(qid, ())).items():
            totals[name] += value
    n = len(ids)
    return {name: (total / n if n else 0.0) for name, total in totals.items()}
