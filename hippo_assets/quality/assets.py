"""Group `quality`: the gap radar (gap_report, gap_probe) and the nightly golden-set evaluation.

Both run the search library in this process (`hippo_search`): `gap_probe` replays the open gaps through
the pipeline over the live stores; `eval_report` runs the golden set (`hippo_assets.quality.golden.run_golden`) on a
throwaway copy of the vault materialized into a temporary folder, so the user's stores are never touched.
"""

# No `from __future__ import annotations` here: Dagster reads the Config and resource
# annotations of asset functions at definition time and cannot resolve them from strings.

import base64
import io
import json
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

from hippo_assets.index.assets import embeddings, lexical_index
from hippo_assets.quality.golden import (
    DEFAULT_GOLDEN,
    DEFAULT_VAULT,
    GoldenError,
    evaluate,
    load_golden,
    own_vault_items,
    run_golden,
)
from hippo_core.vault.vault_layout import GAP_QUEUE
from hippo_core.wiki.gap_queue import REPEATED, render_gap_queue
from hippo_resources import ChunkStore, Embedder, Ledger, LexicalStore, Vault, VectorStore
from hippo_search.gaps import replay_gaps
from hippo_search.pipeline import engine_from_resources

REGRESSION_POINTS = 0.02


@asset(
    group_name="quality",
    kinds={"python", "sqlite"},
    deps=[lexical_index],
    description="Replays the open knowledge gaps against the freshly built index and marks the ones now answered.",
)
def gap_probe(
    vault: Vault, lexical_store: LexicalStore, vector_store: VectorStore, embedder: Embedder, ledger: Ledger
) -> MaterializeResult:
    if lexical_store.manifest() is None:
        return MaterializeResult(metadata={"probed": 0, "answered": 0, "note": "nothing indexed yet"})
    result = replay_gaps(engine_from_resources(lexical_store, vector_store, embedder, vault, ledger))
    return MaterializeResult(
        metadata={
            "probed": result.probed,
            "answered": len(result.answered),
            "answered_gaps": MetadataValue.json([a.model_dump() for a in result.answered]),
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
        vault.commit_at_run_end("gap report", [GAP_QUEUE])
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
    golden: str = Field(default="", description="golden set (default: the packaged golden.jsonl)")
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


def _own_vault(
    golden: Path,
    vault: Vault,
    lexical_store: LexicalStore,
    vector_store: VectorStore,
    chunk_store: ChunkStore,
    embedder: Embedder,
    ledger: Ledger,
) -> dict:
    """The person's own vault measured on its live index: the golden questions that apply to it, the
    questions judged useful in feedback and the answered gaps. Metadata only (the regression baseline is
    the golden set's); `note` says why there is nothing or little to measure."""
    if lexical_store.manifest() is None:
        return {"note": "nothing indexed yet"}
    items, sources = own_vault_items(
        load_golden(golden), vault.path, ledger.feedback(), ledger.gaps(status="answered")
    )
    out: dict = {"sources": sources}
    if not sources["feedback"] and not sources["answered_gaps"]:
        out["note"] = "no useful feedback and no answered gaps recorded yet: only golden questions that apply"
    if not items:
        out["note"] = "no golden question applies to this vault, and no useful feedback or answered gap yet"
        return out
    engine = engine_from_resources(lexical_store, vector_store, embedder, vault, chunk_store=chunk_store)
    report = evaluate(engine, items)
    out.update(overall=report["overall"], by_category=report["by_category"])
    return out


@asset(
    group_name="quality",
    kinds={"python", "sqlite"},
    deps=[lexical_index, embeddings],
    description="Runs the golden set on a throwaway copy of the stores and stores the metrics with the run "
    "signature in the ledger; the blocking check fails on a regression against the last accepted baseline. "
    "Also measures the person's own vault on its live index (after the index): the golden questions that "
    "apply, plus questions from useful feedback and answered gaps (metadata `own_vault`).",
)
def eval_report(
    context: AssetExecutionContext,
    config: EvalReportConfig,
    embedder: Embedder,
    ledger: Ledger,
    vault: Vault,
    lexical_store: LexicalStore,
    vector_store: VectorStore,
    chunk_store: ChunkStore,
) -> MaterializeResult:
    started = time.monotonic()
    try:
        overrides = json.loads(config.ranking_overrides) if config.ranking_overrides else None
    except json.JSONDecodeError as exc:
        raise Failure(f"ranking_overrides is not JSON: {exc}") from None
    golden = Path(config.golden) if config.golden else DEFAULT_GOLDEN
    try:
        report = run_golden(
            golden,
            Path(config.vault) if config.vault else DEFAULT_VAULT,
            embedder,
            overrides,
        )
    except GoldenError as exc:
        raise Failure(
            f"the golden set does not validate against its vault, nothing measured:\n{exc}"
        ) from None
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
    own = _own_vault(golden, vault, lexical_store, vector_store, chunk_store, embedder, ledger)
    return MaterializeResult(
        metadata={
            "eval_run_id": run_id,
            "dataset_fingerprint": report["dataset_fingerprint"],
            "run_signature": MetadataValue.json(report["run_signature"]),
            **{k: float(overall[k]) for k in ("hit@1", "hit@3", "hit@10", "mrr@10", "ndcg@10", "section@1")},
            "by_category": MetadataValue.json(report["by_category"]),
            "plot": MetadataValue.md(f"![metrics](data:image/png;base64,{_plot(report)})"),
            "own_vault": MetadataValue.json(own),
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
