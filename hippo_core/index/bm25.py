"""Okapi BM25 scored at query time from term counts, over a large immutable base and a small delta.

Scores are those of `rank_bm25.BM25Okapi` on the same tokens: idf `log(N - df + 0.5) - log(df + 0.5)`
(math.log), negative values floored to `epsilon * average_idf`, per posting
`idf * (tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)))` in that float64 order, and query tokens
added one at a time in query order, so a repeated query token counts twice. A query token costs only
its posting lists; rank_bm25 touches every document.

Why counts and not precomputed weights: a weight depends on N, avgdl and df, which change with any edit,
so precomputed weights made every edit rewrite (and recompute) all of them. From counts, an index is
views over segments: a `Base` (every row of the last full build, immutable) and a `Delta` (rows added or
changed since, and the base rows they replace, tombstoned). The view's rows are the base's [0, n_base)
then the delta's; a tombstoned row never scores; N, the total length (so avgdl) and df count live rows
only; a term only in the delta extends the vocabulary; a term no live row contains is not in it.

Everything a score depends on is a function of the multiset of live rows, so a view scores every row
exactly (bit for bit) like a base built from the same rows: `average_idf` is computed from the multiset
of live df values in a canonical order (`canonical_average_idf`), and exact ties are broken by each row's
position in the chunk table (`Delta.positions`), not by where the row is stored. The only difference from
rank_bm25 is that average: its running sum in first-seen term order may differ in the last bit.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    import scipy.sparse as sp  # imported where matrices are built: a reader of an index never needs it

__all__ = [
    "BM25Index",
    "BM25Params",
    "Base",
    "Delta",
    "FORMAT_VERSION",
    "Postings",
    "TermCounts",
    "canonical_average_idf",
    "check_format",
    "gather_counts",
]

FORMAT_VERSION = 3
"""3: term counts scored at query time, a base and a delta per generation (2: precomputed weights, one
folder per generation; 1: npz + one JSON)."""
POSTINGS = ("indptr", "rows", "tf", "doc_lengths")
COUNTS = ("indptr", "indices", "data")
"""The names of the arrays a base's postings and its term counts are stored as (by the lexical store)."""


class BM25Params(BaseModel, frozen=True):
    """Okapi parameters; the defaults are rank_bm25's."""

    k1: float = Field(default=1.5, ge=0.0)
    b: float = Field(default=0.75, ge=0.0, le=1.0)
    epsilon: float = 0.25


def _small_ints(values: np.ndarray) -> np.ndarray:
    """Counts as uint16 when they fit (a tf above 65,535 in one chunk does not occur), else int32."""
    if not len(values) or int(values.max()) < 2**16:
        return values.astype(np.uint16, copy=False)
    return values.astype(np.int32, copy=False)


def _index_dtype(n: int) -> type[np.signedinteger]:
    return np.int32 if n < np.iinfo(np.int32).max else np.int64


class Postings:
    """Rows' term occurrences by term slot (CSC: `indptr` per slot, row ids ascending within a slot, tf)
    and each row's length (its number of tokens)."""

    __slots__ = ("doc_lengths", "indptr", "rows", "tf")

    def __init__(self, indptr: np.ndarray, rows: np.ndarray, tf: np.ndarray, doc_lengths: np.ndarray) -> None:
        if len(rows) != len(tf) or (len(indptr) and int(indptr[-1]) != len(rows)):
            raise ValueError("postings: indptr, rows and tf disagree")
        self.indptr = indptr
        self.rows = rows
        self.tf = tf
        self.doc_lengths = doc_lengths

    @property
    def n_rows(self) -> int:
        return len(self.doc_lengths)

    @property
    def n_slots(self) -> int:
        return max(len(self.indptr) - 1, 0)

    @property
    def nnz(self) -> int:
        return len(self.rows)

    @classmethod
    def from_counts(cls, matrix: sp.csr_array) -> Postings:
        """One slot per column of a rows × terms count matrix."""
        import scipy.sparse as sp

        n_rows = matrix.shape[0]
        csc = sp.csc_array(matrix)
        csc.sum_duplicates()  # sorted row ids within each column
        idx = _index_dtype(max(csc.nnz, n_rows))
        return cls(
            csc.indptr.astype(np.int64, copy=False),
            csc.indices.astype(idx, copy=False),
            _small_ints(csc.data),
            np.asarray(matrix.sum(axis=1), dtype=np.int64).reshape(n_rows),
        )

    def arrays(self) -> dict[str, np.ndarray]:
        return {"indptr": self.indptr, "rows": self.rows, "tf": self.tf, "doc_lengths": self.doc_lengths}


