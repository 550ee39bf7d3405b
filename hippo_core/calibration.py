"""Calibration of the semantic thresholds for one embedder, from labelled similarity pairs.

Similarities of small multilingual models are compressed (unrelated pairs often score 0.80+), so
the solo-match floor and the "strong evidence" threshold must be measured, not guessed.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel


class Calibration(BaseModel):
    embed_model: str
    semantic_floor: float
    semantic_margin: float
    semantic_strong: float
    pairs: int
    separation: dict[str, float]


def best_threshold(positives: Sequence[float], negatives: Sequence[float]) -> tuple[float, float]:
    """The cut that maximizes Youden's J (TPR − FPR); returns (threshold, J)."""
    if not positives or not negatives:
        return 0.0, 0.0
    best_t, best_j = min(positives), -1.0
    for t in sorted(set(positives) | set(negatives)):
        tpr = sum(p >= t for p in positives) / len(positives)
        fpr = sum(n >= t for n in negatives) / len(negatives)
        if tpr - fpr > best_j:
            best_t, best_j = t, tpr - fpr
    return round(best_t, 4), round(best_j, 4)


def precision_threshold(
    positives: Sequence[float], negatives: Sequence[float], precision: float = 0.9
) -> float:
    """The lowest cut at which at least `precision` of the pairs above it are relevant."""
    for t in sorted(set(positives) | set(negatives)):
        above_p = sum(p >= t for p in positives)
        above_n = sum(n >= t for n in negatives)
        if above_p and above_p / (above_p + above_n) >= precision:
            return round(t, 4)
    return round(max([*positives, *negatives], default=1.0), 4)
