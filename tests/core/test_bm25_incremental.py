"""A generation reached by deltas and compactions scores exactly like a base rebuilt from the same rows.

Rows are chunks: an id, a piece of metadata (a status, say) and tokens. Random sequences of add, edit,
delete and metadata-only change go through `Generation.next` (the code `lexical_index` runs), with
thresholds that keep a delta, replace it, or compact; after every step the view's score of every chunk
id equals a full rebuild's bit for bit, and its top-k lists (as chunk ids) are the rebuild's.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hippo_core.index.bm25 import Base, BM25Index, BM25Params, TermCounts, gather_counts
from hippo_core.index.bm25_update import Generation, Update

TERMS = [f"t{i}" for i in range(30)]
tokens_st = st.lists(st.sampled_from(TERMS), min_size=0, max_size=25)
# An operation on the chunk table: add a chunk, edit one's text, delete one, change only its metadata.
op_st = st.one_of(
    st.tuples(st.just("add"), st.integers(0, 10_000), tokens_st),
    st.tuples(st.just("edit"), st.integers(0, 10_000), tokens_st),
    st.tuples(st.just("delete"), st.integers(0, 10_000), st.just([])),
    st.tuples(st.just("meta"), st.integers(0, 10_000), st.just([])),
)
Chunk = tuple[str, int, list[str]]  # chunk id, metadata, tokens


def key(tokens: list[str]) -> bytes:
    return hashlib.blake2b("\x00".join(tokens).encode(), digest_size=16).digest()


def identity(chunk: Chunk) -> bytes:
    cid, meta, tokens = chunk
    return hashlib.blake2b(f"{cid}\x01{meta}\x01".encode() + key(tokens), digest_size=16).digest()


def arrays(chunks: list[Chunk]) -> tuple[np.ndarray, np.ndarray]:
    ids = np.array([identity(c) for c in chunks], dtype="S16").reshape(len(chunks))
    keys = np.array([key(c[2]) for c in chunks], dtype="S16").reshape(len(chunks))
    return ids, keys


def apply_ops(
    chunks: list[Chunk], ops: list[tuple[str, int, list[str]]], next_id: int
) -> tuple[list[Chunk], int]:
    chunks = list(chunks)
    for kind, pos, toks in ops:
        if kind == "add":
            chunks.insert(pos % (len(chunks) + 1), (f"c{next_id}", 0, toks))
            next_id += 1
        elif chunks and kind == "edit":
            cid, meta, _ = chunks[pos % len(chunks)]
            chunks[pos % len(chunks)] = (cid, meta, toks)
        elif chunks and kind == "delete":
            chunks.pop(pos % len(chunks))
        elif chunks and kind == "meta":
            cid, meta, toks = chunks[pos % len(chunks)]
            chunks[pos % len(chunks)] = (cid, meta + 1, toks)
    return chunks, next_id


class Tokenizer:
    """Tokens of table rows, counting what it was asked for."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.chunks = chunks
        self.asked: list[int] = []

    def __call__(self, rows: list[int]) -> list[list[str]]:
        self.asked.extend(rows)
        return [self.chunks[i][2] for i in rows]


def view_rows(update: Update) -> np.ndarray:
    """The view row of each table row."""
    index = update.generation.index
    positions = index.tie_keys
    if positions is None:
        return np.arange(index.n_rows)
    out = np.empty(index.n_docs, dtype=np.int64)
    live = positions >= 0
    out[positions[live]] = np.flatnonzero(live)
    return out