class TermCounts:
    """Docs × terms occurrence counts (CSR) and the term of each column: the unit of incremental indexing.

    Rows of unchanged texts are copied from the counts a generation keeps (`gather_counts`); only new or
    changed texts go through the tokenizer. A delta's counts name only the columns from `first` on (the
    columns before are the base's terms, by id)."""

    def __init__(self, terms: list[str], matrix: sp.csr_array, first: int = 0) -> None:
        if matrix.shape[1] != first + len(terms):
            raise ValueError("TermCounts: one term per column")
        self.terms = terms
        self.matrix = matrix
        self.first = first

    @property
    def n_docs(self) -> int:
        return int(self.matrix.shape[0])

    @classmethod
    def from_tokens(cls, corpus_tokens: Sequence[Sequence[str]]) -> TermCounts:
        vocab: dict[str, int] = {}
        matrix = _count_rows(corpus_tokens, vocab, {})
        return cls(list(vocab), matrix)

    def arrays(self) -> dict[str, np.ndarray]:
        """The CSR arrays as they are stored (the resource writes them; `from_arrays` reads them back)."""
        m = self.matrix
        idx = _index_dtype(max(m.nnz, m.shape[1]))
        return {
            "indptr": m.indptr.astype(np.int64, copy=False),
            "indices": m.indices.astype(idx, copy=False),
            "data": _small_ints(m.data),
        }

    @staticmethod
    def matrix_from_arrays(arrays: Mapping[str, np.ndarray], n_cols: int) -> sp.csr_array:
        """The count matrix over stored (possibly memory-mapped) arrays, not copied."""
        import scipy.sparse as sp

        shape = (len(arrays["indptr"]) - 1, n_cols)
        return sp.csr_array((arrays["data"], arrays["indices"], arrays["indptr"]), shape=shape, copy=False)


def gather_counts(
    vocab: Mapping[str, int],
    fixed_terms: Sequence[str],
    extra_terms: Sequence[str],
    parts: Sequence[sp.csr_array],
    source: np.ndarray,
    fresh_tokens: Sequence[Sequence[str]],
    *,
    full: bool,
) -> TermCounts:
    """The counts of a list of rows, each copied from `parts` or counted from tokens.

    The parts' columns are `vocab`'s ids (0 .. len(vocab) - 1, the base's vocabulary, shared, never
    copied; `fixed_terms` names them), then `extra_terms`. `source[i] >= 0` copies row `source[i]` of the
    parts stacked in order; `-1` counts the next list of `fresh_tokens`, whose unseen terms extend the
    columns. For a delta (`full=False`) the vocabulary's ids stay and the result names only the columns
    past them (`TermCounts.first`); for a full build every column no row uses is dropped. Dropped columns
    are renumbered away in order."""
    import scipy.sparse as sp

    source = np.asarray(source, dtype=np.int64)
    fresh = np.flatnonzero(source < 0)
    if len(fresh) != len(fresh_tokens):
        raise ValueError(f"{len(fresh)} new rows but {len(fresh_tokens)} token lists")
    n_parts = sum(p.shape[0] for p in parts)
    if len(source) and source.max(initial=-1) >= n_parts:
        raise ValueError("source refers to a row that does not exist")
    fixed = len(vocab)
    added = {t: fixed + i for i, t in enumerate(extra_terms)}
    counted = _count_rows(fresh_tokens, added, vocab)  # extends `added` with unseen terms
    n_cols = fixed + len(added)
    rows = source.copy()
    rows[fresh] = n_parts + np.arange(len(fresh))
    matrix = _take_rows([*parts, counted], rows, n_cols)
    first = 0 if full else fixed
    names = [*fixed_terms, *added] if full else list(added)
    used = np.bincount(matrix.indices, minlength=n_cols)[first:] > 0
    if not used.all():
        new_col = np.arange(n_cols, dtype=np.int64)
        new_col[first:] = first + np.cumsum(used) - 1
        matrix = sp.csr_array(
            (matrix.data, new_col[matrix.indices].astype(matrix.indices.dtype), matrix.indptr),
            shape=(matrix.shape[0], first + int(used.sum())),
        )
        names = [t for t, u in zip(names, used.tolist(), strict=True) if u]
    return TermCounts(names, matrix, first=first)


