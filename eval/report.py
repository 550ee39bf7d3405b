"""Every public set in one command: a Markdown report with PNG plots and the issue's quality targets.

    python -m eval.report [DATA_DIR] [--out DIR] [--max-queries N] [--sets a,b,...]

DATA_DIR defaults to ../shared/eval-data (read in place, never copied). Sets whose documents carry a
`conv` field (LoCoMo) are searched inside each question's own conversation. Each set's full table is
`<set>.md`; `report.md` holds the summary, the target checks and the plots.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

from eval.beir import DEFAULT_DATA, BeirError, beir_folders, load_beir
from eval.bench import DEFAULT_CACHE, BenchOptions, render_markdown, run_benchmark
from eval.bench_render import lane_tables
from eval.results import write_result
from hippo_core.ranking.ranking import RankingParams

LANES = ("lexical", "semantic", "fused")
# Measured beside the shipped fusion in every run, so the report shows what the choice of fusion buys.
COMPARISON = {"rrf": RankingParams(fusion="rrf")}


def check_targets(reports: dict[str, dict[str, Any]]) -> list[tuple[str, bool, str]]:
    """The issue's targets, each measured in this run: (target, met, the numbers behind it)."""
    out: list[tuple[str, bool, str]] = []
    strictly = 0
    for name, r in reports.items():
        m = r["metrics"]
        for metric in ("hit@1", "ndcg@10"):
            best = max(m["lexical"][metric], m["semantic"][metric])
            ok = m["fused"][metric] >= best
            out.append(
                (
                    f"{name}: fused {metric} ≥ better single lane",
                    ok,
                    f"{m['fused'][metric]:.3f} vs {best:.3f}",
                )
            )
        if all(m["fused"][k] > max(m["lexical"][k], m["semantic"][k]) for k in ("hit@1", "ndcg@10")):
            strictly += 1
    out.append(("fused strictly better on ≥ 4 sets (Hit@1 and nDCG@10)", strictly >= 4, f"{strictly} set(s)"))
    for name, metric, goal in (("locomo-dev", "hit@10", 0.80), ("ko-welfare", "hit@1", 0.82)):
        if name in reports:
            value = reports[name]["metrics"]["fused"][metric]
            out.append((f"{name}: fused {metric} ≥ {goal}", value >= goal, f"{value:.3f}"))
    return out


def plot(reports: dict[str, dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(reports)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for ax, (metric, title) in zip(
        axes, (("hit@1", "Hit@1"), ("ndcg@10", "nDCG@10"), ("p50_ms", "p50 latency (ms)")), strict=True
    ):
        for i, lane in enumerate(LANES):
            if metric == "p50_ms":
                values = [reports[n]["latency"][lane]["p50_ms"] or 0.0 for n in names]
            else:
                values = [reports[n]["metrics"][lane][metric] for n in names]
            ax.bar([x + (i - 1) * 0.27 for x in range(len(names))], values, width=0.27, label=lane)
        ax.set_xticks(range(len(names)), names, rotation=20)
        ax.set_title(title)
        if metric == "p50_ms":
            ax.set_yscale("log")
        else:
            ax.set_ylim(0, 1)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(LANES))
    fig.tight_layout(rect=(0, 0, 1, 0.92))
    fig.savefig(path, dpi=90)
    plt.close(fig)


def render_summary(reports: dict[str, dict[str, Any]], targets: list[tuple[str, bool, str]]) -> str:
    lines = [
        f"# Retrieval benchmark — {dt.date.today().isoformat()}",
        "",
        "![lanes](lanes.png)",
        "",
        "| set | mode | queries | lane | Hit@1 | Hit@10 | MRR@10 | nDCG@10 | p50 ms | p95 ms |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in reports.items():
        for lane in LANES:
            m, lat = r["metrics"][lane], r["latency"][lane]
            lines.append(
                f"| {name} | {r['mode']} | {r['queries']['evaluated']} | {lane} | {m['hit@1']:.3f} | {m['hit@10']:.3f} | "
                f"{m['mrr@10']:.3f} | {m['ndcg@10']:.3f} | {lat['p50_ms'] or 0:.1f} | {lat['p95_ms'] or 0:.1f} |"
            )
    lines += [
        "",
        "## Fusion: shipped (convex) vs reciprocal-rank fusion, same run",
        "",
        "| set | convex Hit@1 | RRF Hit@1 | convex nDCG@10 | RRF nDCG@10 |",
        "|---|---|---|---|---|",
    ]
    for name, r in reports.items():
        f, v = r["metrics"]["fused"], r["metrics"].get("variant:rrf")
        if v:
            lines.append(
                f"| {name} | {f['hit@1']:.3f} | {v['hit@1']:.3f} | {f['ndcg@10']:.3f} | {v['ndcg@10']:.3f} |"
            )
    lines += ["", "## Targets", "", "| target | met | measured |", "|---|---|---|"]
    lines += [f"| {t} | {'yes' if ok else '**no**'} | {detail} |" for t, ok, detail in targets]
    lines += ["", "Per-set details (build times, fusion diagnostics, rank_bm25 ratio): `<set>.md`.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m eval.report",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=Path("eval/reports") / dt.date.today().isoformat())
    parser.add_argument("--max-queries", type=int, default=None)
    parser.add_argument(
        "--sets", help="comma-separated set names (default: every folder with a corpus.jsonl)"
    )
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args(argv)
    folders = beir_folders(args.data, args.sets)
    if not folders:
        print(f"error: no BEIR folder under {args.data}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    reports: dict[str, dict[str, Any]] = {}
    for folder in folders:
        try:
            beir = load_beir(folder)
        except BeirError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        per_conv = any((d.extra or {}).get("conv") for d in beir.docs[:50])
        options = BenchOptions(
            max_queries=args.max_queries,
            per_conversation=per_conv,
            cache=args.cache,
            variants=dict(COMPARISON),
        )
        print(
            f"== {folder.name} ({'per conversation' if per_conv else 'whole corpus'})",
            file=sys.stderr,
            flush=True,
        )
        result = run_benchmark(folder, options, lambda m: print(m, file=sys.stderr, flush=True))
        reports[folder.name] = result.report
        (args.out / f"{folder.name}.md").write_text(render_markdown(result.report), encoding="utf-8")
    targets = check_targets(reports)
    plot(reports, args.out / "lanes.png")
    (args.out / "report.md").write_text(render_summary(reports, targets), encoding="utf-8")
    (args.out / "report.json").write_text(json.dumps(reports, ensure_ascii=False, indent=2), encoding="utf-8")
    figures: dict[str, Any] = dict(lane_tables(list(reports.values())))
    figures["targets"] = {target: {"met": met, "figures": numbers} for target, met, numbers in targets}
    write_result("report", figures, argv)
    print((args.out / "report.md").read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
