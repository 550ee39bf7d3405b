"""Query-adaptive fusion: the lexical share of convex fusion decided per query from what the lanes return.

A fixed share is right on average and wrong on the sets it was not tuned on: where BM25 finds the answer
far ahead of everything else the lexical lane should lead, where BM25 scatters over many near-equal hits
and the semantic pool has one clear winner the semantic lane should. `lane_signals` reads those signals
off the two ranked lists (nothing else: no corpus statistics, no I/O), `FusionModel` turns them into a
share with a logistic model whose weights live in `adaptive_fusion.json` (trained by
`python -m eval.loso --train`, which records its command and data in the file). The fusion itself is
written once, in the search pipeline (`hippo_search.pipeline.fuse_lanes`, with the math of
`ranking.fuse_with_weak`): `fusion: "adaptive"` there is convex fusion at the model's share.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field, model_validator

BASE_FEATURES: tuple[str, ...] = (
    "lex_lead",
    "lex_present",
    "sem_margin",
    "sem_spread",
    "agreement",
    "top1_agree",
    "hangul_share",
    "query_words",
)
"""The first model's eight signals (2026-12-01)."""

CROSS_FEATURES: tuple[str, ...] = (
    "lex_top_in_sem",
    "sem_top_in_lex",
    "lex_top_sim_gap",
    "overlap3",
    "lex_per_word",
    "sem_top",
)
"""How each lane judges the other's top hit, and the lanes' absolute strength."""

FEATURES: tuple[str, ...] = BASE_FEATURES + CROSS_FEATURES
"""Every signal `lane_signals` computes; a model names the ones it uses (`FusionModel.features`)."""

AGREEMENT_DEPTH = 10
WEIGHTS_FILE = "adaptive_fusion.json"


def _is_hangul(ch: str) -> bool:
    return "\uac00" <= ch <= "\ud7a3" or "\u1100" <= ch <= "\u11ff" or "\u3130" <= ch <= "\u318f"


def hangul_share(text: str) -> float:
    """Share of the query's letters that are Hangul (0 for a query without letters)."""
    letters = [ch for ch in text if ch.isalpha()]
    return sum(map(_is_hangul, letters)) / len(letters) if letters else 0.0


def lane_signals(
    query: str, lexical: Sequence[tuple[str, float]], semantic: Sequence[tuple[str, float]]
) -> dict[str, float]:
    """The per-query signals (see `FEATURES`), from the two best-first lane lists.

    lex_lead: (best BM25 − second) / best, 1 with one hit, 0 with none. sem_margin: best similarity − the
    second. sem_spread: best similarity − the pool's median. agreement: shared ids in the two top-10s / 10.
    lex_top_in_sem: 1 / (rank of BM25's top hit in the semantic list), 0 when absent; sem_top_in_lex the
    other way round. lex_top_sim_gap: best similarity − the similarity of BM25's top hit (the pool's lowest
    when absent). overlap3: shared ids in the two top-3s / 3. lex_per_word: best BM25 / query words.
    sem_top: best similarity.
    """
    lex = [s for _, s in lexical]
    sims = [s for _, s in semantic]
    if not lex or lex[0] <= 0:
        lead = 0.0
    elif len(lex) == 1:
        lead = 1.0
    else:
        lead = (lex[0] - lex[1]) / lex[0]
    top_lex = {cid for cid, _ in lexical[:AGREEMENT_DEPTH]}
    top_sem = {cid for cid, _ in semantic[:AGREEMENT_DEPTH]}
    sem_rank = {cid: r for r, (cid, _) in enumerate(semantic, start=1)}
    lex_rank = {cid: r for r, (cid, _) in enumerate(lexical, start=1)}
    sim_of = dict(semantic)
    lex_top = lexical[0][0] if lexical else None
    sem_top = semantic[0][0] if semantic else None
    words = max(len(query.split()), 1)
    return {
        "lex_lead": lead,
        "lex_present": 1.0 if lex else 0.0,
        "sem_margin": sims[0] - sims[1] if len(sims) > 1 else 0.0,
        "sem_spread": sims[0] - statistics.median(sims) if sims else 0.0,
        "agreement": len(top_lex & top_sem) / AGREEMENT_DEPTH,
        "top1_agree": 1.0 if lexical and semantic and lexical[0][0] == semantic[0][0] else 0.0,
        "hangul_share": hangul_share(query),
        "query_words": math.log1p(len(query.split())),
        "lex_top_in_sem": 1.0 / sem_rank[lex_top] if lex_top in sem_rank else 0.0,
        "sem_top_in_lex": 1.0 / lex_rank[sem_top] if sem_top in lex_rank else 0.0,
        "lex_top_sim_gap": sims[0] - sim_of.get(lex_top, min(sims)) if sims and lex_top else 0.0,
        "overlap3": len({c for c, _ in lexical[:3]} & {c for c, _ in semantic[:3]}) / 3,
        "lex_per_word": (lex[0] if lex else 0.0) / words,
        "sem_top": sims[0] if sims else 0.0,
    }


class FusionModel(BaseModel, frozen=True):
    """share = lo + (hi − lo) · sigmoid(bias + Σ weight · (signal − mean) / scale)."""

    features: tuple[str, ...] = BASE_FEATURES
    weights: tuple[float, ...] = Field(default=(0.0,) * len(BASE_FEATURES))
    bias: float = 0.0
    mean: tuple[float, ...] = Field(default=(0.0,) * len(BASE_FEATURES))
    scale: tuple[float, ...] = Field(default=(1.0,) * len(BASE_FEATURES))
    lo: float = Field(default=0.0, ge=0, le=1)
    hi: float = Field(default=1.0, ge=0, le=1)
    trained: dict[str, Any] = Field(default_factory=dict, description="command, sets and figures of the fit")

    @model_validator(mode="after")
    def _one_weight_per_feature(self) -> FusionModel:
        n = len(self.features)
        if not (len(self.weights) == len(self.mean) == len(self.scale) == n):
            raise ValueError(f"{n} features need {n} weights, means and scales")
        if unknown := set(self.features) - set(FEATURES):
            raise ValueError(f"unknown signals: {', '.join(sorted(unknown))}")
        return self

    def logit(self, signals: dict[str, float]) -> float:
        z = self.bias
        for name, w, m, s in zip(self.features, self.weights, self.mean, self.scale, strict=True):
            z += w * (signals[name] - m) / (s if s > 0 else 1.0)
        return z

    def share(self, signals: dict[str, float]) -> float:
        """The lexical share for one query, in [lo, hi]."""
        z = max(-40.0, min(40.0, self.logit(signals)))
        return self.lo + (self.hi - self.lo) / (1.0 + math.exp(-z))


def load_model(text: str) -> FusionModel:
    """A model from its JSON text (the shipped one is `adaptive_fusion.json` beside this module, read by
    the search pipeline's `fusion_model`)."""
    return FusionModel.model_validate(json.loads(text))
