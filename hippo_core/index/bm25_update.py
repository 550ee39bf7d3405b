"""The next lexical generation from the last one: a delta over the same base, or a new base (compaction).

A generation's rows carry an identity (a hash of the whole chunk-table row: chunk id, text and every
other column, so a status change in frontmatter is a changed row) and a text key (a hash of the text
BM25 indexes). A table row whose identity is a base row's keeps that base row; every other row is in
the delta, rewritten whole on every edit (it is small) so a view is always the base plus one delta.
The base rows no table row kept are tombstoned. Counts are copied by text key from the base or the last
delta, so only texts neither holds go through the tokenizer.

Pure logic: the caller gives the identities and keys of the new table and a function that tokenizes
table rows, and writes what comes back (`hippo_resources.lexical_store`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from hippo_core.index.bm25 import (
    Base,
    BM25Index,
    BM25Params,
    Delta,
    TermCounts,
    dead_term_counts,
    gather_counts,
)

Tokenize = Callable[[list[int]], Sequence[Sequence[str]]]
"""Tokens of the given table rows (each a distinct text), in that order."""


class BaseRows:
    """A base with what the next build reads from it: its counts (CSR, memory-mapped when loaded), each
    row's identity and text key, and (built once per process, shared by every delta over this base) the
    lookups from identity and key to row."""

    def __init__(
        self, base: Base, counts: sp.csr_array, ids: np.ndarray, keys: np.ndarray, name: str | None = None
    ) -> None:
        if not counts.shape[0] == len(ids) == len(keys) == base.n_rows:
            raise ValueError("a base's counts, identities and keys must have one entry per row")
        self.name = name  # where it is stored, once it is (set by the store)
        self.base = base
        self.counts = counts
        self.ids = ids
        self.keys = keys

    @cached_property
    def _by_id(self) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(self.ids, kind="stable")
        return self.ids[order], order

    def rows_of(self, ids: np.ndarray) -> np.ndarray:
        """The base row of each identity, -1 for one the base does not hold; a base row is given once
        (to the first of identical rows)."""
        sorted_ids, order = self._by_id
        if not len(sorted_ids):
            return np.full(len(ids), -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(sorted_ids, ids), len(sorted_ids) - 1)
        rows = np.where(sorted_ids[pos] == ids, order[pos], -1).astype(np.int64)
        found = np.flatnonzero(rows >= 0)
        _, first = np.unique(rows[found], return_index=True)
        if len(first) < len(found):  # identical rows: the later ones are new rows
            again = np.ones(len(found), dtype=bool)
            again[first] = False
            rows[found[again]] = -1
        return rows

    @cached_property
    def row_of_key(self) -> dict[bytes, int]:
        return {k: i for i, k in enumerate(self.keys.tolist())}


@dataclass
class Update:
    """A new generation and what to write of the table: `rows` are the table rows of its delta, or every
    row when `compacted` (a new base)."""

    generation: Generation
    rows: np.ndarray
    compacted: bool
    tokenized: int  # distinct texts that went through the tokenizer
    reused: int  # rows whose counts were copied


class Generation:
    """A base, a delta over it (with its rows' identities and keys) and the BM25 parameters."""

    def __init__(
        self,
        base_rows: BaseRows,
        delta: Delta,
        delta_ids: np.ndarray,
        delta_keys: np.ndarray,
        params: BM25Params,
        analyzer: str = "",
    ) -> None:
        if not delta.n_rows == len(delta_ids) == len(delta_keys):
            raise ValueError("a delta's identities and keys must have one entry per row")
        self.base_rows = base_rows
        self.delta = delta
        self.delta_ids = delta_ids
        self.delta_keys = delta_keys
        self.params = params
        self.analyzer = analyzer

    @cached_property
    def index(self) -> BM25Index:
        return BM25Index(self.base_rows.base, self.delta, self.params, analyzer=self.analyzer)

    @property
    def n_rows(self) -> int:
        return self.index.n_docs

    @property
    def tombstones(self) -> int:
        return len(self.delta.dead)

    def table_ids(self) -> np.ndarray:
        """The live rows' identities in chunk-table order: equal to the new table's, nothing changed."""
        ids = self.base_rows.ids
        if self.delta.positions is None:
            return ids
        everything = np.concatenate([ids, self.delta_ids])
        positions = self.delta.positions.astype(np.int64)
        live = positions >= 0
        out = np.empty(int(live.sum()), dtype=ids.dtype)
        out[positions[live]] = everything[live]
        return out

    @classmethod
    def build(
        cls, ids: np.ndarray, keys: np.ndarray, tokenize: Tokenize, params: BM25Params, analyzer: str = ""
    ) -> Update:
        """A first base: every text tokenized (once per distinct text)."""
        source = np.full(len(ids), -1, dtype=np.int64)
        counts, tokenized = _counts({}, [], [], [], source, keys, tokenize, full=True)
        return _compacted(counts, ids, keys, params, analyzer, tokenized, reused=0)

    def next(
        self,
        ids: np.ndarray,
        keys: np.ndarray,
        tokenize: Tokenize,
        max_changed: int,
        params: BM25Params | None = None,
    ) -> Update:
        """The generation of a new table (its rows' identities and text keys): a delta over this base,
        or a new base when more than `max_changed` rows would be in the delta or tombstoned, or `params`
        are not this generation's (counts do not depend on them: they are copied all the same)."""
        params = params or self.params
        if params != self.params:
            max_changed = -1
        base_rows, base = self.base_rows, self.base_rows.base
        n_base = base.n_rows
        kept = base_rows.rows_of(ids)  # the base row each table row keeps
        fresh_rows = np.flatnonzero(kept < 0)
        alive = np.zeros(n_base, dtype=bool)
        alive[kept[kept >= 0]] = True
        dead = np.flatnonzero(~alive)
        # counts are copied by text key: from the last delta first (its rows are in memory), then the base
        delta_of_key = {k: n_base + i for i, k in enumerate(self.delta_keys.tolist())}
        vocab, extra = base.vocab, self.delta.new_terms
        parts = [base_rows.counts, self.delta.counts(base.n_terms)]
        if len(fresh_rows) + len(dead) > max_changed:
            source = _sources(keys, delta_of_key, base_rows.row_of_key)
            counts, tokenized = _counts(vocab, base.terms, extra, parts, source, keys, tokenize, full=True)
            reused = int((source >= 0).sum())
            return _compacted(counts, ids, keys, params, self.analyzer, tokenized, reused)
        delta_keys = keys[fresh_rows]
        source = _sources(delta_keys, delta_of_key, base_rows.row_of_key)
        counts, tokenized = _counts(
            vocab, base.terms, extra, parts, source, delta_keys, tokenize, full=False, rows=fresh_rows
        )
        positions = np.full(n_base + len(fresh_rows), -1, dtype=np.int32)
        kept_at = np.flatnonzero(kept >= 0)
        positions[kept[kept_at]] = kept_at
        positions[n_base:] = fresh_rows
        dead_ids, dead_counts = dead_term_counts(base_rows.counts, dead)
        delta = Delta.build(counts, base.n_terms, dead, dead_ids, dead_counts, positions)
        generation = Generation(base_rows, delta, ids[fresh_rows], delta_keys, params, self.analyzer)
        return Update(generation, fresh_rows, False, tokenized, int((source >= 0).sum()) + len(kept_at))


def _sources(keys: np.ndarray, delta_of_key: dict[bytes, int], base_of_key: dict[bytes, int]) -> np.ndarray:
    """Per row, the stacked row (base rows, then the last delta's) holding the same text, or -1."""
    out = np.full(len(keys), -1, dtype=np.int64)
    for i, k in enumerate(keys.tolist()):
        row = delta_of_key.get(k)
        if row is None:
            row = base_of_key.get(k)
        if row is not None:
            out[i] = row
    return out


def _counts(
    vocab: dict[str, int],
    fixed_terms: list[str],
    extra_terms: list[str],
    parts: list[sp.csr_array],
    source: np.ndarray,
    keys: np.ndarray,
    tokenize: Tokenize,
    full: bool,
    rows: np.ndarray | None = None,
) -> tuple[TermCounts, int]:
    """`gather_counts` with the rows no part holds tokenized, each distinct text once. `rows` are the
    table rows the output rows are (default: all), what `tokenize` is called with."""
    fresh = np.flatnonzero(source < 0)
    first: dict[bytes, int] = {}  # a text repeated in several rows is tokenized once
    fresh_keys = keys[fresh].tolist()
    for i, k in zip(fresh.tolist(), fresh_keys, strict=True):
        first.setdefault(k, i)
    table_rows = list(first.values()) if rows is None else rows[list(first.values())].tolist()
    tokens = dict(zip(first, tokenize(table_rows), strict=True))
    fresh_tokens = [tokens[k] for k in fresh_keys]
    counts = gather_counts(vocab, fixed_terms, extra_terms, parts, source, fresh_tokens, full=full)
    return counts, len(first)


def _compacted(
    counts: TermCounts,
    ids: np.ndarray,
    keys: np.ndarray,
    params: BM25Params,
    analyzer: str,
    tokenized: int,
    reused: int,
) -> Update:
    base_rows = BaseRows(Base.from_counts(counts), counts.matrix, ids, keys)
    empty = np.zeros(0, dtype=ids.dtype)
    generation = Generation(base_rows, Delta.empty(), empty, np.zeros(0, dtype=keys.dtype), params, analyzer)
    return Update(generation, np.arange(len(ids), dtype=np.int64), True, tokenized, reused)
