"""The lexical index at 100k chunks, in-process, on a synthetic corpus: `python -m eval.bench_segments`.

Measures with the checkout on `PYTHONPATH` (run it once with main's, once with this one, and compare):

- `lane`: `lexical_lane` p50 / p95 / mean over a base-only index (main: precomputed weights; this code:
  weights from term counts at query time), the filter mask of the librarian's default search;
- `edit`: a one-note edit (10 chunks rewritten) through the writer (main: `TermCounts.update` +
  `BM25Index.from_counts` + `write_generation`; this code: `Generation.next` + `LexicalStore.write`) and
  the librarian picking it up (`load_snapshot` and its first query: main reads the whole generation; this
  code reuses the base and reads the delta); with this code also a 5 % delta (the compaction threshold) and the lane
  over base + delta.

The corpus: `--chunks` rows of Zipf-distributed terms (about 200 distinct of about 250 tokens per chunk,
like the 10,000-note vault's 21M postings over 103k chunks), a chunk table with the product's schema,
queries of 2–8 tokens drawn from random chunks. Every figure carries the load average when it was taken.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from eval.scale_system import loadavg, log, print_figures
from hippo_core.index.bm25 import BM25Index, BM25Params
from hippo_resources import LexicalStore, VectorStore
from hippo_resources.tables import row_hashes
from hippo_search.pipeline import lexical_lane, load_snapshot

try:  # this code; main has no segments
    from hippo_core.index.bm25_update import Generation

    SEGMENTS = True
except ImportError:
    SEGMENTS = False


def corpus(n: int, seed: int) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(120, 380, size=n)
    ranks = np.minimum(rng.zipf(1.2, size=int(lengths.sum())) - 1, 1_999_999)
    words = np.array([f"w{i}" for i in range(int(ranks.max()) + 1)], dtype=object)
    flat = words[ranks].tolist()
    bounds = np.concatenate([[0], np.cumsum(lengths)]).tolist()
    return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def chunk_table(tokens: list[list[str]]) -> pl.DataFrame:
    """The product's chunk columns, ten chunks a note, a few statuses and lanes."""
    n = len(tokens)
    texts = [" ".join(t) for t in tokens]
    return pl.DataFrame(
        {
            "chunk_id": [hashlib.blake2b(str(i).encode(), digest_size=8).hexdigest() for i in range(n)],
            "path": [f"20-wiki/s{i // 1000}/note-{i // 10}.md" for i in range(n)],
            "anchor": [f"20-wiki/s{i // 1000}/note-{i // 10}.md#h{i % 10}" for i in range(n)],
            "heading": [f"h{i % 10}" for i in range(n)],
            "heading_path": [[f"h{i % 10}"] for i in range(n)],
            "ordinal": list(range(n)),
            "title": [f"note {i // 10}" for i in range(n)],
            "text": texts,
            "index_text": texts,
            "content_hash": [f"{i:016x}" for i in range(n)],
            "embed_hash": [f"{i:016x}" for i in range(n)],
            "lane": ["wiki" if i % 7 else "sources" for i in range(n)],
            "doc_type": ["concept"] * n,
            "status": ["archived" if i % 20 == 0 else "canonical" for i in range(n)],
            "trust": ["human_edit"] * n,
            "sector": [f"s{i // 1000}" for i in range(n)],
            "aliases": [[] for _ in range(n)],
            "tags": [[] for _ in range(n)],
            "updated": ["2026-11-01"] * n,
            "conversation_id": [None] * n,
            "project": [None] * n,
            "role": [None] * n,
            "is_tool": [None] * n,
            "granularity": [None] * n,
            "position": [None] * n,
        },
        schema_overrides={
            "conversation_id": pl.Utf8,
            "project": pl.Utf8,
            "role": pl.Utf8,
            "is_tool": pl.Boolean,
            "granularity": pl.Utf8,
            "position": pl.Int64,
        },
    )


