"""Okapi BM25 over a sparse matrix of precomputed per-(doc, term) weights.

Scores are those of `rank_bm25.BM25Okapi` on the same tokens: the same idf
(`log(N - df + 0.5) - log(df + 0.5)`, negative values floored to `epsilon * average_idf`), the same
float64 expression for the tf part, and query tokens added one at a time in query order, so a
repeated query token counts twice exactly as it does there. rank_bm25 touches every document for
every query token; here a query token costs only its posting list.

An index is a function of its term counts (`TermCounts`: docs × terms, each row's terms kept in the
order they first occur in the doc). That order gives back rank_bm25's first-seen term order, which
its running `average_idf` sum depends on in the last bit. So an index updated from the previous
generation's counts plus the changed docs' tokens (`TermCounts.update`) is the very index a rebuild
from every doc's tokens gives, and unchanged docs never go through the tokenizer again.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from pydantic import BaseModel, Field

__all__ = ["BM25Index", "BM25Params", "FORMAT_VERSION", "META_FILE", "VOCAB_FILE", "TermCounts"]

FORMAT_VERSION = 2
"""2: arrays as memory-mappable .npy files and the vocabulary in its own file (1: npz + one JSON)."""
META_FILE = "bm25.json"
VOCAB_FILE = "bm25.vocab.json"


class BM25Params(BaseModel, frozen=True):
    """Okapi parameters; the defaults are rank_bm25's."""

    k1: float = Field(default=1.5, ge=0.0)
    b: float = Field(default=0.75, ge=0.0, le=1.0)
    epsilon: float = 0.25


