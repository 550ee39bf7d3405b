"""The Markdown page of one benchmark report (`eval.bench` JSON → tables a person reads)."""

from __future__ import annotations

from typing import Any

from eval.bench_diagnostics import EXACT, NO_FLOOR
from hippo_assets.quality.metrics import METRICS


def _f(value: float | None, digits: int = 4) -> str:
    return "–" if value is None or value != value else f"{value:.{digits}f}"


def _fusion(p: dict[str, Any]) -> str:
    if p.get("fusion", "rrf") == "rrf":  # reports written before convex fusion existed were RRF
        return f"RRF k {p['rrf_k']}, weights lexical {p['lexical_weight']} / semantic {p['semantic_weight']}"
    return f"convex fusion, lexical share {p['lexical_share']}"


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
        f"- ranking: default RankingParams — {_fusion(p)}, pools {p['lexical_pool']}/{p['semantic_pool']}, "
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
        "fused": f"**fused ({'RRF' if p.get('fusion') == 'rrf' else 'convex'} + floor)**",
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


def lane_tables(reports: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """The figures `eval/results` keeps of bench reports: per metric, a row per set, a column per lane."""
    lanes = ("lexical", "semantic", "fused")
    tables: dict[str, dict[str, dict[str, Any]]] = {}
    for metric, title in (
        ("hit@1", "Hit@1"),
        ("ndcg@10", "nDCG@10"),
        ("hit@10", "Hit@10"),
        ("mrr@10", "MRR@10"),
    ):
        tables[title] = {
            r["dataset"]: {"queries": r["queries"]["evaluated"]}
            | {lane: round(r["metrics"][lane][metric], 4) for lane in lanes}
            for r in reports
        }
    tables["query latency p50 (ms)"] = {
        r["dataset"]: {
            lane: None if r["latency"][lane]["p50_ms"] is None else round(r["latency"][lane]["p50_ms"], 1)
            for lane in lanes
        }
        for r in reports
    }
    return tables