def queries(tokens: list[list[str]], n: int, seed: int) -> list[list[str]]:
    rng = np.random.default_rng(seed + 1)
    out = []
    for _ in range(n):
        doc = tokens[int(rng.integers(0, len(tokens)))]
        out.append([doc[int(i)] for i in rng.integers(0, len(doc), size=int(rng.integers(2, 9)))])
    return out


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def lane_pass(index: BM25Index, ids: list[str], qs: list[list[str]], allowed: np.ndarray) -> dict[str, Any]:
    times = []
    for q in qs:
        t0 = time.perf_counter()
        lexical_lane(index, ids, q, 60, allowed=allowed, bigram_weight=0.25)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return {
        "p50_ms": round(statistics.median(times), 3),
        "p95_ms": round(times[int(len(times) * 0.95)], 3),
        "mean_ms": round(statistics.fmean(times), 3),
        "load": loadavg()[0],
    }


def lane_figures(
    index: BM25Index, ids: list[str], qs: list[list[str]], allowed: np.ndarray
) -> dict[str, Any]:
    """Two passes over the queries (the second with the postings in the page cache); with this code also
    two passes with no weights kept between queries (`BM25Index.cache_bytes` = 0) before those."""
    out: dict[str, Any] = {"queries": len(qs)}
    if SEGMENTS:
        index.cache_bytes = 0
        out["computed_first"] = lane_pass(index, ids, qs, allowed)
        out["computed_second"] = lane_pass(index, ids, qs, allowed)
        del index.cache_bytes
    out["first"] = lane_pass(index, ids, qs, allowed)
    out["second"] = lane_pass(index, ids, qs, allowed)
    return out


def first_query(snap: Any, qs: list[list[str]]) -> Any:
    """A loaded snapshot after its first query (what reads the vocabulary when it is read lazily)."""
    lexical_lane(snap.index, snap.ids, qs[0], 60)
    return snap


def keys_of(table: pl.DataFrame) -> np.ndarray:
    texts = table["index_text"].to_list()
    return np.array([hashlib.blake2b(t.encode(), digest_size=16).digest() for t in texts], dtype="S16")


