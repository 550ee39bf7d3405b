"""Layer 3 and the merge cards, with the real anthropic client over recorded responses: a candidate pair (a
shared alias) is asked once, the answer is kept for that pair of texts, the finding is flagged the first
night and proposed the next (layer 4), when the dream drafts a merge card in staging that the compile
domain's gates judge and list for approval; only a person's tick promotes it, and the two notes are never
changed. Without a key the pair is listed as a candidate and no card is drafted. A failing model is
counted and the dream goes on."""

from __future__ import annotations

import subprocess
from pathlib import Path

from dagster import DagsterInstance, materialize

from hippo_assets.dream.definitions import JOB_ASSETS, run_config
from hippo_core.dream.outline import outline
from hippo_core.vault import frontmatter
from hippo_core.vault.links import LinkResolver
from hippo_resources import build_resources
from hippo_settings import HippoSettings
from tests.compile.conftest import promote, recorded_llm

A = (
    "---\ntitle: Caffeine cutoff\naliases: [coffee rule]\nsources: [10-sources/coffee-study.md]\n---\n"
    "# Caffeine cutoff\n\nNo coffee after 15:00. [[HOME]]\n"
)
B = (
    "---\ntitle: Afternoon coffee\naliases: [coffee rule]\nsources: [10-sources/coffee-study.md]\n---\n"
    "# Afternoon coffee\n\nLast coffee at 3 pm. [[HOME]]\n"
)
SOURCE = "---\ntitle: Coffee study\nstatus: raw-source\ntrust: source\n---\n# Coffee study\n\nCaffeine late in the day delays sleep.\n"
PAGE_A, PAGE_B = "20-wiki/health/caffeine-cutoff.md", "20-wiki/health/afternoon-coffee.md"


def git(vault: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(vault), *args], check=True, capture_output=True)


