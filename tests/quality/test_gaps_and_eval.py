"""The gap radar and the nightly evaluation, through real materializations."""

from __future__ import annotations

import json
from pathlib import Path

from dagster import DagsterInstance, materialize

from hippo_assets.quality import assets as quality
from hippo_assets.quality.golden import own_vault_items
from hippo_resources import Ledger, build_resources
from hippo_search.bundle import build_bundle
from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import open_engine
from hippo_settings import HippoSettings
from tests.conftest import run_graph

GOLDEN = Path(__file__).parents[1] / "fixtures" / "golden-tiny.jsonl"


def test_a_zero_hit_becomes_a_gap_then_is_answered_after_ingest(indexed: HippoSettings) -> None:
    engine = open_engine(indexed)
    for _ in range(3):
        response = engine.search(SearchRequest(query="QUOKKA migration checklist?"))
        assert response.status == "empty" and response.gap == "zero-hit"
    assert engine.search(SearchRequest(query="침실의 온도는 몇 도로 맞추나")).gap is None
    ledger = Ledger(path=str(indexed.ledger_path))
    [gap] = ledger.gaps()
    assert (gap["normalized"], gap["kind"], gap["times_asked"]) == (
        "quokka migration checklist",
        "zero-hit",
        3,
    )

    resources = build_resources(indexed)
    report = materialize(
        [quality.gap_probe, quality.gap_report], resources=resources, instance=DagsterInstance.ephemeral()
    )
    queue = (indexed.vault / "30-reviews/gap-queue.md").read_text(encoding="utf-8")
    assert "| ⚠ QUOKKA migration checklist? | zero-hit | 3 |" in queue  # asked three times: flagged
    assert report.asset_materializations_for_node("gap_report")[0].metadata["repeated"].value == 1

    (indexed.vault / "00-inbox/quokka.md").write_text(
        "---\ntitle: Quokka migration\n---\n\n# Quokka migration\n\n## Checklist\n\n"
        "The QUOKKA migration checklist: freeze writes, copy the tables, switch readers.\n",
        encoding="utf-8",
    )
    assert run_graph(indexed).success
    again = materialize(
        [quality.gap_probe, quality.gap_report], resources=resources, instance=DagsterInstance.ephemeral()
    )
    probe = again.asset_materializations_for_node("gap_probe")[0].metadata
    assert probe["answered"].value == 1
    assert ledger.gaps() == [] and ledger.gaps("answered")[0]["answered_by"].endswith("#Checklist")
    # the nightly evaluation of the person's vault asks the answered gap again, its section's note expected
    [item], sources = own_vault_items([], indexed.vault, ledger.feedback(), ledger.gaps("answered"))
    assert sources == {"golden": 0, "feedback": 0, "answered_gaps": 1} and item.category == "answered-gap"
    assert (item.query, item.expected) == (
        "QUOKKA migration checklist?",
        [ledger.gaps("answered")[0]["answered_by"].split("#")[0]],
    )
    queue = (indexed.vault / "30-reviews/gap-queue.md").read_text(encoding="utf-8")
    assert "## Open (0)" in queue and "QUOKKA migration checklist? → [[" in queue
    # unchanged gaps → byte-identical page, no new commit
    third = materialize([quality.gap_report], resources=resources, instance=DagsterInstance.ephemeral())
    assert third.asset_materializations_for_node("gap_report")[0].metadata["changed"].value is False


def test_evidence_bundle_scores_sufficiency_caches_by_generation_and_feeds_gaps(
    indexed: HippoSettings,
) -> None:
    engine = open_engine(indexed)
    good = build_bundle(engine, "침실 온도는 몇 도로 맞추나", k=3)
    assert good.sections[0].anchor == "20-wiki/health/sleep-hygiene.md#침실 환경"
    assert good.sufficiency >= 0.5 and good.reason.startswith("sufficient") and not good.cached
    assert build_bundle(engine, "침실 온도는   몇 도로 맞추나?", k=3).cached  # same normalized question
    weak = build_bundle(engine, "bicycle chain lubrication intervals", k=3)
    assert weak.sufficiency < 0.5 and weak.reason.startswith("weak")
    assert "bicycle chain lubrication intervals" in {
        g["normalized"] for g in Ledger(path=str(indexed.ledger_path)).gaps()
    }


def test_eval_report_regression_check_blocks_a_degraded_parameter_set(indexed: HippoSettings) -> None:
    resources = build_resources(indexed)
    instance = DagsterInstance.ephemeral()
    config = {"golden": str(GOLDEN), "vault": str(indexed.vault)}

    def evaluate(overrides: dict | None = None):  # noqa: ANN202
        cfg = {**config, "ranking_overrides": json.dumps(overrides) if overrides else ""}
        return materialize(
            [quality.eval_report, quality.eval_no_regression],
            resources=resources,
            instance=instance,
            run_config={"ops": {"eval_report": {"config": cfg}}},
            raise_on_error=False,
        )

    first = evaluate()
    [check] = first.get_asset_check_evaluations()
    assert check.passed and "first baseline" in check.metadata["baseline"].value
    meta = first.asset_materializations_for_node("eval_report")[0].metadata
    assert meta["hit@1"].value >= 0.75 and meta["plot"].value.startswith("![metrics](data:image/png;base64,")
    # the person's own vault, on its live index: the golden questions that apply, no feedback yet (said so)
    own = meta["own_vault"].value
    n_golden = len(GOLDEN.read_text(encoding="utf-8").splitlines())
    assert own["sources"] == {"golden": n_golden, "feedback": 0, "answered_gaps": 0}
    assert "no useful feedback" in own["note"] and own["overall"]["n"] == n_golden
    ledger = Ledger(path=str(indexed.ledger_path))
    ledger.record_feedback(
        "what temperature for the bedroom", "20-wiki/health/sleep-hygiene.md#침실 환경", True
    )
    ledger.record_feedback(
        "what temperature for the bedroom", "20-wiki/data/dagster-assets.md#Overview", False
    )
    ledger.record_feedback("a note that left", "20-wiki/gone.md#x", True)  # no longer indexed: left out

    # reciprocal-rank fusion with both lanes weighted to zero: every candidate ties, the order is arbitrary
    degraded = evaluate(
        {
            "fusion": "rrf",
            "lexical_weight": 0.0,
            "semantic_weight": 0.0,
            "governance": False,
            "freshness": False,
            "alias_boost": 1.0,
        }
    )
    [check] = degraded.get_asset_check_evaluations()
    assert not check.passed and check.metadata["drop_mrr@10"].value > 0.02
    assert ledger.latest_eval()["accepted"] == 0  # a regression never becomes the baseline
    own = degraded.asset_materializations_for_node("eval_report")[0].metadata["own_vault"].value
    assert own["sources"] == {"golden": n_golden, "feedback": 1, "answered_gaps": 0} and "note" not in own
    assert own["by_category"]["feedback"]["n"] == 1 and own["overall"]["n"] == n_golden + 1
