"""The dream as Dagster runs it: the gate (skip with its reason, --force), incremental lint, the digest
(links that resolve, a person's lines kept, one commit), layer 3 skipped without a key, and a malformed
note reported, never rewritten."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from dagster import DagsterInstance, materialize

from hippo_assets.dream.definitions import JOB_ASSETS, run_config
from hippo_cli.main import main
from hippo_core.dream.outline import outline
from hippo_core.vault.links import LinkResolver
from hippo_resources import build_resources
from hippo_settings import HippoSettings


def dream(settings: HippoSettings, instance: DagsterInstance, force: bool = False):  # noqa: ANN201
    return materialize(
        JOB_ASSETS,
        resources=build_resources(settings),
        instance=instance,
        run_config=run_config(settings, force),
    )


def meta(result, asset: str) -> dict:  # noqa: ANN001
    for event in result.get_asset_materialization_events():
        if event.asset_key.to_user_string() == asset:
            return {k: v.value for k, v in event.materialization.metadata.items()}
    raise AssertionError(f"{asset} was not materialized")


def skip_reason(result) -> str:  # noqa: ANN001
    for event in result.all_events:
        if event.event_type_value == "ASSET_OBSERVATION":
            return event.event_specific_data.asset_observation.metadata["reason"].value
    raise AssertionError("no observation")


def commits(vault: Path) -> int:
    return int(
        subprocess.run(
            ["git", "-C", str(vault), "rev-list", "--count", "HEAD"], capture_output=True, text=True
        ).stdout
    )


def digest_file(vault: Path) -> Path:
    found = sorted((vault / "50-ops" / "digest").glob("*.md"))
    assert len(found) == 1
    return found[0]


@pytest.fixture
def planted(settings: HippoSettings) -> HippoSettings:
    """The fixture vault plus a note with a broken link and one with broken frontmatter."""
    v = settings.vault
    (v / "20-wiki" / "data" / "links.md").write_text(
        "# Links\n\nSee [[dagster-assets]] and [[no-such-note]].\n"
    )
    (v / "20-wiki" / "data" / "bad-yaml.md").write_text(
        "---\ntitle: [unclosed\n---\n# Bad\n\n[[morphology]]\n"
    )
    subprocess.run(["git", "-C", str(v), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(v), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "plant"],
        check=True,
    )
    return settings


def test_first_dream_writes_a_digest_with_findings_and_one_commit(planted: HippoSettings) -> None:
    instance = DagsterInstance.ephemeral()
    vault = planted.vault
    bad_before = (vault / "20-wiki/data/bad-yaml.md").read_bytes()
    before = commits(vault)
    result = dream(planted, instance)
    assert result.success
    gate = meta(result, "dream_gate")
    assert gate["dream"] is True and gate["reason"].startswith("first dream")
    lint = meta(result, "dream_lint")
    assert lint["findings_by_rule"]["broken_link"] >= 1
    assert lint["findings_by_rule"]["malformed_frontmatter"] == 1
    assert "no LLM is configured" in lint["layer3"]["skipped"]
    assert commits(vault) == before + 1  # the whole run: one commit
    text = digest_file(vault).read_text()
    assert "[[20-wiki/data/links]] (line 3)" in text and "no note 'no-such-note'" in text
    assert "### Layer 3: meaning (LLM)" in text and "Skipped: no LLM is configured" in text
    assert (vault / "20-wiki/data/bad-yaml.md").read_bytes() == bad_before  # reported, never rewritten
    # every link the digest writes resolves to a note (or the chart beside it)
    notes = [p.relative_to(vault).as_posix() for p in vault.rglob("*.md") if ".git" not in p.parts]
    charts = [p.relative_to(vault).as_posix() for p in vault.rglob("*.png")]
    resolver = LinkResolver(notes, charts)
    links = outline("digest.md", text).links
    assert links and all(resolver.note(x.target) or resolver.attachment(x.target) for x in links)
    # the 90-day chart is a PNG beside the digest, embedded in it
    (chart,) = charts
    assert f"![[{Path(chart).name}]]" in text
    png = (vault / chart).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    assert int.from_bytes(png[16:20], "big") == 90 * 3  # one bar of 3 px per day
    # the dream wrote only its pages (the run's one commit); the person's notes are as they were
    changed = subprocess.run(
        ["git", "-C", str(vault), "show", "--name-only", "--format=", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert changed and all(p.startswith(("50-ops/", "30-reviews/")) for p in changed), changed


def test_without_a_key_layers_1_2_and_4_run_and_a_tick_dismisses_a_proposal(planted: HippoSettings) -> None:
    """Layer 4 needs no model: an exact duplicate is flagged the first night, proposed the next, and a tick
    in proposals.md stops the dream proposing it; layer 3 is skipped with its reason."""
    vault = planted.vault
    note = (vault / "20-wiki/data/dagster-assets.md").read_text()
    (vault / "20-wiki/data/dagster-assets-copy.md").write_text(note)
    instance = DagsterInstance.ephemeral()
    first = dream(planted, instance)
    lint = meta(first, "dream_lint")
    assert lint["findings_by_layer"]["L1"] >= 1 and lint["findings_by_rule"]["exact_duplicate"] == 1
    assert lint["layer4_flagged_tonight"] == 1 and lint["layer4_proposed"] == 0
    assert "no LLM is configured" in lint["layer3"]["skipped"]
    proposals = vault / "30-reviews/dream/proposals.md"
    assert not proposals.exists()

    second = meta(dream(planted, instance, force=True), "dream_lint")
    assert second["layer4_proposed"] == 1 and second["findings_by_layer"]["L4"] == 1
    line = next(ln for ln in proposals.read_text().splitlines() if "exact_duplicate" in ln)
    assert line.startswith(
        "- [ ] exact_duplicate: [[20-wiki/data/dagster-assets-copy]] [[20-wiki/data/dagster-assets]]"
    )
    proposals.write_text(proposals.read_text().replace(line, line.replace("- [ ]", "- [x]", 1)))
    (vault / "20-wiki/data/bad-yaml-copy.md").write_text((vault / "20-wiki/data/bad-yaml.md").read_text())
    third = meta(dream(planted, instance, force=True), "dream_lint")
    assert third["layer4_proposed"] == 0 and third["proposals_page"] == "written"  # the tick was no edit
    assert "exact_duplicate" not in proposals.read_text()  # dismissed: not proposed again
    fourth = meta(dream(planted, instance, force=True), "dream_lint")  # the new duplicate, re-checked
    assert fourth["layer4_proposed"] == 1
    text = proposals.read_text()
    assert "[[20-wiki/data/bad-yaml-copy]]" in text and "dagster-assets-copy" not in text
    assert (vault / "20-wiki/data/dagster-assets-copy.md").read_text() == note  # never changed


def test_the_gate_skips_with_its_reason_and_force_runs_incrementally(planted: HippoSettings) -> None:
    instance = DagsterInstance.ephemeral()
    vault = planted.vault
    assert dream(planted, instance).success
    after_first = commits(vault)

    again = dream(planted, instance)
    assert again.success
    assert "h ago (needs >= 24 h)" in skip_reason(again)
    assert [e.asset_key.to_user_string() for e in again.get_asset_materialization_events()] == []
    assert commits(vault) == after_first

    # a person adds a line of their own under the digest; a new note arrives; the dream is forced
    page = digest_file(vault)
    page.write_text(page.read_text() + "\nMy own remark, kept.\n")
    (vault / "20-wiki/data/new.md").write_text("# New\n\n[[morphology#Nowhere]]\n")
    forced = dream(planted, instance, force=True)
    assert forced.success
    assert meta(forced, "dream_gate")["reason"] == "forced"
    lint = meta(forced, "dream_lint")
    assert lint["notes_read"] == 2  # the new note and the edited digest; nothing unchanged is read again
    assert lint["findings_by_rule"]["broken_anchor"] == 1
    text = page.read_text()
    assert "My own remark, kept." in text and "'20-wiki/data/morphology.md' has no heading 'Nowhere'" in text


def test_hippo_run_job_dream_force(planted: HippoSettings, tmp_path: Path, monkeypatch, capsys) -> None:  # noqa: ANN001
    monkeypatch.setenv("HIPPO_VAULT", str(planted.vault))
    monkeypatch.setenv("HIPPO_HOME", str(planted.home))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    monkeypatch.setenv("HIPPO_DREAM_MIN_CHANGES", "1000")
    assert main(["run", "--job", "dream_job"]) == 0
    assert not (planted.vault / "50-ops" / "digest").exists()  # skipped: too little is new
    assert main(["run", "--job", "dream_job", "--force"]) == 0
    assert digest_file(planted.vault).exists()


def test_consolidation_reports_the_fact_resolution_since_the_last_dream(settings: HippoSettings) -> None:
    """Two notes state where one person lives, a year apart: the facts asset opens a SUPERSEDE proposal
    (never applied without a tick); the dream counts it and lists the review as waiting."""
    from hippo_assets.facts.assets import facts

    v = settings.vault
    (v / "20-wiki" / "people").mkdir(parents=True, exist_ok=True)
    (v / "20-wiki/people/minji-2023.md").write_text(
        "---\ntitle: Minji 2023\nsubject: Minji\ncreated: 2023-03-01\n---\n# Minji\n\n- lives_in:: Seoul (since 2023-03-01)\n"
    )
    (v / "20-wiki/people/minji-2024.md").write_text(
        "---\ntitle: Minji 2024\nsubject: Minji\ncreated: 2024-05-01\n---\n# Minji\n\n- lives_in:: Busan (since 2024-05-01)\n"
    )
    subprocess.run(["git", "-C", str(v), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(v), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], check=True
    )
    instance = DagsterInstance.ephemeral()
    resources = build_resources(settings)
    assert materialize([facts], resources=resources, instance=instance).success
    assert len(resources.fact_store.proposals("pending")) == 1
    result = dream(settings, instance)
    assert result.success
    counts = meta(result, "dream_consolidation")["counts"]
    assert counts["pending_supersessions"] == 1
    assert counts.get("resolved_supersede_pending", 0) >= 1
    text = digest_file(v).read_text()
    assert "## Waiting for your review" in text and "Seoul" in text and "Busan" in text