def edited(tokens: list[list[str]], rows: list[int], k: int) -> list[list[str]]:
    out = list(tokens)
    for r in rows:
        out[r] = [*tokens[r][:50], f"fresh{k}", *tokens[r][60:]]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m eval.bench_segments", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    figures: dict[str, Any] = {"code": "segments" if SEGMENTS else "main (weights)", "chunks": args.chunks}
    log(f"corpus of {args.chunks:,} chunks")
    tokens = corpus(args.chunks, args.seed)
    table = chunk_table(tokens)
    qs = queries(tokens, args.queries, args.seed)
    with tempfile.TemporaryDirectory(prefix="hippo-bench-segments-") as tmp:
        store = LexicalStore(root=str(Path(tmp) / "lexical"))
        vectors = VectorStore(path=str(Path(tmp) / "chroma"))
        note = list(range(5000, 5010))  # one note's ten chunks
        if SEGMENTS:
            params = BM25Params()
            current = tokens

            def tokenize(rows: list[int]) -> list[list[str]]:
                return [current[i] for i in rows]

            t, update = timed(lambda: Generation.build(row_hashes(table), keys_of(table), tokenize, params))
            figures["build_s"] = round(t, 2)
            t, _ = timed(lambda: store.write(update, table.drop("index_text"), {}))
            figures["write_base_s"] = round(t, 2)
            snap = load_snapshot(store, vectors, store.manifest())
            nnz = snap.index.base.postings.nnz
            figures["postings"] = nnz
            figures["vocabulary"] = snap.index.n_terms
            mask = snap.masks.get(("archived",), None, False, None)
            figures["lane_base"] = lane_figures(snap.index, snap.ids, qs, mask)
            log(f"lane over the base: {figures['lane_base']}")
            for label, rows in (("edit", note), ("delta_5pct", list(range(0, args.chunks, 20)))):
                current = edited(tokens, rows, 1)
                changed = table.with_columns(pl.Series("index_text", [" ".join(t) for t in current]))
                changed = changed.with_columns(pl.col("index_text").alias("text"))
                t_hash, ids = timed(lambda changed=changed: row_hashes(changed))
                keys = keys_of(changed)
                previous = store.previous()
                assert previous is not None
                t_next, update = timed(
                    lambda ids=ids, keys=keys, p=previous: p.next(ids, keys, tokenize, 10**9)
                )
                t_write, _ = timed(
                    lambda update=update, c=changed: store.write(update, c.drop("index_text"), {})
                )
                t_load, after = timed(
                    lambda snap=snap: first_query(load_snapshot(store, vectors, store.manifest(), snap), qs)
                )
                assert after.view.base is snap.view.base
                t_cold, _ = timed(lambda: first_query(load_snapshot(store, vectors, store.manifest()), qs))
                mask = after.masks.get(("archived",), None, False, None)
                figures[label] = {
                    "rows_changed": len(rows),
                    "delta_rows": update.generation.delta.n_rows,
                    "tombstones": update.generation.tombstones,
                    "row_hashes_s": round(t_hash, 3),
                    "next_s": round(t_next, 3),
                    "write_s": round(t_write, 3),
                    "librarian_reload_s": round(t_load, 3),
                    "librarian_cold_load_s": round(t_cold, 3),
                    "generation_bytes": sum(
                        p.stat().st_size for p in (store.path / store.manifest()["generation"]).iterdir()
                    ),
                    "load": loadavg()[0],
                    "lane": lane_figures(after.index, after.ids, qs, mask),
                }
                log(f"{label}: {figures[label]}")
                # back to the base for the next case
                current = tokens
                base_table = table
                previous = store.previous()
                assert previous is not None
                store.write(
                    previous.next(row_hashes(base_table), keys_of(base_table), tokenize, 10**9),
                    base_table.drop("index_text"),
                    {},
                )
                snap = load_snapshot(store, vectors, store.manifest(), snap)
        else:
            from hippo_core.index.bm25 import TermCounts

            t, counts = timed(lambda: TermCounts.from_tokens(tokens).first_seen_order())
            t2, index = timed(lambda: BM25Index.from_counts(counts))
            figures["build_s"] = round(t + t2, 2)
            keys = keys_of(table)
            t, _ = timed(
                lambda: store.write_generation(
                    index, table.drop("index_text"), {}, counts=counts, row_keys=keys
                )
            )
            figures["write_base_s"] = round(t, 2)
            snap = load_snapshot(store, vectors, store.manifest())
            figures["postings"] = int(index.weights.nnz)
            figures["vocabulary"] = index.n_terms
            mask = snap.masks.get(("archived",), None, False, None)
            figures["lane_base"] = lane_figures(snap.index, snap.ids, qs, mask)
            log(f"lane over the base: {figures['lane_base']}")
            current = edited(tokens, note, 1)
            changed = table.with_columns(pl.Series("index_text", [" ".join(t) for t in current]))
            changed = changed.with_columns(pl.col("index_text").alias("text"))
            new_keys = keys_of(changed)

            def update() -> tuple[Any, Any]:
                prev = store.previous_counts()
                assert prev is not None
                position = {k: r for r, k in enumerate(prev.row_keys.tolist())}
                keep = np.array([position.get(k, -1) for k in new_keys.tolist()], dtype=np.int64)
                fresh = [current[i] for i in np.flatnonzero(keep < 0).tolist()]
                c = prev.counts.update(keep, fresh).first_seen_order()
                return c, BM25Index.from_counts(c)

            t_next, (c, idx) = timed(update)
            t_write, _ = timed(
                lambda: store.write_generation(
                    idx, changed.drop("index_text"), {}, counts=c, row_keys=new_keys
                )
            )
            t_load, after = timed(lambda: first_query(load_snapshot(store, vectors, store.manifest()), qs))
            figures["edit"] = {
                "rows_changed": len(note),
                "next_s": round(t_next, 3),
                "write_s": round(t_write, 3),
                "librarian_reload_s": round(t_load, 3),
                "generation_bytes": sum(
                    p.stat().st_size for p in (store.path / store.manifest()["generation"]).iterdir()
                ),
                "load": loadavg()[0],
            }
            log(f"edit: {figures['edit']}")
    print_figures(figures, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
