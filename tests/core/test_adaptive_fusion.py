"""Query-adaptive fusion: signals by hand on a two-lane example, the share, weak hits kept apart."""

from __future__ import annotations

import math

import pytest

from hippo_core.ranking.adaptive_fusion import (
    FEATURES,
    FusionModel,
    hangul_share,
    lane_signals,
)
from hippo_core.ranking.ranking import RankingParams, fuse, fuse_with_weak
from hippo_search.pipeline import fuse_lanes, fusion_model, fusion_share

LEXICAL = [("a", 10.0), ("b", 6.0), ("c", 5.0)]
SEMANTIC = [("b", 0.90), ("d", 0.86), ("a", 0.85), ("e", 0.84), ("f", 0.80)]


def test_signals_by_hand() -> None:
    sig = lane_signals("BM25 검색 엔진", LEXICAL, SEMANTIC)
    assert set(sig) == set(FEATURES)
    assert sig["lex_lead"] == pytest.approx((10 - 6) / 10)
    assert sig["lex_present"] == 1.0
    assert sig["sem_margin"] == pytest.approx(0.90 - 0.86)
    assert sig["sem_spread"] == pytest.approx(0.90 - 0.85)  # median of 0.90 0.86 0.85 0.84 0.80
    assert sig["agreement"] == pytest.approx(2 / 10)  # a and b are in both top-10s
    assert sig["top1_agree"] == 0.0
    assert sig["hangul_share"] == pytest.approx(4 / 6)  # letters B M 검 색 엔 진 (digits are not letters)
    assert sig["query_words"] == pytest.approx(math.log1p(3))
    assert sig["lex_top_in_sem"] == pytest.approx(1 / 3)  # BM25's top hit a is third by similarity
    assert sig["sem_top_in_lex"] == pytest.approx(1 / 2)  # the semantic top hit b is second in BM25
    assert sig["lex_top_sim_gap"] == pytest.approx(0.90 - 0.85)
    assert sig["overlap3"] == pytest.approx(2 / 3)  # {a, b, c} and {b, d, a}
    assert sig["lex_per_word"] == pytest.approx(10 / 3)
    assert sig["sem_top"] == pytest.approx(0.90)


def test_signal_edges() -> None:
    assert lane_signals("q", [], [])["lex_lead"] == 0.0
    one = lane_signals("q", [("a", 3.0)], [("a", 0.9)])
    assert one["lex_lead"] == 1.0 and one["top1_agree"] == 1.0 and one["sem_margin"] == 0.0
    assert one["lex_top_in_sem"] == one["sem_top_in_lex"] == 1.0 and one["lex_top_sim_gap"] == 0.0
    apart = lane_signals("q", [("a", 3.0)], [("b", 0.9), ("c", 0.7)])
    assert apart["lex_top_in_sem"] == apart["sem_top_in_lex"] == 0.0
    assert apart["lex_top_sim_gap"] == pytest.approx(0.9 - 0.7)  # absent: counted at the pool's lowest
    assert lane_signals("q", [], [("b", 0.9)])["lex_top_sim_gap"] == 0.0
    assert hangul_share("123 !?") == 0.0
    assert hangul_share("한국어") == 1.0


def test_share_is_a_bounded_logistic_of_the_signals() -> None:
    weights = [0.0] * len(FEATURES)
    weights[FEATURES.index("lex_lead")] = 4.0
    model = FusionModel(
        features=FEATURES, weights=tuple(weights), bias=-1.0, mean=(0.0,) * len(FEATURES),
        scale=(1.0,) * len(FEATURES), lo=0.2, hi=0.9,
    )  # fmt: skip
    sig = lane_signals("BM25 검색 엔진", LEXICAL, SEMANTIC)
    expected = 0.2 + 0.7 / (1 + math.exp(-(-1.0 + 4.0 * 0.4)))
    assert model.share(sig) == pytest.approx(expected)
    assert FusionModel().share(sig) == pytest.approx(0.5)


def test_a_model_names_its_signals() -> None:
    with pytest.raises(ValueError, match="weights"):
        FusionModel(features=("lex_lead",), weights=(1.0, 2.0), mean=(0.0,), scale=(1.0,))
    with pytest.raises(ValueError, match="unknown"):
        FusionModel(features=("nope",), weights=(1.0,), mean=(0.0,), scale=(1.0,))
    only = FusionModel(features=("sem_top",), weights=(1.0,), mean=(0.5,), scale=(0.1,))
    assert only.share(lane_signals("q", LEXICAL, SEMANTIC)) == pytest.approx(1 / (1 + math.exp(-4.0)))


def test_adaptive_fusion_is_convex_fusion_at_the_models_share() -> None:
    model = FusionModel(bias=math.log(0.6 / 0.4))  # share 0.6 for every query
    adaptive = RankingParams(fusion="adaptive", weak_hits=False)
    assert fusion_share(LEXICAL, SEMANTIC, adaptive, "q", model) == pytest.approx(0.6)
    kept = fuse_lanes(LEXICAL, SEMANTIC, adaptive, "q", model)
    assert [c.chunk_id for c in kept] == [c.chunk_id for c in fuse(LEXICAL, SEMANTIC, RankingParams())]
    assert [c.score for c in kept] == pytest.approx(
        [c.score for c in fuse(LEXICAL, SEMANTIC, RankingParams())]
    )


def test_weak_hits_are_the_semantic_only_hits_under_the_floor() -> None:
    params = RankingParams(semantic_floor=0.85, semantic_margin=0.0)
    kept, weak = fuse_with_weak(LEXICAL, SEMANTIC, params)
    # d clears the floor (0.86 ≥ 0.85); e and f are semantic-only and under it: weak, best first
    assert "d" in [c.chunk_id for c in kept]
    assert [c.chunk_id for c in weak] == ["e", "f"]
    assert {c.chunk_id for c in kept} & {c.chunk_id for c in weak} == set()


def test_shipped_model_loads() -> None:
    model = fusion_model()
    assert set(model.features) <= set(FEATURES)
    assert model.trained.get("command", "").startswith("python -m eval.loso train")
    assert 0.0 <= model.share(lane_signals("q", LEXICAL, SEMANTIC)) <= 1.0


def test_weak_only_results_are_a_miss_for_the_gap_radar() -> None:
    from hippo_core.ranking.evidence import Evidence, EvidenceParams, gap_kind

    params = EvidenceParams()
    strong = Evidence(anchor="en.md#a", coverage=0.0, semantic_similarity=0.95)
    weak = Evidence(anchor="en.md#b", coverage=0.0, semantic_similarity=0.95, weak=True)
    assert gap_kind([weak], params) == "zero-hit"  # shown to the reader, but answers nothing
    assert gap_kind([strong, weak], params) is None
    assert gap_kind([], params) == "zero-hit"
