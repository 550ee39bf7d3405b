"""How the lexical share of convex fusion (and RRF) plays on each public set, lanes computed once.

    python -m eval.fusion_sweep [DATA_DIR] [--sets a,b] [--max-queries 2000] [--shares 0.4,0.5,0.6,0.7,0.8]

Each set is built the way `eval.bench` builds it (same rows, exchange rows per conversation, same
analyzer, same cached embeddings); the semantic lane here is exact cosine over those vectors rather
than Chroma, so the whole sweep costs one query embedding per query. Every row fuses the same two lane
lists with `fuse_lanes` (solo-match floor included) under other `RankingParams`; the last
column says whether fused beat both lanes on Hit@1 and nDCG@10. The lexical lane and the fusion are the
search library's own (`hippo_search.pipeline.lexical_lane`, `fuse_lanes`). This is how `lexical_share` was chosen.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from eval.beir import (
    DEFAULT_DATA,
    BeirError,
    beir_folders,
    conv_of,
    index_rows,
    load_beir,
    select_queries,
    to_docs,
)
from eval.bench import DEFAULT_CACHE
from hippo_assets.quality.metrics import evaluate
from hippo_core.index.bm25 import BM25Index
from hippo_core.index.tokenize import Tokenizer
from hippo_core.ranking.ranking import RankingParams
from hippo_search.pipeline import fuse_lanes, lexical_lane


def sweep_set(
    folder: Path, shares: list[float], max_queries: int | None, cache: Path
) -> tuple[str, dict[str, dict[str, float]]]:
    """Metrics per lane and per fusion setting on one set: {"lexical": …, "semantic": …, "convex 0.6": …}."""
    from hippo_resources.embedder import Embedder

    beir = load_beir(folder)
    queries = select_queries(beir, max_queries, seed=0)
    per_conv = any(conv_of(d.extra) for d in beir.docs[:50])
    rows = index_rows(beir.docs, exchanges=per_conv)
    row_ids = [r[0] for r in rows]
    row_doc = {r[0]: beir.docs[r[1]].id for r in rows}
    row_conv = np.asarray([conv_of(beir.docs[r[1]].extra) or "" for r in rows], dtype=object)
    tokenizer = Tokenizer()
    index = BM25Index.build(tokenizer.tokenize_many([r[2] for r in rows]))
    embedder = Embedder(cache_path=str(cache.expanduser()))
    print(
        f"[{beir.name}] embedding {len(rows)} rows and {len(queries)} queries (cached ones are free)",
        file=sys.stderr,
    )
    vectors = embedder.embed([r[2] for r in rows], role="passage")
    q_vectors = embedder.embed([q.text for q in queries], role="query")
    base = RankingParams()
    settings = {f"convex {s}": base.model_copy(update={"lexical_share": s}) for s in shares}
    settings["rrf (k 10, 0.7/1.0)"] = base.model_copy(update={"fusion": "rrf"})
    runs: dict[str, dict[str, list[str]]] = {name: {} for name in ("lexical", "semantic", *settings)}
    for q, qv in zip(queries, q_vectors, strict=True):
        conv = conv_of(q.extra) if per_conv else None
        allowed = None if conv is None else row_conv == conv
        toks = tokenizer.query_tokens(q.text)
        lexical = lexical_lane(
            index, row_ids, toks, base.lexical_pool, allowed=allowed, bigram_weight=base.bigram_weight
        )
        sims = vectors @ qv
        cand = np.arange(len(rows)) if allowed is None else np.flatnonzero(allowed)
        order = cand[np.argsort(-sims[cand], kind="stable")][: base.semantic_pool]
        semantic = [(row_ids[i], float(sims[i])) for i in order]
        runs["lexical"][q.id] = to_docs([d for d, _ in lexical], row_doc)[:10]
        runs["semantic"][q.id] = to_docs([d for d, _ in semantic], row_doc)[:10]
        for name, params in settings.items():
            runs[name][q.id] = to_docs([c.chunk_id for c in fuse_lanes(lexical, semantic, params)], row_doc)[
                :10
            ]
    qids = [q.id for q in queries]
    return beir.name, {name: evaluate(run, beir.qrels, qids) for name, run in runs.items()}


def render(results: dict[str, dict[str, dict[str, float]]]) -> str:
    lines = ["| set | setting | Hit@1 | Hit@10 | nDCG@10 | beats both lanes |", "|---|---|---|---|---|---|"]
    for name, table in results.items():
        best = {m: max(table["lexical"][m], table["semantic"][m]) for m in ("hit@1", "ndcg@10")}
        for setting, m in table.items():
            lane = setting in ("lexical", "semantic")
            beats = "" if lane else ("yes" if all(m[k] > best[k] for k in best) else "no")
            lines.append(
                f"| {name} | {setting} | {m['hit@1']:.3f} | {m['hit@10']:.3f} | {m['ndcg@10']:.3f} | {beats} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m eval.fusion_sweep",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--sets", help="comma-separated set names (default: every folder with a corpus.jsonl)"
    )
    parser.add_argument("--max-queries", type=int, default=2000)
    parser.add_argument("--shares", default="0.4,0.5,0.6,0.7,0.8")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args(argv)
    try:
        shares = [float(x) for x in args.shares.split(",")]
        if not all(0.0 <= s <= 1.0 for s in shares):
            raise ValueError
    except ValueError:
        print(f"error: --shares wants numbers between 0 and 1, got {args.shares!r}", file=sys.stderr)
        return 2
    folders = beir_folders(args.data, args.sets)
    if not folders:
        print(f"error: no BEIR folder under {args.data}", file=sys.stderr)
        return 2
    results: dict[str, dict[str, dict[str, float]]] = {}
    for folder in folders:
        try:
            name, table = sweep_set(folder, shares, args.max_queries, args.cache)
        except BeirError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        results[name] = table
    print(render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