def dead_term_counts(counts: sp.csr_array, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the terms of the given rows: their ids and in how many of those rows each occurs (each row's
    terms are unique, so this is the df the rows take away when they are tombstoned)."""
    if not len(rows):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    indptr = counts.indptr
    cols = np.concatenate([counts.indices[int(indptr[r]) : int(indptr[r + 1])] for r in rows.tolist()])
    ids, n = np.unique(cols, return_counts=True)
    return ids.astype(np.int64), n.astype(np.int64)


class Base:
    """An immutable segment: every row of a full build, its postings and its vocabulary.

    A loaded base reads its vocabulary when first asked (`terms`, `vocab`): a writer that finds nothing
    changed needs only the rows' identities, not hundreds of thousands of terms."""

    def __init__(self, terms: list[str] | Callable[[], list[str]], postings: Postings) -> None:
        self.postings = postings
        self._read_terms = terms if callable(terms) else None
        if not callable(terms):
            self._check(terms)
            self.__dict__["terms"] = terms

    def _check(self, terms: list[str]) -> None:
        if self.postings.n_slots != len(terms):
            raise ValueError("a base has one posting slot per term")

    @cached_property
    def terms(self) -> list[str]:
        assert self._read_terms is not None
        terms = self._read_terms()
        self._check(terms)
        return terms

    @cached_property
    def vocab(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.terms)}

    @classmethod
    def from_counts(cls, counts: TermCounts) -> Base:
        """A base of these rows; every term must occur in some row (`gather_counts` with full=True
        ensures it)."""
        if counts.first:
            raise ValueError("a base names every column")
        base = cls(counts.terms, Postings.from_counts(counts.matrix))
        if len(base.df) and int(base.df.min()) == 0:
            raise ValueError("every term of a base must occur in one of its rows (prune the counts first)")
        return base

    @property
    def n_rows(self) -> int:
        return self.postings.n_rows

    @property
    def n_terms(self) -> int:
        return self.postings.n_slots

    @cached_property
    def df(self) -> np.ndarray:
        return np.diff(self.postings.indptr)

    @cached_property
    def total_length(self) -> int:
        return int(self.postings.doc_lengths.sum())

    @cached_property
    def df_histogram(self) -> dict[int, int]:
        """How many terms have each df: what `average_idf` needs, adjusted per view by the changed terms."""
        values, n = np.unique(self.df, return_counts=True)
        return dict(zip(values.tolist(), n.tolist(), strict=True))

    def header(self) -> dict[str, Any]:
        """What a stored base's meta must say for its arrays to be read back as this base."""
        return {"format_version": FORMAT_VERSION, "n_rows": self.n_rows, "n_terms": self.n_terms}

    @classmethod
    def from_arrays(
        cls,
        terms: list[str] | Callable[[], list[str]],
        arrays: Mapping[str, np.ndarray],
        meta: Mapping[str, Any],
    ) -> Base:
        """A stored base (its postings arrays, possibly memory-mapped, and its meta); ValueError when the
        meta is of another format version or disagrees with the arrays."""
        check_format(meta)
        postings = Postings(*(arrays[n] for n in POSTINGS))
        if postings.n_rows != meta["n_rows"] or postings.n_slots != meta["n_terms"]:
            raise ValueError("the postings and the base meta disagree on the shape")
        return cls(terms, postings)


