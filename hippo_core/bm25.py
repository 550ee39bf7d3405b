"""Okapi BM25 over a sparse matrix of precomputed per-(doc, term) weights.

Scores are those of `rank_bm25.BM25Okapi` on the same tokens, bit for bit in practice: the same idf
(`log(N - df + 0.5) - log(df + 0.5)`, negative values floored to `epsilon * average_idf`), the same
float64 expression for the tf part, and query tokens added one at a time in query order, so a
repeated query token counts twice exactly as it does there. rank_bm25 touches every document for
every query token; here a query token costs only its posting list.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from pydantic import BaseModel, Field

__all__ = ["BM25Index", "BM25Params", "FORMAT_VERSION", "MATRIX_FILE", "META_FILE"]

FORMAT_VERSION = 1
MATRIX_FILE = "bm25.npz"
META_FILE = "bm25.json"


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
        params = params or BM25Params()
        n_docs = len(corpus_tokens)
        vocab: dict[str, int] = {}  # first-seen order, which is also rank_bm25's idf-sum order
        setdefault = vocab.setdefault
        doc_lengths = np.fromiter((len(doc) for doc in corpus_tokens), dtype=np.int64, count=n_docs)
        cols = np.fromiter(
            (setdefault(tok, len(vocab)) for doc in corpus_tokens for tok in doc),
            dtype=np.int64,
            count=int(doc_lengths.sum()),
        )
        rows = np.repeat(np.arange(n_docs, dtype=np.int64), doc_lengths)
        n_terms = len(vocab)
        tf = sp.coo_array(
            (np.ones(len(cols), dtype=np.float64), (rows, cols)), shape=(n_docs, n_terms)
        ).tocsc()
        tf.sum_duplicates()  # CSC conversion sums repeated (doc, term) pairs into term frequencies

        total = int(doc_lengths.sum())
        avgdl = total / n_docs if n_docs else 0.0
        df = np.diff(tf.indptr)
        idf, average_idf = _okapi_idf(df, n_docs, params.epsilon)

        data = tf.data
        if len(data):
            k1, b = params.k1, params.b
            # Same expression and evaluation order as rank_bm25.BM25Okapi.get_scores.
            norm = k1 * (1 - b + b * doc_lengths.astype(np.float64) / avgdl)
            term_of_nnz = np.repeat(np.arange(n_terms), df)
            data = idf[term_of_nnz] * (data * (k1 + 1) / (data + norm[tf.indices]))
        weights = sp.csc_array((data, tf.indices, tf.indptr), shape=(n_docs, n_terms))
        return cls(
            vocab=vocab,
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
        """Write `bm25.npz` + `bm25.json` into `directory` and fsync them (the caller swaps generations)."""
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
            "doc_lengths": self.doc_lengths.tolist(),
            "idf": self.idf.tolist(),
            "vocab": terms,
        }
        with open(directory / MATRIX_FILE, "wb") as fh:
            sp.save_npz(fh, self.weights, compressed=False)  # uncompressed: loads faster
            fh.flush()
            os.fsync(fh.fileno())
        with open(directory / META_FILE, "w", encoding="utf-8") as fh:
            json.dump(meta, fh, ensure_ascii=False, separators=(",", ":"))
            fh.flush()
            os.fsync(fh.fileno())
        _fsync_dir(directory)

    @classmethod
    def load(cls, directory: Path) -> BM25Index:
        """Read an index written by `save`; raises ValueError on an unknown format version."""
        directory = Path(directory)
        with open(directory / META_FILE, encoding="utf-8") as fh:
            meta = json.load(fh)
        if meta.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"unsupported BM25 index format: {meta.get('format_version')!r}")
        weights = sp.csc_array(sp.load_npz(directory / MATRIX_FILE))
        terms: list[str] = meta["vocab"]
        if weights.shape != (meta["n_docs"], len(terms)):
            raise ValueError("bm25.npz and bm25.json disagree on the index shape")
        return cls(
            vocab={term: col for col, term in enumerate(terms)},
            weights=weights,
            doc_lengths=np.asarray(meta["doc_lengths"], dtype=np.int64),
            idf=np.asarray(meta["idf"], dtype=np.float64),
            avgdl=float(meta["avgdl"]),
            average_idf=float(meta["average_idf"]),
            params=BM25Params.model_validate(meta["params"]),
            analyzer=meta.get("analyzer", ""),
        )


def _okapi_idf(df: np.ndarray, n_docs: int, epsilon: float) -> tuple[np.ndarray, float]:
    """rank_bm25's idf: math.log per term (np.log may differ in the last bit) and a sequential sum."""
    by_df: dict[int, float] = {}
    idf = np.empty(len(df), dtype=np.float64)
    idf_sum = 0.0
    for col, n in enumerate(df.tolist()):
        value = by_df.get(n)
        if value is None:
            value = by_df[n] = math.log(n_docs - n + 0.5) - math.log(n + 0.5)
        idf[col] = value
        idf_sum += value  # plain left-to-right sum, as rank_bm25 does (not fsum)
    average_idf = idf_sum / len(df) if len(df) else 0.0
    idf[idf < 0] = epsilon * average_idf
    return idf, average_idf


def _fsync_dir(directory: Path) -> None:
    """Persist the directory entries too; not possible on every platform (Windows), hence best effort."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
