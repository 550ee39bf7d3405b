"""LoCoMo's temporal questions (category 2) with the time stage off and on, keyword lane only.

    python -m eval.temporal_locomo ../shared/eval-data/locomo-dev [--windows 1.01,0.9] [--json out.json]

The conversations are loaded and indexed as `eval.bench_locomo` does (a claude.ai export through the dlt
asset, `conversation_chunks`, then the index assets), without `embeddings`: nothing is embedded, so the
figures are the lexical mode's. Each temporal question is searched inside its conversation with the
product's time stages (4a named time, 4c newest first in the top `time_depth`) at each `time_window`; 1.01
turns both off (`time_ref_slots` 0 too), which is the ranking before time-aware search.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from eval.bench_locomo import evidence_covers, locomo_export, summarize
from eval.results import write_result

LIMIT = 10


def build_lexical(export: list[dict[str, Any]], work: Path) -> Any:
    """The LoCoMo export loaded and indexed by the product's assets, `embeddings` left out."""
    from dagster import DagsterInstance, materialize

    from hippo_assets.index.assets import chunks, lexical_index, vault_documents
    from hippo_assets.memory.assets import LOADERS, conversation_chunks
    from hippo_cli.vault_init import init_vault
    from hippo_resources import build_resources
    from hippo_settings import HippoSettings

    work.mkdir(parents=True, exist_ok=True)
    zip_path = work / "claude-locomo.zip"
    with zipfile.ZipFile(zip_path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("conversations.json", json.dumps(export, ensure_ascii=False))
    vault = work / "vault"
    init_vault(vault)
    settings = HippoSettings(vault=vault, home=work / "home")
    resources = build_resources(settings.model_copy(update={"exports": work / "none"}))
    config = {
        "ops": {
            "claude_ai_ingest": {"config": {"paths": [str(zip_path)]}},
            "conversation_chunks": {"config": {"segments": False}},
        }
    }
    instance = DagsterInstance.ephemeral()
    loaded = materialize(
        [LOADERS["claude_ai"], conversation_chunks], resources=resources, instance=instance, run_config=config
    )
    indexed = materialize([vault_documents, chunks, lexical_index], resources=resources, instance=instance)
    if not (loaded.success and indexed.success):
        raise RuntimeError("the LoCoMo build failed")
    return settings


def run(folder: Path, windows: list[float], category: int = 2) -> dict[str, Any]:
    from hippo_search.envelope import SearchRequest
    from hippo_search.pipeline import open_engine

    export, queries, qrels = locomo_export(folder)
    asked = {qid: q for qid, q in queries.items() if q.get("category") == category and qrels.get(qid)}
    with tempfile.TemporaryDirectory(prefix="locomo-time-") as tmp:
        settings = build_lexical(export, Path(tmp))
        engine = open_engine(settings, log=False)
        covers, _ = evidence_covers(settings)
        params = {
            w: engine.params.model_copy(update={"time_window": w, **({"time_ref_slots": 0} if w > 1 else {})})
            for w in windows
        }
        ranks: dict[float, list[int | None]] = {w: [] for w in windows}
        for qid, q in asked.items():
            request = SearchRequest(
                query=q["text"][:900],
                limit=LIMIT,
                lanes=["conversations"],
                path_prefix=f"conversations/{q['conv']}",
                mode="lexical",
            )
            for w in windows:
                hits = engine.search(request, params=params[w], log=False).results
                ranks[w].append(
                    next((i for i, h in enumerate(hits, 1) if covers.get(h.anchor, set()) & qrels[qid]), None)
                )
    return {
        "dataset": folder.name,
        "category": category,
        "questions": len(asked),
        "mode": "lexical",
        "time_depth": engine.params.time_depth,
        "time_ref": [engine.params.time_ref_boost, engine.params.time_ref_slots],
        "by_window": {str(w): summarize(r) for w, r in ranks.items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m eval.temporal_locomo", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("folder", type=Path)
    parser.add_argument("--windows", default="1.01", help="time_window values, comma-separated")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if not (args.folder / "corpus.jsonl").is_file():
        print(f"eval.temporal_locomo: no corpus.jsonl in {args.folder}", file=sys.stderr)
        return 2
    report = run(args.folder, [float(w) for w in args.windows.split(",")])
    print(f"LoCoMo temporal (category 2, {report['questions']} questions, lexical):")
    print("| time_window | Hit@1 | Hit@10 | MRR@10 |\n|---|---|---|---|")
    for w, m in report["by_window"].items():
        print(f"| {w} | {m['hit@1']:.3f} | {m['hit@10']:.3f} | {m['mrr@10']:.3f} |")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    write_result("temporal_locomo", report, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