class BM25Index:
    """An immutable BM25 index: build once from tokenized docs, then score queries or save/load.

    `weights` is a CSC matrix (docs × terms) of float64 BM25 contributions, so a query term is one
    column slice. float32 would halve memory but reorders near-ties against rank_bm25.
    """

    def __init__(
        self,
        *,
        vocab: dict[str, int],
        weights: sp.csc_array,
        doc_lengths: np.ndarray,
        idf: np.ndarray,
        avgdl: float,
        average_idf: float,
        params: BM25Params,
        analyzer: str = "",
    ) -> None:
        n_docs, n_terms = weights.shape
        if len(vocab) != n_terms or len(doc_lengths) != n_docs or len(idf) != n_terms:
            raise ValueError("BM25Index parts disagree on the number of docs or terms")
        self.vocab = vocab
        self.weights = weights
        self.doc_lengths = doc_lengths
        self.idf = idf
        self.avgdl = avgdl
        self.average_idf = average_idf
        self.params = params
        self.analyzer = analyzer

    @property
    def n_docs(self) -> int:
        return int(self.weights.shape[0])

    @property
    def n_terms(self) -> int:
        return int(self.weights.shape[1])

    def __len__(self) -> int:
        return self.n_docs

    def __repr__(self) -> str:
        return f"BM25Index(n_docs={self.n_docs}, n_terms={self.n_terms}, nnz={self.weights.nnz})"

    @classmethod
    def build(
        cls,
        corpus_tokens: Sequence[Sequence[str]],
        params: BM25Params | None = None,
        *,
        analyzer: str = "",
    ) -> BM25Index:
        """Index tokenized docs (row i = doc i). `analyzer` records the tokenizer fingerprint."""
        return cls.from_counts(TermCounts.from_tokens(corpus_tokens), params, analyzer=analyzer)

    @classmethod
    def from_counts(
        cls, counts: TermCounts, params: BM25Params | None = None, *, analyzer: str = ""
    ) -> BM25Index:
        """Index docs given as term counts; a term no doc contains must not be in `counts`.

        The vocabulary is in first-seen order (`TermCounts.first_seen_order`); pass counts already
        in that order to save the reordering, and to save them beside the index.
        """
        params = params or BM25Params()
        counts = counts.first_seen_order()
        rows, terms = counts.matrix, counts.terms
        n_docs, n_terms = rows.shape
        tf = rows.tocsc()
        tf.sort_indices()
        # Integer sums, so any order gives the same lengths; one pass instead of a cumsum over every entry.
        doc_lengths = np.asarray(rows.sum(axis=1), dtype=np.int64).reshape(n_docs)
        total = int(doc_lengths.sum())
        avgdl = total / n_docs if n_docs else 0.0
        df = np.diff(tf.indptr)
        idf, average_idf = _okapi_idf(df, n_docs, params.epsilon)

        data = tf.data.astype(np.float64)
        if len(data):
            k1, b = params.k1, params.b
            # Same expression and evaluation order as rank_bm25.BM25Okapi.get_scores:
            # idf * (tf * (k1 + 1) / (tf + norm)), computed in place (20M entries at 100k chunks: each
            # temporary cost a fresh 160 MB array); + and * are commutative in IEEE 754, so the result
            # is the same bit for bit.
            norm = k1 * (1 - b + b * doc_lengths.astype(np.float64) / avgdl)
            denominator = norm[tf.indices]
            np.add(data, denominator, out=denominator)
            np.multiply(data, k1 + 1, out=data)
            np.divide(data, denominator, out=data)
            del denominator
            np.multiply(np.repeat(idf, df), data, out=data)  # each entry's term's idf
        # int32 indices whenever they fit: what scipy itself picks, so a memory-mapped load is not copied.
        idx = np.int32 if max(tf.nnz, n_docs) < np.iinfo(np.int32).max else np.int64
        weights = sp.csc_array(
            (data, tf.indices.astype(idx, copy=False), tf.indptr.astype(idx, copy=False)),
            shape=(n_docs, n_terms),
        )
        return cls(
            vocab={term: col for col, term in enumerate(terms)},
            weights=weights,
            doc_lengths=doc_lengths,
            idf=idf,
            avgdl=avgdl,
            average_idf=average_idf,
            params=params,
            analyzer=analyzer,
        )

    def scores(
        self, query_tokens: Sequence[str], term_weights: Mapping[str, float] | None = None
    ) -> np.ndarray:
        """BM25 score of every doc (float64, length n_docs); unknown tokens contribute nothing.

        `term_weights` multiplies a token's contribution (default 1.0), e.g. to down-weight bigrams.
        """
        out = np.zeros(self.n_docs, dtype=np.float64)
        indptr, indices, data = self.weights.indptr, self.weights.indices, self.weights.data
        vocab = self.vocab
        for tok in query_tokens:  # in order, with repeats: rank_bm25's summation order
            col = vocab.get(tok)
            if col is None:
                continue
            lo, hi = indptr[col], indptr[col + 1]
            rows = indices[lo:hi]  # unique within a column, so fancy-index += is safe
            if term_weights is None or (w := term_weights.get(tok, 1.0)) == 1.0:
                out[rows] += data[lo:hi]
            else:
                out[rows] += w * data[lo:hi]
        return out

    def top_k(
        self,
        query_tokens: Sequence[str],
        k: int,
        allowed: np.ndarray | None = None,
        term_weights: Mapping[str, float] | None = None,
    ) -> list[tuple[int, float]]:
        """The k best (doc, score) with score > 0, best first, ties by doc index ascending.

        `allowed` (bool mask over docs) filters candidates before the cut, so a filter never
        leaves fewer than k results when k allowed docs match.
        """
        if k <= 0 or self.n_docs == 0:
            return []
        scores = self.scores(query_tokens, term_weights)
        mask = scores > 0
        if allowed is not None:
            allowed = np.asarray(allowed)
            if allowed.dtype != np.bool_ or allowed.shape != (self.n_docs,):
                raise ValueError(f"allowed must be a bool array of shape ({self.n_docs},)")
            mask &= allowed
        cand = np.flatnonzero(mask)  # ascending doc index
        cand_scores = scores[cand]
        if len(cand) > k:
            kth = np.partition(cand_scores, len(cand) - k)[len(cand) - k]
            keep = cand_scores >= kth  # may keep extra docs tied with the k-th; trimmed after sorting
            cand, cand_scores = cand[keep], cand_scores[keep]
        order = np.lexsort((cand, -cand_scores))[:k]
        return [(int(cand[i]), float(cand_scores[i])) for i in order]

    def save(self, directory: Path) -> None:
        """Write the index into `directory`, each file fsync'd; the caller fsyncs the folder's entries and
        swaps generations (`LexicalStore.write_generation`, with `hippo_resources.files.fsync_dir`).

        A small `bm25.json`, the vocabulary in `bm25.vocab.json` (read only when `terms` are needed
        without the index) and plain `.npy` arrays that `load` memory-maps instead of parsing.
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        terms = [""] * self.n_terms
        for term, col in self.vocab.items():
            terms[col] = term
        meta = {
            "format_version": FORMAT_VERSION,
            "params": self.params.model_dump(),
            "analyzer": self.analyzer,
            "n_docs": self.n_docs,
            "n_terms": self.n_terms,
            "avgdl": self.avgdl,
            "average_idf": self.average_idf,
        }
        arrays = {
            "indptr": self.weights.indptr,
            "indices": self.weights.indices,
            "data": self.weights.data,
            "doc_lengths": self.doc_lengths,
            "idf": self.idf,
        }
        for name, arr in arrays.items():
            with open(directory / f"bm25.{name}.npy", "wb") as fh:
                np.save(fh, np.ascontiguousarray(arr), allow_pickle=False)
                fh.flush()
                os.fsync(fh.fileno())
        _write_json(directory / VOCAB_FILE, terms)
        _write_json(directory / META_FILE, meta)  # last: its presence says the rest is there

    @staticmethod
    def read_meta(directory: Path) -> dict[str, Any]:
        """The small header of a saved index (params, analyzer, sizes); ValueError if unknown format."""
        with open(Path(directory) / META_FILE, encoding="utf-8") as fh:
            meta = json.load(fh)
        if not isinstance(meta, dict) or meta.get("format_version") != FORMAT_VERSION:
            version = meta.get("format_version") if isinstance(meta, dict) else None
            raise ValueError(f"unsupported BM25 index format: {version!r}")
        return meta

    @staticmethod
    def read_terms(directory: Path) -> list[str]:
        """The vocabulary of a saved index, column order."""
        with open(Path(directory) / VOCAB_FILE, encoding="utf-8") as fh:
            terms = json.load(fh)
        if not isinstance(terms, list):
            raise ValueError("bm25.vocab.json is not a list")
        return terms

    @classmethod
    def load(cls, directory: Path, *, mmap: bool = True) -> BM25Index:
        """Read an index written by `save`; the arrays are memory-mapped (read-only) by default, so
        loading costs the vocabulary only and unused postings never enter memory."""
        directory = Path(directory)
        meta = cls.read_meta(directory)
        mode = "r" if mmap else None
        arr = {
            name: np.load(directory / f"bm25.{name}.npy", mmap_mode=mode, allow_pickle=False)
            for name in ("indptr", "indices", "data", "doc_lengths", "idf")
        }
        shape = (int(meta["n_docs"]), int(meta["n_terms"]))
        if len(arr["indptr"]) != shape[1] + 1 or len(arr["doc_lengths"]) != shape[0]:
            raise ValueError("the BM25 arrays and bm25.json disagree on the index shape")
        weights = sp.csc_array((arr["data"], arr["indices"], arr["indptr"]), shape=shape, copy=False)
        terms = cls.read_terms(directory)
        if len(terms) != shape[1]:
            raise ValueError("bm25.vocab.json and bm25.json disagree on the number of terms")
        return cls(
            vocab={term: col for col, term in enumerate(terms)},
            weights=weights,
            doc_lengths=arr["doc_lengths"],
            idf=arr["idf"],
            avgdl=float(meta["avgdl"]),
            average_idf=float(meta["average_idf"]),
            params=BM25Params.model_validate(meta["params"]),
            analyzer=meta.get("analyzer", ""),
        )


def _write_json(path: Path, obj: Any) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, ensure_ascii=False, separators=(",", ":"))
        fh.flush()
        os.fsync(fh.fileno())


def _okapi_idf(df: np.ndarray, n_docs: int, epsilon: float) -> tuple[np.ndarray, float]:
    """rank_bm25's idf: math.log (np.log may differ in the last bit), one per distinct df, and a
    left-to-right running sum in column order (np.cumsum is sequential; np.sum is pairwise)."""
    if not len(df):
        return np.zeros(0, dtype=np.float64), 0.0
    values, inverse = np.unique(df, return_inverse=True)
    per_df = np.array(
        [math.log(n_docs - n + 0.5) - math.log(n + 0.5) for n in values.tolist()], dtype=np.float64
    )
    idf = per_df[inverse.reshape(-1)]
    average_idf = float(np.cumsum(idf)[-1]) / len(df)
    idf[idf < 0] = epsilon * average_idf
    return idf, average_idf


class TermCounts:
    """Docs × terms occurrence counts (CSR, int32) and the term of each column.

    The unit of incremental indexing: rows of unchanged docs are copied from the previous
    generation's counts, only new or changed docs are tokenized.
    """

    def __init__(self, terms: list[str], matrix: sp.csr_array, *, ordered: bool = False) -> None:
        if matrix.shape[1] != len(terms):
            raise ValueError("TermCounts: one term per column")
        self.terms = terms
        self.matrix = matrix
        self.ordered = ordered  # columns known to be in first-seen order already

    def first_seen_order(self) -> TermCounts:
        """The same counts with columns in first-seen order (doc by doc, then first occurrence):
        `build`'s vocabulary order, which rank_bm25's idf sum runs in."""
        if self.ordered:
            return self
        rows = self.matrix
        n_terms = rows.shape[1]
        nnz = len(rows.indices)
        first = np.full(n_terms, nnz, dtype=np.int64)  # position of each term's first entry, row-major
        np.minimum.at(first, rows.indices, np.arange(nnz, dtype=np.int64))  # O(nnz); np.unique sorts
        if n_terms and first.max() == nnz:
            raise ValueError("every term must occur in at least one doc (prune the counts first)")
        order = np.argsort(first, kind="stable")  # order[new column] = old column
        new_of_old = np.empty(n_terms, dtype=rows.indices.dtype)
        new_of_old[order] = np.arange(n_terms, dtype=rows.indices.dtype)
        matrix = sp.csr_array((rows.data, new_of_old[rows.indices], rows.indptr), shape=rows.shape)
        return TermCounts([self.terms[i] for i in order.tolist()], matrix, ordered=True)

    @property
    def n_docs(self) -> int:
        return int(self.matrix.shape[0])

    @classmethod
    def from_tokens(cls, corpus_tokens: Sequence[Sequence[str]]) -> TermCounts:
        vocab: dict[str, int] = {}
        matrix = _count_rows(corpus_tokens, vocab)
        return cls(list(vocab), matrix)

    def update(self, keep: np.ndarray, new_tokens: Sequence[Sequence[str]]) -> TermCounts:
        """The counts of a new doc list, row by row: `keep[i] >= 0` copies this object's row
        `keep[i]`; `keep[i] == -1` takes the next list of `new_tokens`, in order. Terms that no
        doc contains any more are dropped, so the result equals `from_tokens` up to column order.
        """
        keep = np.asarray(keep, dtype=np.int64)
        fresh = np.flatnonzero(keep < 0)
        if len(fresh) != len(new_tokens):
            raise ValueError(f"{len(fresh)} new rows but {len(new_tokens)} token lists")
        if len(keep) and keep.max(initial=-1) >= self.n_docs:
            raise ValueError("keep refers to a row that does not exist")
        vocab = {term: col for col, term in enumerate(self.terms)}
        added = _count_rows(new_tokens, vocab)  # extends vocab with unseen terms
        n_terms = len(vocab)
        source = keep.copy()
        source[fresh] = self.n_docs + np.arange(len(fresh))
        matrix = _take_rows(self.matrix, added, source, n_terms)
        terms = list(vocab)
        df = np.bincount(matrix.indices, minlength=n_terms)
        alive = df > 0
        if not alive.all():
            new_col = np.cumsum(alive) - 1
            matrix = sp.csr_array(
                (matrix.data, new_col[matrix.indices].astype(matrix.indices.dtype), matrix.indptr),
                shape=(matrix.shape[0], int(alive.sum())),
            )
            terms = [t for t, a in zip(terms, alive.tolist(), strict=True) if a]
        return TermCounts(terms, matrix)

    def save(self, path: Path) -> None:
        """The count matrix as an uncompressed npz (terms are the index's vocabulary, saved there)."""
        m = self.matrix
        if max(m.nnz, m.shape[1]) < np.iinfo(np.int32).max:  # int32 indices: a third less to write and read
            m = sp.csr_array(
                (m.data, m.indices.astype(np.int32, copy=False), m.indptr.astype(np.int32, copy=False)),
                shape=m.shape,
            )
        with open(path, "wb") as fh:
            sp.save_npz(fh, m, compressed=False)
            fh.flush()
            os.fsync(fh.fileno())

    @classmethod
    def load(cls, path: Path, terms: list[str]) -> TermCounts:
        return cls(terms, sp.csr_array(sp.load_npz(path)))


def _take_rows(first: sp.csr_array, second: sp.csr_array, source: np.ndarray, n_cols: int) -> sp.csr_array:
    """Rows of `first` stacked on `second`, taken in the order `source` gives (row i of the result is
    stacked row `source[i]`), each row's entries as they are. Copied run by run: an edit keeps almost
    every row where it was, so a 100k-row update is a few slice copies instead of scipy's `vstack` and
    row indexing (1.5 s at 20M entries)."""
    n_first = first.shape[0]
    lengths = np.concatenate([np.diff(first.indptr), np.diff(second.indptr)]).astype(np.int64)
    indptr = np.zeros(len(source) + 1, dtype=np.int64)
    np.cumsum(lengths[source], out=indptr[1:])
    nnz = int(indptr[-1])
    idx = np.int32 if max(nnz, n_cols) < np.iinfo(np.int32).max else np.int64
    data = np.empty(nnz, dtype=np.result_type(first.data, second.data))
    indices = np.empty(nnz, dtype=idx)
    # a run: consecutive result rows from consecutive rows of one of the two matrices
    breaks = np.flatnonzero((np.diff(source) != 1) | (source[1:] == n_first)) + 1
    bounds = np.concatenate([[0], breaks, [len(source)]]).tolist() if len(source) else [0]
    src = source.tolist()
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        row = src[lo]
        matrix, row = (first, row) if row < n_first else (second, row - n_first)
        a, b = int(matrix.indptr[row]), int(matrix.indptr[row + hi - lo])
        out = slice(int(indptr[lo]), int(indptr[hi]))
        data[out] = matrix.data[a:b]
        indices[out] = matrix.indices[a:b]
    return sp.csr_array((data, indices, indptr.astype(idx)), shape=(len(source), n_cols))


def _count_rows(corpus_tokens: Sequence[Sequence[str]], vocab: dict[str, int]) -> sp.csr_array:
    """Occurrence counts of tokenized docs as CSR rows, adding unseen terms to `vocab` in order.

    Within a row, terms stay in the order of their first occurrence in the doc (CSR allows unsorted
    rows): `BM25Index.from_counts` recovers the first-seen vocabulary order from it.
    """
    n_docs = len(corpus_tokens)
    setdefault = vocab.setdefault
    lengths = np.fromiter((len(doc) for doc in corpus_tokens), dtype=np.int64, count=n_docs)
    cols = np.fromiter(
        (setdefault(tok, len(vocab)) for doc in corpus_tokens for tok in doc),
        dtype=np.int64,
        count=int(lengths.sum()),
    )
    rows = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
    n_terms = max(len(vocab), 1)
    pair, first, count = np.unique(rows * n_terms + cols, return_index=True, return_counts=True)
    by_first = np.argsort(first, kind="stable")  # row-major (rows ascend with position), first occurrence
    pair, count = pair[by_first], count[by_first]
    indptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(np.bincount(pair // n_terms, minlength=n_docs), out=indptr[1:])
    return sp.csr_array(
        (count.astype(np.int32), (pair % n_terms).astype(np.int32), indptr), shape=(n_docs, len(vocab))
    )
