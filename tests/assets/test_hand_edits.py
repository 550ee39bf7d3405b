"""Issue 14 point 3: hand edits win. Generated pages are written only between the hippo markers, a page
whose block a person changed is left alone and reported, and every run makes at most one commit that
says what changed. Real Dagster runs of the publish assets on a real vault under real git."""

from __future__ import annotations

import subprocess
from pathlib import Path

from dagster import DagsterInstance, materialize

from hippo_assets.ingest.assets import sources
from hippo_assets.publish.assets import canonical_wiki, index_pages
from hippo_resources import build_resources
from hippo_settings import HippoSettings


def git(vault: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(vault), *args], capture_output=True, text=True, check=True).stdout


def publish(settings: HippoSettings, instance: DagsterInstance) -> dict:
    result = materialize(
        [canonical_wiki, index_pages], resources=build_resources(settings), instance=instance
    )
    assert result.success
    mats = result.asset_materializations_for_node("index_pages")
    return {k: v.value for k, v in mats[0].metadata.items()}


def test_a_hand_edited_home_is_kept_across_runs_and_each_run_makes_one_commit(
    settings: HippoSettings,
) -> None:
    vault, instance = settings.vault, DagsterInstance.ephemeral()
    home, index = vault / "HOME.md", vault / "index.md"
    commits = int(git(vault, "rev-list", "--count", "HEAD"))

    first = publish(settings, instance)  # the untouched `hippo init` seeds become marked pages
    assert first["written"][:2] == ["HOME.md", "index.md"] and first["left_alone"] == []
    assert all(p.endswith("/_hub.md") for p in first["written"][2:])  # the fixture's sectors
    assert "<!-- hippo:begin" in home.read_text(encoding="utf-8") and "- inbox: 2" in home.read_text(
        encoding="utf-8"
    )
    assert int(git(vault, "rev-list", "--count", "HEAD")) == commits + 1
    assert git(vault, "log", "-1", "--format=%s").startswith("index pages: HOME.md, index.md, 20-wiki/")

    # a person writes around HOME's block (Obsidian saves without a final newline) and inside index's
    text = home.read_text(encoding="utf-8")
    mine = text.replace("# Home\n", "# Home\n\nMy morning checklist: coffee, inbox, review.\n") + "\nsee you"
    home.write_text(mine, encoding="utf-8")
    index.write_text(
        index.read_text(encoding="utf-8").replace("Every canonical page", "My note. Every canonical page")
    )
    index_before = index.read_bytes()

    for run in range(2):  # the queue changes between runs: HOME's block must follow it
        (vault / f"00-inbox/new-{run}.md").write_text(f"# New {run}\n\nbody {run}\n", encoding="utf-8")
        meta = publish(settings, instance)
        assert meta["written"] == ["HOME.md"]
        assert (
            meta["left_alone"] == [{"page": "index.md", "reason": meta["left_alone"][0]["reason"]}]
            and "changed the generated block" in meta["left_alone"][0]["reason"]
        )
        now = home.read_text(encoding="utf-8")
        assert "My morning checklist: coffee, inbox, review.\n" in now and now.endswith("-->\n\nsee you")
        assert f"- inbox: {3 + run}" in now
        assert index.read_bytes() == index_before  # never touched
        assert int(git(vault, "rev-list", "--count", "HEAD")) == commits + 2 + run
        assert git(vault, "log", "-1", "--format=%s") == "index pages: HOME.md updated\n"
        assert git(vault, "show", "--name-only", "--format=", "HEAD").split() == ["HOME.md"]

    same = publish(settings, instance)  # nothing changed: nothing written, no commit
    assert same["written"] == [] and int(git(vault, "rev-list", "--count", "HEAD")) == commits + 3


def test_a_persons_own_home_without_markers_is_never_written(settings: HippoSettings) -> None:
    vault = settings.vault
    own = "---\ntitle: My dashboard\n---\n\n# Dashboard\n\n- [[Projects]]\n"
    (vault / "HOME.md").write_text(own, encoding="utf-8")
    meta = publish(settings, DagsterInstance.ephemeral())
    assert (vault / "HOME.md").read_text(encoding="utf-8") == own
    assert [r["page"] for r in meta["left_alone"]] == ["HOME.md"]
    assert "no hippo markers" in meta["left_alone"][0]["reason"]


def test_an_ingest_run_makes_one_commit_naming_its_sources(settings: HippoSettings) -> None:
    vault = settings.vault
    before = int(git(vault, "rev-list", "--count", "HEAD"))
    (vault / "10-sources/coffee-nap.md").write_text("# Someone else's coffee nap\n", encoding="utf-8")
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "a person's own source with the same name")
    result = materialize([sources], resources=build_resources(settings))
    assert result.success
    assert int(git(vault, "rev-list", "--count", "HEAD")) == before + 2
    assert git(vault, "log", "-1", "--format=%s") == (
        "ingest: 2 new source(s) (coffee-nap.1.md, meeting-notes.txt.md)\n"
    )
    assert (vault / "10-sources/coffee-nap.md").read_text(encoding="utf-8") == "# Someone else's coffee nap\n"


def test_a_persons_own_log_is_left_alone_and_the_promotion_stays_in_the_ledger(
    settings: HippoSettings,
) -> None:
    from hippo_core.wiki import generated

    own = "# Log\n\n2024-03-01 walked the dog.\n"
    assert not generated.appendable(own)
    seed = "---\ntype: map\nstatus: reference\ntrust: human_edit\ntitle: Log\n---\n# Log\n"
    assert generated.appendable(seed)  # the page `hippo init` seeds: its block goes at the end
    assert generated.append(seed, "## [d] promote | x").startswith(seed)
    assert generated.appendable(generated.append(own + "\n", "x"))  # a page with the markers
