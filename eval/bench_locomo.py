"""LoCoMo evidence recall through the product's conversation path.

    python -m eval.bench_locomo ../shared/eval-data/locomo-dev [--max-queries N] [--json out.json]

Each LoCoMo `conv` becomes one conversation of a claude.ai-style export ZIP (each session a day, each
turn a message whose id is the corpus id), written to a temp folder and loaded exactly as a user's
export is: the `claude_ai_export` dlt asset, `conversation_chunks`, then `chunks`, `embeddings` and
`lexical_index`. Each question is searched inside its own conversation (path prefix
`conversations/<conv>`, lane `conversations`) in lexical, semantic and hybrid mode, once on an index
with segments and once without. A result counts as evidence when it is an evidence turn or a segment
that contains one, so segment rows are coarser hits: the report gives their mean size.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import tempfile
import time
import zipfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import polars as pl
from dagster import DagsterInstance, materialize

from eval.results import write_result

DEFAULT_CACHE = Path("~/.cache/hippocampus/bench-embed.sqlite")
ROWS = ("lexical", "semantic", "fused (no context)", "fused")


def _session_start(date: str) -> dt.datetime:
    """LoCoMo dates look like '1:56 pm on 8 May, 2023'."""
    return dt.datetime.strptime(date.replace(" on ", " ").upper(), "%I:%M %p %d %B, %Y").replace(
        tzinfo=dt.UTC
    )


def locomo_export(
    folder: Path, conversations: set[str] | None = None
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]], dict[str, set[str]]]:
    """(claude.ai-style conversations, queries by id, evidence ids by query id); only `conversations`
    (and their questions) when given."""
    turns = [
        json.loads(line)
        for line in (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
        if line
    ]
    if conversations is not None:
        turns = [t for t in turns if t["conv"] in conversations]
    by_conv: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for turn in turns:
        by_conv[turn["conv"]].append(turn)
    export = []
    for conv, rows in sorted(by_conv.items()):
        rows.sort(key=lambda r: (r["session"], int(r["dia_id"].rsplit(":", 1)[-1])))
        speakers = list(dict.fromkeys(r["speaker"] for r in rows))
        messages = []
        for n, row in enumerate(rows):
            # One minute per turn inside a session; sessions are days apart, so segments never span two.
            stamp = _session_start(row["date"]) + dt.timedelta(minutes=int(row["dia_id"].rsplit(":", 1)[-1]))
            messages.append(
                {
                    "uuid": row["_id"],
                    "text": row["text"],
                    "sender": "human" if row["speaker"] == speakers[0] else "assistant",
                    "created_at": stamp.isoformat(),
                    "index": n,
                }
            )
        export.append({"uuid": conv, "name": f"LoCoMo {conv}", "chat_messages": messages})
    queries = {}
    for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        if line:
            q = json.loads(line)
            if conversations is None or q["conv"] in conversations:
                queries[q["_id"]] = q
    qrels: dict[str, set[str]] = defaultdict(set)
    for line in (folder / "qrels.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, doc, score = line.split("\t")
        if int(score) > 0:
            qrels[qid].add(doc)
    return export, queries, dict(qrels)


def build(export: list[dict[str, Any]], work: Path, segments: bool, cache: Path) -> Any:
    """Load the export through the dlt asset and index it; returns the HippoSettings of that index."""
    from hippo_assets.definitions import ASSET_CHECKS, ASSETS
    from hippo_assets.memory.assets import LOADERS, conversation_chunks
    from hippo_cli.vault_init import init_vault
    from hippo_resources import build_resources
    from hippo_settings import HippoSettings

    work.mkdir(parents=True, exist_ok=True)
    zip_path = work / "claude-locomo.zip"
    if not zip_path.exists():
        with zipfile.ZipFile(zip_path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("conversations.json", json.dumps(export, ensure_ascii=False))
    home = work / ("home-segments" if segments else "home-messages")
    vault = work / "vault"
    if not vault.exists():
        init_vault(vault)
    settings = HippoSettings(vault=vault, home=home, embed_cache_path=cache.expanduser())
    resources = build_resources(settings.model_copy(update={"exports": work / "none"}))
    config = {
        "ops": {
            "claude_ai_ingest": {"config": {"paths": [str(zip_path)]}},
            "conversation_chunks": {"config": {"segments": segments}},
        }
    }
    instance = DagsterInstance.ephemeral()
    loaded = materialize(
        [LOADERS["claude_ai"], conversation_chunks], resources=resources, instance=instance, run_config=config
    )
    indexed = materialize([*ASSETS, *ASSET_CHECKS], resources=resources, instance=instance)
    if not (loaded.success and indexed.success):
        raise RuntimeError("the LoCoMo build failed")
    return settings


def evidence_covers(settings: Any) -> tuple[dict[str, set[str]], list[int]]:
    """Which LoCoMo turn ids each conversation anchor stands for (a message row: its own; a segment: every
    turn in it), and the size of each indexed segment."""
    chunks = pl.read_parquet(settings.chunks_dir / "chunks.parquet").filter(pl.col("lane") == "conversations")
    msgs = pl.read_parquet(settings.chunks_dir / "messages.parquet")
    ids_at = {(r["conversation_id"], r["position"]): r["message_id"] for r in msgs.iter_rows(named=True)}
    segs = (
        pl.read_parquet(settings.chunks_dir / "segments.parquet")
        if (settings.chunks_dir / "segments.parquet").exists()
        else None
    )
    covers: dict[str, set[str]] = {}
    for row in chunks.select("anchor", "conversation_id", "position").unique().iter_rows(named=True):
        if "#m" in row["anchor"]:
            covers[row["anchor"]] = {ids_at[(row["conversation_id"], row["position"])]}
    seg_sizes = []
    if segs is not None and segs.height:
        anchors = set(chunks["anchor"].to_list())
        for seg in segs.iter_rows(named=True):
            anchor = f"conversations/{seg['conversation_id']}#s{seg['segment']}"
            covers[anchor] = {
                ids_at[(seg["conversation_id"], p)]
                for p in range(seg["first_position"], seg["last_position"] + 1)
            }
            if anchor in anchors:
                seg_sizes.append(len(covers[anchor]))
    return covers, seg_sizes


def evidence_rank(
    engine: Any,
    query: dict[str, Any],
    relevant: set[str],
    covers: dict[str, set[str]],
    mode: str,
    params: Any = None,
    limit: int = 10,
) -> int | None:
    """The rank of the first result holding an evidence turn, searching inside the question's conversation."""
    from hippo_search.envelope import SearchRequest

    response = engine.search(
        SearchRequest(query=query["text"][:900], limit=limit, lanes=["conversations"], path_prefix=f"conversations/{query['conv']}", mode=mode),
        params=params,
        log=False,
    )  # fmt: skip
    return next(
        (i for i, h in enumerate(response.results, 1) if covers.get(h.anchor, set()) & relevant), None
    )


