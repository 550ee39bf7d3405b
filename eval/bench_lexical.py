"""Lexical lane benchmark: our sparse BM25 vs rank_bm25 on a BEIR folder, same tokens for both.

    python -m eval.bench_lexical ../shared/eval-data/korquad1 [--max-queries 300]

Prints tokenize throughput, build time and query latency for both implementations, Hit@1/Hit@10/
MRR@10 of ours, and whether both return the same top-10 for every query. Reads the data in place.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi

from eval.bench_diagnostics import reference_top, same_ranking
from eval.results import write_result
from hippo_core.index.bm25 import BM25Index
from hippo_core.index.tokenize import Tokenizer


def load_beir(folder: Path) -> tuple[list[str], list[str], list[tuple[str, str]], dict[str, set[str]]]:
    """(doc ids, doc texts = title + text, [(query id, text)], qrels query id → relevant doc ids)."""
    doc_ids: list[str] = []
    doc_texts: list[str] = []
    with open(folder / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                doc_ids.append(str(row["_id"]))
                doc_texts.append(f"{row.get('title') or ''}\n{row.get('text') or ''}".strip())
    queries: list[tuple[str, str]] = []
    with open(folder / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                queries.append((str(row["_id"]), row["text"]))
    qrels: dict[str, set[str]] = defaultdict(set)
    with open(folder / "qrels.tsv", encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if float(row.get("score", 1) or 0) > 0:
                qrels[row["query-id"]].add(row["corpus-id"])
    return doc_ids, doc_texts, queries, qrels


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folder", type=Path, help="BEIR folder: corpus.jsonl, queries.jsonl, qrels.tsv")
    parser.add_argument("--max-queries", type=int, default=300, help="queries timed against rank_bm25")
    parser.add_argument("--seed", type=int, default=0, help="seed of the query sample")
    args = parser.parse_args(argv)

    doc_ids, doc_texts, queries, qrels = load_beir(args.folder)
    queries = [(qid, text) for qid, text in queries if qid in qrels]
    sample = queries
    if len(queries) > args.max_queries:
        sample = random.Random(args.seed).sample(queries, args.max_queries)
    n_chars = sum(map(len, doc_texts))
    print(f"dataset      {args.folder}  docs={len(doc_texts)}  chars={n_chars}  queries={len(queries)}")

    tokenizer = Tokenizer()
    tokenizer.tokenize("워밍업")  # Kiwi construction is not part of the throughput
    t0 = time.perf_counter()
    corpus = tokenizer.tokenize_many(doc_texts)
    t_tok = time.perf_counter() - t0
    n_tokens = sum(map(len, corpus))
    print(
        f"tokenize     {t_tok:.2f} s  {n_chars / t_tok:,.0f} chars/s  {len(doc_texts) / t_tok:,.0f} docs/s  "
        f"tokens={n_tokens}  ({tokenizer.fingerprint()})"
    )

    t0 = time.perf_counter()
    ours = BM25Index.build(corpus, analyzer=tokenizer.fingerprint())
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = BM25Okapi(corpus)
    t_ref = time.perf_counter() - t0
    print(f"build        ours {t_ours:.3f} s  rank_bm25 {t_ref:.3f} s  ({ours!r})")

    q_tokens: list[list[str]] = []
    tok_lat: list[float] = []
    for _, text in sample:
        t0 = time.perf_counter()
        q_tokens.append(tokenizer.query_tokens(text))
        tok_lat.append(time.perf_counter() - t0)

    lat_ours: list[float] = []
    lat_ref: list[float] = []
    same_top10 = 0
    max_rel_diff = 0.0
    ours_top: list[list[int]] = []
    for toks in q_tokens:
        t0 = time.perf_counter()
        top = ours.top_k(toks, 10)
        lat_ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ref_scores = ref.get_scores(toks)
        reference_top(ref_scores, 10)  # rank_bm25 timed with the same sort as ours
        lat_ref.append(time.perf_counter() - t0)
        docs = [d for d, _ in top]
        ours_top.append(docs)
        same_top10 += same_ranking(docs, ref_scores, 10)  # near-ties in either order: see same_ranking
        diff = np.abs(ours.scores(toks) - ref_scores) / np.maximum(np.abs(ref_scores), 1e-12)
        max_rel_diff = max(max_rel_diff, float(diff.max(initial=0.0)))

    ms = 1000.0
    print(f"query tok    p50 {pct(tok_lat, 50) * ms:.3f} ms  p95 {pct(tok_lat, 95) * ms:.3f} ms")
    print(
        f"query rank   ours p50 {pct(lat_ours, 50) * ms:.3f} ms  p95 {pct(lat_ours, 95) * ms:.3f} ms | "
        f"rank_bm25 p50 {pct(lat_ref, 50) * ms:.3f} ms  p95 {pct(lat_ref, 95) * ms:.3f} ms | "
        f"speed-up p50 x{pct(lat_ref, 50) / pct(lat_ours, 50):.0f}  "
        f"mean x{sum(lat_ref) / max(sum(lat_ours), 1e-12):.0f}"
    )
    print(
        f"identical    top-10 same for {same_top10}/{len(q_tokens)} queries; "
        f"max relative score diff {max_rel_diff:.2e}"
    )

    def metrics(ids: list[str], tops: list[list[int]]) -> dict[str, float | int]:
        hit1 = hit10 = mrr = 0.0
        for qid, docs in zip(ids, tops, strict=True):
            relevant = qrels[qid]
            ranks = [r for r, d in enumerate(docs[:10], 1) if doc_ids[d] in relevant]
            hit1 += bool(ranks) and ranks[0] == 1
            hit10 += bool(ranks)
            mrr += 1.0 / ranks[0] if ranks else 0.0
        n = max(len(ids), 1)
        return {
            "Hit@1": round(hit1 / n, 4),
            "Hit@10": round(hit10 / n, 4),
            "MRR@10": round(mrr / n, 4),
            "n": len(ids),
        }

    def shown(m: dict[str, float | int]) -> str:
        return f"Hit@1 {m['Hit@1']:.4f}  Hit@10 {m['Hit@10']:.4f}  MRR@10 {m['MRR@10']:.4f}  (n={m['n']})"

    quality = {"sample": metrics([qid for qid, _ in sample], ours_top)}
    print(f"quality      sample: {shown(quality['sample'])}")
    if len(sample) < len(queries):
        all_tokens = tokenizer.tokenize_many([text for _, text in queries])
        all_top = [[d for d, _ in ours.top_k(toks, 10)] for toks in all_tokens]
        quality["all"] = metrics([qid for qid, _ in queries], all_top)
        print(f"quality      all:    {shown(quality['all'])}")
    figures = {
        "quality of the lexical lane (queries with qrels)": quality,
        "speed": {
            "ours": {
                "build s": round(t_ours, 3),
                "query p50 ms": round(pct(lat_ours, 50) * ms, 3),
                "query p95 ms": round(pct(lat_ours, 95) * ms, 3),
            },
            "rank_bm25": {
                "build s": round(t_ref, 3),
                "query p50 ms": round(pct(lat_ref, 50) * ms, 3),
                "query p95 ms": round(pct(lat_ref, 95) * ms, 3),
            },
        },
        "docs": len(doc_texts),
        "analyzer": tokenizer.fingerprint(),
        "top-10 identical to rank_bm25": f"{same_top10}/{len(q_tokens)}",
    }
    write_result(f"bench_lexical-{args.folder.name}", figures, argv, module="eval.bench_lexical")
    return 0 if same_top10 == len(q_tokens) else 1


if __name__ == "__main__":
    raise SystemExit(main())
