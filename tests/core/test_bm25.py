"""BM25Index must score like rank_bm25.BM25Okapi on the same tokens and rank like it.

Scores agree to rtol 1e-6 (in practice to the last bit but for terms whose negative idf is floored to
`epsilon * average_idf`: our average is a canonical `math.fsum`, rank_bm25's a running sum in first-seen
term order). So two docs rank_bm25 scores exactly alike may differ by one ulp here: rankings are compared
up to the order within such near-ties (`assert_same_ranking`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from hippo_core.index.bm25 import BM25Index, BM25Params
from hippo_core.index.tokenize import Tokenizer

VOCAB = [f"w{i}" for i in range(400)]
_ZIPF = 1.0 / np.arange(1, len(VOCAB) + 1)
ZIPF = _ZIPF / _ZIPF.sum()

KO_EN_DOCS = [
    "형태소 분석은 문장을 의미 있는 가장 작은 단위로 나누는 일이다.",
    "형태소분석기 Kiwi는 한국어 문장을 빠르게 분석한다.",
    "BM25는 단어 빈도와 문서 길이를 이용하는 고전적인 검색 점수이다.",
    "Vector search compares embeddings by cosine similarity.",
    "벡터 검색은 임베딩 사이의 코사인 유사도를 비교한다.",
    "하이브리드 검색은 BM25와 벡터 검색의 순위를 RRF로 합친다.",
    "Reciprocal rank fusion merges rankings from several retrievers.",
    "Dagster assets describe each stage of the pipeline with lineage.",
    "데이터 파이프라인의 각 단계는 Dagster 자산으로 표현된다.",
    "옵시디언 볼트는 마크다운 파일의 모음이다. [[위키링크]]로 문서를 잇는다.",
    "The vault is a git repository of Markdown notes.",
    "커피를 마셨다. 아침마다 커피를 마신다.",
    "He drinks coffee every morning and tea in the afternoon.",
    "검색 결과가 없으면 지식 공백 큐에 질문을 기록한다.",
    "Zero-hit queries are logged as knowledge gaps.",
    "승인된 카드만 정식 위키로 승격된다.",
    "Only approved cards are promoted to the canonical wiki.",
    "한국어와 English가 섞인 문서도 같은 분석기로 처리한다.",
    "2024년 3월 12일에 인덱스를 다시 만들었다.",
    "The index was rebuilt on 12 March 2024 after 1,000 new notes.",
    "문서 길이가 길수록 단어 빈도의 효과가 줄어든다.",
    "Longer documents dampen the effect of term frequency.",
    "",
    "임베딩 모델이 바뀌면 벡터를 다시 계산한다.",
    "When the embedding model changes, vectors are recomputed.",
    "서울의 날씨는 맑고 바람이 분다.",
    "검색 검색 검색 반복되는 단어는 빈도가 높다.",
    "search search search repeated words have high frequency",
]
KO_EN_QUERIES = [
    "형태소 분석",
    "형태소분석",
    "벡터 검색",
    "vector search",
    "BM25 검색 점수",
    "커피 마시다",
    "coffee morning",
    "Dagster 자산",
    "knowledge gaps",
    "지식 공백",
    "위키 승격",
    "embedding model vectors",
    "2024년 인덱스",
    "검색 검색",
    "날씨",
    "없는단어 nothing",
]


def reference_ranking(scores: np.ndarray) -> list[int]:
    """Docs with score > 0, best first, ties by index ascending."""
    idx = np.flatnonzero(scores > 0)
    return [int(i) for i in idx[np.lexsort((idx, -scores[idx]))]]


def assert_same_ranking(got: list[int], want_scores: np.ndarray, rel: float = 1e-12) -> None:
    """`got` ranks exactly the docs with a positive reference score, best first by the reference scores,
    except that docs whose reference scores differ by at most `rel` (relative) may come in either order."""
    want = reference_ranking(want_scores)
    assert sorted(got) == sorted(want)
    s = want_scores[np.asarray(got, dtype=np.int64)]
    if len(s) > 1:
        slack = rel * np.maximum(np.abs(s[:-1]), np.abs(s[1:]))
        assert (s[:-1] >= s[1:] - slack).all(), "out of order by more than a near-tie"
    # outside near-ties, the very same order
    near = np.zeros(len(want), dtype=bool)
    w = want_scores[np.asarray(want, dtype=np.int64)]
    if len(w) > 1:
        close = np.abs(w[:-1] - w[1:]) <= rel * np.maximum(np.abs(w[:-1]), np.abs(w[1:]))
        near[:-1] |= close
        near[1:] |= close
    assert [d for d, n in zip(got, near, strict=True) if not n] == [
        d for d, n in zip(want, near, strict=True) if not n
    ]


def random_corpus(rng: np.random.Generator, n_docs: int) -> list[list[str]]:
    return [list(rng.choice(VOCAB, size=int(rng.integers(0, 80)), p=ZIPF)) for _ in range(n_docs)]


def random_queries(rng: np.random.Generator, n: int) -> list[list[str]]:
    queries = [list(rng.choice(VOCAB, size=int(rng.integers(1, 9)), p=ZIPF)) for _ in range(n)]
    queries[0] = ["w0", "w0", "w5"]  # repeated token counts twice
    queries[1] = ["unknown-term", "w17"]
    queries[2] = ["w0"]  # in most docs: negative idf floored to epsilon * average_idf
    return queries


def assert_same_as_rank_bm25(
    corpus: list[list[str]], queries: list[list[str]], params: BM25Params | None = None
) -> None:
    params = params or BM25Params()
    ours = BM25Index.build(corpus, params)
    ref = BM25Okapi(corpus, k1=params.k1, b=params.b, epsilon=params.epsilon)
    assert ours.n_docs == len(corpus)
    assert ours.avgdl == pytest.approx(ref.avgdl)
    for q in queries:
        got, want = ours.scores(q), ref.get_scores(q)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12, err_msg=str(q))
        full = [d for d, _ in ours.top_k(q, len(corpus))]
        assert_same_ranking(full, want)
        assert full == reference_ranking(got), q  # ties by doc index, on our own scores
        assert [d for d, _ in ours.top_k(q, 10)] == full[:10], q


def test_matches_rank_bm25_on_random_corpus() -> None:
    rng = np.random.default_rng(20240611)
    corpus = random_corpus(rng, 300)
    assert_same_as_rank_bm25(corpus, random_queries(rng, 60))


def test_matches_rank_bm25_with_other_params() -> None:
    rng = np.random.default_rng(7)
    corpus = random_corpus(rng, 200)
    assert_same_as_rank_bm25(corpus, random_queries(rng, 20), BM25Params(k1=0.9, b=0.4, epsilon=0.5))


def test_negative_idf_is_floored_like_rank_bm25() -> None:
    corpus = [["common", "a"], ["common", "b"], ["common", "c"], ["common"], ["d"]]
    ours = BM25Index.build(corpus)
    ref = BM25Okapi(corpus)
    assert ours.term_idf("common") == pytest.approx(ref.idf["common"])
    assert ours.average_idf == pytest.approx(ref.average_idf, rel=1e-12)
    assert ref.idf["common"] == pytest.approx(0.25 * ref.average_idf)
    np.testing.assert_allclose(ours.scores(["common"]), ref.get_scores(["common"]), rtol=1e-12)


def test_matches_rank_bm25_on_tokenized_korean_english_corpus() -> None:
    tok = Tokenizer()
    corpus = tok.tokenize_many(KO_EN_DOCS)
    queries = [tok.query_tokens(q) for q in KO_EN_QUERIES]
    assert_same_as_rank_bm25(corpus, queries)
    ours = BM25Index.build(corpus, analyzer=tok.fingerprint())
    assert ours.analyzer == tok.fingerprint()
    # sanity: the analyzer makes the obvious doc win
    assert ours.top_k(tok.query_tokens("커피 마시다"), 1)[0][0] == 11
    assert ours.top_k(tok.query_tokens("형태소분석"), 1)[0][0] == 1


def test_allowed_mask_applies_before_top_k() -> None:
    rng = np.random.default_rng(3)
    corpus = random_corpus(rng, 300)
    index = BM25Index.build(corpus)
    query = ["w3", "w9", "w20"]
    full = index.top_k(query, 300)
    assert len(full) > 20
    best = full[0][0]
    allowed = np.ones(index.n_docs, dtype=bool)
    allowed[best] = False
    got = index.top_k(query, 10, allowed=allowed)
    assert best not in [d for d, _ in got]
    assert got[0] == full[1]
    assert got == full[1:11]  # still k results

    # a narrow filter: only every 7th doc allowed; results are the best of those, k of them
    allowed = np.zeros(index.n_docs, dtype=bool)
    allowed[::7] = True
    got = index.top_k(query, 5, allowed=allowed)
    want = [(d, s) for d, s in full if d % 7 == 0][:5]
    assert len(want) == 5 and got == want

    with pytest.raises(ValueError):
        index.top_k(query, 5, allowed=np.ones(index.n_docs - 1, dtype=bool))
    with pytest.raises(ValueError):
        index.top_k(query, 5, allowed=np.ones(index.n_docs, dtype=np.int64))


def test_top_k_ties_by_doc_index_and_only_positive() -> None:
    corpus = [["x", "y"], ["z"], ["x", "y"], ["x", "y"], ["y", "z"], ["u"], ["v"], ["w"], ["t"]]
    index = BM25Index.build(corpus)  # x in 3 of 9 docs: positive idf
    got = index.top_k(["x"], 2)
    assert [d for d, _ in got] == [0, 2]
    assert got[0][1] == got[1][1] > 0
    assert [d for d, _ in index.top_k(["x"], 10)] == [0, 2, 3]  # the other docs score 0
    assert index.top_k(["x"], 0) == []


def is_memory_mapped(arr: np.ndarray) -> bool:
    while arr is not None:
        if isinstance(arr, np.memmap):
            return True
        arr = arr.base if isinstance(arr, np.ndarray) else None
    return False


def test_save_load_round_trip(tmp_path: Path) -> None:
    """A base and a delta saved and loaded score as they did; the base's postings are memory-mapped."""
    from hippo_core.index.bm25 import Base, Delta, TermCounts, dead_term_counts, gather_counts
    from hippo_resources.lexical_store import load_base, load_delta, read_base_meta, save_base, save_delta

    rng = np.random.default_rng(11)
    corpus = random_corpus(rng, 150)
    params = BM25Params(k1=1.2, b=0.7, epsilon=0.3)
    counts = TermCounts.from_tokens(corpus)
    base = Base.from_counts(counts)
    save_base(tmp_path / "base", base, {"note": "kept"})
    names = {p.name for p in (tmp_path / "base").iterdir()}
    assert names == {
        "base.json",
        "base.terms.json",
        *(f"postings.{n}.npy" for n in ("indptr", "rows", "tf", "doc_lengths")),
    }
    assert read_base_meta(tmp_path / "base")["note"] == "kept"
    loaded = load_base(tmp_path / "base")
    for arr in (loaded.postings.rows, loaded.postings.tf, loaded.postings.indptr):
        assert is_memory_mapped(arr)  # not read in
    assert loaded.terms == base.terms and loaded.postings.tf.dtype == np.uint16
    index, again = BM25Index(base, None, params, analyzer="abc123"), BM25Index(loaded, None, params)
    assert again.n_docs == index.n_docs and again.avgdl == index.avgdl
    assert again.average_idf == index.average_idf
    np.testing.assert_array_equal(again.doc_lengths, index.doc_lengths)
    # a delta: rows 3 and 7 tombstoned, two new rows, one with a term the base does not have
    dead = np.array([3, 7])
    fresh = [["w1", "brand-new"], ["w2"]]
    delta_counts = gather_counts(base.vocab, base.terms, [], [], np.array([-1, -1]), fresh, full=False)
    ids, n = dead_term_counts(counts.matrix, dead)
    positions = np.r_[np.arange(150), 150, 151].astype(np.int32)
    positions[dead] = -1
    delta = Delta.build(delta_counts, base.n_terms, dead, ids, n, positions)
    save_delta(tmp_path, delta, {"base": "base"})
    delta_loaded = load_delta(tmp_path)
    assert delta_loaded.new_terms == ["brand-new"]
    view, view_again = BM25Index(base, delta, params), BM25Index(loaded, delta_loaded, params)
    for q in [*random_queries(rng, 20), ["brand-new"], ["w1", "brand-new"]]:
        np.testing.assert_array_equal(again.scores(q), index.scores(q))
        assert again.top_k(q, 10) == index.top_k(q, 10)
        np.testing.assert_array_equal(view_again.scores(q), view.scores(q))
        assert view_again.top_k(q, 10) == view.top_k(q, 10)
    assert (
        view.top_k(["brand-new"], 5) == view_again.top_k(["brand-new"], 5)
        and view.top_k(["brand-new"], 5)[0][0] == 150
    )


