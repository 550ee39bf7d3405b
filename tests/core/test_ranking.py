"""Hybrid ranking on hand-computed numbers: convex fusion, RRF, lane weights, semantic floor, boosts, freshness."""

from __future__ import annotations

import datetime as dt

import pytest
from pydantic import ValidationError

from hippo_core.ranking.ranking import (
    RankingParams,
    freshness_multiplier,
    fuse,
    governance_multiplier,
    solo_match_floor,
)

P = RankingParams(
    fusion="rrf", rrf_k=60, lexical_weight=1.0, semantic_weight=1.0, bigram_weight=0.5
)  # hand-computed below
TODAY = dt.date(2025, 6, 1)


# --- reciprocal-rank fusion ----------------------------------------------------------------------


def test_rrf_sums_reciprocal_ranks_over_both_lanes() -> None:
    lexical = [("a", 12.0), ("b", 7.5), ("c", 1.0)]
    semantic = [("b", 0.91), ("d", 0.88)]
    fused = fuse(lexical, semantic, P)
    expected = {
        "b": 1 / (60 + 2) + 1 / (60 + 1),  # 0.032522...
        "a": 1 / (60 + 1),  # 0.016393...
        "d": 1 / (60 + 2),  # 0.016129...
        "c": 1 / (60 + 3),  # 0.015873...
    }
    assert [c.chunk_id for c in fused] == ["b", "a", "d", "c"]
    for c in fused:
        assert c.score == pytest.approx(expected[c.chunk_id], rel=1e-12)
    b = fused[0]
    assert (b.lexical_rank, b.lexical_score, b.semantic_rank, b.semantic_score) == (2, 7.5, 1, 0.91)
    assert b.lanes == ["lexical", "semantic"]
    assert fused[1].lanes == ["lexical"] and fused[2].lanes == ["semantic"]


def test_rrf_k_flattens_or_sharpens_the_rank_curve() -> None:
    fused = fuse([("a", 1.0), ("b", 0.5)], [], P.model_copy(update={"rrf_k": 1}))
    assert [c.score for c in fused] == pytest.approx([1 / 2, 1 / 3])


def test_lane_weights_scale_each_lane() -> None:
    lexical = [("lex", 5.0)]
    semantic = [("sem", 0.95)]
    even = fuse(lexical, semantic, P)
    assert [c.chunk_id for c in even] == ["lex", "sem"]  # equal scores: ties break by id
    assert even[0].score == even[1].score == pytest.approx(1 / 61)
    semantic_heavy = fuse(
        lexical, semantic, P.model_copy(update={"lexical_weight": 0.5, "semantic_weight": 2.0})
    )
    assert [(c.chunk_id, c.score) for c in semantic_heavy] == [
        ("sem", pytest.approx(2.0 / 61)),
        ("lex", pytest.approx(0.5 / 61)),
    ]
    lexical_off = fuse(lexical, semantic, P.model_copy(update={"lexical_weight": 0.0}))
    assert [(c.chunk_id, c.score) for c in lexical_off] == [("sem", pytest.approx(1 / 61)), ("lex", 0.0)]


def test_semantic_floor_drops_weak_semantic_only_hits_but_keeps_lexical_ones() -> None:
    params = P.model_copy(update={"semantic_floor": 0.80})
    lexical = [("both-weak", 3.0), ("lex-only", 2.0)]
    semantic = [("sem-strong", 0.85), ("sem-at-floor", 0.80), ("sem-weak", 0.79), ("both-weak", 0.70)]
    fused = {c.chunk_id: c for c in fuse(lexical, semantic, params)}
    assert set(fused) == {"both-weak", "lex-only", "sem-strong", "sem-at-floor"}
    # lexical evidence keeps a chunk even when its vector is far; the semantic rank still counts
    assert fused["both-weak"].score == pytest.approx(1 / 61 + 1 / 64)
    assert fused["both-weak"].lanes == ["lexical", "semantic"]
    assert fused["sem-at-floor"].score == pytest.approx(1 / 62)  # the floor is inclusive
    assert fuse([], semantic, RankingParams(semantic_floor=0.9)) == []


