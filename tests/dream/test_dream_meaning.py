"""Layer 3 with the real anthropic client over recorded responses: a candidate pair (a shared alias) is
asked once, the answer is kept for that pair of texts, the finding is flagged the first night and proposed
the next (layer 4); a failing model is counted and the dream goes on."""

from __future__ import annotations

import subprocess

from dagster import DagsterInstance, materialize

from hippo_assets.dream.definitions import ASSETS, run_config
from hippo_resources import build_resources
from hippo_settings import HippoSettings
from tests.compile.conftest import recorded_llm

A = "---\ntitle: Caffeine cutoff\naliases: [coffee rule]\n---\n# Caffeine cutoff\n\nNo coffee after 15:00. [[HOME]]\n"
B = "---\ntitle: Afternoon coffee\naliases: [coffee rule]\n---\n# Afternoon coffee\n\nLast coffee at 3 pm. [[HOME]]\n"


def plant(settings: HippoSettings) -> None:
    v = settings.vault
    (v / "20-wiki/health/caffeine-cutoff.md").write_text(A)
    (v / "20-wiki/health/afternoon-coffee.md").write_text(B)
    subprocess.run(["git", "-C", str(v), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(v), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], check=True
    )


def dream(settings: HippoSettings, instance: DagsterInstance, llm, force: bool = False):  # noqa: ANN001, ANN201
    resources = {**build_resources(settings), "llm": llm}
    return materialize(ASSETS, resources=resources, instance=instance, run_config=run_config(settings, force))


def lint_meta(result) -> dict:  # noqa: ANN001
    for event in result.get_asset_materialization_events():
        if event.asset_key.to_user_string() == "dream_lint":
            return {k: v.value for k, v in event.materialization.metadata.items()}
    raise AssertionError("dream_lint not materialized")


def test_a_confirmed_near_duplicate_is_flagged_then_proposed(settings: HippoSettings) -> None:
    plant(settings)
    instance = DagsterInstance.ephemeral()
    llm, rec = recorded_llm("dream_same_concept.json")
    first = dream(settings, instance, llm)
    assert first.success
    meta = lint_meta(first)
    assert meta["layer3"]["asked"] == 1 and meta["findings_by_rule"]["near_duplicate"] == 1
    assert meta["layer4_flagged_tonight"] == 1 and meta["layer4_proposed"] == 0
    assert len(rec.requests) == 1
    sent = rec.requests[0]["messages"][0]["content"]
    assert "No coffee after 15:00" in str(sent) and "Last coffee at 3 pm" in str(sent)

    again = dream(settings, instance, llm, force=True)  # the same texts: no new question
    assert again.success and len(rec.requests) == 1
    meta = lint_meta(again)
    assert meta["layer3"]["cached"] == 1 and meta["layer4_proposed"] == 1
    proposals = (settings.vault / "30-reviews/dream/proposals.md").read_text()
    assert "- [ ] near_duplicate: [[20-wiki/health/afternoon-coffee]]" in proposals
    assert (
        settings.vault / "20-wiki/health/caffeine-cutoff.md"
    ).read_text() == A  # nothing of theirs changed


def test_a_failing_model_is_counted_and_the_dream_goes_on(settings: HippoSettings) -> None:
    plant(settings)
    llm, rec = recorded_llm()  # every call answers 500
    result = dream(settings, DagsterInstance.ephemeral(), llm)
    assert result.success
    meta = lint_meta(result)
    assert meta["layer3"]["failed"] == 1 and meta["findings_by_rule"]["llm_failed"] == 1
    assert rec.requests  # it did ask
