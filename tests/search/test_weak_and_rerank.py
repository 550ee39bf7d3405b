"""The fusion stage keeps semantic-only hits under the floor as weak hits (last, no answer for the gap
radar), and the reranker stage re-scores the top N or, when it fails, keeps the fused order and says so."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hippo_core.ranking.ranking import RankingParams
from hippo_resources import Reranker
from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import SearchEngine, open_engine
from hippo_settings import HippoSettings
from tests.fake_rerank import RerankServer

HIGH_FLOOR = RankingParams(semantic_floor=0.99)  # every semantic-only hit is weak


@pytest.fixture
def engine(indexed: HippoSettings) -> SearchEngine:
    return open_engine(indexed, log=False)


@pytest.fixture(scope="module")
def server() -> Iterator[RerankServer]:
    s = RerankServer()
    yield s
    s.close()


def test_weak_hits_come_after_every_hit_that_cleared_the_floor(engine: SearchEngine) -> None:
    response = engine.search(SearchRequest(query="침실 온도 커피", limit=10), params=HIGH_FLOOR)
    flags = [h.weak for h in response.results]
    assert False in flags and True in flags, flags
    assert flags == sorted(flags)  # no weak hit before a strong one
    weak = [h for h in response.results if h.weak]
    assert all(h.matched_by == ["semantic"] for h in weak)
    assert response.status == "ok" and response.gap is None
    # the same search with the product's floor: the strong hits are the same, in the same order
    strong = [h.anchor for h in response.results if not h.weak]
    again = engine.search(SearchRequest(query="침실 온도 커피", limit=10), params=HIGH_FLOOR)
    assert [h.anchor for h in again.results if not h.weak] == strong


def test_weak_only_results_are_empty_and_a_zero_hit_gap(engine: SearchEngine) -> None:
    response = engine.search(SearchRequest(query="QUOKKA migration checklist?"), params=HIGH_FLOOR)
    assert response.results and all(h.weak for h in response.results)
    assert response.status == "empty" and response.gap == "zero-hit"


def test_reranker_reorders_the_top_n(engine: SearchEngine, server: RerankServer) -> None:
    request = SearchRequest(query="커피 카페인 오후", limit=5)
    fused = engine.search(request)
    server.mode = "tei"
    engine.reranker = Reranker(url=server.url, top_n=5, documents_field="texts")
    reranked = engine.search(request)
    assert reranked.status == "ok" and reranked.degraded_reason is None
    sent = server.bodies[-1]
    assert sent["query"] == "커피 카페인 오후" and len(sent["texts"]) == len(
        [h for h in fused.results if not h.weak][:5]
    )
    words = set(request.query.lower().split())
    overlap = [len(words & set(t.lower().split())) for t in sent["texts"]]
    # the server's scores decide the order of what it was sent
    got = [overlap[sent["texts"].index(_text(engine, h.chunk_id))] for h in reranked.results[: len(overlap)]]
    assert got == sorted(got, reverse=True)
    assert {h.anchor for h in reranked.results} == {h.anchor for h in fused.results}


@pytest.mark.parametrize(
    ("mode", "reason"), [("500", "HTTP 500"), ("slow", "timed out"), ("garbage", "not JSON")]
)
def test_reranker_failure_keeps_the_fused_order(
    engine: SearchEngine, server: RerankServer, mode: str, reason: str
) -> None:
    request = SearchRequest(query="커피 카페인 오후", limit=5)
    fused = engine.search(request)
    server.mode = mode
    engine.reranker = Reranker(url=server.url, top_n=5, timeout_seconds=0.3)
    response = engine.search(request)
    assert response.status == "degraded" and reason in (response.degraded_reason or "")
    assert [h.anchor for h in response.results] == [h.anchor for h in fused.results]


def _text(engine: SearchEngine, chunk_id: str) -> str:
    snap = engine.snapshot()
    return snap.rows[snap.row_of[chunk_id]]["text"]
