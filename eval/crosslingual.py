"""Cross-lingual recall: MS MARCO questions in one language against the passages in the other.

    python -m eval.crosslingual [DATA_DIR] [--out DIR] [--max-queries N] [--doc-sample N] [--dumps DIR]

`msmarco-ko` and `msmarco-en` are the same questions and passages under the same ids, one machine-translated.
This makes two BEIR folders under `--out` (a cache folder; nothing is committed): `xling-ko2en` (Korean
questions, English passages) and `xling-en2ko` (the other way), linking the corpus and writing the queries
and qrels of the question side. Each is dumped with `eval.loso`'s lanes (the passages must already be in
the embedding cache, from the monolingual sets) and scored: Hit@1 / Hit@10 / nDCG@10 for each lane, the
fused list as it was (solo-match floor drops semantic-only hits under it) and as it is now (those hits kept
after every hit that cleared the floor, marked weak), at the fixed share and with adaptive fusion.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eval.beir import CORPUS_FILE, DEFAULT_DATA, QRELS_FILE, QUERIES_FILE, BeirError
from eval.loso import DEFAULT_CACHE, LosoError, SetLanes, dump_set, fused_docs, load_dump, to_docs
from hippo_assets.quality.metrics import score_query
from hippo_core.ranking.adaptive_fusion import FusionModel, load_model
from hippo_core.ranking.ranking import RankingParams
from hippo_search.pipeline import fusion_model

DIRECTIONS = {"xling-ko2en": ("msmarco-ko", "msmarco-en"), "xling-en2ko": ("msmarco-en", "msmarco-ko")}
DEFAULT_OUT = Path("~/.cache/hippocampus/crosslingual")
ROWS = ("lexical", "semantic", "fused before (floor drops)", "fused + weak hits", "adaptive + weak hits")


def make_sets(data: Path, out: Path, directions: Sequence[str] = tuple(DIRECTIONS)) -> list[Path]:
    """The cross-lingual folders: question side's queries and qrels, the other side's corpus."""
    made = []
    for name in directions:
        q_side, d_side = DIRECTIONS[name]
        q_dir, d_dir = data / q_side, data / d_side
        for path in (q_dir / QUERIES_FILE, q_dir / QRELS_FILE, d_dir / CORPUS_FILE):
            if not path.exists():
                raise LosoError(f"{path} is missing")
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        link = folder / CORPUS_FILE
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to((d_dir / CORPUS_FILE).resolve())
        for file in (QUERIES_FILE, QRELS_FILE):
            (folder / file).write_bytes((q_dir / file).read_bytes())
        made.append(folder)
    return made


def score(
    lanes: SetLanes, model: FusionModel, params: RankingParams | None = None
) -> dict[str, dict[str, float]]:
    params = params or RankingParams()
    totals: dict[str, dict[str, float]] = {row: {} for row in ROWS}
    for q in lanes.queries:
        ranked = {
            "lexical": to_docs([c for c, _ in q.lexical]),
            "semantic": to_docs([c for c, _ in q.semantic]),
            "fused before (floor drops)": fused_docs(q, params.model_copy(update={"weak_hits": False})),
            "fused + weak hits": fused_docs(q, params.model_copy(update={"weak_hits": True})),
            "adaptive + weak hits": fused_docs(
                q, params.model_copy(update={"fusion": "adaptive", "weak_hits": True}), model
            ),
        }
        for row, docs in ranked.items():
            for k, v in score_query(docs[:10], q.relevant).items():
                totals[row][k] = totals[row].get(k, 0.0) + v
    n = max(len(lanes.queries), 1)
    return {row: {k: v / n for k, v in m.items()} for row, m in totals.items()}


def render(results: dict[str, tuple[int, dict[str, dict[str, float]]]]) -> str:
    lines = ["| direction | queries | row | Hit@1 | Hit@10 | nDCG@10 |", "|---|---|---|---|---|---|"]
    for name, (n, table) in results.items():
        for row in ROWS:
            m = table[row]
            lines.append(
                f"| {name} | {n} | {row} | {m['hit@1']:.3f} | {m['hit@10']:.3f} | {m['ndcg@10']:.3f} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m eval.crosslingual",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--dumps", type=Path, default=DEFAULT_OUT / "dumps")
    p.add_argument("--max-queries", type=int)
    p.add_argument(
        "--doc-sample",
        type=int,
        help="the corpus cut of `eval.loso dump --doc-sample N` (same seed, same ids: same docs in both languages)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--directions",
        default=",".join(DIRECTIONS),
        help=f"comma-separated, of {', '.join(DIRECTIONS)} (default: both)",
    )
    p.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    p.add_argument("--model", type=Path, help="adaptive fusion weights (default: the shipped ones)")
    args = p.parse_args(argv)
    try:
        model = load_model(args.model.read_text(encoding="utf-8")) if args.model else fusion_model()
        results: dict[str, Any] = {}
        directions = [d for d in args.directions.split(",") if d]
        unknown = set(directions) - set(DIRECTIONS)
        if unknown:
            raise LosoError(f"unknown direction(s) {', '.join(sorted(unknown))}")
        for folder in make_sets(args.data, args.out.expanduser(), directions):
            path = dump_set(
                folder,
                args.dumps.expanduser(),
                args.max_queries,
                seed=args.seed,
                cache=args.cache,
                doc_sample=args.doc_sample,
                progress=lambda m: print(m, file=sys.stderr, flush=True),
            )
            lanes = load_dump(path)
            results[lanes.name] = (len(lanes.queries), score(lanes, model))
    except (LosoError, BeirError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(render(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
