"""Korean lexical ablation: what each analyzer choice buys, measured on the Korean public sets.

    python -m eval.ablate_lexical [DATA_DIR] [--sets korquad1,ko-welfare,msmarco-ko] [--max-queries N]
                                  [--out ablation.md]

The lexical lane alone (BM25 over our analyzer, whole corpus) is run once per analyzer variant:
which Kiwi morpheme classes are kept, whether nouns written together also give their compound,
whether Hangul character bigrams are emitted and how much a query bigram weighs. Every row is
measured in the same run on the same queries; the Δ column is against the shipped default.
No embedding is involved, so this runs in a minute or two per set.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from eval.beir import DEFAULT_DATA, BeirError, load_beir, passage_text, select_queries
from eval.results import write_result
from hippo_assets.quality.metrics import evaluate
from hippo_core.index.bm25 import BM25Index
from hippo_core.index.tokenize import DEFAULT_MORPH_TAGS, Tokenizer, TokenizerConfig, get_kiwi
from hippo_core.ranking.ranking import RankingParams
from hippo_search.pipeline import lexical_lane

KOREAN_SETS = ("korquad1", "ko-welfare", "msmarco-ko")
_LATIN = ("SL", "SN", "SH")


@dataclass(frozen=True)
class Variant:
    """One analyzer choice: a tokenizer config plus the query-side bigram weight."""

    name: str
    what: str
    config: TokenizerConfig
    bigram_weight: float


def variants() -> list[Variant]:
    """The default first; every other row changes one thing against it."""
    default = TokenizerConfig()
    w = RankingParams().bigram_weight

    def tags(*extra: str, drop: tuple[str, ...] = ()) -> TokenizerConfig:
        kept = tuple(t for t in DEFAULT_MORPH_TAGS if t not in drop) + extra
        return default.model_copy(update={"morph_tags": kept})

    return [
        Variant("default", f"shipped analyzer, bigram weight {w}", default, w),
        Variant(
            "nouns only",
            "drop verb/adjective stems (VV, VA) and roots (XR)",
            tags(drop=("VV", "VA", "XR")),
            w,
        ),
        Variant("no roots", "drop roots (XR)", tags(drop=("XR",)), w),
        Variant("+ bound nouns", "also keep bound nouns (NNB: 것, 수, 등)", tags("NNB"), w),
        Variant("+ adverbs", "also keep general adverbs (MAG)", tags("MAG"), w),
        Variant("+ noun suffixes", "also keep noun-deriving suffixes (XSN: 들, 적)", tags("XSN"), w),
        Variant(
            "no compounds",
            "nouns written together do not also give their compound",
            default.model_copy(update={"compound_nouns": False}),
            w,
        ),
        Variant(
            "no bigrams",
            "no Hangul character bigrams at all",
            default.model_copy(update={"hangul_bigrams": False}),
            0.0,
        ),
        Variant("bigram ×0.1", "query bigrams weigh 0.1", default, 0.1),
        Variant("bigram ×0.5", "query bigrams weigh 0.5", default, 0.5),
        Variant("bigram ×1.0", "query bigrams weigh as much as morphemes", default, 1.0),
        Variant(
            "bigrams only",
            "no morphology: Hangul bigrams plus Latin words and numbers",
            default.model_copy(update={"morph_tags": _LATIN, "compound_nouns": False}),
            1.0,
        ),
    ]


def run_set(folder: Path, max_queries: int | None, seed: int, pool: int) -> list[dict[str, object]]:
    """Lexical metrics of every variant on one set; analyzer builds are shared between variants."""
    beir = load_beir(folder)
    queries = select_queries(beir, max_queries, seed)
    qids = [q.id for q in queries]
    passages = [passage_text(d) for d in beir.docs]
    doc_ids = [d.id for d in beir.docs]
    get_kiwi()
    built: dict[str, tuple[Tokenizer, BM25Index, float]] = {}
    rows: list[dict[str, object]] = []
    for v in variants():
        key = v.config.fingerprint()
        if key not in built:
            t0 = time.perf_counter()
            tok = Tokenizer(v.config)
            index = BM25Index.build(tok.tokenize_many(passages), analyzer=key)
            built[key] = (tok, index, time.perf_counter() - t0)
        tok, index, build_s = built[key]
        runs: dict[str, list[str]] = {}
        t0 = time.perf_counter()
        for q in queries:
            toks = tok.query_tokens(q.text)
            top = lexical_lane(index, doc_ids, toks, pool, bigram_weight=v.bigram_weight)
            runs[q.id] = [d for d, _ in top[:10]]
        query_ms = (time.perf_counter() - t0) * 1000 / max(len(queries), 1)
        rows.append(
            {
                "variant": v.name,
                "what": v.what,
                "terms": index.n_terms,
                "build_s": build_s,
                "query_ms": query_ms,
            }
            | evaluate(runs, beir.qrels, qids)
        )
        print(f"[{beir.name}] {v.name}: hit@1 {rows[-1]['hit@1']:.3f}", file=sys.stderr, flush=True)
    return rows


def render(results: dict[str, list[dict[str, object]]], queries_note: str) -> str:
    lines = [
        "# Korean lexical lane: what each analyzer choice buys",
        "",
        f"Lexical lane only, whole corpus, {queries_note}. Δ = change against `default` in the same run.",
        "",
    ]
    for name, rows in results.items():
        base = rows[0]
        lines += [
            f"## {name}",
            "",
            "| variant | what changes | terms | Hit@1 | Δ Hit@1 | MRR@10 | Δ MRR@10 | nDCG@10 | build s | ms/query |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            lines.append(
                f"| {r['variant']} | {r['what']} | {r['terms']} | {r['hit@1']:.3f} | "
                f"{r['hit@1'] - base['hit@1']:+.3f} | {r['mrr@10']:.3f} | {r['mrr@10'] - base['mrr@10']:+.3f} | "
                f"{r['ndcg@10']:.3f} | {r['build_s']:.1f} | {r['query_ms']:.2f} |"
            )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m eval.ablate_lexical",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--sets", default=",".join(KOREAN_SETS))
    parser.add_argument("--max-queries", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="also write the Markdown table here")
    args = parser.parse_args(argv)
    results: dict[str, list[dict[str, object]]] = {}
    for name in args.sets.split(","):
        try:
            results[name] = run_set(
                args.data / name, args.max_queries, args.seed, RankingParams().lexical_pool
            )
        except BeirError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    note = (
        "every query with qrels"
        if args.max_queries is None
        else f"at most {args.max_queries} queries per set"
    )
    text = render(results, note)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    print(text)
    write_result("ablate_lexical", {f"{name} ({note})": rows for name, rows in results.items()}, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