class Delta:
    """What changed since a base: the rows added or changed (their postings by term, each slot naming a
    view term id: a base term's id, or `n_base_terms + i` for `new_terms[i]`), the base rows they replace
    (`dead`, tombstoned), how many of those rows each base term occurs in (`dead_ids`, `dead_counts`),
    and each view row's position in the chunk table (`positions`: ties are broken by it; -1 for a
    tombstone; None when the view has no delta and a row's position is its index)."""

    def __init__(
        self,
        postings: Postings,
        term_ids: np.ndarray,
        new_terms: list[str],
        dead: np.ndarray,
        dead_ids: np.ndarray,
        dead_counts: np.ndarray,
        positions: np.ndarray | None,
    ) -> None:
        if len(term_ids) != postings.n_slots or len(dead_ids) != len(dead_counts):
            raise ValueError("delta: parts disagree")
        self.postings = postings
        self.term_ids = term_ids
        self.new_terms = new_terms
        self.dead = dead
        self.dead_ids = dead_ids
        self.dead_counts = dead_counts
        self.positions = positions

    @classmethod
    def empty(cls) -> Delta:
        z = np.zeros(0, dtype=np.int64)
        return cls(
            Postings(np.zeros(1, np.int64), z.astype(np.int32), z.astype(np.uint16), z), z, [], z, z, z, None
        )

    @classmethod
    def build(
        cls,
        counts: TermCounts,
        n_base_terms: int,
        dead: np.ndarray,
        dead_ids: np.ndarray,
        dead_counts: np.ndarray,
        positions: np.ndarray | None,
    ) -> Delta:
        """A delta of `counts` (columns: the base's term ids, then the terms new in the delta)."""
        if counts.first != n_base_terms:
            raise ValueError("a delta's counts keep the base's term ids")
        full = Postings.from_counts(counts.matrix)
        lengths = np.diff(full.indptr)
        slots = np.flatnonzero(lengths)  # terms some delta row contains
        indptr = np.zeros(len(slots) + 1, dtype=np.int64)
        np.cumsum(lengths[slots], out=indptr[1:])
        postings = Postings(indptr, full.rows, full.tf, full.doc_lengths)
        return cls(
            postings,
            slots.astype(np.int64),
            counts.terms,
            np.asarray(dead, dtype=np.int64),
            np.asarray(dead_ids, dtype=np.int64),
            np.asarray(dead_counts, dtype=np.int64),
            None if positions is None else np.asarray(positions, dtype=np.int32),
        )

    @property
    def n_rows(self) -> int:
        return self.postings.n_rows

    def counts(self, n_base_terms: int) -> sp.csr_array:
        """The delta rows' counts as CSR over the view's term ids (what the next delta copies rows from)."""
        import scipy.sparse as sp

        p = self.postings
        n_cols = n_base_terms + len(self.new_terms)
        cols = np.repeat(self.term_ids, np.diff(p.indptr))
        return sp.csr_array(
            sp.coo_array((p.tf.astype(np.int32), (p.rows, cols)), shape=(p.n_rows, n_cols)).tocsr()
        )

    def arrays(self, extra: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """The small arrays as they are stored in one file (the caller's `extra` ones under `extra.`)."""
        arrays = {
            **{f"extra.{k}": v for k, v in (extra or {}).items()},
            **{f"postings.{k}": v for k, v in self.postings.arrays().items()},
            "term_ids": self.term_ids,
            "dead": self.dead,
            "dead_ids": self.dead_ids,
            "dead_counts": self.dead_counts,
        }
        if self.positions is not None:
            arrays["positions"] = self.positions
        return arrays

    def header(self) -> dict[str, Any]:
        """What a stored delta's meta must say (the new terms live there)."""
        return {"format_version": FORMAT_VERSION, "n_rows": self.n_rows, "new_terms": self.new_terms}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> Delta:
        check_format(meta)
        postings = Postings(*(arrays[f"postings.{n}"] for n in POSTINGS))
        if postings.n_rows != meta["n_rows"]:
            raise ValueError("the delta arrays and the delta meta disagree")
        return cls(
            postings,
            arrays["term_ids"],
            list(meta["new_terms"]),
            arrays["dead"],
            arrays["dead_ids"],
            arrays["dead_counts"],
            arrays.get("positions"),
        )


def canonical_average_idf(histogram: Mapping[int, int], n_docs: int) -> float:
    """The mean raw idf over terms, given how many terms have each df: `math.fsum` of count × idf over
    distinct df values ascending, so every way of reaching one set of live rows gives the same bits."""
    n_terms = sum(histogram.values())
    if not n_terms:
        return 0.0
    parts = [n * _raw_idf(df, n_docs) for df, n in sorted(histogram.items()) if n]
    return math.fsum(parts) / n_terms


def _raw_idf(df: int, n_docs: int) -> float:
    return math.log(n_docs - df + 0.5) - math.log(df + 0.5)


class _Vocabulary(Mapping[str, int]):
    """A view's terms → term ids: the base's and the delta's new ones, less those no live row contains.
    Read-only and never copied (the base's dict is shared by every view of it)."""

    def __init__(self, index: BM25Index) -> None:
        self._index = index

    def __getitem__(self, term: str) -> int:
        tid = self._index.term_id(term)
        if tid is None:
            raise KeyError(term)
        return tid

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and self._index.term_id(term) is not None

    def __iter__(self) -> Iterator[str]:
        index = self._index
        gone = {c for c, df in index._base_df.items() if df == 0}
        for term, tid in index.base.vocab.items():
            if tid not in gone:
                yield term
        yield from index.delta.new_terms

    def __len__(self) -> int:
        return self._index.n_terms


class BM25Index:
    """A view of a base and a delta, scored from term counts; immutable once built.

    Rows are the base's [0, n_base) then the delta's (`n_rows` in all); `n_docs` counts the live ones.
    `vocab` maps each live term to a term id (for `term_hits`).

    The weights of a term's base postings, once computed for a query, are kept for the next query that
    has the term (least recently used first out, up to `cache_bytes`): the long posting lists of frequent
    terms, which most queries share, then cost what precomputed weights cost. A view is replaced with its
    generation, and its kept weights with it."""

    cache_bytes = 64 << 20
    cache_min_postings = 1024  # shorter lists cost less to compute than to keep

    def __init__(
        self,
        base: Base,
        delta: Delta | None = None,
        params: BM25Params | None = None,
        *,
        analyzer: str = "",
    ) -> None:
        self.base = base
        self.delta = delta if delta is not None else Delta.empty()
        self.params = params or BM25Params()
        self.analyzer = analyzer
        d, n_base, n_base_terms = self.delta, base.n_rows, base.n_terms
        if len(d.dead) and (d.dead.min() < 0 or d.dead.max() >= n_base):
            raise ValueError("delta: a tombstone names a row the base does not have")
        if d.positions is not None and len(d.positions) != n_base + d.n_rows:
            raise ValueError("delta: one position per row of the view")
        self.n_base = n_base
        self.n_rows = n_base + d.n_rows
        self.n_docs = self.n_rows - len(d.dead)
        base_lengths = base.postings.doc_lengths
        self.doc_lengths = (
            np.concatenate([base_lengths, d.postings.doc_lengths]).astype(np.int64)
            if d.n_rows
            else np.asarray(base_lengths, dtype=np.int64)
        )
        dead_length = int(base_lengths[d.dead].sum()) if len(d.dead) else 0
        total = base.total_length - dead_length + int(d.postings.doc_lengths.sum())
        self.avgdl = total / self.n_docs if self.n_docs else 0.0
        k1, b = self.params.k1, self.params.b
        # rank_bm25's expression, evaluated in its order; unused when no live row has a token
        self.norm = (
            k1 * (1 - b + b * self.doc_lengths.astype(np.float64) / self.avgdl)
            if self.avgdl
            else np.zeros(self.n_rows, dtype=np.float64)
        )
        # delta slots by term id, with their rows as view rows
        self._delta_slot = dict(zip(d.term_ids.tolist(), range(len(d.term_ids)), strict=True))
        self._delta_rows = d.postings.rows.astype(np.int64) + n_base if d.n_rows else d.postings.rows
        delta_df = np.diff(d.postings.indptr).tolist()
        # live df of each base term that the delta changes (tombstones take rows away, delta rows add)
        base_df: dict[int, int] = {c: int(base.df[c]) for c in d.dead_ids.tolist()}
        for c, n in zip(d.dead_ids.tolist(), d.dead_counts.tolist(), strict=True):
            base_df[c] -= n
        for c, slot in self._delta_slot.items():
            if c < n_base_terms:
                base_df[c] = base_df.get(c, int(base.df[c])) + delta_df[slot]
        self._base_df = base_df
        self._new_vocab = {t: n_base_terms + i for i, t in enumerate(d.new_terms)}
        histogram = dict(base.df_histogram) if base_df or self._new_vocab else base.df_histogram
        for c, df in base_df.items():
            histogram[int(base.df[c])] -= 1
            if df:
                histogram[df] = histogram.get(df, 0) + 1
        for tid in self._new_vocab.values():
            df = delta_df[self._delta_slot[tid]]
            histogram[df] = histogram.get(df, 0) + 1
        self.n_terms = sum(histogram.values())
        self.average_idf = canonical_average_idf(histogram, self.n_docs)
        self._kept: OrderedDict[int, np.ndarray] = OrderedDict()
        self._kept_bytes = 0
        self._lock = threading.Lock()
        self.vocab: Mapping[str, int] = (
            base.vocab if not len(d.term_ids) and not len(d.dead) else _Vocabulary(self)
        )

    @classmethod
    def build(
        cls,
        corpus_tokens: Sequence[Sequence[str]],
        params: BM25Params | None = None,
        *,
        analyzer: str = "",
    ) -> BM25Index:
        """Index tokenized docs (row i = doc i) as one base. `analyzer` records the tokenizer fingerprint."""
        return cls(Base.from_counts(TermCounts.from_tokens(corpus_tokens)), None, params, analyzer=analyzer)

    def __len__(self) -> int:
        return self.n_docs

    def __repr__(self) -> str:
        return (
            f"BM25Index(n_docs={self.n_docs}, n_rows={self.n_rows}, n_terms={self.n_terms}, "
            f"delta_rows={self.delta.n_rows}, tombstones={len(self.delta.dead)})"
        )

    @cached_property
    def live(self) -> np.ndarray:
        """Which rows are live (read-only)."""
        live = np.ones(self.n_rows, dtype=bool)
        live[self.delta.dead] = False
        live.setflags(write=False)
        return live

    @property
    def tie_keys(self) -> np.ndarray | None:
        """Each row's position in the chunk table, which breaks exact ties (None: the row index is)."""
        return self.delta.positions

    # --- terms ---------------------------------------------------------------------------------------
    def term_id(self, term: str) -> int | None:
        """The term's id in this view, None when no live row contains it."""
        tid = self.base.vocab.get(term)
        if tid is None:
            return self._new_vocab.get(term)
        if self._base_df.get(tid, 1) == 0:
            return None
        return tid

    def df(self, tid: int) -> int:
        """How many live rows contain the term with this id."""
        if tid < self.base.n_terms:
            df = self._base_df.get(tid)
            return int(self.base.df[tid]) if df is None else df
        p = self.delta.postings.indptr
        slot = self._delta_slot[tid]
        return int(p[slot + 1] - p[slot])

    def idf(self, tid: int) -> float:
        """rank_bm25's idf of a live term, the negative ones floored to `epsilon * average_idf`."""
        idf = _raw_idf(self.df(tid), self.n_docs)
        return self.params.epsilon * self.average_idf if idf < 0 else idf

    def term_idf(self, term: str) -> float | None:
        tid = self.term_id(term)
        return None if tid is None else self.idf(tid)

    def _postings(self, tid: int) -> list[tuple[bool, np.ndarray, np.ndarray]]:
        """(in the base, view rows ascending, tf) of a term in the base, then in the delta; tombstones
        included."""
        out = []
        if tid < self.base.n_terms:
            p = self.base.postings
            lo, hi = int(p.indptr[tid]), int(p.indptr[tid + 1])
            out.append((True, p.rows[lo:hi], p.tf[lo:hi]))
        slot = self._delta_slot.get(tid)
        if slot is not None:
            p = self.delta.postings
            lo, hi = int(p.indptr[slot]), int(p.indptr[slot + 1])
            out.append((False, self._delta_rows[lo:hi], p.tf[lo:hi]))
        return out

    def _term_weights(self, tid: int, idf: float) -> list[tuple[np.ndarray, np.ndarray]]:
        """(rows, weights) of a term in the base then the delta; the base's kept for the next query (the
        arrays are shared: read-only)."""
        out = []
        for in_base, rows, tf in self._postings(tid):
            if not in_base or len(rows) < self.cache_min_postings:
                out.append((rows, self._weights(rows, tf, idf)))
                continue
            with self._lock:
                data = self._kept.get(tid)
                if data is not None:
                    self._kept.move_to_end(tid)
            if data is None:
                data = self._weights(rows, tf, idf)
                data.setflags(write=False)
                self._keep(tid, data)
            out.append((rows, data))
        return out

    def _keep(self, tid: int, data: np.ndarray) -> None:
        if data.nbytes > self.cache_bytes:
            return
        with self._lock:
            if tid in self._kept:
                return
            self._kept[tid] = data
            self._kept_bytes += data.nbytes
            while self._kept_bytes > self.cache_bytes:
                _, dropped = self._kept.popitem(last=False)
                self._kept_bytes -= dropped.nbytes

    def _weights(self, rows: np.ndarray, tf: np.ndarray, idf: float) -> np.ndarray:
        """idf * (tf * (k1 + 1) / (tf + norm)) per posting, computed in place in rank_bm25's order (+ and *
        commute in IEEE 754: the same bits as its get_scores)."""
        data = tf.astype(np.float64)
        denominator = self.norm[rows]
        np.add(data, denominator, out=denominator)
        np.multiply(data, self.params.k1 + 1, out=data)
        np.divide(data, denominator, out=data)
        np.multiply(idf, data, out=data)
        return data

    # --- scoring -------------------------------------------------------------------------------------
    def scores(
        self, query_tokens: Sequence[str], term_weights: Mapping[str, float] | None = None
    ) -> np.ndarray:
        """BM25 score of every row (float64, length n_rows; 0 for a tombstone); unknown tokens add nothing.

        `term_weights` multiplies a token's contribution (default 1.0), e.g. to down-weight bigrams.
        """
        out = np.zeros(self.n_rows, dtype=np.float64)
        for tok in query_tokens:  # in order, with repeats: rank_bm25's summation order
            tid = self.term_id(tok)
            if tid is None:
                continue
            idf = self.idf(tid)
            w = 1.0 if term_weights is None else term_weights.get(tok, 1.0)
            for rows, data in self._term_weights(tid, idf):  # a row is in one segment: one addition per token
                out[rows] += data if w == 1.0 else w * data  # rows unique within a list: fancy += is safe
        if len(self.delta.dead):
            out[self.delta.dead] = 0.0
        return out

    def top_k(
        self,
        query_tokens: Sequence[str],
        k: int,
        allowed: np.ndarray | None = None,
        term_weights: Mapping[str, float] | None = None,
    ) -> list[tuple[int, float]]:
        """The k best (row, score) with score > 0, best first, exact ties by position in the chunk table.

        `allowed` (bool mask over rows) filters candidates before the cut, so a filter never
        leaves fewer than k results when k allowed rows match.
        """
        if k <= 0 or self.n_docs == 0:
            return []
        scores = self.scores(query_tokens, term_weights)
        mask = scores > 0
        if allowed is not None:
            allowed = np.asarray(allowed)
            if allowed.dtype != np.bool_ or allowed.shape != (self.n_rows,):
                raise ValueError(f"allowed must be a bool array of shape ({self.n_rows},)")
            mask &= allowed
        cand = np.flatnonzero(mask)  # ascending row
        cand_scores = scores[cand]
        if len(cand) > k:
            kth = np.partition(cand_scores, len(cand) - k)[len(cand) - k]
            keep = cand_scores >= kth  # may keep extra rows tied with the k-th; trimmed after sorting
            cand, cand_scores = cand[keep], cand_scores[keep]
        ties = cand if self.tie_keys is None else self.tie_keys[cand]
        order = np.lexsort((ties, -cand_scores))[:k]
        return [(int(cand[i]), float(cand_scores[i])) for i in order]

    def term_hits(self, rows: np.ndarray, term_ids: Sequence[int]) -> np.ndarray:
        """How many of `term_ids` (repeats count) each of the live `rows` contains with a non-zero weight,
        from the postings (sorted rows per term, both segments)."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.zeros(len(rows), dtype=np.int64)
        if not len(rows):
            return out
        for tid in term_ids:
            idf = self.idf(int(tid))
            for _, posting, tf in self._postings(int(tid)):
                pos = np.searchsorted(posting, rows)
                found = pos < len(posting)
                pos_in = np.where(found, pos, 0)
                found &= posting[pos_in] == rows
                hit = np.flatnonzero(found)
                if len(hit):
                    weights = self._weights(rows[hit], tf[pos_in[hit]], idf)
                    out[hit[weights != 0]] += 1
        return out


def check_format(meta: Mapping[str, Any]) -> None:
    """ValueError unless a stored segment's meta is of this format version (another one is rebuilt,
    never misread)."""
    if not isinstance(meta, Mapping) or meta.get("format_version") != FORMAT_VERSION:
        version = meta.get("format_version") if isinstance(meta, Mapping) else None
        raise ValueError(f"unsupported BM25 index format: {version!r}")


def _take_rows(parts: Sequence[sp.csr_array], source: np.ndarray, n_cols: int) -> sp.csr_array:
    """Rows of `parts` stacked in order, taken in the order `source` gives (row i of the result is stacked
    row `source[i]`), each row's entries as they are. Copied run by run: an edit keeps almost every row
    where it was, so a 100k-row update is a few slice copies instead of scipy's `vstack` and row indexing
    (1.5 s at 20M entries)."""
    import scipy.sparse as sp

    starts = np.cumsum([0, *(p.shape[0] for p in parts)])
    lengths = (
        np.concatenate([np.diff(p.indptr) for p in parts]).astype(np.int64)
        if parts
        else np.zeros(0, np.int64)
    )
    indptr = np.zeros(len(source) + 1, dtype=np.int64)
    np.cumsum(lengths[source], out=indptr[1:])
    nnz = int(indptr[-1])
    idx = _index_dtype(max(nnz, n_cols))
    dtypes = [p.data.dtype for p in parts] or [np.int32]
    data = np.empty(nnz, dtype=np.result_type(*dtypes))
    indices = np.empty(nnz, dtype=idx)
    part_of = np.searchsorted(starts, source, side="right") - 1
    # a run: consecutive result rows from consecutive rows of one part
    breaks = np.flatnonzero((np.diff(source) != 1) | (np.diff(part_of) != 0)) + 1
    bounds = np.concatenate([[0], breaks, [len(source)]]).tolist() if len(source) else [0]
    src, owner = source.tolist(), part_of.tolist()
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        k = owner[lo]
        matrix, row = parts[k], src[lo] - int(starts[k])
        a, b = int(matrix.indptr[row]), int(matrix.indptr[row + hi - lo])
        out = slice(int(indptr[lo]), int(indptr[hi]))
        data[out] = matrix.data[a:b]
        indices[out] = matrix.indices[a:b]
    return sp.csr_array((data, indices, indptr.astype(idx)), shape=(len(source), n_cols))


def _count_rows(
    corpus_tokens: Sequence[Sequence[str]], vocab: dict[str, int], fixed: Mapping[str, int]
) -> sp.csr_array:
    """Occurrence counts of tokenized docs as CSR rows (columns ascending within a row). A token's column
    is its id in `fixed` (a shared vocabulary, not extended) or in `vocab`, which unseen terms extend
    with the next id after both."""
    import scipy.sparse as sp

    n_docs = len(corpus_tokens)
    offset = len(fixed)
    setdefault = vocab.setdefault
    lengths = np.fromiter((len(doc) for doc in corpus_tokens), dtype=np.int64, count=n_docs)
    if fixed:
        get = fixed.get
        ids = (
            c if (c := get(tok)) is not None else setdefault(tok, offset + len(vocab))
            for doc in corpus_tokens
            for tok in doc
        )
    else:
        ids = (setdefault(tok, len(vocab)) for doc in corpus_tokens for tok in doc)
    cols = np.fromiter(ids, dtype=np.int64, count=int(lengths.sum()))
    rows = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
    n_terms = max(offset + len(vocab), 1)
    pair, count = np.unique(rows * n_terms + cols, return_counts=True)  # row-major, columns ascending
    indptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(np.bincount(pair // n_terms, minlength=n_docs), out=indptr[1:])
    return sp.csr_array(
        (count.astype(np.int32), (pair % n_terms).astype(np.int32), indptr),
        shape=(n_docs, offset + len(vocab)),
    )
