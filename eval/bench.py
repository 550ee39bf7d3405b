"""Hybrid retrieval benchmark on BEIR folders, through the librarian's own lanes.

    python -m eval.bench ../shared/eval-data/korquad1 [more folders ...]
        [--max-queries N] [--per-conversation] [--json out.json] [--cache PATH]
        [--ratio-queries 200] [--seed 0] [--by FIELD]

Every corpus doc becomes one chunk (title, newline, text; doc id = chunk id). The build goes through
the product's code: `Tokenizer.tokenize_many` + `BM25Index.build` for the lexical lane, the `Embedder`
resource (content-addressed SQLite cache, so re-runs embed nothing) and a real Chroma collection via
`VectorStore` for the semantic lane. Each query runs the lexical lane (`BM25Index.top_k`, bigram
terms down-weighted as in `hippo_server.search`), the semantic lane (`Embedder.embed_query` +
`VectorStore.query`) and `hippo_core.ranking.fuse` with default `RankingParams`, so the fused list
includes the semantic solo-match floor exactly as the product applies it. Two diagnostic rows, which
are not product paths, help read the numbers: fusion with the floor switched off, and exact cosine
over the same vectors (Chroma's HNSW search is approximate and differs slightly from build to build).

Prints a Markdown report per folder: Hit@1, Hit@10, MRR@10, nDCG@10 per lane, build time split
into tokenize / BM25 / embedding / Chroma, query latency p50/p95, and the lexical lane's speed and
ranking against `rank_bm25.BM25Okapi` on the same tokens. `--per-conversation` searches only the
query's own `conv` (LoCoMo's protocol). Exit codes: 0 ok, 1 our BM25 ranked differently from
rank_bm25, 2 bad input (missing file, bad JSON line, missing `conv`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from eval.beir import BeirError, BeirSet, Query, load_beir, passage_text
from eval.metrics import METRICS, evaluate, score_query
from hippo_core.bm25 import BM25Index
from hippo_core.ranking import Candidate, RankingParams, fuse, solo_match_floor
from hippo_core.tokenize import Tokenizer, get_kiwi, is_bigram

__all__ = ["BenchOptions", "BenchResult", "main", "render_markdown", "run_benchmark"]

DEFAULT_CACHE = Path("~/.cache/hippocampus/bench-embed.sqlite")
LANES: tuple[str, ...] = ("lexical", "semantic", "fused")
NO_FLOOR = "fused_no_floor"
"""Diagnostic row: the same fusion with the semantic floor switched off, to show what the floor costs."""
EXACT = "semantic_exact"
"""Diagnostic row: exact cosine over the same vectors, to separate Chroma's HNSW approximation (which
also varies from build to build) from what the embedding model can do."""
DIAGNOSTICS: tuple[str, ...] = (NO_FLOOR, EXACT)
EVAL_DEPTH = 10
EXIT_OK, EXIT_MISMATCH, EXIT_BAD_INPUT = 0, 1, 2

Progress = Callable[[str], None]


@dataclass
class BenchOptions:
    max_queries: int | None = None
    per_conversation: bool = False
    cache: Path = DEFAULT_CACHE
    ratio_queries: int = 200
    seed: int = 0
    by: str | None = None
    params: RankingParams = field(default_factory=RankingParams)
    variants: dict[str, RankingParams] = field(default_factory=dict)
    """Extra fused rows from the same lane results with other RankingParams (diagnostics, not product)."""


@dataclass
class BenchResult:
    """`report` is JSON-ready; `runs` (lane → query id → top-10 doc ids) stays in memory for tests."""

    report: dict[str, Any]
    runs: dict[str, dict[str, list[str]]]


class _Ticker:
    """Rate-limited progress lines on stderr, so a long embedding run shows it is alive."""

    def __init__(self, sink: Progress | None, every_s: float = 15.0) -> None:
        self.sink = sink
        self.every_s = every_s
        self.last = 0.0

    def __call__(self, message: str, force: bool = False) -> None:
        now = time.perf_counter()
        if self.sink is not None and (force or now - self.last >= self.every_s):
            self.last = now
            self.sink(message)


def _ms_stats(seconds: Sequence[float]) -> dict[str, float | None]:
    """p50/p95/mean in milliseconds; None when nothing was timed (JSON has no NaN)."""
    if not seconds:
        return {"p50_ms": None, "p95_ms": None, "mean_ms": None}
    arr = np.asarray(seconds, dtype=np.float64) * 1000.0
    return {
        "p50_ms": float(np.percentile(arr, 50)),
        "p95_ms": float(np.percentile(arr, 95)),
        "mean_ms": float(arr.mean()),
    }


def parse_variant(spec: str, base: RankingParams) -> tuple[str, RankingParams]:
    """`NAME:key=value,key=value` → RankingParams with those overrides; ValueError says what is wrong."""
    name, sep, body = spec.partition(":")
    name = name.strip()
    if not sep or not name or not body.strip():
        raise ValueError(f"--variant {spec!r}: expected NAME:key=value[,key=value...]")
    overrides: dict[str, Any] = {}
    for item in body.split(","):
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq or key not in RankingParams.model_fields:
            raise ValueError(f"--variant {spec!r}: {key!r} is not a RankingParams field")
        try:
            overrides[key] = json.loads(raw)
        except json.JSONDecodeError:
            overrides[key] = raw.strip()
    try:
        return name, RankingParams.model_validate(base.model_dump() | overrides)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise ValueError(f"--variant {spec!r}: {exc}") from exc


def _ratio(num: float | None, den: float | None) -> float | None:
    return num / den if num is not None and den else None


def _conv_of(extra: Any) -> str | None:
    value = extra.get("conv")
    return None if value is None or str(value) == "" else str(value)


def select_queries(beir: BeirSet, max_queries: int | None, seed: int) -> list[Query]:
    """Queries with qrels; a seeded sample (kept in file order) when `max_queries` is smaller."""
    queries = beir.evaluable_queries()
    if max_queries is not None and len(queries) > max_queries:
        keep = set(random.Random(seed).sample(range(len(queries)), max_queries))
        queries = [q for i, q in enumerate(queries) if i in keep]
    return queries


def check_conversations(beir: BeirSet, queries: Sequence[Query]) -> None:
    """Per-conversation mode needs `conv` on every doc and every selected query: say which one lacks it."""
    for doc in beir.docs:
        if _conv_of(doc.extra) is None:
            raise BeirError(
                f"{beir.folder / 'corpus.jsonl'}: doc {doc.id!r} has no `conv` field; "
                "--per-conversation needs one on every doc"
            )
    for q in queries:
        if _conv_of(q.extra) is None:
            raise BeirError(
                f"{beir.folder / 'queries.jsonl'}: query {q.id!r} has no `conv` field; "
                "--per-conversation needs one on every query"
            )


def reference_top(scores: np.ndarray, k: int) -> list[int]:
    """rank_bm25's ranking under our `top_k` contract: score > 0, score desc, doc index asc."""
    idx = np.flatnonzero(scores > 0)
    return [int(i) for i in idx[np.lexsort((idx, -scores[idx]))][:k]]