def assert_same_as_rebuild(update: Update, chunks: list[Chunk], queries: list[list[str]]) -> None:
    view = update.generation.index
    ids, keys = arrays(chunks)
    rebuilt = Generation.build(ids, keys, Tokenizer(chunks), view.params).generation.index
    assert view.n_docs == rebuilt.n_docs == len(chunks)
    assert view.avgdl == rebuilt.avgdl and view.average_idf == rebuilt.average_idf
    assert view.n_terms == rebuilt.n_terms and set(view.vocab) == set(rebuilt.vocab)
    assert len(view.vocab) == len(rebuilt.vocab)
    for term in rebuilt.vocab:
        assert view.term_idf(term) == rebuilt.term_idf(term), term
    rows = view_rows(update)
    np.testing.assert_array_equal(view.doc_lengths[rows], rebuilt.doc_lengths)
    assert not view.live[np.setdiff1d(np.arange(view.n_rows), rows)].any()  # every other row: tombstoned
    cids = [c[0] for c in chunks]
    view_cid = {int(r): cids[p] for p, r in enumerate(rows)}
    for q in queries:
        got, want = view.scores(q), rebuilt.scores(q)
        np.testing.assert_array_equal(got[rows], want, err_msg=str(q))  # per chunk, bit for bit
        assert not got[~view.live].any()
        for k in (1, 3, 10):
            assert [(view_cid[r], s) for r, s in view.top_k(q, k)] == [
                (cids[r], s) for r, s in rebuilt.top_k(q, k)
            ]
        allowed = np.zeros(view.n_rows, dtype=bool)
        allowed[rows[::2]] = True
        assert [view_cid[r] for r, _ in view.top_k(q, 5, allowed=allowed)] == [
            cids[r] for r, _ in rebuilt.top_k(q, 5, allowed=np.arange(len(chunks)) % 2 == 0)
        ]
        tids = [view.vocab[t] for t in q if t in view.vocab]
        rtids = [rebuilt.vocab[t] for t in q if t in rebuilt.vocab]
        np.testing.assert_array_equal(
            view.term_hits(rows, tids), rebuilt.term_hits(np.arange(len(chunks)), rtids)
        )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    start=st.lists(tokens_st, min_size=0, max_size=12),
    rounds=st.lists(
        st.tuples(st.lists(op_st, min_size=0, max_size=6), st.sampled_from([0, 2, 5, 1_000])),
        min_size=1,
        max_size=5,
    ),
    queries=st.lists(
        st.lists(st.sampled_from([*TERMS, "missing"]), min_size=1, max_size=5), min_size=1, max_size=6
    ),
    params=st.sampled_from([BM25Params(), BM25Params(k1=0.9, b=0.4, epsilon=0.5)]),
)
def test_deltas_and_compactions_equal_a_full_rebuild(
    start: list[list[str]],
    rounds: list[tuple[list[tuple[str, int, list[str]]], int]],
    queries: list[list[str]],
    params: BM25Params,
) -> None:
    chunks: list[Chunk] = [(f"c{i}", 0, toks) for i, toks in enumerate(start)]
    next_id = len(chunks)
    ids, keys = arrays(chunks)
    update = Generation.build(ids, keys, Tokenizer(chunks), params)
    assert update.compacted
    assert_same_as_rebuild(update, chunks, queries)
    for ops, max_changed in rounds:
        before = update.generation
        known = {key(c[2]) for c in chunks}
        chunks, next_id = apply_ops(chunks, ops, next_id)
        ids, keys = arrays(chunks)
        tokenizer = Tokenizer(chunks)
        update = before.next(ids, keys, tokenizer, max_changed)
        # only texts neither segment had went through the tokenizer, each once
        asked = [key(chunks[i][2]) for i in tokenizer.asked]
        assert len(asked) == len(set(asked)) == update.tokenized and not set(asked) & known
        changed = len(update.rows) if not update.compacted else None
        if not update.compacted:
            assert changed + update.generation.tombstones <= max_changed
            assert update.generation.base_rows is before.base_rows  # the base is shared, not rewritten
        assert (update.generation.table_ids() == ids).all()
        assert_same_as_rebuild(update, chunks, queries)


def test_a_metadata_only_change_is_a_delta_row_with_its_counts_copied() -> None:
    chunks: list[Chunk] = [
        ("b", 0, ["y", "z"]),
        ("a", 0, ["x", "y"]),
        ("c", 0, ["z"]),
        ("d", 0, ["w"]),
        ("e", 0, []),
    ]
    update = Generation.build(*arrays(chunks), Tokenizer(chunks), BM25Params())
    chunks[0] = ("b", 1, ["y", "z"])  # e.g. status: active -> archived
    tokenizer = Tokenizer(chunks)
    after = update.generation.next(*arrays(chunks), tokenizer, max_changed=10)
    assert not after.compacted and after.rows.tolist() == [0] and tokenizer.asked == []
    assert after.generation.delta.dead.tolist() == [0] and after.reused == 5
    view = after.generation.index
    scores = view.scores(["y"])
    assert scores[0] == 0 and scores[5] > 0 and scores[5] == scores[1]  # b is row 5 now, tied with a
    assert [r for r, _ in view.top_k(["y"], 5)] == [5, 1]  # b first still: ties go by table position