def lane_params(engine: Any) -> Any:
    """The engine's parameters with conversation context off: what the lanes and the old fused list ran with."""
    return engine.params.without_conversation_context()


def summarize(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {
        "hit@1": round(sum(r == 1 for r in ranks) / n, 4),
        "hit@10": round(sum(r is not None and r <= 10 for r in ranks) / n, 4),
        "mrr@10": round(sum(1.0 / r for r in ranks if r) / n, 4),
    }


def evaluate(
    settings: Any, queries: dict[str, dict[str, Any]], qrels: dict[str, set[str]], limit: int = 10
) -> dict[str, Any]:
    """Each lane alone and the old fused list run with conversation context off; `fused` runs with the
    product's defaults (context on when its weights are)."""
    from hippo_search.pipeline import open_engine

    engine = open_engine(settings, log=False)  # a benchmark is not a user's query log
    covers, seg_sizes = evidence_covers(settings)
    out: dict[str, Any] = {
        "chunks": pl.read_parquet(settings.chunks_dir / "chunks.parquet", columns=["lane"])
        .filter(pl.col("lane") == "conversations")
        .height,
        "mean_segment_messages": round(statistics.mean(seg_sizes), 2) if seg_sizes else None,
    }
    off = lane_params(engine)
    for lane, (mode, params) in {
        "lexical": ("lexical", off),
        "semantic": ("semantic", off),
        "fused (no context)": ("hybrid", off),
        "fused": ("hybrid", None),
    }.items():
        ranks, latencies = [], []
        for qid, q in queries.items():
            started = time.perf_counter()
            ranks.append(evidence_rank(engine, q, qrels[qid], covers, mode, params, limit))
            latencies.append(time.perf_counter() - started)
        n = len(queries)
        latencies.sort()
        out[lane] = {
            **summarize(ranks),
            "p50_ms": round(1000 * latencies[n // 2], 1),
            "p95_ms": round(1000 * latencies[int(n * 0.95)], 1),
        }
    return out


def run(
    folder: Path,
    max_queries: int | None = None,
    cache: Path = DEFAULT_CACHE,
    work: Path | None = None,
    conversations: set[str] | None = None,
    segment_modes: tuple[bool, ...] = (False, True),
) -> dict[str, Any]:
    export, queries, qrels = locomo_export(folder, conversations)
    evaluable = {qid: q for qid, q in queries.items() if qrels.get(qid)}
    if max_queries:
        evaluable = dict(list(evaluable.items())[:max_queries])
    report: dict[str, Any] = {
        "dataset": folder.name + (f" ({', '.join(sorted(conversations))})" if conversations else ""),
        "conversations": len(export),
        "messages": sum(len(c["chat_messages"]) for c in export),
        "queries": len(evaluable),
    }
    with tempfile.TemporaryDirectory(prefix="locomo-") as tmp:
        base = work or Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        for segments in segment_modes:
            started = time.monotonic()
            settings = build(export, base, segments, cache)
            build_s = round(time.monotonic() - started, 1)
            result = evaluate(settings, evaluable, qrels)
            result["build_seconds"] = build_s
            report["with_segments" if segments else "messages_only"] = result
    return report


def render(report: dict[str, Any]) -> str:
    lines = [
        f"LoCoMo evidence recall ({report['dataset']}: {report['conversations']} conversations, "
        f"{report['messages']} messages, {report['queries']} questions; search inside each question's conversation)",
        "",
        "| index | lane | Hit@1 | Hit@10 | MRR@10 | p50 ms | p95 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, label in (("messages_only", "messages"), ("with_segments", "messages + segments")):
        if key not in report:
            continue
        for lane in ROWS:
            m = report[key][lane]
            lines.append(
                f"| {label} | {lane} | {m['hit@1']:.3f} | {m['hit@10']:.3f} | {m['mrr@10']:.3f} | {m['p50_ms']} | {m['p95_ms']} |"
            )
    seg = report.get("with_segments")
    if seg is None:
        return "\n".join([*lines, "", f"Build: {report['messages_only']['build_seconds']} s (messages)."])
    lines += [
        "",
        f"Segments hold {seg['mean_segment_messages']} messages on average; a segment hit counts when it contains an evidence turn.",
    ]
    lines += [
        f"Build: {report['messages_only']['build_seconds']} s (messages), {seg['build_seconds']} s (with segments)."
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.bench_locomo", description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--max-queries", type=int)
    parser.add_argument(
        "--cache", type=Path, default=DEFAULT_CACHE, help="embedding cache (re-runs embed nothing)"
    )
    parser.add_argument("--json", type=Path, help="also write the report as JSON")
    parser.add_argument("--conversations", help="only these conversations (a,b) and their questions")
    parser.add_argument("--messages-only", action="store_true", help="skip the index with segments")
    args = parser.parse_args(argv)
    if not (args.folder / "corpus.jsonl").is_file():
        print(f"bench_locomo: no corpus.jsonl in {args.folder}", file=sys.stderr)
        return 2
    convs = set(args.conversations.split(",")) if args.conversations else None
    modes = (False,) if args.messages_only else (False, True)
    report = run(args.folder, args.max_queries, args.cache, conversations=convs, segment_modes=modes)
    print(render(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    figures = {
        label: {
            lane: {k: report[key][lane][k] for k in ("hit@1", "hit@10", "mrr@10", "p50_ms")} for lane in ROWS
        }
        for key, label in (("messages_only", "messages"), ("with_segments", "messages + segments"))
        if key in report
    }
    write_result("bench_locomo", figures | {"questions": report["queries"]}, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
