"""Leave-one-set-out: every fusion choice made on the other sets, measured on the one left out.

    python -m eval.loso dump [DATA_DIR] [--sets a,b] [--max-queries N] [--embed-passages]
        [--doc-sample N [--distractors M]] [--conversations K|a,b]
    python -m eval.loso [run] [--sets a,b] [--json out.json]
    python -m eval.loso train [--out hippo_core/ranking/adaptive_fusion.json]

`dump` builds each set once the way `eval.bench` does (same rows, exchange rows per conversation, same
analyzer, bigram weight and pools, the shared embedding cache) and writes every query's two lane lists with
their scores (BM25 top 60, exact-cosine top 60) to `DUMP_DIR/<set>.json.gz`. It refuses a set whose
passages are not all in the embedding cache unless `--embed-passages` (one embedding process at a time on
a shared machine; `HIPPO_EMBED_THREADS` gives that one process more threads); query vectors are cached too,
and passage vectors are stored batch by batch, so a stopped dump loses one batch at most. A set too big to
embed in time can be cut, and the cut names the dump: `--doc-sample N` keeps the relevant docs of N seeded
queries (plus `--distractors M` other docs), `--conversations` keeps whole conversations. Everything after
that is cheap: no re-embedding.

`run` (the default) scores, for each dumped set left out in turn: the lexical lane, the semantic lane, the
old fused list (convex, `lexical_share` 0.6, a share chosen in-sample on all six sets: labelled so), a fixed
share chosen on the other sets, and query-adaptive fusion (`hippo_core.ranking.adaptive_fusion`) trained on the
other sets, its signal set and regularization chosen by an inner leave-one-set-out over those same sets.
The two new rows return weak hits (semantic-only hits under the floor) after the others, as the product does.

`train` fits the shipped model on every dumped set (in-sample for each of them: the left-out estimate of
that procedure is what `run` prints) and writes it with the command and data that made it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import math
import os
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from eval.beir import (
    DEFAULT_DATA,
    EXCHANGE_SUFFIX,
    BeirError,
    Query,
    beir_folders,
    check_conversations,
    conv_of,
    index_rows,
    load_beir,
    passage_text,
    select_queries,
)
from eval.results import write_result
from hippo_assets.quality.metrics import score_query
from hippo_core.ranking.adaptive_fusion import (
    BASE_FEATURES,
    FEATURES,
    FusionModel,
    lane_signals,
)
from hippo_core.ranking.ranking import RankingParams, solo_match_floor
from hippo_core.ranking.rerank import reorder
from hippo_resources.reranker import Reranker
from hippo_search.pipeline import fuse_lanes, fusion_share, lexical_lane

DEFAULT_DUMPS = Path("~/.cache/hippocampus/loso")
DEFAULT_CACHE = Path("~/.cache/hippocampus/bench-embed.sqlite")
GRID: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(21))
LAMBDAS: tuple[float, ...] = (0.0, 0.001, 0.01, 0.1)
RELATIVE: tuple[str, ...] = (
    "lex_lead",
    "sem_margin",
    "sem_spread",
    "agreement",
    "top1_agree",
    "lex_top_in_sem",
    "sem_top_in_lex",
    "lex_top_sim_gap",
    "overlap3",
)
CROSS: tuple[str, ...] = (
    "lex_lead",
    "sem_margin",
    "top1_agree",
    "lex_top_in_sem",
    "sem_top_in_lex",
    "lex_top_sim_gap",
)
FEATURE_SETS: dict[str, tuple[str, ...]] = {"base": BASE_FEATURES, "relative": RELATIVE, "cross": CROSS}
"""The signal sets the inner leave-one-set-out chooses between (with the L2 strength). `relative` and `cross`
leave out what names a set rather than a query's evidence (its script, its length, BM25's and the
similarity's absolute scale), which a model trained on five sets would otherwise read as "which set"."""
OLD_SHARE = 0.6
FLOORS: tuple[tuple[float, float], ...] = ((0.80, 0.04), (0.80, 0.02), (0.80, 0.0), (-1.0, 0.0))
"""The solo-match floors (semantic_floor, semantic_margin) the "share + floor" row chooses among with the
share: the product's (0.80, and 0.04 over the pool's median), lower margins, and the pool's median alone (-1, 0).
`solo_match_floor` raises the floor to median + margin once the pool holds five hits."""
EXIT_OK, EXIT_BAD_INPUT = 0, 2
ROWS = (
    "lexical",
    "semantic",
    "old fused 0.6",
    "fixed share (LOSO)",
    "share + floor (LOSO)",
    "adaptive (LOSO)",
)
RERANK_ROW = "adaptive + rerank"