def test_load_rejects_unknown_format(tmp_path: Path) -> None:
    from hippo_core.index.bm25 import Base, TermCounts
    from hippo_resources.lexical_store import load_base, save_base

    save_base(tmp_path, Base.from_counts(TermCounts.from_tokens([["a"]])), {})
    meta = (tmp_path / "base.json").read_text(encoding="utf-8")
    (tmp_path / "base.json").write_text(meta.replace('"format_version":3', '"format_version":2'), "utf-8")
    with pytest.raises(ValueError, match="format"):
        load_base(tmp_path)


def test_term_weights_scale_a_terms_contribution() -> None:
    rng = np.random.default_rng(5)
    index = BM25Index.build(random_corpus(rng, 200))
    a, b = index.scores(["w4"]), index.scores(["w11"])
    weighted = index.scores(["w4", "w11"], term_weights={"w11": 0.25})
    np.testing.assert_allclose(weighted, a + 0.25 * b, rtol=1e-12)
    np.testing.assert_array_equal(index.scores(["w4", "w11"], term_weights={}), index.scores(["w4", "w11"]))
    np.testing.assert_array_equal(index.scores(["w11"], term_weights={"w11": 0.0}), np.zeros(index.n_docs))
    top = index.top_k(["w4", "w11"], 5, term_weights={"w11": 0.25})
    assert [d for d, _ in top] == reference_ranking(weighted)[:5]