def test_solo_match_floor_rises_to_the_pool_median_plus_margin() -> None:
    params = P.model_copy(update={"semantic_floor": 0.80, "semantic_margin": 0.04})
    pool = [0.90, 0.85, 0.84, 0.83, 0.82]  # median 0.84
    assert solo_match_floor(pool, params) == pytest.approx(0.88)
    assert solo_match_floor([0.79, 0.75, 0.74, 0.70, 0.60], params) == 0.80  # never below the absolute floor
    assert solo_match_floor(pool[:4], params) == 0.80  # too few neighbours to judge the background


def test_fusion_applies_the_pool_relative_floor_only_to_semantic_only_hits() -> None:
    params = P.model_copy(update={"semantic_floor": 0.80, "semantic_margin": 0.04})
    semantic = [("stands-out", 0.90), ("background", 0.85), ("s3", 0.84), ("s4", 0.83), ("both", 0.82)]
    fused = fuse([("both", 4.0)], semantic, params)
    assert [c.chunk_id for c in fused] == ["both", "stands-out"]  # 0.85 >= 0.80 but < 0.84 + 0.04
    assert fused[0].score == pytest.approx(1 / 61 + 1 / 65)  # lexical evidence keeps it, both ranks count
    assert fused[1].score == pytest.approx(1 / 61)


def test_empty_lanes_fuse_to_nothing() -> None:
    assert fuse([], [], P) == []


# --- convex fusion (the default) -----------------------------------------------------------------


def test_convex_fusion_scales_bm25_by_its_best_and_similarity_over_the_pool() -> None:
    params = RankingParams(lexical_share=0.7, semantic_floor=-1.0, semantic_margin=0.0)
    assert params.fusion == "convex"
    lexical = [("a", 10.0), ("b", 5.0)]
    semantic = [("b", 0.90), ("c", 0.85), ("a", 0.80)]
    fused = {c.chunk_id: c.score for c in fuse(lexical, semantic, params)}
    assert fused["a"] == pytest.approx(0.7 * 1.0 + 0.3 * 0.0)
    assert fused["b"] == pytest.approx(0.7 * 0.5 + 0.3 * 1.0)
    assert fused["c"] == pytest.approx(0.3 * 0.5)
    assert [c.chunk_id for c in fuse(lexical, semantic, params)] == ["a", "b", "c"]


def test_convex_fusion_keeps_a_clear_lexical_lead_that_rrf_gives_away() -> None:
    """BM25 far ahead on one doc, the semantic lane mildly prefers another: RRF ranks by position only."""
    lexical = [("exact", 30.0), ("near", 6.0), ("other", 5.0)]
    semantic = [("near", 0.86), ("exact", 0.85), ("other", 0.80)]
    loose = RankingParams(semantic_floor=-1.0, semantic_margin=0.0)
    assert fuse(lexical, semantic, loose)[0].chunk_id == "exact"
    rrf = loose.model_copy(update={"fusion": "rrf", "rrf_k": 10, "lexical_weight": 0.7})
    assert fuse(lexical, semantic, rrf)[0].chunk_id == "near"


def test_convex_share_moves_the_balance_between_lanes() -> None:
    lexical = [("lex", 5.0), ("sem", 4.0)]
    semantic = [("sem", 0.90), ("lex", 0.80)]
    base = RankingParams(semantic_floor=-1.0, semantic_margin=0.0)
    assert fuse(lexical, semantic, base.model_copy(update={"lexical_share": 0.9}))[0].chunk_id == "lex"
    assert fuse(lexical, semantic, base.model_copy(update={"lexical_share": 0.3}))[0].chunk_id == "sem"
    with pytest.raises(ValidationError):
        RankingParams(lexical_share=1.5)