class LosoError(ValueError):
    """Bad input or a missing prerequisite, said in words (exit 2)."""


@dataclass
class QueryLanes:
    id: str
    text: str
    relevant: list[str]
    lexical: list[tuple[str, float]]
    semantic: list[tuple[str, float]]


@dataclass
class SetLanes:
    name: str
    queries: list[QueryLanes]
    meta: dict[str, Any] = field(default_factory=dict)


def row_doc(row_id: str) -> str:
    """The corpus id of an index row (an exchange row counts as its turn)."""
    return row_id.removesuffix(EXCHANGE_SUFFIX)


def to_docs(rows: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(row_doc(r) for r in rows))


def fused_docs(q: QueryLanes, params: RankingParams, model: FusionModel | None = None) -> list[str]:
    """One query's fused list, in documents, through the product's fusion stage (`fuse_lanes`: weak hits
    after the rest unless `params.weak_hits` is off; `fusion: "adaptive"` at `model`'s share)."""
    return to_docs([c.chunk_id for c in fuse_lanes(q.lexical, q.semantic, params, q.text, model)])


# --- dump ---------------------------------------------------------------------------------------
def dump_set(
    folder: Path,
    out_dir: Path,
    max_queries: int | None = None,
    seed: int = 0,
    cache: Path = DEFAULT_CACHE,
    embed_passages: bool = False,
    progress: Callable[[str], None] | None = None,
    cached_subset: bool = False,
    doc_sample: int | None = None,
    distractors: int = 0,
    conversations: str | None = None,
) -> Path:
    """Build one set's lanes once and write every query's two lists; returns the dump's path.

    `cached_subset`: when some passages are not embedded yet, keep only the rows that are and the queries
    whose every relevant doc kept a row, under the name `<set>-subset` (a smaller, easier corpus: say so).
    `doc_sample`: a corpus cut to the relevant docs of a seeded sample of that many queries (and every query
    they answer), under the name `<set>-sample<N>`; the same seed and ids give the same cut in two sets that
    share ids (MS MARCO en/ko). `distractors`: that many more docs, a seeded sample of the rest, so the cut is
    not only answers (named `<set>-sample<N>-d<M>`). `conversations`: a conversation set cut to a seeded
    sample of that many whole conversations and their questions (named `<set>-conv<K>`)."""
    from hippo_core.index.bm25 import BM25Index
    from hippo_core.index.tokenize import Tokenizer
    from hippo_resources.embedder import Embedder

    say = progress or (lambda _m: None)
    beir = load_beir(folder)
    queries = select_queries(beir, max_queries, seed)
    if not queries:
        raise LosoError(f"{folder}: no query has a relevant doc in qrels.tsv")
    per_conv = any(conv_of(d.extra) for d in beir.docs[:50])
    if per_conv:
        check_conversations(beir, queries)
    params = RankingParams()
    rows = index_rows(beir.docs, exchanges=per_conv)
    set_name = beir.name
    sample_meta: dict[str, Any] | None = None
    if conversations is not None:
        if not per_conv:
            raise LosoError(f"{beir.name}: --conversations cuts a conversation set")
        convs = sorted({conv_of(d.extra) or "" for d in beir.docs})
        if conversations.isdigit():
            chosen = set(random.Random(seed).sample(convs, min(int(conversations), len(convs))))
        else:
            chosen = set(conversations.split(","))
            if chosen - set(convs):
                raise LosoError(f"{beir.name}: no conversation {', '.join(sorted(chosen - set(convs)))}")
        rows = [r for r in rows if conv_of(beir.docs[r[1]].extra) in chosen]
        queries = [q for q in queries if conv_of(q.extra) in chosen]
        set_name = f"{beir.name}-{conv_suffix(conversations)}"
        sample_meta = {"conversations": sorted(chosen), "rows": len(rows), "queries": len(queries)}
        say(
            f"[{set_name}] conversations {', '.join(sorted(chosen))}: {len(rows)} rows, {len(queries)} queries"
        )
    if doc_sample is not None:
        if per_conv:
            raise LosoError(f"{beir.name}: --doc-sample cuts a whole-corpus set, not conversations")
        keep = set().union(*(beir.qrels[q.id] for q in select_queries(beir, doc_sample, seed)))
        others = sorted({d.id for d in beir.docs} - keep)
        keep |= set(random.Random(seed).sample(others, min(distractors, len(others))))
        rows = [r for r in rows if beir.docs[r[1]].id in keep]
        present = {beir.docs[r[1]].id for r in rows}
        answerable = [q for q in beir.evaluable_queries() if beir.qrels[q.id] <= present]
        queries = select_queries_from(answerable, max_queries, seed)
        set_name = f"{beir.name}-sample{doc_sample}" + (f"-d{distractors}" if distractors else "")
        sample_meta = {"docs": len(present), "of_docs": len(beir.docs), "queries": len(queries)}
        say(f"[{set_name}] {len(present)} of {len(beir.docs)} docs, {len(queries)} queries they answer")
    row_ids = [r[0] for r in rows]
    passages = [r[2] for r in rows]
    # The one embedding process may be given more cores (HIPPO_EMBED_THREADS); default one.
    threads = int(os.environ.get("HIPPO_EMBED_THREADS") or 1)
    embedder = Embedder(cache_path=str(Path(cache).expanduser()), threads=threads)
    # One embedding process at a time on a shared machine: a set is dumped from cached passages only,
    # unless the caller says embedding here is fine.
    hashes = [embedder.hash_for(p) for p in passages]
    cached = embedder._cache_get(hashes)  # noqa: SLF001 - a read of the shared cache, nothing embedded
    missing = len(passages) - len(cached)
    name = set_name
    subset: dict[str, Any] | None = sample_meta
    if missing and cached_subset and not embed_passages:
        rows = [r for r, h in zip(rows, hashes, strict=True) if h in cached]
        row_ids = [r[0] for r in rows]
        passages = [r[2] for r in rows]
        kept_docs = {beir.docs[r[1]].id for r in rows}
        queries = [q for q in queries if beir.qrels[q.id] <= kept_docs]
        name, missing = f"{set_name}-subset", 0
        subset = {"docs": len(kept_docs), "of_docs": len(beir.docs), "queries": len(queries)}
        if not queries:
            raise LosoError(f"{beir.name}: no query has all its relevant docs among the embedded passages")
        say(f"[{name}] {len(kept_docs)} of {len(beir.docs)} docs embedded; {len(queries)} queries answerable")
    if missing and not embed_passages:
        raise LosoError(
            f"{beir.name}: {missing} of {len(passages)} passages are not in {cache}; run `eval.bench` on it "
            "first, or pass --embed-passages when nothing else is embedding"
        )
    say(f"[{beir.name}] tokenizing {len(rows)} rows")
    tokenizer = Tokenizer()
    index = BM25Index.build(tokenizer.tokenize_many(passages), analyzer=tokenizer.fingerprint())
    say(f"[{beir.name}] vectors for {len(rows)} rows ({missing} to embed) and {len(queries)} queries")
    step = max(len(passages) // 10, 1)
    vectors = embedder.embed(
        passages,
        role="passage",
        progress=lambda done, n: (
            say(f"[{name}] {done}/{n} passages") if done % step == 0 or done == n else None
        ),
    )
    q_vectors = embedder.embed([q.text for q in queries], role="query")
    row_conv = np.asarray([conv_of(beir.docs[r[1]].extra) or "" for r in rows], dtype=object)
    masks = {c: row_conv == c for c in set(row_conv.tolist())} if per_conv else {}
    out: list[dict[str, Any]] = []
    for q, qv in zip(queries, q_vectors, strict=True):
        allowed = masks.get(conv_of(q.extra) or "", np.zeros(len(rows), bool)) if per_conv else None
        toks = tokenizer.query_tokens(q.text)
        top = lexical_lane(index, row_ids, toks, params.lexical_pool, allowed, params.bigram_weight)
        sims = vectors @ qv
        cand = np.arange(len(rows)) if allowed is None else np.flatnonzero(allowed)
        order = cand[np.argsort(-sims[cand], kind="stable")][: params.semantic_pool]
        out.append(
            {
                "id": q.id,
                "text": q.text,
                "relevant": sorted(beir.qrels[q.id]),
                "lexical": [[cid, round(s, 6)] for cid, s in top],
                "semantic": [[row_ids[i], round(float(sims[i]), 6)] for i in order],
            }
        )
    meta = {
        "set": name,
        "subset": subset,
        "folder": str(beir.folder),
        "mode": "per-conversation" if per_conv else "whole corpus",
        "docs": len(beir.docs),
        "rows": len(rows),
        "queries": len(out),
        "max_queries": max_queries,
        "seed": seed,
        "embed_model": embedder.model_id,
        "analyzer": tokenizer.fingerprint(),
        "semantic_lane": "exact cosine",
        "params": params.model_dump(include={"lexical_pool", "semantic_pool", "bigram_weight"}),
        "made": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.json.gz"
    write_dump(path, SetLanes(name, [], meta), raw_queries=out)
    say(f"[{name}] wrote {path}")
    return path


def conv_suffix(conversations: str) -> str:
    """`conv3` for a sample of three conversations, the names themselves (`conv-30+conv-42`) for a list."""
    return f"conv{conversations}" if conversations.isdigit() else "+".join(sorted(conversations.split(",")))


def select_queries_from(queries: list[Query], max_queries: int | None, seed: int) -> list[Query]:
    """A seeded sample of `queries`, kept in order (as `select_queries` samples a set's own)."""
    if max_queries is None or len(queries) <= max_queries:
        return queries
    keep = set(random.Random(seed).sample(range(len(queries)), max_queries))
    return [q for i, q in enumerate(queries) if i in keep]


def write_dump(path: Path, lanes: SetLanes, raw_queries: list[dict[str, Any]] | None = None) -> None:
    """Write a dump atomically (the name appears only once the file is whole)."""
    queries = raw_queries
    if queries is None:
        queries = [
            {
                "id": q.id,
                "text": q.text,
                "relevant": q.relevant,
                "lexical": [list(x) for x in q.lexical],
                "semantic": [list(x) for x in q.semantic],
            }
            for q in lanes.queries
        ]
    tmp = path.with_suffix(".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8") as fh:
        json.dump({"meta": lanes.meta | {"set": lanes.name}, "queries": queries}, fh, ensure_ascii=False)
    os.replace(tmp, path)


def load_dump(path: Path) -> SetLanes:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            raw = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise LosoError(f"{path}: not a lane dump ({exc})") from exc
    queries = [
        QueryLanes(
            id=str(q["id"]),
            text=q["text"],
            relevant=list(q["relevant"]),
            lexical=[(str(c), float(s)) for c, s in q["lexical"]],
            semantic=[(str(c), float(s)) for c, s in q["semantic"]],
        )
        for q in raw["queries"]
    ]
    return SetLanes(name=raw["meta"]["set"], queries=queries, meta=raw["meta"])


def load_dumps(dump_dir: Path, sets: str | None = None) -> list[SetLanes]:
    wanted = set(sets.split(",")) if sets else None
    paths = sorted(Path(dump_dir).expanduser().glob("*.json.gz"))
    out = [load_dump(p) for p in paths if wanted is None or p.name.removesuffix(".json.gz") in wanted]
    if wanted is not None and {s.name for s in out} != wanted:
        raise LosoError(f"no dump for {', '.join(sorted(wanted - {s.name for s in out}))} in {dump_dir}")
    return out


# --- scoring ------------------------------------------------------------------------------------
def utility(m: dict[str, float]) -> float:
    """What a choice is judged by: Hit@1 + nDCG@10 (the two figures the targets name)."""
    return m["hit@1"] + m["ndcg@10"]


def grid_ranked(q: QueryLanes, params: RankingParams, grid: Sequence[float] = GRID) -> list[list[str]]:
    """Doc top-10 of convex fusion (kept, then weak hits) at every share of `grid`, in one pass.

    The same arithmetic as `hippo_core.ranking.ranking.fuse` (tests check they agree), vectorized over shares.
    """
    lex, sem = q.lexical, q.semantic
    ids = list(dict.fromkeys([c for c, _ in lex] + [c for c, _ in sem]))
    pos = {c: i for i, c in enumerate(ids)}
    n = len(ids)
    lex_n = np.zeros(n)
    sem_n = np.zeros(n)
    has_lex = np.zeros(n, bool)
    has_sem = np.zeros(n, bool)
    sim = np.full(n, -np.inf)
    lex_max = max((s for _, s in lex), default=0.0)
    sims = [s for _, s in sem]
    lo, hi = (min(sims), max(sims)) if sims else (0.0, 0.0)
    span = hi - lo
    for c, s in lex:
        lex_n[pos[c]] = s / lex_max if lex_max > 0 else 0.0
        has_lex[pos[c]] = True
    for c, s in sem:
        sem_n[pos[c]] = (s - lo) / span if span > 1e-9 else 1.0
        has_sem[pos[c]] = True
        sim[pos[c]] = s
    floor = solo_match_floor(sims, params)
    kept = has_lex | (has_sem & (sim >= floor))
    weak_rows = [c for c, s in sem if not has_lex[pos[c]] and s < floor]
    name_rank = np.empty(n, dtype=np.int64)
    name_rank[np.argsort(np.asarray(ids, dtype=object), kind="stable")] = np.arange(n)
    kept_idx = np.flatnonzero(kept)
    out: list[list[str]] = []
    for a in grid:
        score = np.where(has_lex, a * lex_n, 0.0) + np.where(has_sem, (1.0 - a) * sem_n, 0.0)
        order = kept_idx[np.lexsort((name_rank[kept_idx], -score[kept_idx]))]
        out.append(to_docs([ids[i] for i in order] + weak_rows)[:10])
    return out


@dataclass
class Table:
    """Per query: signals and the utility at every grid share (computed once per set)."""

    name: str
    x: np.ndarray  # queries × features
    u: np.ndarray  # queries × grid
    queries: list[QueryLanes]


def build_table(lanes: SetLanes, params: RankingParams) -> Table:
    xs, us = [], []
    for q in lanes.queries:
        sig = lane_signals(q.text, q.lexical, q.semantic)
        xs.append([sig[f] for f in FEATURES])
        us.append([utility(score_query(r, q.relevant)) for r in grid_ranked(q, params)])
    return Table(
        lanes.name, np.asarray(xs, float).reshape(-1, len(FEATURES)), np.asarray(us, float), lanes.queries
    )


def choose_share(tables: Sequence[Table]) -> float:
    """The grid share with the best mean utility, every set weighing the same (ties: nearest 0.5)."""
    means = np.mean([t.u.mean(axis=0) for t in tables], axis=0)
    best = np.flatnonzero(means >= means.max() - 1e-12)
    return float(GRID[min(best, key=lambda i: abs(GRID[i] - 0.5))])


def choose_share_and_floor(
    tables: dict[tuple[float, float], Sequence[Table]],
) -> tuple[tuple[float, float], float]:
    """The (floor, share) pair with the best mean utility, every set weighing the same; ties go to the
    product's floor (the first of `FLOORS`), then the share nearest 0.5."""
    best: tuple[float, tuple[float, float], float] | None = None
    for floor in FLOORS:
        share = choose_share(tables[floor])
        col = GRID.index(share)
        value = float(np.mean([t.u[:, col].mean() for t in tables[floor]]))
        if best is None or value > best[0] + 1e-12:
            best = (value, floor, share)
    assert best is not None
    return best[1], best[2]


def floor_params(params: RankingParams, floor: tuple[float, float]) -> RankingParams:
    return params.model_copy(update={"semantic_floor": floor[0], "semantic_margin": floor[1]})


def fit_model(
    tables: Sequence[Table],
    lam: float,
    features: Sequence[str] = BASE_FEATURES,
    bandwidth: float = 0.07,
    steps: int = 400,
) -> FusionModel:
    """The share model that maximizes mean Hit@1 + nDCG@10 over `tables` (every set weighs the same).

    Each query's utility is known at every grid share; smoothed over the grid with a Gaussian kernel it
    becomes a differentiable function of the share. The logistic model starts at the best fixed share of
    these tables (weights 0) and climbs the gradient with Adam (numpy only, L2 penalty `lam` on the weights,
    not the bias), keeping the best point it passed: it never ends worse than that fixed share on them."""
    grid = np.asarray(GRID)
    cols = [FEATURES.index(f) for f in features]
    x = np.vstack([t.x for t in tables])[:, cols]
    u = np.vstack([t.u for t in tables])
    w = np.concatenate([np.full(len(t.u), 1.0 / max(len(t.u), 1)) for t in tables]) / max(len(tables), 1)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    start = min(max(choose_share(tables), 0.02), 0.98)
    beta = np.zeros(z.shape[1])
    beta[0] = math.log(start / (1 - start))
    m1, m2 = np.zeros_like(beta), np.zeros_like(beta)
    best, best_beta = -np.inf, beta.copy()
    for step in range(1, steps + 1):
        a = 1.0 / (1.0 + np.exp(-np.clip(z @ beta, -40, 40)))
        d = a[:, None] - grid[None, :]
        k = np.exp(-0.5 * (d / bandwidth) ** 2)
        ks, ku = k.sum(axis=1), (k * u).sum(axis=1)
        objective = float(w @ (ku / ks)) - 0.5 * lam * float(beta[1:] @ beta[1:])
        if objective > best:
            best, best_beta = objective, beta.copy()
        dk = -k * d / bandwidth**2
        du = ((dk * u).sum(axis=1) * ks - ku * dk.sum(axis=1)) / ks**2  # d utility / d share
        grad = z.T @ (w * du * a * (1 - a)) - lam * np.r_[0.0, beta[1:]]
        m1 = 0.9 * m1 + 0.1 * grad
        m2 = 0.999 * m2 + 0.001 * grad**2
        beta = beta + 0.05 * (m1 / (1 - 0.9**step)) / (np.sqrt(m2 / (1 - 0.999**step)) + 1e-8)
    return FusionModel(
        features=tuple(features),
        weights=tuple(float(b) for b in best_beta[1:]),
        bias=float(best_beta[0]),
        mean=tuple(float(m) for m in mean),
        scale=tuple(float(s) for s in scale),
    )


def grid_utility(model: FusionModel, t: Table) -> float:
    """Mean utility of a model on a table, each query's share snapped to the grid (inner selection only)."""
    if not len(t.u):
        return 0.0
    shares = [model.share(dict(zip(FEATURES, row, strict=True))) for row in t.x]
    cols = np.rint(np.asarray(shares) / 0.05).astype(int)
    return float(t.u[np.arange(len(t.u)), cols].mean())


def choose_model(tables: Sequence[Table]) -> tuple[FusionModel, float]:
    """Signal set and regularization by leave-one-set-out inside `tables`, then a fit on all of them."""
    if len(tables) < 2:
        return fit_model(tables, LAMBDAS[1]), LAMBDAS[1]
    options = [(name, lam) for name in FEATURE_SETS for lam in LAMBDAS]
    scores = {
        (name, lam): np.mean(
            [
                grid_utility(fit_model([o for o in tables if o is not t], lam, FEATURE_SETS[name]), t)
                for t in tables
            ]
        )
        for name, lam in options
    }
    # ties: the fewer signals, then the stronger penalty
    name, lam = max(options, key=lambda o: (scores[o], -len(FEATURE_SETS[o[0]]), o[1]))
    return fit_model(tables, lam, FEATURE_SETS[name]), lam


def evaluate_rows(
    lanes: SetLanes,
    params: RankingParams,
    share: float,
    model: FusionModel,
    reranker: Reranker | None = None,
    floor: tuple[float, float] | None = None,
    floor_share: float | None = None,
) -> dict[str, dict[str, float]]:
    """The rows for one left-out set, through the product's own fusion code (and reranker, when given)."""
    rows = (*ROWS, RERANK_ROW) if reranker is not None else ROWS
    totals: dict[str, dict[str, float]] = {row: {} for row in rows}
    texts = _corpus_texts(lanes) if reranker is not None else {}
    degraded: list[str] = []
    old = params.model_copy(update={"lexical_share": OLD_SHARE, "weak_hits": False})
    adaptive = params.model_copy(update={"fusion": "adaptive", "weak_hits": True})
    fixed = params.model_copy(update={"lexical_share": share, "weak_hits": True})
    floored = (floor_params(params, floor) if floor else params).model_copy(
        update={"lexical_share": share if floor_share is None else floor_share, "weak_hits": True}
    )
    shares: list[float] = []
    for q in lanes.queries:
        shares.append(fusion_share(q.lexical, q.semantic, adaptive, q.text, model))
        ranked = {
            "lexical": to_docs([c for c, _ in q.lexical]),
            "semantic": to_docs([c for c, _ in q.semantic]),
            "old fused 0.6": fused_docs(q, old),
            "fixed share (LOSO)": fused_docs(q, fixed),
            "share + floor (LOSO)": fused_docs(q, floored),
            "adaptive (LOSO)": fused_docs(q, adaptive, model),
        }
        if reranker is not None:
            fused = ranked["adaptive (LOSO)"]
            head = fused[: reranker.top_n]
            outcome = reranker.rerank(q.text, [texts.get(d, "") for d in head])
            if outcome.status == "ok" and outcome.scores is not None:
                ranked[RERANK_ROW] = reorder(fused, outcome.scores)
            else:
                ranked[RERANK_ROW] = fused
                degraded.append(outcome.reason or outcome.status)
        for row, docs in ranked.items():
            for k, v in score_query(docs[:10], q.relevant).items():
                totals[row][k] = totals[row].get(k, 0.0) + v
    n = max(len(lanes.queries), 1)
    out = {row: {k: v / n for k, v in m.items()} for row, m in totals.items()}
    out["adaptive (LOSO)"]["share_mean"] = float(np.mean(shares)) if shares else 0.0
    if reranker is not None:
        out[RERANK_ROW]["degraded"] = float(len(degraded))
        if degraded:
            print(
                f"[{lanes.name}] reranker degraded on {len(degraded)} queries: {degraded[0]}", file=sys.stderr
            )
    return out


def _corpus_texts(lanes: SetLanes) -> dict[str, str]:
    """Doc id → the text the reranker reads (the dump names its BEIR folder)."""
    beir = load_beir(lanes.meta["folder"])
    return {d.id: passage_text(d) for d in beir.docs}


def loso(
    sets: Sequence[SetLanes], params: RankingParams | None = None, reranker: Reranker | None = None
) -> dict[str, Any]:
    """Every set left out once: choices made on the others, figures on it."""
    if len(sets) < 2:
        raise LosoError("leave-one-set-out needs at least two dumped sets")
    params = params or RankingParams()
    tables = {s.name: build_table(s, params) for s in sets}
    by_floor = {
        floor: {s.name: build_table(s, floor_params(params, floor)) for s in sets} for floor in FLOORS
    }
    results: dict[str, Any] = {}
    for s in sets:
        train = [tables[o.name] for o in sets if o.name != s.name]
        share = choose_share(train)
        floor, floor_share = choose_share_and_floor(
            {f: [t[o.name] for o in sets if o.name != s.name] for f, t in by_floor.items()}
        )
        model, lam = choose_model(train)
        rows = evaluate_rows(s, params, share, model, reranker, floor, floor_share)
        results[s.name] = {
            "queries": len(s.queries),
            "trained_on": [t.name for t in train],
            "fixed_share": share,
            "floor": {"semantic_floor": floor[0], "semantic_margin": floor[1], "share": floor_share},
            "lambda": lam,
            "model": model.model_dump(include={"features", "weights", "bias"}),
            "rows": rows,
            "in_sample_best_share": choose_share([tables[s.name]]),
        }
    return results


def check_targets(results: dict[str, Any], row: str = "adaptive (LOSO)") -> tuple[int, int, list[str]]:
    """(sets where `row` ≥ the better lane on Hit@1 and nDCG@10, sets where strictly better, failures)."""
    ge = strict = 0
    fails: list[str] = []
    for name, r in results.items():
        m = r["rows"]
        ok = st = True
        for k in ("hit@1", "ndcg@10"):
            best = max(m["lexical"][k], m["semantic"][k])
            ok &= m[row][k] >= best
            st &= m[row][k] > best
            if m[row][k] < best:
                fails.append(f"{name} {k} {m[row][k]:.3f} < {best:.3f}")
        ge += ok
        strict += st
    return ge, strict, fails


def left_out_tables(results: dict[str, Any]) -> dict[str, Any]:
    """The figures `eval/results` keeps: Hit@1 / nDCG@10 per set left out and row, and the targets."""
    rows = [row for row in (*ROWS, RERANK_ROW) if any(row in r["rows"] for r in results.values())]
    table = {
        f"{name} ({r['queries']})": {
            row: f"{r['rows'][row]['hit@1']:.3f} / {r['rows'][row]['ndcg@10']:.3f}"
            for row in rows
            if row in r["rows"]
        }
        for name, r in results.items()
    }
    targets = {}
    for row in ("fixed share (LOSO)", "share + floor (LOSO)", "adaptive (LOSO)"):
        ge, strict, _ = check_targets(results, row)
        targets[row] = {"≥ better lane (sets)": f"{ge}/{len(results)}", "strictly better (sets)": strict}
    return {"left out, Hit@1 / nDCG@10": table, "target: fused ≥ the better lane": targets}


def render(results: dict[str, Any]) -> str:
    lines = [
        "| set (left out) | queries | row | Hit@1 | Hit@10 | nDCG@10 | share |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        for row in [row for row in (*ROWS, RERANK_ROW) if row in r["rows"]]:
            m = r["rows"][row]
            share = {
                "old fused 0.6": "0.6 (in-sample)",
                "fixed share (LOSO)": f"{r['fixed_share']:.2f}",
                "share + floor (LOSO)": (
                    f"{r['floor']['share']:.2f}, floor {r['floor']['semantic_floor']:g}"
                    f" + {r['floor']['semantic_margin']:g}"
                ),
                "adaptive (LOSO)": f"mean {m.get('share_mean', 0):.2f}",
            }.get(row, "")
            lines.append(
                f"| {name} | {r['queries']} | {row} | {m['hit@1']:.3f} | {m['hit@10']:.3f} | "
                f"{m['ndcg@10']:.3f} | {share} |"
            )
    for row in ("fixed share (LOSO)", "share + floor (LOSO)", "adaptive (LOSO)"):
        ge, strict, fails = check_targets(results, row)
        lines.append("")
        lines.append(
            f"{row}: ≥ better lane on Hit@1 and nDCG@10 on {ge}/{len(results)} sets, strictly better on "
            f"{strict}" + (f" (short: {'; '.join(fails)})" if fails else "")
        )
    return "\n".join(lines)


# --- CLI ----------------------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m eval.loso", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = p.add_subparsers(dest="cmd")
    d = sub.add_parser("dump", help="write each set's lane lists once")
    d.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    d.add_argument("--sets")
    d.add_argument("--max-queries", type=int)
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    d.add_argument("--embed-passages", action="store_true")
    d.add_argument("--force", action="store_true", help="dump again a set that is already dumped")
    d.add_argument(
        "--doc-sample",
        type=int,
        help="cut the corpus to the relevant docs of a seeded sample of N queries (dumped as <set>-sampleN)",
    )
    d.add_argument(
        "--distractors",
        type=int,
        default=0,
        help="with --doc-sample: add a seeded sample of M other docs (dumped as <set>-sampleN-dM)",
    )
    d.add_argument(
        "--conversations",
        help="a conversation set cut to K whole conversations (seeded sample) or to the named ones, a,b "
        "(dumped as <set>-convK or <set>-a+b)",
    )
    d.add_argument(
        "--cached-subset",
        action="store_true",
        help="a set not fully embedded yet: dump `<set>-subset`, its embedded docs and the queries they answer",
    )
    for name, help_ in (
        ("run", "leave-one-set-out figures"),
        ("train", "fit the shipped model on every set"),
    ):
        s = sub.add_parser(name, help=help_)
        s.add_argument("--sets")
        if name == "run":
            s.add_argument("--json", type=Path)
            s.add_argument(
                "--rerank-url", help="also rerank the adaptive top N through this /rerank endpoint"
            )
            s.add_argument("--rerank-top-n", type=int, default=20)
            s.add_argument("--rerank-timeout", type=float, default=10.0)
            s.add_argument("--rerank-field", choices=("documents", "texts"), default="documents")
        else:
            s.add_argument(
                "--out",
                type=Path,
                default=Path(__file__).resolve().parents[1] / "hippo_core" / "adaptive_fusion.json",
            )
    for s in (d, *[a for a in sub.choices.values() if a is not d]):
        s.add_argument(
            "--dumps", type=Path, default=DEFAULT_DUMPS, help=f"dump folder (default {DEFAULT_DUMPS})"
        )
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in ("dump", "run", "train", "-h", "--help"):
        argv = ["run", *argv]
    args = _parser().parse_args(argv)
    dumps = args.dumps.expanduser()
    try:
        if args.cmd == "dump":
            folders = beir_folders(args.data, args.sets)
            if not folders:
                raise LosoError(f"no BEIR folder under {args.data}")
            made = 0
            for folder in folders:
                suffix = f"-sample{args.doc_sample}" if args.doc_sample else ""
                suffix += f"-d{args.distractors}" if args.doc_sample and args.distractors else ""
                suffix += f"-{conv_suffix(args.conversations)}" if args.conversations else ""
                done = dumps / f"{folder.name}{suffix}.json.gz"
                if done.exists() and not args.force:
                    print(f"[{folder.name}] already dumped ({done}; --force redoes it)", file=sys.stderr)
                    made += 1
                    continue
                try:
                    dump_set(
                        folder,
                        dumps,
                        args.max_queries,
                        args.seed,
                        args.cache,
                        args.embed_passages,
                        lambda m: print(m, file=sys.stderr, flush=True),
                        args.cached_subset,
                        args.doc_sample,
                        args.distractors,
                        args.conversations,
                    )
                    made += 1
                except (
                    LosoError
                ) as exc:  # a set the embedding job has not reached yet: the others still count
                    print(f"skipped: {exc}", file=sys.stderr)
            return EXIT_OK if made else EXIT_BAD_INPUT
        sets = load_dumps(dumps, args.sets)
        print(
            f"sets: {', '.join(f'{s.name} ({len(s.queries)} queries)' for s in sets)} from {dumps}",
            file=sys.stderr,
        )
        if args.cmd == "train":
            params = RankingParams()
            tables = [build_table(s, params) for s in sets]
            model, lam = choose_model(tables)
            model = model.model_copy(
                update={
                    "trained": {
                        "command": "python -m eval.loso train"
                        + (f" --sets {args.sets}" if args.sets else ""),
                        "sets": {s.name: len(s.queries) for s in sets},
                        "lambda": lam,
                        "objective": "mean Hit@1 + nDCG@10 per set (every set weighs the same), each query's "
                        "utility at the grid shares 0..1 by 0.05 smoothed by a Gaussian kernel (bandwidth 0.07); "
                        "gradient ascent, L2 lambda chosen by leave-one-set-out",
                        "note": "in-sample on every set listed; `python -m eval.loso run` gives the left-out figures",
                        "date": dt.date.today().isoformat(),
                    }
                }
            )
            args.out.write_text(json.dumps(model.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
            print(f"wrote {args.out} (lambda {lam}, sets {', '.join(s.name for s in sets)})")
            return EXIT_OK
        reranker = (
            Reranker(
                url=args.rerank_url,
                top_n=args.rerank_top_n,
                timeout_seconds=args.rerank_timeout,
                documents_field=args.rerank_field,
            )
            if args.rerank_url
            else None
        )
        results = loso(sets, reranker=reranker)
        print(render(results))
        if args.json:
            args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        write_result("loso", left_out_tables(results), argv)
        return EXIT_OK
    except (LosoError, BeirError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    raise SystemExit(main())