def _ratio_check(
    index: BM25Index,
    corpus_tokens: list[list[str]],
    sample: Sequence[tuple[str, list[str]]],
    k: int,
) -> dict[str, Any]:
    """Time our `top_k` against `BM25Okapi.get_scores` + the same sort, on the same tokens, whole corpus."""
    from rank_bm25 import BM25Okapi

    t0 = time.perf_counter()
    ref = BM25Okapi(corpus_tokens)
    ref_build = time.perf_counter() - t0
    ours_s: list[float] = []
    ref_s: list[float] = []
    identical = 0
    max_rel_diff = 0.0
    mismatched: list[str] = []
    for qid, toks in sample:
        t0 = time.perf_counter()
        top = index.top_k(toks, k)
        ours_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ref_scores = ref.get_scores(toks)
        ref_top = reference_top(ref_scores, k)
        ref_s.append(time.perf_counter() - t0)
        if [d for d, _ in top] == ref_top:
            identical += 1
        else:
            mismatched.append(qid)
        diff = np.abs(index.scores(toks) - ref_scores) / np.maximum(np.abs(ref_scores), 1e-12)
        max_rel_diff = max(max_rel_diff, float(diff.max(initial=0.0)))
    ours_stats, ref_stats = _ms_stats(ours_s), _ms_stats(ref_s)
    return {
        "queries": len(sample),
        "depth": k,
        "rank_bm25_build_s": ref_build,
        "ours": ours_stats,
        "rank_bm25": ref_stats,
        "speedup_p50": _ratio(ref_stats["p50_ms"], ours_stats["p50_ms"]),
        "speedup_mean": _ratio(ref_stats["mean_ms"], ours_stats["mean_ms"]),
        "identical": identical,
        "max_rel_score_diff": max_rel_diff,
        "mismatched_query_ids": mismatched[:10],
    }


