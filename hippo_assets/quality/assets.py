"""Group `quality`: the gap radar (gap_report, gap_probe) and the nightly golden-set evaluation.

Search quality is measured by the `eval` harness, which runs in a subprocess: assets never import
the librarian, and an evaluation never touches the user's stores (it builds a throwaway copy).
"""

# No `from __future__ import annotations` here: Dagster reads the Config and resource
# annotations of asset functions at definition time and cannot resolve them from strings.

import base64
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dagster import (
    AssetCheckResult,
    AssetExecutionContext,
    Config,
    Failure,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)
from pydantic import Field

from hippo_assets.index.assets import lexical_index
from hippo_core.gap_queue import REPEATED, render_gap_queue
from hippo_core.vault_layout import GAP_QUEUE
from hippo_resources import Embedder, Ledger, LexicalStore, Vault

REGRESSION_POINTS = 0.02


def _eval_env(vault: Vault, lexical_store: LexicalStore, embedder: Embedder) -> dict[str, str]:
    env = {**os.environ, "HIPPO_VAULT": vault.root, "HIPPO_HOME": str(Path(lexical_store.root).parent)}
    if embedder.cache_path:
        env["HIPPO_EMBED_CACHE"] = embedder.cache_path
    return env


def _eval(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "eval", *args], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise Failure(f"`python -m eval {args[0]}` failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return proc


@asset(
    group_name="quality",
    kinds={"python", "sqlite"},
    deps=[lexical_index],
    description="Replays the open knowledge gaps against the freshly built index and marks the ones now answered.",
)
def gap_probe(vault: Vault, lexical_store: LexicalStore, embedder: Embedder) -> MaterializeResult:
    if lexical_store.manifest() is None:
        return MaterializeResult(metadata={"probed": 0, "answered": 0, "note": "nothing indexed yet"})
    result = json.loads(
        _eval(["probe"], _eval_env(vault, lexical_store, embedder)).stdout.strip().splitlines()[-1]
    )
    return MaterializeResult(
        metadata={
            "probed": result["probed"],
            "answered": len(result["answered"]),
            "answered_gaps": MetadataValue.json(result["answered"]),
        }
    )


@asset(
    group_name="quality",
    kinds={"markdown", "git"},
    deps=[gap_probe],
    description="Writes 30-reviews/gap-queue.md: zero-hit and weak-evidence questions with times asked, first/last "
    f"seen and the nearest partial hits; misses asked {REPEATED}+ times are flagged. Byte-identical when unchanged.",
)
def gap_report(vault: Vault, ledger: Ledger) -> MaterializeResult:
    gaps = ledger.gaps(status=None)
    text = render_gap_queue(gaps)
    changed = not vault.exists(GAP_QUEUE) or vault.read_bytes(GAP_QUEUE) != text.encode("utf-8")
    if changed:
        vault.write_text(GAP_QUEUE, text)
        vault.commit_at_run_end(
            "gap report: 30-reviews/gap-queue.md updated", [GAP_QUEUE]
        )  # the run's one commit
    open_gaps = [g for g in gaps if g["status"] == "open"]
    return MaterializeResult(
        metadata={
            "open": len(open_gaps),
            "repeated": sum(g["times_asked"] >= REPEATED for g in open_gaps),
            "answered": len(gaps) - len(open_gaps),
            "changed": changed,
        }
    )


class EvalReportConfig(Config):
    golden: str = Field(default="", description="golden set (default: eval/golden.jsonl)")
    vault: str = Field(
        default="", description="vault the golden set is written for (default: examples/vault)"
    )
    ranking_overrides: str = Field(
        default="", description='RankingParams overrides as JSON, e.g. {"rrf_k": 60}'
    )


def _plot(report: dict) -> str:
    """A bar chart of Hit@1 and MRR@10 per category, as a PNG data URI for the asset's metadata."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = ["overall", *report["by_category"]]
    rows = [report["overall"], *report["by_category"].values()]
    fig, ax = plt.subplots(figsize=(7, 3))
    xs = range(len(names))
    ax.bar([x - 0.2 for x in xs], [r["hit@1"] for r in rows], width=0.4, label="Hit@1")
    ax.bar([x + 0.2 for x in xs], [r["mrr@10"] for r in rows], width=0.4, label="MRR@10")
    ax.set_xticks(list(xs), names, rotation=20)
    ax.set_ylim(0, 1)
    ax.legend()
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


@asset(
    group_name="quality",
    kinds={"python", "sqlite"},
    description="Runs the golden set on a throwaway copy of the stores and stores the metrics with the run "
    "signature in the ledger; the blocking check fails on a regression against the last accepted baseline.",
)
def eval_report(
    context: AssetExecutionContext,
    config: EvalReportConfig,
    vault: Vault,
    lexical_store: LexicalStore,
    embedder: Embedder,
    ledger: Ledger,
) -> MaterializeResult:
    args = ["run"]
    if config.golden:
        args += ["--golden", config.golden]
    if config.vault:
        args += ["--vault", config.vault]
    if config.ranking_overrides:
        args += ["--params", config.ranking_overrides]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        started = time.monotonic()
        _eval([*args, "--json", str(out)], _eval_env(vault, lexical_store, embedder))
        report = json.loads(out.read_text(encoding="utf-8"))
    metrics = {
        "overall": report["overall"],
        "by_category": report["by_category"],
        "by_lang": report["by_lang"],
    }
    run_id = ledger.record_eval(
        report["dataset_fingerprint"],
        json.dumps(report["run_signature"], sort_keys=True),
        metrics,
        accepted=False,
    )
    overall = report["overall"]
    context.log.info(f"golden set: Hit@1 {overall['hit@1']:.3f}, MRR@10 {overall['mrr@10']:.3f}")
    return MaterializeResult(
        metadata={
            "eval_run_id": run_id,
            "dataset_fingerprint": report["dataset_fingerprint"],
            "run_signature": MetadataValue.json(report["run_signature"]),
            **{k: float(overall[k]) for k in ("hit@1", "hit@3", "hit@10", "mrr@10", "ndcg@10", "section@1")},
            "by_category": MetadataValue.json(report["by_category"]),
            "plot": MetadataValue.md(f"![metrics](data:image/png;base64,{_plot(report)})"),
            "seconds": round(time.monotonic() - started, 1),
        }
    )


@asset_check(
    asset=eval_report,
    blocking=True,
    description=f"Fails when Hit@1 or MRR@10 drops more than {REGRESSION_POINTS * 100:.0f} points below the last "
    "accepted baseline of the same dataset; a passing run becomes the new baseline.",
)
def eval_no_regression(ledger: Ledger) -> AssetCheckResult:
    latest = ledger.latest_eval()
    if latest is None:
        return AssetCheckResult(passed=False, metadata={"reason": "no evaluation run recorded"})
    baseline = ledger.baseline_before(latest["dataset_fingerprint"], latest["id"])
    now = latest["metrics"]["overall"]
    if baseline is None:
        ledger.accept_eval(latest["id"])
        return AssetCheckResult(
            passed=True, metadata={"baseline": "none yet: this run is the first baseline"}
        )
    before = baseline["metrics"]["overall"]
    drops = {k: round(before[k] - now[k], 4) for k in ("hit@1", "mrr@10")}
    regressed = {k: d for k, d in drops.items() if d > REGRESSION_POINTS}
    if not regressed:
        ledger.accept_eval(latest["id"])
    return AssetCheckResult(
        passed=not regressed,
        metadata={
            "baseline_run": baseline["id"],
            "drop_hit@1": drops["hit@1"],
            "drop_mrr@10": drops["mrr@10"],
            "regressed": MetadataValue.json(regressed),
        },
    )