def test_crossing_the_threshold_compacts_into_a_base_in_table_order() -> None:
    chunks: list[Chunk] = [(f"c{i}", 0, [f"t{i}"]) for i in range(6)]
    update = Generation.build(*arrays(chunks), Tokenizer(chunks), BM25Params())
    chunks = [*chunks[:2], ("n1", 0, ["t9"]), *chunks[3:]]
    small = update.generation.next(*arrays(chunks), Tokenizer(chunks), max_changed=2)
    assert not small.compacted and small.generation.index.n_rows == 7
    chunks = [("n2", 0, ["t8"]), *chunks[1:]]
    big = small.generation.next(*arrays(chunks), Tokenizer(chunks), max_changed=2)
    assert big.compacted and big.rows.tolist() == list(range(6)) and big.generation.tombstones == 0
    assert big.generation.index.tie_keys is None and big.generation.index.n_rows == 6
    assert (big.reused, big.tokenized) == (5, 1)  # t9 copied from the delta, t8 tokenized


def test_gather_counts_drops_terms_no_row_has() -> None:
    counts = TermCounts.from_tokens([["a", "b"], ["c"], ["b", "b", "d"]])
    vocab = {t: i for i, t in enumerate(counts.terms)}
    parts, source = [counts.matrix], np.array([2, -1])
    # keep row 2, add a new doc: "a" and "c" vanish from a full build, their ids stay in a delta
    full = gather_counts(vocab, counts.terms, [], parts, source, [["e", "b"]], full=True)
    assert sorted(full.terms) == ["b", "d", "e"] and full.first == 0
    np.testing.assert_array_equal(
        BM25Index(Base.from_counts(full)).scores(["b", "e"]),
        BM25Index.build([["b", "b", "d"], ["e", "b"]]).scores(["b", "e"]),
    )
    delta = gather_counts(vocab, counts.terms, ["gone", "kept"], parts, source, [["e", "kept"]], full=False)
    assert (delta.first, delta.terms) == (4, ["kept", "e"])  # "gone" is in no row: dropped
    assert delta.matrix.shape == (2, 6) and sorted(delta.matrix.indices.tolist()) == [1, 3, 4, 5]
    with pytest.raises(ValueError):
        gather_counts(vocab, counts.terms, [], parts, np.array([0, -1]), [], full=True)
    with pytest.raises(ValueError):
        gather_counts(vocab, counts.terms, [], parts, np.array([5]), [], full=True)


def test_counts_round_trip(tmp_path) -> None:
    counts = TermCounts.from_tokens([["a", "b", "a"], [], ["c"]])
    from hippo_resources.lexical_store import load_counts, save_counts

    save_counts(tmp_path, counts)
    loaded = load_counts(tmp_path, counts.terms)
    assert (loaded.matrix != counts.matrix).nnz == 0 and loaded.terms == counts.terms


def test_rows_taken_run_by_run_equal_scipys_stack_and_row_indexing() -> None:
    """`_take_rows` (slice copies per run of consecutive rows of one part) gives what `vstack` then row
    indexing gives, entry order within each row included, for kept, repeated, reordered and new rows."""
    from hippo_core.index.bm25 import _take_rows

    rng = np.random.default_rng(3)
    first = sp.csr_array(sp.random(60, 40, density=0.2, format="csr", random_state=1, dtype=np.float64))
    first.data = rng.integers(1, 5, size=first.nnz).astype(np.int32)
    first.indices = rng.permuted(first.indices.reshape(-1))  # unsorted within rows
    empty = sp.csr_array((0, 40), dtype=np.int32)
    second = sp.csr_array((np.array([2, 1], np.int32), np.array([39, 0], np.int32), np.array([0, 1, 1, 2])))
    second = sp.csr_array(second, shape=(3, 40))
    cases = [
        np.arange(63),
        np.r_[np.arange(10), 61, np.arange(11, 60), 60, 62],
        np.r_[5, 5, 4, 3, 60, 59, 58],
        np.r_[58, 59, 60, 61],  # a run across the two parts is two runs
        rng.permutation(63),
        np.arange(0),
    ]
    for source in cases:
        got = _take_rows([first, empty, second], source, 40)
        want = sp.csr_array(sp.vstack([first, second], format="csr")[source], shape=(len(source), 40))
        assert got.shape == want.shape
        assert np.array_equal(got.indptr, want.indptr)
        assert np.array_equal(got.indices, want.indices) and np.array_equal(got.data, want.data)


def test_identical_rows_keep_a_base_row_once() -> None:
    chunks: list[Chunk] = [("a", 0, ["x"]), ("b", 0, ["y"])]
    update = Generation.build(*arrays(chunks), Tokenizer(chunks), BM25Params())
    ids, keys = arrays([chunks[0], chunks[1], chunks[0]])  # the same row twice
    assert update.generation.base_rows.rows_of(ids).tolist() == [0, 1, -1]
    after = update.generation.next(ids, keys, Tokenizer([chunks[0], chunks[1], chunks[0]]), 10)
    assert after.rows.tolist() == [2] and after.tokenized == 0 and after.generation.index.n_docs == 3
