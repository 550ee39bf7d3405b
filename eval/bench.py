"""Hybrid retrieval benchmark on BEIR folders, through the librarian's own lanes.

    python -m eval.bench ../shared/eval-data/korquad1 [more folders ...]
        [--max-queries N] [--per-conversation] [--json out.json] [--cache PATH]
        [--ratio-queries 200] [--seed 0] [--by FIELD]

Every corpus doc becomes one chunk (title, newline, text; doc id = chunk id); in per-conversation mode
each turn that follows another also gets an exchange row (the end of the turn before it, then the turn),
as the product indexes conversation messages, and every ranked list names a doc once, at its best row.
The build goes through
the product's code: `Tokenizer.tokenize_many` + `BM25Index.build` for the lexical lane, the `Embedder`
resource (content-addressed SQLite cache, so re-runs embed nothing) and a real Chroma collection via
`VectorStore` for the semantic lane. Each query runs the search library's own stages
(`hippo_search.pipeline`): `lexical_lane` (bigram terms down-weighted), `semantic_lane` on
`Embedder.embed_query`, and `fuse_lanes` with default `RankingParams`, so the fused list includes the
semantic solo-match floor exactly as the product applies it. Two diagnostic rows, which
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from eval.beir import (
    BeirError,
    BeirSet,
    Query,
    check_conversations,
    conv_of,
    index_rows,
    load_beir,
    select_queries,
    to_docs,
)
from eval.bench_diagnostics import (
    DIAGNOSTICS,
    EVAL_DEPTH,
    EXACT,
    LANES,
    NO_FLOOR,
    exact_top,
    fusion_losses,
    git_version,
    ms_stats,
    ratio_check,
    variant_diff,
)
from eval.bench_render import lane_tables, render_markdown
from eval.results import write_result
from hippo_assets.quality.metrics import evaluate, score_query
from hippo_core.index.bm25 import BM25Index
from hippo_core.index.tokenize import Tokenizer, get_kiwi
from hippo_core.ranking.ranking import Candidate, RankingParams, solo_match_floor
from hippo_search.pipeline import fuse_lanes, lexical_lane, semantic_lane

__all__ = [
    "DIAGNOSTICS",
    "LANES",
    "NO_FLOOR",
    "BenchOptions",
    "BenchResult",
    "main",
    "render_markdown",
    "run_benchmark",
]

DEFAULT_CACHE = Path("~/.cache/hippocampus/bench-embed.sqlite")
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
    exchanges: bool | None = None
    """Index each doc also with the end of the doc before it in its conversation, as the product indexes a
    conversation message (`hippo_core.index.segments.exchange_text`); default: on in per-conversation mode."""
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
    use_exchanges = options.per_conversation if options.exchanges is None else options.exchanges
    # Rows are what the lanes index: one per doc, plus an exchange row per conversation turn that follows
    # another. `doc_ids` names rows; every ranked list is mapped back to corpus ids (best row first).
    rows = index_rows(docs, use_exchanges)
    doc_ids = [r[0] for r in rows]
    row_doc = {r[0]: docs[r[1]].id for r in rows}
    passages = [r[2] for r in rows]
    doc_conv = [conv_of(docs[r[1]].extra) for r in rows]

    # --- build: lexical ---------------------------------------------------------------------------
    t0 = time.perf_counter()
    tokenizer = Tokenizer()
    get_kiwi()  # model load is a one-off per process, not part of tokenizing throughput
    t_kiwi = time.perf_counter() - t0
    tick(f"[{name}] tokenizing {len(docs)} docs ({len(rows)} rows)", force=True)
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

    tick(f"[{name}] embedding {len(rows)} passages (cache {cache_path})", force=True)
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
        lexical_lane(index, doc_ids, tokenizer.query_tokens("warm-up 준비"), params.lexical_pool)
        semantic_lane(store, collection, embedder.embed_query("warm-up 준비"), params.semantic_pool)
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
            conv = conv_of(q.extra) if options.per_conversation else None
            allowed = None if conv is None else masks.get(conv, empty_mask)
            where = None if conv is None else {"conv": conv}

            t0 = time.perf_counter()
            toks = tokenizer.query_tokens(q.text)
            lexical = lexical_lane(
                index, doc_ids, toks, params.lexical_pool, allowed=allowed, bigram_weight=params.bigram_weight
            )
            t_lex = time.perf_counter() - t0

            t0 = time.perf_counter()
            vector = embedder.embed_query(q.text)
            semantic = semantic_lane(store, collection, vector, params.semantic_pool, where)
            t_sem = time.perf_counter() - t0

            t0 = time.perf_counter()
            fused: list[Candidate] = fuse_lanes(lexical, semantic, params, q.text)
            t_fuse = time.perf_counter() - t0
            unfloored = fuse_lanes(lexical, semantic, no_floor)
            exact = exact_top(vectors, vector, allowed, params.semantic_pool)

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
                    q.text,
                )
            ranked = {lane: to_docs(ids, row_doc) for lane, ids in ranked.items()}
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
            lex_rows = {d for d, _ in lexical}
            floor_dropped.append(sum(d not in lex_rows and s < floor for d, s in semantic))
            relevant_dropped += any(
                row_doc[d] in relevant and d not in lex_rows and s < floor for d, s in semantic[:EVAL_DEPTH]
            )
            rel_sims.extend(s for d, s in semantic if row_doc[d] in relevant)
            if semantic:
                top1_sims.append(semantic[0][1])
            tick(f"[{name}] queries {n}/{len(queries)}")
    finally:
        VectorStore.forget_clients()  # release Chroma's per-path client before the folder goes
        tmp.cleanup()

    qids = [q.id for q in queries]
    metrics = {lane: evaluate(runs[lane], beir.qrels, qids) for lane in runs}
    per_query = {lane: {qid: score_query(runs[lane][qid], beir.qrels[qid]) for qid in qids} for lane in runs}
    losses = fusion_losses(per_query, qids)

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
        ratio = ratio_check(
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
            "rows": len(rows),
            "exchange_rows": len(rows) - len(docs),
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
            "embed_vectors": len(rows),
            "embed_from_cache": n_cached,
            "embed_computed": len(rows) - n_cached,
            "chroma_upsert_s": t_chroma,
            "analyzer": tokenizer.fingerprint(),
            "embed_model": embedder.model_id,
        },
        "metrics": metrics,
        "zero_results": zero,
        "latency": {lane: ms_stats(latency[lane]) for lane in LANES},
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
            name: vp.model_dump(mode="json", include=set(variant_diff(vp, params)))
            for name, vp in options.variants.items()
        },
        "rank_bm25": ratio,
        "environment": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "loadavg_start": load_start,
            "loadavg_end": os.getloadavg()[0],
            "git": git_version(),
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
    query: str = "",
) -> list[str]:
    """Fused ids under other params; a lane is re-run only when its own knobs differ."""
    if (vp.lexical_pool, vp.bigram_weight) != (params.lexical_pool, params.bigram_weight):
        lexical = lexical_lane(
            index, doc_ids, toks, vp.lexical_pool, allowed=allowed, bigram_weight=vp.bigram_weight
        )
    if vp.semantic_pool != params.semantic_pool:
        semantic = semantic_lane(store, collection, vector, vp.semantic_pool, where)
    return [c.chunk_id for c in fuse_lanes(lexical, semantic, vp, query)]


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
    parser.add_argument(
        "--no-exchanges",
        action="store_true",
        help="per conversation: index each turn alone, without the exchange row the product adds",
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
        exchanges=False if args.no_exchanges else None,
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
    write_result("bench", lane_tables(reports), argv)
    if mismatch:
        print(f"error: BM25Index ranked differently from rank_bm25 on {', '.join(mismatch)}", file=sys.stderr)
        return EXIT_MISMATCH
    return EXIT_OK


if __name__ == "__main__":
    import signal

    # A killed run (SIGTERM) still unwinds, so the temporary Chroma folder is removed.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    raise SystemExit(main())