def run_benchmark(folder: Path | str, options: BenchOptions, progress: Progress | None = None) -> BenchResult:
    """Load, build and query one BEIR folder; raises BeirError on bad input."""
    beir = load_beir(folder)
    queries = select_queries(beir, options.max_queries, options.seed)
    if options.per_conversation:
        check_conversations(beir, queries)
    return _run(beir, queries, options, progress)


def _run(
    beir: BeirSet, queries: list[Query], options: BenchOptions, progress: Progress | None
) -> BenchResult:
    from hippo_resources.embedder import Embedder
    from hippo_resources.vector_store import VectorStore

    params = options.params
    # Off the way the librarian's semantic mode switches it off: no absolute floor, no margin.
    no_floor = params.model_copy(update={"semantic_floor": -1.0, "semantic_margin": 0.0})
    tick = _Ticker(progress)
    name = beir.name
    load_start = os.getloadavg()[0]
    docs = beir.docs
    doc_ids = [d.id for d in docs]
    passages = [passage_text(d) for d in docs]
    doc_conv = [_conv_of(d.extra) for d in docs]

    # --- build: lexical ---------------------------------------------------------------------------
    t0 = time.perf_counter()
    tokenizer = Tokenizer()
    get_kiwi()  # model load is a one-off per process, not part of tokenizing throughput
    t_kiwi = time.perf_counter() - t0
    tick(f"[{name}] tokenizing {len(docs)} docs", force=True)
    t0 = time.perf_counter()
    corpus_tokens = tokenizer.tokenize_many(passages)
    t_tok = time.perf_counter() - t0
    t0 = time.perf_counter()
    index = BM25Index.build(corpus_tokens, analyzer=tokenizer.fingerprint())
    t_bm25 = time.perf_counter() - t0

    # --- build: semantic --------------------------------------------------------------------------
    cache_path = Path(options.cache).expanduser()
    embedder = Embedder(cache_path=str(cache_path))
    from_cache: list[int] = []
    embed_start = time.perf_counter()

    def on_embed(done: int, total: int) -> None:
        if not from_cache:
            from_cache.append(done)  # the Embedder reports the cached count before embedding anything
        elapsed = time.perf_counter() - embed_start
        tick(f"[{name}] embedding {done}/{total} passages ({from_cache[0]} cached) {elapsed:.0f} s")

    tick(f"[{name}] embedding {len(docs)} passages (cache {cache_path})", force=True)
    vectors = embedder.embed_passages(passages, progress=on_embed)
    t_embed = time.perf_counter() - embed_start
    n_cached = from_cache[0] if from_cache else 0

    tmp = tempfile.TemporaryDirectory(prefix="hippo-bench-chroma-", ignore_cleanup_errors=True)
    try:
        store = VectorStore(path=tmp.name)
        collection = store.collection()
        metadatas: list[dict[str, Any]] = [
            {"row": i} | ({"conv": c} if c is not None else {}) for i, c in enumerate(doc_conv)
        ]
        t0 = time.perf_counter()
        store.upsert(doc_ids, vectors, metadatas, collection=collection)
        t_chroma = time.perf_counter() - t0

        # --- queries ----------------------------------------------------------------------------
        masks: dict[str, np.ndarray] = {}
        if options.per_conversation:
            conv_arr = np.asarray([c or "" for c in doc_conv], dtype=object)
            masks = {c: conv_arr == c for c in sorted({c for c in doc_conv if c is not None})}
        empty_mask = np.zeros(len(docs), dtype=bool)
        # One untimed query first: with every passage cached the e5 model is not loaded yet, and Chroma
        # loads its HNSW segment on the first query; neither belongs in a per-query latency.
        index.top_k(tokenizer.query_tokens("warm-up 준비"), params.lexical_pool)
        store.query(embedder.embed_query("warm-up 준비"), params.semantic_pool, collection=collection)
        variant_lanes = {f"variant:{name}": vp for name, vp in options.variants.items()}
        extra = (*DIAGNOSTICS, *variant_lanes)
        runs: dict[str, dict[str, list[str]]] = {lane: {} for lane in (*LANES, *extra)}
        latency: dict[str, list[float]] = {lane: [] for lane in LANES}
        zero: dict[str, int] = dict.fromkeys((*LANES, *extra), 0)
        hnsw_overlap: list[float] = []
        q_tokens: list[list[str]] = []
        floor_dropped: list[int] = []
        floors: list[float] = []
        relevant_dropped = 0
        rel_sims: list[float] = []
        top1_sims: list[float] = []
        tick(f"[{name}] querying {len(queries)} queries", force=True)
        for n, q in enumerate(queries, start=1):
            conv = _conv_of(q.extra) if options.per_conversation else None
            allowed = None if conv is None else masks.get(conv, empty_mask)
            where = None if conv is None else {"conv": conv}

            t0 = time.perf_counter()
            toks = tokenizer.query_tokens(q.text)
            weights = {t: params.bigram_weight for t in toks if is_bigram(t)}
            top = (
                index.top_k(toks, params.lexical_pool, allowed=allowed, term_weights=weights) if toks else []
            )
            lexical = [(doc_ids[i], s) for i, s in top]
            t_lex = time.perf_counter() - t0

            t0 = time.perf_counter()
            vector = embedder.embed_query(q.text)
            semantic = store.query(vector, params.semantic_pool, where=where, collection=collection)
            t_sem = time.perf_counter() - t0

            t0 = time.perf_counter()
            fused: list[Candidate] = fuse(lexical, semantic, params)
            t_fuse = time.perf_counter() - t0
            unfloored = fuse(lexical, semantic, no_floor)
            exact = _exact_top(vectors, vector, allowed, params.semantic_pool)

            q_tokens.append(toks)
            latency["lexical"].append(t_lex)
            latency["semantic"].append(t_sem)
            latency["fused"].append(t_lex + t_sem + t_fuse)  # the server runs the lanes one after the other
            ranked = {
                "lexical": [d for d, _ in lexical],
                "semantic": [d for d, _ in semantic],
                "fused": [c.chunk_id for c in fused],
                NO_FLOOR: [c.chunk_id for c in unfloored],
                EXACT: [doc_ids[i] for i in exact],
            }
            for lane, vp in variant_lanes.items():
                ranked[lane] = _variant_fused(
                    vp,
                    params,
                    lexical,
                    semantic,
                    toks,
                    allowed,
                    index,
                    doc_ids,
                    vector,
                    where,
                    store,
                    collection,
                )
            expected = set(ranked[EXACT][:EVAL_DEPTH])
            if expected:
                hnsw_overlap.append(len(expected & set(ranked["semantic"][:EVAL_DEPTH])) / len(expected))
            for lane, ids in ranked.items():
                runs[lane][q.id] = ids[:EVAL_DEPTH]
                zero[lane] += not ids

            # Why fused may lose: semantic-only candidates under the floor never reach the fused list.
            # The floor is the product's own (absolute floor raised to the pool median + margin).
            floor = solo_match_floor([s for _, s in semantic], params)
            floors.append(floor)
            relevant = beir.qrels[q.id]
            lex_ids = set(ranked["lexical"])
            floor_dropped.append(sum(d not in lex_ids and s < floor for d, s in semantic))
            relevant_dropped += any(
                d in relevant and d not in lex_ids and s < floor for d, s in semantic[:EVAL_DEPTH]
            )
            rel_sims.extend(s for d, s in semantic if d in relevant)
            if semantic:
                top1_sims.append(semantic[0][1])
            tick(f"[{name}] queries {n}/{len(queries)}")
    finally:
        VectorStore.forget_clients()  # release Chroma's per-path client before the folder goes
        tmp.cleanup()

    qids = [q.id for q in queries]
    metrics = {lane: evaluate(runs[lane], beir.qrels, qids) for lane in runs}
    per_query = {lane: {qid: score_query(runs[lane][qid], beir.qrels[qid]) for qid in qids} for lane in runs}
    losses = _fusion_losses(per_query, qids)

    groups: dict[str, Any] = {}
    if options.by:
        members: dict[str, list[str]] = defaultdict(list)
        for q in queries:
            members[str(q.extra.get(options.by, "(none)"))].append(q.id)
        for key in sorted(members):
            ids = members[key]
            groups[key] = {"queries": len(ids)} | {
                lane: evaluate(runs[lane], beir.qrels, ids) for lane in runs
            }

    ratio: dict[str, Any] | None = None
    if options.ratio_queries > 0 and q_tokens:
        tick(f"[{name}] timing rank_bm25 on {min(options.ratio_queries, len(q_tokens))} queries", force=True)
        rng = random.Random(options.seed + 1)
        picks = sorted(rng.sample(range(len(q_tokens)), min(options.ratio_queries, len(q_tokens))))
        ratio = _ratio_check(
            index, corpus_tokens, [(queries[i].id, q_tokens[i]) for i in picks], params.lexical_pool
        )

    rel_arr = np.asarray(rel_sims, dtype=np.float64)
    report: dict[str, Any] = {
        "dataset": name,
        "folder": str(beir.folder),
        "mode": "per-conversation" if options.per_conversation else "whole corpus",
        "options": {
            "max_queries": options.max_queries,
            "seed": options.seed,
            "ratio_queries": options.ratio_queries,
            "by": options.by,
            "cache": str(cache_path),
        },
        "ranking_params": params.model_dump(mode="json"),
        "corpus": {
            "docs": len(docs),
            "chars": sum(map(len, passages)),
            "tokens": sum(map(len, corpus_tokens)),
            "terms": index.n_terms,
            "conversations": len({c for c in doc_conv if c is not None}),
        },
        "queries": {
            "total": len(beir.queries),
            "with_qrels": len(beir.evaluable_queries()),
            "evaluated": len(queries),
            "sampled": len(queries) < len(beir.evaluable_queries()),
            "qrels_pairs": beir.qrels_pairs,
            "qrels_missing_docs": beir.qrels_missing_docs,
        },
        "build": {
            "kiwi_load_s": t_kiwi,
            "tokenize_s": t_tok,
            "bm25_build_s": t_bm25,
            "embed_s": t_embed,
            "embed_vectors": len(docs),
            "embed_from_cache": n_cached,
            "embed_computed": len(docs) - n_cached,
            "chroma_upsert_s": t_chroma,
            "analyzer": tokenizer.fingerprint(),
            "embed_model": embedder.model_id,
        },
        "metrics": metrics,
        "zero_results": zero,
        "latency": {lane: _ms_stats(latency[lane]) for lane in LANES},
        "fusion": {
            "effective_floor_median": float(np.median(floors)) if floors else None,
            "semantic_only_dropped_by_floor_mean": float(np.mean(floor_dropped)) if floor_dropped else 0.0,
            "queries_with_relevant_dropped_by_floor": relevant_dropped,
            "relevant_similarity_median": float(np.median(rel_arr)) if rel_arr.size else None,
            "relevant_below_abs_floor_share": float((rel_arr < params.semantic_floor).mean())
            if rel_arr.size
            else None,
            "semantic_top1_similarity_median": float(np.median(top1_sims)) if top1_sims else None,
            "hnsw_top10_overlap_mean": float(np.mean(hnsw_overlap)) if hnsw_overlap else None,
            "hnsw_top10_differs": int(sum(o < 1.0 for o in hnsw_overlap)),
        }
        | losses,
        "groups": groups,
        "variants": {
            name: vp.model_dump(mode="json", include=set(_variant_diff(vp, params)))
            for name, vp in options.variants.items()
        },
        "rank_bm25": ratio,
        "environment": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "loadavg_start": load_start,
            "loadavg_end": os.getloadavg()[0],
            "git": _git_version(),
        },
    }
    return BenchResult(report=report, runs={lane: runs[lane] for lane in runs})


