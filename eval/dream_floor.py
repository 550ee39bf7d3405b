"""How close two notes' vectors must be before the dream asks the LLM whether they are one concept
(`hippo_core.dream.similar.SIMILARITY_FLOOR`).

    python -m eval.dream_floor [DATA_DIR] [--passages N] [--seed S] [--k K]

Labelled duplicates: `msmarco-en` and `msmarco-ko` hold the same passages under the same ids, one
machine-translated, so a passage and its translation are one text written twice (in the two languages a
bilingual vault mixes). N passages of each language (a seeded sample of ids) are embedded by the product's
embedder (the benchmark cache: cached passages are not embedded again) and ranked exactly as the dream
ranks notes (`neighbour_pairs`, top-k per note, no floor). A top-k pair is a duplicate when it joins a
passage and its own translation. Two folds by id: on each fold the floor with the best F1 is chosen and
scored on the other fold; the shipped floor is the mean of the two choices (rounded to 0.01).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np

from eval.beir import passage_text
from eval.loso import DEFAULT_CACHE
from eval.results import write_result
from hippo_core.dream.similar import SIMILARITY_FLOOR, neighbour_pairs

DEFAULT_DATA = Path("/work/shared/eval-data")
GRID = [round(0.70 + i * 0.005, 3) for i in range(61)]  # 0.700 .. 1.000


def _load(path: Path) -> dict[str, str]:
    out = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            text = " ".join(filter(None, [row.get("title", ""), row.get("text", "")])).strip()
            if text:
                out[str(row["_id"])] = text
    return out


def scores(pairs: list[tuple[str, str, float]], floor: float, duplicates: int) -> dict[str, float]:
    """Precision and recall of the pairs at or above `floor` (a pair `en:x` / `ko:x` is a duplicate)."""
    kept = [(a, b) for a, b, s in pairs if s >= floor]
    hits = sum(1 for a, b in kept if a.split(":", 1)[1] == b.split(":", 1)[1])
    precision = hits / len(kept) if kept else 1.0
    recall = hits / duplicates if duplicates else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "floor": floor,
        "pairs": len(kept),
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
    }


def best_floor(pairs: list[tuple[str, str, float]], duplicates: int) -> dict[str, float]:
    return max((scores(pairs, f, duplicates) for f in GRID), key=lambda r: (r["f1"], r["floor"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--passages", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args(argv)
    from hippo_resources.embedder import Embedder

    en = _load(args.data / "msmarco-en" / "corpus.jsonl")
    ko = _load(args.data / "msmarco-ko" / "corpus.jsonl")
    ids = sorted(set(en) & set(ko))
    ids = sorted(random.Random(args.seed).sample(ids, min(args.passages, len(ids))))
    embedder = Embedder(cache_path=str(DEFAULT_CACHE.expanduser()))
    texts = [passage_text_of(en[i]) for i in ids] + [passage_text_of(ko[i]) for i in ids]
    vecs = embedder.embed_passages(texts)
    names = [f"en:{i}" for i in ids] + [f"ko:{i}" for i in ids]
    folds = {0: [], 1: []}
    for n, i in enumerate(ids):
        folds[n % 2].append(i)
    per_fold = {}
    for fold, fold_ids in folds.items():
        keep = {f"en:{i}" for i in fold_ids} | {f"ko:{i}" for i in fold_ids}
        idx = [n for n, name in enumerate(names) if name in keep]
        pairs = neighbour_pairs([names[n] for n in idx], vecs[idx], k=args.k, floor=-1.0, cap=10**9)
        per_fold[fold] = (pairs, len(fold_ids))
    chosen = {f: best_floor(*per_fold[f]) for f in per_fold}
    held_out = {f: scores(per_fold[1 - f][0], chosen[f]["floor"], per_fold[1 - f][1]) for f in per_fold}
    shipped = round((chosen[0]["floor"] + chosen[1]["floor"]) / 2, 2)
    all_pairs = neighbour_pairs(names, vecs, k=args.k, floor=-1.0, cap=10**9)
    dup_sims = sorted(s for a, b, s in all_pairs if a.split(":", 1)[1] == b.split(":", 1)[1])
    other_sims = sorted(s for a, b, s in all_pairs if a.split(":", 1)[1] != b.split(":", 1)[1])
    figures = {
        "passages": len(ids),
        "k": args.k,
        "chosen_on_fold": {str(f): chosen[f] for f in chosen},
        "scored_on_other_fold": {str(f): held_out[f] for f in held_out},
        "floor_from_folds": shipped,
        "shipped_floor": SIMILARITY_FLOOR,
        "at_shipped_floor_all": scores(all_pairs, SIMILARITY_FLOOR, len(ids)),
        "duplicate_cosine_p05_p50": [
            float(np.percentile(dup_sims, 5)) if dup_sims else None,
            float(np.percentile(dup_sims, 50)) if dup_sims else None,
        ],
        "other_top_k_cosine_p50_p95_p99": [
            float(np.percentile(other_sims, q)) if other_sims else None for q in (50, 95, 99)
        ],
    }
    print(json.dumps(figures, indent=2))
    write_result("dream_floor", figures, argv)
    return 0


def passage_text_of(text: str) -> str:
    """The passage as the benchmarks embed it (eval.beir's text of a document)."""
    from eval.beir import Doc

    return passage_text(Doc(id="x", title="", text=text))


if __name__ == "__main__":
    sys.exit(main())
