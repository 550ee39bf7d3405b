"""Calibration of the semantic thresholds for one embedder, from labelled similarity pairs.

Similarities of small multilingual models are compressed (unrelated pairs often score 0.80+), so
the solo-match floor and the "strong evidence" threshold must be measured, not guessed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel, ValidationError

from hippo_core.ranking.evidence import EvidenceParams
from hippo_core.ranking.ranking import RankingParams


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


def recall_threshold(positives: Sequence[float], recall: float = 0.9) -> float:
    """The cut that keeps `recall` of the relevant pairs: a solo-match floor must not hide real answers."""
    if not positives:
        return 0.0
    ordered = sorted(positives)
    return round(ordered[int((1.0 - recall) * (len(ordered) - 1))], 4)


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


class LoadedCalibration(BaseModel):
    """What the librarian knows about its thresholds: applied, missing or stale (another embedder)."""

    calibration: Calibration | None
    status: str

    @property
    def applied(self) -> bool:
        return self.calibration is not None

    def ranking_params(self, base: RankingParams) -> RankingParams:
        assert self.calibration is not None
        return base.model_copy(
            update={
                "semantic_floor": self.calibration.semantic_floor,
                "semantic_margin": self.calibration.semantic_margin,
            }
        )

    def evidence_params(self, base: EvidenceParams) -> EvidenceParams:
        assert self.calibration is not None
        return base.model_copy(update={"semantic_strong": self.calibration.semantic_strong})


def parse_calibration(text: str | None, embed_model: str) -> LoadedCalibration:
    """`calibration.json`'s text (None: there is no such file); it applies only to the embedder it was
    measured for."""
    if text is None:
        return LoadedCalibration(
            calibration=None, status="missing: defaults in use (run `hippo eval calibrate`)"
        )
    try:
        cal = Calibration.model_validate(json.loads(text))
    except (ValueError, ValidationError) as exc:
        return LoadedCalibration(
            calibration=None, status=f"unreadable ({exc.__class__.__name__}): defaults in use"
        )
    if cal.embed_model != embed_model:
        return LoadedCalibration(
            calibration=None,
            status=f"stale: measured for {cal.embed_model}, the embedder is now {embed_model}; "
            "run `hippo eval calibrate` (required after an embedder change)",
        )
    return LoadedCalibration(calibration=cal, status=f"applied ({cal.pairs} pairs)")