def test_empty_corpus() -> None:
    index = BM25Index.build([])
    assert index.n_docs == 0 and index.avgdl == 0.0
    assert index.scores(["a"]).shape == (0,)
    assert index.top_k(["a"], 5) == []


def test_corpus_of_empty_docs(tmp_path: Path) -> None:
    index = BM25Index.build([[], [], []])
    assert index.avgdl == 0.0
    np.testing.assert_array_equal(index.scores(["a"]), np.zeros(3))
    assert index.top_k(["a"], 5) == []
    from hippo_resources.lexical_store import load_base, save_base

    save_base(tmp_path, index.base, {})
    assert BM25Index(load_base(tmp_path)).n_docs == 3


def test_empty_query() -> None:
    index = BM25Index.build([["a", "b"], ["b"]])
    np.testing.assert_array_equal(index.scores([]), np.zeros(2))
    assert index.top_k([], 5) == []


def test_kept_weights_score_exactly_as_computed_ones() -> None:
    """The base weights kept between queries (`BM25Index.cache_bytes`) give the very scores computed ones
    give, term weights included (a kept array is never scaled in place), and the budget holds."""
    rng = np.random.default_rng(9)
    corpus = random_corpus(rng, 300)
    queries = random_queries(rng, 40)
    weights = {"w0": 0.25, "w3": 0.5}
    computed = BM25Index.build(corpus)
    computed.cache_bytes = 0
    want = [(computed.scores(q), computed.scores(q, weights), computed.top_k(q, 10)) for q in queries]
    kept = BM25Index.build(corpus)
    kept.cache_min_postings = 1
    kept.cache_bytes = 8 * 300 * 5  # a few lists: older ones are dropped
    for _ in range(2):  # computed and kept, then from what was kept
        for q, (scores, weighted, top) in zip(queries, want, strict=True):
            np.testing.assert_array_equal(kept.scores(q), scores)
            np.testing.assert_array_equal(kept.scores(q, weights), weighted)
            assert kept.top_k(q, 10) == top
    assert kept._kept and kept._kept_bytes <= kept.cache_bytes
    assert all(not a.flags.writeable for a in kept._kept.values())
    assert not computed._kept
