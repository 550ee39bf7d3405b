"""An index updated from the previous counts scores exactly like one rebuilt from every doc's tokens."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hippo_core.bm25 import BM25Index, BM25Params, TermCounts

TERMS = [f"t{i}" for i in range(30)]
tokens_st = st.lists(st.sampled_from(TERMS), min_size=0, max_size=25)
# An operation on the doc list: add a doc at a position, edit the doc at a position, delete it.
op_st = st.one_of(
    st.tuples(st.just("add"), st.integers(0, 10_000), tokens_st),
    st.tuples(st.just("edit"), st.integers(0, 10_000), tokens_st),
    st.tuples(st.just("delete"), st.integers(0, 10_000), st.just([])),
)


def apply_ops(
    docs: list[tuple[int, list[str]]], ops: list[tuple[str, int, list[str]]], next_id: int
) -> tuple[list[tuple[int, list[str]]], int]:
    """Docs are (identity, tokens); an edit or add gets a new identity, as a changed text gets a new key."""
    docs = list(docs)
    for kind, pos, toks in ops:
        if kind == "add":
            docs.insert(pos % (len(docs) + 1), (next_id, toks))
            next_id += 1
        elif docs and kind == "edit":
            docs[pos % len(docs)] = (next_id, toks)
            next_id += 1
        elif docs and kind == "delete":
            docs.pop(pos % len(docs))
    return docs, next_id


def assert_same_index(a: BM25Index, b: BM25Index, queries: list[list[str]]) -> None:
    assert a.n_docs == b.n_docs and a.n_terms == b.n_terms
    assert list(a.vocab) == list(b.vocab)  # the same first-seen order, so the same idf sum
    assert a.avgdl == b.avgdl and a.average_idf == b.average_idf
    np.testing.assert_array_equal(a.doc_lengths, b.doc_lengths)
    for term, col in a.vocab.items():
        assert a.idf[col] == b.idf[b.vocab[term]], term
    for q in queries:
        np.testing.assert_array_equal(a.scores(q), b.scores(q), err_msg=str(q))
        assert a.top_k(q, 10) == b.top_k(q, 10), q


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    start=st.lists(tokens_st, min_size=0, max_size=12),
    rounds=st.lists(st.lists(op_st, min_size=0, max_size=6), min_size=1, max_size=4),
    queries=st.lists(
        st.lists(st.sampled_from([*TERMS, "missing"]), min_size=1, max_size=5), min_size=1, max_size=6
    ),
    params=st.sampled_from([BM25Params(), BM25Params(k1=0.9, b=0.4, epsilon=0.5)]),
)
def test_incremental_updates_equal_a_full_rebuild(
    start: list[list[str]],
    rounds: list[list[tuple[str, int, list[str]]]],
    queries: list[list[str]],
    params: BM25Params,
) -> None:
    docs = list(enumerate(start))
    next_id = len(docs)
    counts = TermCounts.from_tokens([t for _, t in docs])
    for ops in rounds:
        new_docs, next_id = apply_ops(docs, ops, next_id)
        # What the lexical asset does: rows of docs whose key survived are copied, the rest tokenized.
        previous_row = {ident: row for row, (ident, _) in enumerate(docs)}
        keep = np.array([previous_row.get(ident, -1) for ident, _ in new_docs], dtype=np.int64)
        fresh = [toks for ident, toks in new_docs if ident not in previous_row]
        counts = counts.update(keep, fresh)
        docs = new_docs
        rebuilt = BM25Index.build([t for _, t in docs], params)
        updated = BM25Index.from_counts(counts, params)
        assert_same_index(updated, rebuilt, queries)


def test_update_drops_terms_no_doc_has_and_keeps_order_of_rows() -> None:
    counts = TermCounts.from_tokens([["a", "b"], ["c"], ["b", "b", "d"]])
    # keep row 2 first, drop rows 0 and 1 (so "a" and "c" vanish), add a new doc second
    updated = counts.update(np.array([2, -1]), [["e", "b"]])
    assert sorted(updated.terms) == ["b", "d", "e"]
    got = BM25Index.from_counts(updated)
    want = BM25Index.build([["b", "b", "d"], ["e", "b"]])
    assert_same_index(got, want, [["b"], ["d", "e"], ["a"], ["b", "b", "e"]])


def test_update_rejects_mismatched_inputs() -> None:
    counts = TermCounts.from_tokens([["a"], ["b"]])
    with pytest.raises(ValueError):
        counts.update(np.array([0, -1]), [])
    with pytest.raises(ValueError):
        counts.update(np.array([5]), [])


def test_counts_round_trip(tmp_path) -> None:
    counts = TermCounts.from_tokens([["a", "b", "a"], [], ["c"]])
    counts.save(tmp_path / "counts.npz")
    loaded = TermCounts.load(tmp_path / "counts.npz", counts.terms)
    assert (loaded.matrix != counts.matrix).nnz == 0 and loaded.terms == counts.terms
    assert (
        BM25Index.from_counts(loaded).scores(["a"]).tolist()
        == BM25Index.build([["a", "b", "a"], [], ["c"]]).scores(["a"]).tolist()
    )


def test_rows_taken_run_by_run_equal_scipys_stack_and_row_indexing() -> None:
    """`_take_rows` (slice copies per run of consecutive rows) gives what `vstack` then row indexing gives,
    entry order within each row included, for kept, repeated, reordered and new rows."""
    import numpy as np
    import scipy.sparse as sp

    from hippo_core.bm25 import _take_rows

    rng = np.random.default_rng(3)
    first = sp.csr_array(sp.random(60, 40, density=0.2, format="csr", random_state=1, dtype=np.float64))
    first.data = rng.integers(1, 5, size=first.nnz).astype(np.int32)
    first.indices = rng.permuted(first.indices.reshape(-1))  # unsorted within rows, as counts are
    second = sp.csr_array((np.array([2, 1], np.int32), np.array([39, 0], np.int32), np.array([0, 1, 1, 2])))
    second = sp.csr_array(second, shape=(3, 40))
    cases = [
        np.arange(63),
        np.r_[np.arange(10), 61, np.arange(11, 60), 60, 62],
        np.r_[5, 5, 4, 3, 60, 59, 58],
        rng.permutation(63),
        np.arange(0),
    ]
    for source in cases:
        got = _take_rows(first, second, source, 40)
        want = sp.csr_array(sp.vstack([first, second], format="csr")[source], shape=(len(source), 40))
        assert got.shape == want.shape
        assert np.array_equal(got.indptr, want.indptr)
        assert np.array_equal(got.indices, want.indices) and np.array_equal(got.data, want.data)
