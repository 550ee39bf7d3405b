"""`Reranker` against a real HTTP server started here: scores on success, fused order on any failure."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hippo_core.ranking.rerank import MalformedRerank, parse_scores, reorder
from hippo_resources.reranker import Reranker
from tests.fake_rerank import RerankServer


@pytest.fixture(scope="module")
def server() -> Iterator[RerankServer]:
    s = RerankServer()
    yield s
    s.close()


DOCS = ["a cat sat", "the dog barked at the cat", "dog cat dog friends"]


@pytest.mark.parametrize(("mode", "field"), [("tei", "texts"), ("vllm", "documents")])
def test_scores_reorder_the_top_n(server: RerankServer, mode: str, field: str) -> None:
    server.mode = mode
    outcome = Reranker(url=server.url, documents_field=field, model="bge-reranker").rerank(
        "dog cat friends", DOCS
    )
    assert outcome.status == "ok" and outcome.reason is None
    assert outcome.scores == [1.0, 2.0, 3.0]
    assert server.bodies[-1][field] == DOCS and server.bodies[-1]["model"] == "bge-reranker"
    assert reorder(["x", "y", "z", "tail"], outcome.scores) == ["z", "y", "x", "tail"]


@pytest.mark.parametrize(
    ("mode", "reason"),
    [("slow", "timed out"), ("500", "HTTP 500"), ("garbage", "not JSON"), ("short", "malformed")],
)
def test_failures_degrade_with_a_reason(server: RerankServer, mode: str, reason: str) -> None:
    server.mode = mode
    outcome = Reranker(url=server.url, timeout_seconds=0.3).rerank("dog", DOCS)
    assert outcome.status == "degraded" and outcome.scores is None
    assert reason in (outcome.reason or "")


def test_unreachable_and_off() -> None:
    assert Reranker().rerank("q", DOCS).status == "off"
    outcome = Reranker(url="http://127.0.0.1:9/rerank", timeout_seconds=0.5).rerank("q", DOCS)
    assert outcome.status == "degraded" and "unreachable" in (outcome.reason or "")


def test_parse_scores_rejects_what_is_not_one_score_per_document() -> None:
    assert parse_scores(
        {"results": [{"index": 1, "relevance_score": 0.2}, {"index": 0, "score": 0.9}]}, 2
    ) == [0.9, 0.2]
    for bad in (
        {"x": 1},
        [1],
        [{"index": 5, "score": 1}],
        [{"index": 0}],
        [{"index": 0, "score": 1}] * 2,
        [],
    ):
        with pytest.raises(MalformedRerank):
            parse_scores(bad, 1)
    assert reorder([1, 2, 3], [0.5, 0.5]) == [1, 2, 3]  # ties keep the fused order