def plant(settings: HippoSettings) -> None:
    v = settings.vault
    (v / PAGE_A).write_text(A)
    (v / PAGE_B).write_text(B)
    (v / "10-sources/coffee-study.md").write_text(SOURCE)
    git(v, "add", "-A")
    git(v, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")


def dream(settings: HippoSettings, instance: DagsterInstance, llm, force: bool = False):  # noqa: ANN001, ANN201
    resources = {**build_resources(settings), "llm": llm}
    return materialize(
        JOB_ASSETS, resources=resources, instance=instance, run_config=run_config(settings, force)
    )


def meta(result, asset: str) -> dict:  # noqa: ANN001
    for event in result.get_asset_materialization_events():
        if event.asset_key.to_user_string() == asset:
            return {k: v.value for k, v in event.materialization.metadata.items()}
    raise AssertionError(f"{asset} not materialized")


def digest(vault: Path) -> str:
    (page,) = sorted((vault / "50-ops" / "digest").glob("*.md"))
    return page.read_text()


def test_a_confirmed_near_duplicate_becomes_a_merge_card_promoted_only_after_a_tick(
    settings: HippoSettings,
) -> None:
    plant(settings)
    v = settings.vault
    instance = DagsterInstance.ephemeral()
    llm, rec = recorded_llm("dream_same_concept.json", "dream_merge_card.json", "judge_accept.json")
    first = dream(settings, instance, llm)
    assert first.success
    lint = meta(first, "dream_lint")
    assert lint["layer3"]["asked"] == 1 and lint["findings_by_rule"]["near_duplicate"] == 1
    assert lint["layer4_flagged_tonight"] == 1 and lint["layer4_proposed"] == 0
    assert meta(first, "dream_merges")["cards_drafted"] == 0  # flagged tonight, re-checked next night
    assert len(rec.requests) == 1
    sent = rec.requests[0]["messages"][0]["content"]
    assert "No coffee after 15:00" in str(sent) and "Last coffee at 3 pm" in str(sent)

    again = dream(settings, instance, llm, force=True)  # the same texts: no new question, a merge card
    assert again.success
    assert (
        meta(again, "dream_lint")["layer3"]["cached"] == 1
        and meta(again, "dream_lint")["layer4_proposed"] == 1
    )
    merges = meta(again, "dream_merges")
    assert merges["cards_drafted"] == 1
    (card,) = merges["card_paths"]
    assert card == "30-reviews/staging/afternoon-caffeine-cutoff.md"
    assert len(rec.requests) == 3  # the merge draft, then the compile domain's judge
    assert "MergedConcept" in str(rec.requests[1]) and "JudgeVerdict" in str(rec.requests[2])
    fields = frontmatter.parse_mapping(frontmatter.split((v / card).read_text())[0])
    assert fields["status"] == "draft" and fields["merged_from"] == [PAGE_B, PAGE_A]
    assert fields["sources"] == ["10-sources/coffee-study.md"]
    gates = meta(again, "gate_verdicts")
    assert gates["judged"] == 1 and gates["passed"] == 1, gates["failures"]
    assert meta(again, "approval_requests")["requested"] == 1
    (approvals,) = sorted((v / "30-reviews/approvals").glob("*.md"))
    assert "[[30-reviews/staging/afternoon-caffeine-cutoff|" in approvals.read_text()
    text = digest(v)
    assert "merge card [[30-reviews/staging/afternoon-caffeine-cutoff]]" in text
    assert (
        f"passed the gates: waiting for your tick in [[{approvals.relative_to(v).as_posix()[:-3]}]]" in text
    )
    notes = [p.relative_to(v).as_posix() for p in v.rglob("*.md") if ".git" not in p.parts]
    resolver = LinkResolver(notes, [p.relative_to(v).as_posix() for p in v.rglob("*.png")])
    assert all(resolver.note(x.target) or resolver.attachment(x.target) for x in outline("d.md", text).links)
    # the run's one commit: the dream's pages, the card and its approval line, the compile domain's verdicts
    changed = subprocess.run(
        ["git", "-C", str(v), "show", "--name-only", "--format=", "HEAD"], capture_output=True, text=True
    ).stdout.split()
    assert card in changed and all(
        p.startswith(("30-reviews/", "50-ops/", "90-system/gates/")) for p in changed
    )

    target = v / "20-wiki/health/afternoon-caffeine-cutoff.md"
    assert meta(promote(settings, instance), "canonical_wiki")["promoted"] == 0  # no tick: nothing
    assert not target.exists()
    approvals.write_text(
        approvals.read_text().replace(
            "- [ ] [[30-reviews/staging/afternoon", "- [x] [[30-reviews/staging/afternoon"
        )
    )
    assert meta(promote(settings, instance), "canonical_wiki")["promoted"] == 1
    page = frontmatter.parse_mapping(frontmatter.split(target.read_text())[0])
    assert page["status"] == "canonical" and page["merged_from"] == [PAGE_B, PAGE_A]
    assert (v / PAGE_A).read_text() == A and (v / PAGE_B).read_text() == B  # the two notes as they were

    third = dream(
        settings, instance, llm, force=True
    )  # the merge stands for the pair: nothing proposed again
    assert third.success and len(rec.requests) == 3
    assert meta(third, "dream_lint")["layer3"]["candidate_sources"]["already_merged"] >= 1
    assert meta(third, "dream_merges")["confirmed_pairs"] == 0


def test_without_a_key_the_pair_is_a_listed_candidate_and_no_card_is_drafted(settings: HippoSettings) -> None:
    plant(settings)
    instance = DagsterInstance.ephemeral()
    resources = build_resources(settings)
    assert not resources.llm.enabled
    for force in (False, True):
        result = materialize(
            JOB_ASSETS, resources=resources, instance=instance, run_config=run_config(settings, force)
        )
        assert result.success
    merges = meta(result, "dream_merges")
    assert merges["cards_drafted"] == 0 and merges["candidates"] == 1
    assert "no LLM is configured" in merges["reason"] and "no card drafted" in merges["reason"]
    assert not list((settings.vault / "30-reviews/staging").glob("*.md"))
    text = digest(settings.vault)
    assert "1 candidate pair(s), not confirmed" in text
    assert (
        "[[20-wiki/health/afternoon-coffee]] · [[20-wiki/health/caffeine-cutoff]]: both are named 'coffee rule'"
        in text
    )


def test_a_failing_model_is_counted_and_the_dream_goes_on(settings: HippoSettings) -> None:
    plant(settings)
    llm, rec = recorded_llm()  # every call answers 500
    result = dream(settings, DagsterInstance.ephemeral(), llm)
    assert result.success
    lint = meta(result, "dream_lint")
    assert lint["layer3"]["failed"] == 1 and lint["findings_by_rule"]["llm_failed"] == 1
    assert rec.requests  # it did ask


def test_a_failed_merge_draft_is_counted_and_tried_again_the_next_night(settings: HippoSettings) -> None:
    plant(settings)
    instance = DagsterInstance.ephemeral()
    llm, rec = recorded_llm("dream_same_concept.json")  # the merge question then answers 500
    assert dream(settings, instance, llm).success
    second = dream(settings, instance, llm, force=True)
    assert second.success
    merges = meta(second, "dream_merges")
    assert merges["cards_drafted"] == 0 and merges["failed"] == [
        {"a": PAGE_B, "b": PAGE_A, "error": "LLMError"}
    ]
    assert not list((settings.vault / "30-reviews/staging").glob("*.md"))
    asked = len(rec.requests)
    third = dream(settings, instance, llm, force=True)  # not marked as drafted: asked again
    assert meta(third, "dream_merges")["failed"] and len(rec.requests) > asked


def test_a_vault_without_duplicates_asks_the_model_nothing(settings: HippoSettings) -> None:
    llm, rec = recorded_llm()  # any question would be answered 500 and counted
    result = dream(settings, DagsterInstance.ephemeral(), llm)
    assert result.success
    layer3 = meta(result, "dream_lint")["layer3"]
    assert layer3["candidates"] == 0 and layer3["asked"] == 0 and rec.requests == []
    assert meta(result, "dream_merges")["confirmed_pairs"] == 0


def test_a_contradiction_is_reported_and_no_merge_card_follows(settings: HippoSettings) -> None:
    plant(settings)
    instance = DagsterInstance.ephemeral()
    llm, rec = recorded_llm("dream_contradiction.json")
    for force in (False, True):
        result = dream(settings, instance, llm, force=force)
        assert result.success
    lint = meta(result, "dream_lint")
    assert lint["findings_by_rule"] == {**lint["findings_by_rule"], "contradiction": 1}
    assert "near_duplicate" not in lint["findings_by_rule"] and len(rec.requests) == 1
    assert meta(result, "dream_merges")["confirmed_pairs"] == 0
    text = digest(settings.vault)
    assert "**contradiction** (1)" in text and "[[20-wiki/health/afternoon-coffee]]" in text