def _variant_fused(
    vp: RankingParams,
    params: RankingParams,
    lexical: list[tuple[str, float]],
    semantic: list[tuple[str, float]],
    toks: list[str],
    allowed: np.ndarray | None,
    index: BM25Index,
    doc_ids: list[str],
    vector: np.ndarray,
    where: dict[str, Any] | None,
    store: Any,
    collection: Any,
) -> list[str]:
    """Fused ids under other params; a lane is re-run only when its own knobs differ."""
    if (vp.lexical_pool, vp.bigram_weight) != (params.lexical_pool, params.bigram_weight):
        weights = {t: vp.bigram_weight for t in toks if is_bigram(t)}
        top = index.top_k(toks, vp.lexical_pool, allowed=allowed, term_weights=weights) if toks else []
        lexical = [(doc_ids[i], s) for i, s in top]
    if vp.semantic_pool != params.semantic_pool:
        semantic = store.query(vector, vp.semantic_pool, where=where, collection=collection)
    return [c.chunk_id for c in fuse(lexical, semantic, vp)]


def _exact_top(vectors: np.ndarray, query: np.ndarray, allowed: np.ndarray | None, k: int) -> list[int]:
    """Rows of the k most cosine-similar vectors (unit vectors: a dot product), inside `allowed`."""
    sims = vectors @ query
    cand = np.arange(len(sims)) if allowed is None else np.flatnonzero(allowed)
    order = np.lexsort((cand, -sims[cand]))[:k]
    return [int(cand[i]) for i in order]


