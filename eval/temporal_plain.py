"""Plain BM25 on the temporal set: the reference the time-aware search is read against.

    python -m eval.temporal_plain DIR [--max-questions N]

DIR is the unpacked `longmemeval-dev` set, as for `python -m eval.temporal`. Each question's sessions are
scored with plain Okapi BM25 (`rank_bm25.BM25Okapi`, the formula `hippo_core.index.bm25` reproduces) over
the product's tokens (`Tokenizer(morphology=False)`: the set is English, so Kiwi adds nothing), at two
grains: a whole session as one document, and each turn (`## Turn NN - role`) as one, a session counting
at its best turn. No chunking, fusion, sections or time stages: a KU question's `asof` probe only drops
the sessions dated after `ku.as_of`. The metrics are `eval.temporal`'s (`question_scores`, `summary`), so
the two tables read alike. It shows what the set asks of a retriever that knows nothing of time: which
part of a miss is the words and which is the time.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from eval.results import write_result
from eval.temporal import KU_METRICS, TR_METRICS, load, probes, question_scores, summary

GRAINS = ("session", "turn")
TURN = re.compile(r"^## Turn \d+ - \w+$", re.MULTILINE)
LIMIT = 10


def units(note: str, grain: str) -> list[str]:
    """A session note's documents at `grain`: its body whole, or one per turn (the text under each turn
    heading; the frontmatter and the title are left out)."""
    body = note.split("\n---\n", 1)[-1] if note.startswith("---\n") else note
    if grain == "session":
        return [body]
    parts = TURN.split(body)[1:]
    return [p for p in parts if p.strip()] or [body]


def ranked(
    q: dict[str, Any], folder: Path, dates: dict[tuple[str, str], str], as_of: str, grain: str, tokenizer: Any
) -> list[str]:
    """The question's sessions by their best BM25 score, best first (top LIMIT), as `<path>#<n>` anchors;
    sessions dated after `as_of` are left out."""
    from rank_bm25 import BM25Okapi

    docs: list[tuple[str, list[str]]] = []
    for path in sorted((folder / q["vault_dir"]).glob("*.md")):
        session = path.stem.rsplit("-", 1)[-1]
        when = dates.get((q["qid"], session))
        if when is not None and when > as_of:
            continue
        anchor = f"{q['vault_dir'].rstrip('/')}/{path.name}"
        docs += [
            (anchor, tokens) for tokens in tokenizer.tokenize_many(units(path.read_text("utf-8"), grain))
        ]
    if not docs:
        return []
    scores = BM25Okapi([tokens or [""] for _, tokens in docs]).get_scores(
        tokenizer.query_tokens(q["question"])
    )
    best: dict[str, float] = {}
    for (anchor, _), score in zip(docs, scores, strict=True):
        best[anchor] = max(best.get(anchor, float("-inf")), float(score))
    order = sorted(best, key=lambda a: (-best[a], a))[:LIMIT]
    return [f"{a}#1" for a in order]


def run(folder: Path, max_questions: int | None = None) -> dict[str, Any]:
    from hippo_core.index.tokenize import Tokenizer

    questions, dates = load(folder)
    if max_questions:
        questions = questions[:max_questions]
    tokenizer = Tokenizer(morphology=False)
    report: dict[str, Any] = {"dataset": folder.name, "questions": len(questions)}
    for grain in GRAINS:
        scored = []
        for q in questions:
            runs = {probe: ranked(q, folder, dates, as_of, grain, tokenizer) for probe, as_of in probes(q)}
            scored.append((q, question_scores(q, runs, dates)))
        report[grain] = summary(scored)
    return report


def render(report: dict[str, Any]) -> str:
    head = "| plain BM25 | " + " | ".join(f"KU {m}" for m in KU_METRICS) + " | "
    head += " | ".join(f"TR {m}" for m in TR_METRICS) + " |"
    lines = [
        f"LongMemEval-S temporal, plain BM25 ({report['dataset']}, {report['questions']} questions)",
        "",
        head,
        "|" + "---|" * (1 + len(KU_METRICS) + len(TR_METRICS)),
    ]
    for grain in GRAINS:
        ku = report[grain].get("knowledge-update", {})
        tr = report[grain].get("temporal-reasoning", {})
        cells = [ku.get(m) for m in KU_METRICS] + [tr.get(m) for m in TR_METRICS]
        text = " | ".join("–" if c is None else f"{c:.3f}" for c in cells)
        lines.append(f"| by {grain} | {text} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m eval.temporal_plain", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("folder", type=Path)
    parser.add_argument("--max-questions", type=int)
    args = parser.parse_args(argv)
    if not (args.folder / "questions.jsonl").is_file():
        print(f"eval.temporal_plain: no questions.jsonl in {args.folder}", file=sys.stderr)
        return 2
    report = run(args.folder, args.max_questions)
    print(render(report))
    if not args.max_questions:
        write_result("temporal_plain", report, argv, module="eval.temporal_plain")
    return 0


if __name__ == "__main__":
    sys.exit(main())
