"""Conversation-context weights chosen leaving one LoCoMo conversation out, through the product path.

    python -m eval.locomo_context ../shared/eval-data/locomo-dev [--work DIR] [--json out.json]

Every conversation of the set is loaded once, as `eval.bench_locomo` loads one (a claude.ai-style export
through the dlt asset, then the index assets; messages and exchange rows, no segments), and every question
is searched inside its own conversation by the product's `SearchEngine.search`, for each point of a small
grid of `conversation_neighbour_weight` × `conversation_reply_weight` × `conversation_speaker_boost`
(hippo_core/ranking/conversation_context.py).
For each conversation left out in turn, the point with the best Hit@1 + Hit@10 over the questions of the
other conversations is chosen and measured on the one left out; the report gives, per conversation, the
lexical lane, the semantic lane, the fused list without context and with the weights chosen without it.
The pooled row counts every question once, each measured with the weights chosen without its conversation.
`--work` keeps the index (re-runs search only); query vectors are embedded once, in one batch, and reused
across the grid, so the grid costs lexical lanes and vector look-ups, not embeddings.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from eval.bench_locomo import (
    DEFAULT_CACHE,
    build,
    evidence_covers,
    evidence_rank,
    lane_params,
    locomo_export,
    summarize,
)
from hippo_core.ranking.ranking import CONVERSATION_CONTEXT

NEIGHBOUR_GRID = (0.0, 0.2, 0.3, 0.5, 0.75)
REPLY_GRID = (0.0, 0.1, 0.2, 0.3)
SPEAKER_GRID = (0.0, 0.1, 0.2, 0.3)
Point = tuple[float, float, float]
WEIGHTS = CONVERSATION_CONTEXT  # the grid's axes, in the order of `Point`


class KnownQueries:
    """The engine's embedder with the questions' vectors computed once beforehand (the same model, one
    batch): the grid runs every question dozens of times and the query vector is the same each time."""

    def __init__(self, embedder: Any, texts: Sequence[str]) -> None:
        self._embedder = embedder
        vectors = embedder.embed(list(texts), role="query")
        self._known = {t: np.asarray(v) for t, v in zip(texts, vectors, strict=True)}

    def embed_query(self, text: str) -> np.ndarray:
        known = self._known.get(text)
        return known if known is not None else self._embedder.embed_query(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._embedder, name)


def utility(ranks: Sequence[int | None]) -> float:
    """What a point is chosen by: Hit@1 + Hit@10 (MRR@10 breaks ties)."""
    m = summarize(list(ranks))
    return m["hit@1"] + m["hit@10"] + 1e-3 * m["mrr@10"]


def choose(ranks: dict[Point, dict[str, int | None]], qids: Sequence[str]) -> Point:
    """The grid point with the best utility over `qids` (the smaller weights win a tie: less change)."""
    return max(sorted(ranks), key=lambda p: (utility([ranks[p][q] for q in qids]), -sum(p)))


def loco(
    ranks: dict[Point, dict[str, int | None]], conv_of: dict[str, str]
) -> tuple[dict[str, Point], dict[str, int | None]]:
    """Leave one conversation out: the point chosen without each conversation, and every question's rank
    under the point chosen without its own conversation."""
    convs = sorted(set(conv_of.values()))
    chosen: dict[str, Point] = {}
    left_out: dict[str, int | None] = {}
    for conv in convs:
        train = [q for q, c in conv_of.items() if c != conv]
        point = chosen[conv] = choose(ranks, train)
        left_out.update({q: ranks[point][q] for q, c in conv_of.items() if c == conv})
    return chosen, left_out


def run(folder: Path, work: Path, cache: Path = DEFAULT_CACHE) -> dict[str, Any]:
    from hippo_search.pipeline import open_engine

    export, queries, qrels = locomo_export(folder)
    queries = {qid: q for qid, q in queries.items() if qrels.get(qid)}
    started = time.monotonic()
    settings = build(export, work, False, cache)
    build_s = round(time.monotonic() - started, 1)
    engine = open_engine(settings, log=False)
    engine.embedder = KnownQueries(engine.embedder, [q["text"][:900] for q in queries.values()])
    covers, _ = evidence_covers(settings)
    off = lane_params(engine)

    def ranks_for(mode: str, params: Any) -> dict[str, int | None]:
        return {qid: evidence_rank(engine, q, qrels[qid], covers, mode, params) for qid, q in queries.items()}

    started = time.monotonic()
    lanes = {"lexical": ranks_for("lexical", off), "semantic": ranks_for("semantic", off)}
    grid: dict[Point, dict[str, int | None]] = {}
    for point in itertools.product(NEIGHBOUR_GRID, REPLY_GRID, SPEAKER_GRID):
        params = off.model_copy(update=dict(zip(WEIGHTS, point, strict=True)))
        grid[point] = ranks_for("hybrid", params)
    search_s = round(time.monotonic() - started, 1)
    conv_of = {qid: q["conv"] for qid, q in queries.items()}
    chosen, left_out = loco(grid, conv_of)
    by_conv: dict[str, list[str]] = defaultdict(list)
    for qid, conv in conv_of.items():
        by_conv[conv].append(qid)
    rows: dict[str, Any] = {}
    for conv, qids in sorted(by_conv.items()):
        rows[conv] = {
            "questions": len(qids),
            "chosen": dict(zip(WEIGHTS, chosen[conv], strict=True)),
            "lexical": summarize([lanes["lexical"][q] for q in qids]),
            "semantic": summarize([lanes["semantic"][q] for q in qids]),
            "fused (no context)": summarize([grid[(0.0, 0.0, 0.0)][q] for q in qids]),
            "fused + context (left out)": summarize([left_out[q] for q in qids]),
        }
    everything = list(conv_of)
    best_all = choose(grid, everything)
    rows["all questions"] = {
        "questions": len(everything),
        "chosen": None,
        "lexical": summarize([lanes["lexical"][q] for q in everything]),
        "semantic": summarize([lanes["semantic"][q] for q in everything]),
        "fused (no context)": summarize([grid[(0.0, 0.0, 0.0)][q] for q in everything]),
        "fused + context (left out)": summarize([left_out[q] for q in everything]),
    }
    return {
        "dataset": folder.name,
        "conversations": len(export),
        "messages": sum(len(c["chat_messages"]) for c in export),
        "build_seconds": build_s,
        "search_seconds": search_s,
        "grid": dict(zip(WEIGHTS, (NEIGHBOUR_GRID, REPLY_GRID, SPEAKER_GRID), strict=True)),
        "in_sample_best": dict(zip(WEIGHTS, best_all, strict=True)),
        "rows": rows,
    }


ROWS = ("lexical", "semantic", "fused (no context)", "fused + context (left out)")


def render(report: dict[str, Any]) -> str:
    lines = [
        f"LoCoMo conversation context, leave one conversation out ({report['dataset']}: "
        f"{report['conversations']} conversations, {report['messages']} messages; Hit@1 / Hit@10 / MRR@10)",
        "",
        "| conversation | questions | chosen without it (neighbour, reply, speaker) | "
        + " | ".join(ROWS)
        + " |",
        "|---|---|---|" + "---|" * len(ROWS),
    ]
    for conv, row in report["rows"].items():
        chosen = row["chosen"]
        weights = ", ".join(str(chosen[w]) for w in WEIGHTS) if chosen else "each its own"
        cells = [f"{row[r]['hit@1']:.3f} / {row[r]['hit@10']:.3f} / {row[r]['mrr@10']:.3f}" for r in ROWS]
        lines.append(f"| {conv} | {row['questions']} | {weights} | " + " | ".join(cells) + " |")
    best = report["in_sample_best"]
    lines += [
        "",
        "Chosen on every conversation (in-sample, what the defaults ship): "
        + ", ".join(f"{w} {best[w]}" for w in WEIGHTS)
        + f". Build {report['build_seconds']} s, grid searches {report['search_seconds']} s.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m eval.locomo_context", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("folder", type=Path)
    parser.add_argument("--work", type=Path, help="keep the index here (a re-run only searches)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="embedding cache")
    parser.add_argument("--json", type=Path, help="also write the report as JSON")
    args = parser.parse_args(argv)
    if not (args.folder / "corpus.jsonl").is_file():
        print(f"locomo_context: no corpus.jsonl in {args.folder}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="locomo-context-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        report = run(args.folder, work, args.cache)
    print(render(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
