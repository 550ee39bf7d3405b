"""The reranker stage's pure part: read a `/rerank` answer and reorder the fused top N by it.

The common `/rerank` answer (TEI, vLLM, Jina, Cohere) lists `{index, relevance_score}` (TEI says `score`),
either bare or under `results`. Anything else is malformed, and the caller keeps the fused order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")


class MalformedRerank(ValueError):
    """The answer is not a score for each document sent: say what is wrong."""


def parse_scores(payload: Any, n: int) -> list[float]:
    """Scores by document index from a `/rerank` answer about `n` documents; MalformedRerank otherwise."""
    items = payload.get("results") if isinstance(payload, dict) else payload
    if not isinstance(items, list):
        raise MalformedRerank("answer is neither a list nor an object with `results`")
    scores: list[float | None] = [None] * n
    for item in items:
        if not isinstance(item, dict):
            raise MalformedRerank("a result is not an object")
        index = item.get("index")
        score = item.get("relevance_score", item.get("score"))
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < n:
            raise MalformedRerank(f"index {index!r} is not one of the {n} documents sent")
        if not isinstance(score, int | float) or isinstance(score, bool) or score != score:
            raise MalformedRerank(f"result {index} has no numeric relevance_score")
        if scores[index] is not None:
            raise MalformedRerank(f"index {index} is scored twice")
        scores[index] = float(score)
    missing = [i for i, s in enumerate(scores) if s is None]
    if missing:
        raise MalformedRerank(f"{len(missing)} of {n} documents have no score")
    return [float(s) for s in scores if s is not None]


def reorder(items: Sequence[T], scores: Sequence[float]) -> list[T]:
    """The first len(scores) items by score (best first, ties in fused order), the rest as they were."""
    head = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return [items[i] for i in head] + list(items[len(scores) :])