def _variant_diff(vp: RankingParams, base: RankingParams) -> list[str]:
    return [k for k in RankingParams.model_fields if getattr(vp, k) != getattr(base, k)]


def _git_version() -> str:
    """Which ranking code produced the numbers: the commit, and whether the hybrid path was edited."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    paths = ["hippo_core/ranking.py", "hippo_core/bm25.py", "hippo_core/tokenize.py", "hippo_resources"]
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", *paths],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}+uncommitted ranking/index changes" if dirty else head


def _fusion_losses(per_query: dict[str, dict[str, dict[str, float]]], qids: Sequence[str]) -> dict[str, int]:
    """Count queries where the fused list does worse than a single lane (at MRR@10 and Hit@10)."""
    fused, lex, sem = per_query["fused"], per_query["lexical"], per_query["semantic"]
    return {
        "fused_mrr_below_lexical": sum(fused[q]["mrr@10"] < lex[q]["mrr@10"] for q in qids),
        "fused_mrr_below_semantic": sum(fused[q]["mrr@10"] < sem[q]["mrr@10"] for q in qids),
        "fused_mrr_below_both": sum(
            fused[q]["mrr@10"] < min(lex[q]["mrr@10"], sem[q]["mrr@10"]) for q in qids
        ),
        "fused_miss_lexical_hit10": sum(fused[q]["hit@10"] < lex[q]["hit@10"] for q in qids),
        "fused_miss_semantic_hit10": sum(fused[q]["hit@10"] < sem[q]["hit@10"] for q in qids),
        "fused_hit10_beyond_both": sum(
            fused[q]["hit@10"] > max(lex[q]["hit@10"], sem[q]["hit@10"]) for q in qids
        ),
    }


# --- report -------------------------------------------------------------------------------------
def _f(value: float | None, digits: int = 4) -> str:
    return "–" if value is None or value != value else f"{value:.{digits}f}"


def render_markdown(report: dict[str, Any]) -> str:
    """The human-readable report of one folder."""
    r = report
    c, qs, b, p = r["corpus"], r["queries"], r["build"], r["ranking_params"]
    sample = f" (seeded sample of {qs['with_qrels']}, seed {r['options']['seed']})" if qs["sampled"] else ""
    lines = [
        f"## {r['dataset']} — {r['mode']}",
        "",
        f"- corpus: {c['docs']:,} docs, {c['chars']:,} chars, {c['tokens']:,} tokens, {c['terms']:,} terms"
        + (f", {c['conversations']} conversations" if c["conversations"] else ""),
        f"- queries: {qs['evaluated']:,} evaluated{sample}; {qs['total'] - qs['with_qrels']} without qrels "
        f"skipped; {qs['qrels_pairs']:,} relevant pairs"
        + (
            f", {qs['qrels_missing_docs']} pointing at docs not in the corpus"
            if qs["qrels_missing_docs"]
            else ""
        ),
        f"- ranking: default RankingParams — rrf_k {p['rrf_k']}, weights lexical {p['lexical_weight']} / "
        f"semantic {p['semantic_weight']}, pools {p['lexical_pool']}/{p['semantic_pool']}, "
        f"semantic_floor {p['semantic_floor']}, semantic_margin {p.get('semantic_margin', '–')}, "
        f"bigram_weight {p['bigram_weight']}",
        f"- embedder {b['embed_model']}, analyzer {b['analyzer']}; load average "
        f"{r['environment']['loadavg_start']:.2f} → {r['environment']['loadavg_end']:.2f} "
        f"on {r['environment']['cpus']} CPUs; code {r['environment']['git']}",
        "",
        "| lane | Hit@1 | Hit@10 | MRR@10 | nDCG@10 | zero results | p50 ms | p95 ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    labels = {
        "lexical": "lexical (BM25)",
        "semantic": "semantic (e5 + Chroma)",
        "fused": "**fused (RRF + floor)**",
        NO_FLOOR: "fused, floor off (diagnostic)",
        EXACT: "semantic, exact cosine (diagnostic)",
    }
    for name, diff in r.get("variants", {}).items():
        shown = ", ".join(f"{k} {v}" for k, v in diff.items()) or "same as default"
        labels[f"variant:{name}"] = f"fused, variant `{name}`: {shown} (diagnostic)"
    for lane, label in labels.items():
        m = r["metrics"][lane]
        lat = r["latency"].get(lane)
        lines.append(
            f"| {label} | "
            + " | ".join(_f(m[k]) for k in METRICS)
            + f" | {r['zero_results'][lane]} | "
            + (f"{_f(lat['p50_ms'], 2)} | {_f(lat['p95_ms'], 2)} |" if lat else "– | – |")
        )
    lines += [
        "",
        "Latency: lexical = query tokenize + BM25 top_k; semantic = embed_query + Chroma query; "
        "fused = both lanes in sequence + fuse. Diagnostic rows are not product paths.",
        "",
        "| build step | seconds | note |",
        "|---|---:|---|",
        f"| Kiwi model load | {_f(b['kiwi_load_s'], 2)} | once per process |",
        f"| tokenize | {_f(b['tokenize_s'], 2)} | {c['docs'] / max(b['tokenize_s'], 1e-9):,.0f} docs/s |",
        f"| BM25 build | {_f(b['bm25_build_s'], 3)} | {c['terms']:,} terms |",
        f"| embed passages | {_f(b['embed_s'], 2)} | {b['embed_vectors']:,} vectors: {b['embed_from_cache']:,} "
        f"from cache, {b['embed_computed']:,} computed |",
        f"| Chroma upsert | {_f(b['chroma_upsert_s'], 2)} | temporary collection |",
    ]
    f = r["fusion"]
    lines += [
        "",
        "Fusion diagnostics:",
        f"- solo-match floor per query = max({p['semantic_floor']}, pool median + "
        f"{p.get('semantic_margin', 0.0)}): median {_f(f['effective_floor_median'], 3)}; semantic-only "
        f"candidates it dropped: {f['semantic_only_dropped_by_floor_mean']:.1f} of "
        f"{p['semantic_pool']} per query on average; queries whose relevant doc was in the semantic top-10 "
        f"but dropped: {f['queries_with_relevant_dropped_by_floor']}",
        f"- cosine similarity of relevant docs found by the semantic lane: median "
        f"{_f(f['relevant_similarity_median'], 3)} (share below {p['semantic_floor']}: "
        f"{_f(f['relevant_below_abs_floor_share'], 3)}); semantic top-1 median "
        f"{_f(f['semantic_top1_similarity_median'], 3)}",
        f"- Chroma HNSW vs exact cosine: top-10 overlap {_f(f['hnsw_top10_overlap_mean'], 4)} on average, "
        f"top-10 differs on {f['hnsw_top10_differs']} queries",
        f"- fused MRR@10 below lexical on {f['fused_mrr_below_lexical']} queries, below semantic on "
        f"{f['fused_mrr_below_semantic']}, below both on {f['fused_mrr_below_both']}; fused misses a "
        f"lexical Hit@10 on {f['fused_miss_lexical_hit10']}, a semantic Hit@10 on "
        f"{f['fused_miss_semantic_hit10']}; fused hits where neither lane does on {f['fused_hit10_beyond_both']}",
    ]
    if r["groups"]:
        lines += [
            "",
            f"By `{r['options']['by']}` (MRR@10 / Hit@10):",
            "",
            "| group | queries | "
            + " | ".join(label.replace(" (diagnostic)", "").strip("*") for label in labels.values())
            + " |",
            "|---|---:|" + "---:|" * len(labels),
        ]
        for key, g in r["groups"].items():
            cells = " | ".join(f"{_f(g[lane]['mrr@10'], 3)} / {_f(g[lane]['hit@10'], 3)}" for lane in labels)
            lines.append(f"| {key} | {g['queries']} | {cells} |")
    ratio = r["rank_bm25"]
    if ratio:
        lines += [
            "",
            f"Lexical lane vs rank_bm25 ({ratio['queries']} sampled queries, same tokens, whole corpus, "
            f"top {ratio['depth']}, no bigram weighting):",
            "",
            "| | p50 ms | p95 ms | mean ms |",
            "|---|---:|---:|---:|",
            f"| ours `BM25Index.top_k` | {_f(ratio['ours']['p50_ms'], 3)} | {_f(ratio['ours']['p95_ms'], 3)} | "
            f"{_f(ratio['ours']['mean_ms'], 3)} |",
            f"| `BM25Okapi.get_scores` + sort | {_f(ratio['rank_bm25']['p50_ms'], 3)} | "
            f"{_f(ratio['rank_bm25']['p95_ms'], 3)} | {_f(ratio['rank_bm25']['mean_ms'], 3)} |",
            "",
            f"Speed-up ×{_f(ratio['speedup_p50'], 1)} at p50, ×{_f(ratio['speedup_mean'], 1)} on the mean; identical "
            f"rankings on {ratio['identical']}/{ratio['queries']} queries; max relative score difference "
            f"{ratio['max_rel_score_diff']:.2e}; rank_bm25 build {ratio['rank_bm25_build_s']:.2f} s.",
        ]
    return "\n".join(lines) + "\n"


# --- CLI ----------------------------------------------------------------------------------------
def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m eval.bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folders", nargs="+", type=Path, metavar="DIR", help="BEIR folder(s)")
    parser.add_argument("--max-queries", type=_positive, help="evaluate a seeded sample of N queries")
    parser.add_argument(
        "--per-conversation", action="store_true", help="search only inside each query's own `conv`"
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the results as JSON")
    parser.add_argument(
        "--cache", type=Path, default=DEFAULT_CACHE, help=f"embedding cache (default {DEFAULT_CACHE})"
    )
    parser.add_argument(
        "--ratio-queries",
        type=_non_negative,
        default=200,
        help="queries timed against rank_bm25 (0 skips the comparison; default 200)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the query samples (default 0)")
    parser.add_argument("--by", metavar="FIELD", help="also break metrics down by this query field")
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME:key=value,...",
        help="also fuse the same lane results with other RankingParams, e.g. "
        "'k60:rrf_k=60,lexical_weight=1' (repeatable; a diagnostic row)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    base = RankingParams()
    variants: dict[str, RankingParams] = {}
    for spec in args.variant:
        try:
            name, vp = parse_variant(spec, base)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        variants[name] = vp
    options = BenchOptions(
        max_queries=args.max_queries,
        per_conversation=args.per_conversation,
        cache=args.cache,
        ratio_queries=args.ratio_queries,
        seed=args.seed,
        by=args.by,
        params=base,
        variants=variants,
    )

    def progress(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    # Load and check every folder first, so a typo in the last one fails before minutes of embedding.
    prepared: list[tuple[BeirSet, list[Query]]] = []
    try:
        for folder in args.folders:
            beir = load_beir(folder)
            queries = select_queries(beir, options.max_queries, options.seed)
            if not queries:
                raise BeirError(f"{folder}: no query has a relevant doc in qrels.tsv")
            if options.per_conversation:
                check_conversations(beir, queries)
            prepared.append((beir, queries))
    except BeirError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT

    reports: list[dict[str, Any]] = []
    for beir, queries in prepared:
        result = _run(beir, queries, options, None if args.quiet else progress)
        reports.append(result.report)
        print(render_markdown(result.report), flush=True)

    if args.json:
        payload = {"generated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "results": reports}
        try:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            print(f"error: cannot write {args.json}: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
    mismatch = [
        r["dataset"]
        for r in reports
        if r["rank_bm25"] and r["rank_bm25"]["identical"] < r["rank_bm25"]["queries"]
    ]
    if mismatch:
        print(f"error: BM25Index ranked differently from rank_bm25 on {', '.join(mismatch)}", file=sys.stderr)
        return EXIT_MISMATCH
    return EXIT_OK


if __name__ == "__main__":
    import signal

    # A killed run (SIGTERM) still unwinds, so the temporary Chroma folder is removed.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    raise SystemExit(main())
