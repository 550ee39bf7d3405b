"""Consolidation is a dry run by default: a waiting pair the LLM now places as one fact is counted as what
the dream would merge (metadata and digest) and nothing in the fact store changes; with HIPPO_DREAM_APPLY
the same answer is applied through the fact store's own decision path. A SUPERSEDE stays a proposal in
both modes. The LLM is the real anthropic client over a recorded response."""

from __future__ import annotations

from dagster import DagsterInstance, materialize

from hippo_assets.dream.definitions import JOB_ASSETS, run_config
from hippo_resources import build_resources
from hippo_settings import HippoSettings
from tests.compile.conftest import recorded_llm
from tests.facts.conftest import fact

NOTE = "20-wiki/people/minji.md#Minji"


def meta(result, asset: str) -> dict:  # noqa: ANN001
    for event in result.get_asset_materialization_events():
        if event.asset_key.to_user_string() == asset:
            return {k: v.value for k, v in event.materialization.metadata.items()}
    raise AssertionError(f"{asset} not materialized")


def test_dry_run_counts_apply_merges_and_supersede_always_waits(settings: HippoSettings) -> None:
    resources = build_resources(settings)
    store = resources.fact_store
    kw = {"subject": "minji", "anchor": NOTE}
    navy = fact(
        "navy blue",
        "2025-01-01",
        predicate="favourite_colour",
        cardinality="unknown",
        statement="Minji's favourite colour is navy blue",
        **kw,
    )
    dark = fact(
        "dark blue",
        "2026-01-01",
        predicate="favourite_colour",
        cardinality="unknown",
        statement="Minji's favourite colour is dark blue",
        **kw,
    )
    seoul = fact("Seoul", "2023-03-01", **kw)
    busan = fact("Busan", "2024-05-01", **kw)
    for f in (navy, dark, seoul, busan):
        store.add(f)  # no model at arrival: the colour pair waits as a proposal, as does the move
    assert len(store.proposals("pending")) == 2

    instance = DagsterInstance.ephemeral()
    llm, rec = recorded_llm("dream_fact_pair_same.json")
    dry = materialize(
        JOB_ASSETS,
        resources={**resources, "llm": llm},
        instance=instance,
        run_config=run_config(settings, True),
    )
    assert dry.success
    cons = meta(dry, "dream_consolidation")
    assert cons["apply"] is False and cons["would_apply"] == {"merge": 1}
    assert cons["counts"]["waiting_still_pending"] == 1 and cons["counts"]["pending_supersessions"] == 2
    assert len(rec.requests) == 1 and "PairAnswer" in str(rec.requests[0])
    assert store.get(dark.fact_id).status == "active"  # nothing applied
    (page,) = sorted((settings.vault / "50-ops" / "digest").glob("*.md"))
    assert "Dry run (HIPPO_DREAM_APPLY is off): the dream would apply 1 merge." in page.read_text()

    on = settings.model_copy(update={"dream_apply": True})
    applied = materialize(
        JOB_ASSETS, resources={**resources, "llm": llm}, instance=instance, run_config=run_config(on, True)
    )
    assert applied.success
    cons = meta(applied, "dream_consolidation")
    assert cons["apply"] is True and cons["counts"]["applied_merge"] == 1 and cons["would_apply"] == {}
    assert len(rec.requests) == 1  # the answer was kept: not asked twice
    assert store.get(dark.fact_id).status == "merged" and store.get(dark.fact_id).merged_into == navy.fact_id
    (waiting,) = store.proposals("pending")  # the move still waits for a person
    assert (waiting.older.fact_id, waiting.newer.fact_id) == (seoul.fact_id, busan.fact_id)
    by_dream = [r for r in store.ledger() if str(r["decided_by"]).startswith("dream:")]
    assert [(r["verdict"], r["decided_by"]) for r in by_dream] == [("MERGE", "dream:llm:claude-test")]