def test_convex_single_lane_keeps_that_lanes_order() -> None:
    params = RankingParams(semantic_floor=-1.0, semantic_margin=0.0)
    assert [c.chunk_id for c in fuse([("x", 3.0), ("y", 1.0)], [], params)] == ["x", "y"]
    assert [c.chunk_id for c in fuse([], [("y", 0.9), ("x", 0.7)], params)] == ["y", "x"]
    assert [c.score for c in fuse([], [("only", 0.9)], params)] == pytest.approx([1 - params.lexical_share])


# --- governance ----------------------------------------------------------------------------------


def test_governance_multiplies_status_trust_and_type() -> None:
    assert governance_multiplier("canonical", "human_edit", "concept", P) == pytest.approx(1.25 * 1.1)
    assert governance_multiplier("raw-source", "source", "source-summary", P) == pytest.approx(1.05)
    assert governance_multiplier("draft", "web_staging", None, P) == pytest.approx(0.9 * 0.9)
    assert governance_multiplier("needs-review", "llm_context", None, P) == pytest.approx(0.85 * 0.95)
    assert governance_multiplier("reference", "human_edit", "map", P) == pytest.approx(1.1 * 0.7)
    assert governance_multiplier("someday", "whoever", "poem", P) == 1.0  # unknown values are neutral
    canonical = governance_multiplier("canonical", "human_edit", None, P)
    draft = governance_multiplier("draft", "llm_summary", None, P)
    assert canonical > 1.0 > draft


def test_governance_boosts_come_from_the_params() -> None:
    params = RankingParams(status_boost={"canonical": 2.0}, trust_boost={}, type_boost={"map": 0.5})
    assert governance_multiplier("canonical", "human_edit", "map", params) == pytest.approx(1.0)
    assert governance_multiplier("canonical", "human_edit", None, params) == pytest.approx(2.0)
    assert "archived" in P.excluded_statuses


# --- freshness -----------------------------------------------------------------------------------


def test_freshness_is_one_for_today_and_halves_toward_the_floor_per_half_life() -> None:
    params = RankingParams(freshness_half_life_days=365, freshness_floor=0.85)
    assert freshness_multiplier(TODAY.isoformat(), TODAY, params) == 1.0
    one = (TODAY - dt.timedelta(days=365)).isoformat()
    two = (TODAY - dt.timedelta(days=730)).isoformat()
    assert freshness_multiplier(one, TODAY, params) == pytest.approx(0.85 + 0.15 * 0.5)  # 0.925
    assert freshness_multiplier(two, TODAY, params) == pytest.approx(0.85 + 0.15 * 0.25)  # 0.8875
    ancient = freshness_multiplier("1900-01-01", TODAY, params)
    assert 0.85 <= ancient < 0.8501  # sinks to the floor, never below it


def test_freshness_reads_timestamps_and_ignores_missing_bad_or_future_dates() -> None:
    params = RankingParams(freshness_half_life_days=10, freshness_floor=0.5)
    assert freshness_multiplier("2025-05-22T23:59:00+09:00", TODAY, params) == pytest.approx(0.75)
    for value in (None, "", "yesterday", "2025-13-40"):
        assert freshness_multiplier(value, TODAY, params) == 1.0
    assert freshness_multiplier("2030-01-01", TODAY, params) == 1.0  # a future date is not fresher than new


def test_floor_of_one_turns_freshness_off() -> None:
    assert freshness_multiplier("2000-01-01", TODAY, RankingParams(freshness_floor=1.0)) == 1.0


# --- params --------------------------------------------------------------------------------------


def test_ranking_params_are_validated_and_frozen() -> None:
    with pytest.raises(ValidationError):
        RankingParams(semantic_floor=1.5)
    with pytest.raises(ValidationError):
        RankingParams(rrf_k=0)
    with pytest.raises(ValidationError):
        RankingParams(freshness_half_life_days=0)
    with pytest.raises(ValidationError):
        P.score_k = 10  # type: ignore[misc]
