"""The whole-vault sensor on a real vault: the look, the fingerprint cursor, and the run it requests."""

from __future__ import annotations

import os
from pathlib import Path

from dagster import DagsterInstance, SensorResult, SkipReason, build_sensor_context

from hippo_assets.definitions import build_definitions
from hippo_core.vault.vault_changes import changed_paths, fingerprint
from hippo_core.vault.vault_layout import is_indexed
from hippo_resources import Vault
from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import open_engine
from hippo_settings import HippoSettings
from sensors.vault import build_vault_sensor

SENSOR = build_vault_sensor("refresh_job")
NOTE = "20-wiki/health/sleep-hygiene.md"


def tick(vault: Path, cursor: str | None = None, sensor=SENSOR):  # noqa: ANN001, ANN201
    with build_sensor_context(cursor=cursor, resources={"vault": Vault(root=str(vault))}) as ctx:
        return sensor(ctx)


def test_the_look_lists_the_notes_the_pipeline_indexes(vault: Path) -> None:
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "workspace.md").write_text("# not a note\n", encoding="utf-8")
    (vault / "20-wiki" / "data" / "diagram.png").write_bytes(b"\x89PNG")
    outside = vault.parent / "outside.md"
    outside.write_text("# outside\n", encoding="utf-8")
    os.symlink(outside, vault / "20-wiki" / "linked-out.md")
    look = Vault(root=str(vault)).look(indexed_only=True).notes
    reader = Vault(root=str(vault))
    assert set(look) == {rel for rel in reader.markdown_files() if is_indexed(rel)}
    assert NOTE in look and "20-wiki/linked-out.md" not in look
    with_inbox = reader.look(indexed_only=True, inbox=True).stats()
    assert set(with_inbox) - set(look) == set(reader.inbox_files())
    assert all(size == (vault / rel).stat().st_size for rel, (size, _) in look.items())


def test_the_look_skips_what_hippoignore_skips(vault: Path) -> None:
    (vault / "20-wiki" / "drafts").mkdir()
    (vault / "20-wiki" / "drafts" / "draft.md").write_text("# Draft\n", encoding="utf-8")
    (vault / "20-wiki" / "scratch.md").write_text("# Scratch\n", encoding="utf-8")
    (vault / "20-wiki" / "keep.scratch.md").write_text("# Kept\n", encoding="utf-8")
    (vault / "00-inbox" / "waiting.md").write_text("# Waiting\n", encoding="utf-8")
    reader = Vault(root=str(vault))
    assert "20-wiki/drafts/draft.md" in reader.look(indexed_only=True).notes  # nothing ignored yet
    (vault / ".hippoignore").write_text(
        "# drafts and scratch notes stay out\ndrafts/\n*scratch.md\n!keep.scratch.md\n00-inbox/\n",
        encoding="utf-8",
    )
    look = reader.look(indexed_only=True).notes
    assert set(look) == {rel for rel in reader.markdown_files() if is_indexed(rel)}
    assert "20-wiki/keep.scratch.md" in look and NOTE in look
    assert not {"20-wiki/drafts/draft.md", "20-wiki/scratch.md"} & set(look)
    # the inbox is still looked at for `hippo watch`, as `inbox_files` lists it
    assert set(reader.look(indexed_only=True, inbox=True).stats()) - set(look) == set(reader.inbox_files())


def test_fingerprint_and_changes_follow_size_and_mtime() -> None:
    a = {"x.md": (10, 1), "y.md": (5, 2)}
    assert fingerprint(a) == fingerprint(dict(reversed(a.items())))
    assert fingerprint(a) != fingerprint({**a, "x.md": (10, 3)})
    assert changed_paths(a, {"x.md": (11, 1), "z.md": (1, 1)}) == ["x.md", "y.md", "z.md"]
    assert changed_paths(a, dict(a)) == []


def test_a_tick_requests_a_run_once_per_state_of_the_vault(vault: Path) -> None:
    first = tick(vault)
    assert isinstance(first, SensorResult) and len(first.run_requests) == 1
    assert first.run_requests[0].tags["hippo/trigger"] == "vault"
    again = tick(vault, first.cursor)
    assert isinstance(again, SkipReason) and "no note changed" in again.skip_message
    # the inbox is the inbox sensor's: a dropped file changes nothing here
    (vault / "00-inbox" / "dropped.md").write_text("# Dropped\n", encoding="utf-8")
    assert isinstance(tick(vault, first.cursor), SkipReason)
    # so are review queues and ledgers, which are never indexed
    (vault / "30-reviews" / "staging" / "card.md").write_text("# Card\n", encoding="utf-8")
    assert isinstance(tick(vault, first.cursor), SkipReason)
    path = vault / NOTE
    path.write_text(path.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    edited = tick(vault, first.cursor)
    assert isinstance(edited, SensorResult) and edited.cursor != first.cursor
    assert edited.run_requests[0].run_key != first.run_requests[0].run_key
    path.unlink()
    assert isinstance(tick(vault, edited.cursor), SensorResult)  # a removal is a change too


def test_missing_vault_skips(tmp_path: Path) -> None:
    result = tick(tmp_path / "nope")
    assert isinstance(result, SkipReason) and "vault not found" in result.skip_message


def test_the_requested_run_makes_an_edit_searchable(indexed: HippoSettings) -> None:
    defs = build_definitions(indexed)
    sensor = defs.get_sensor_def("vault_sensor")
    assert sensor.job_name == "refresh_job" and sensor.required_resource_keys == {"vault"}
    resources = {"vault": defs.resources["vault"]}
    with build_sensor_context(resources=resources) as ctx:
        baseline = sensor(ctx)
    assert isinstance(baseline, SensorResult)
    path = indexed.vault / NOTE
    path.write_text(
        path.read_text(encoding="utf-8") + "\n## Quokka\n\nThe quokka sleeps in zyxwvutsr burrows.\n",
        encoding="utf-8",
    )
    with build_sensor_context(cursor=baseline.cursor, resources=resources) as ctx:
        result = sensor(ctx)
    assert isinstance(result, SensorResult)
    request = result.run_requests[0]
    assert {k.to_user_string() for k in request.asset_selection} == {
        "vault_documents",
        "chunks",
        "embeddings",
        "lexical_index",
    }  # the index part: the inbox stays the inbox sensor's
    job = defs.get_job_def(sensor.job_name)
    run = job.execute_in_process(
        instance=DagsterInstance.ephemeral(), asset_selection=request.asset_selection, tags=request.tags
    )
    assert run.success
    embedded = run.asset_materializations_for_node("embeddings")[-1].metadata
    assert embedded["embedded"].value < embedded["chunks"].value  # incremental: the rest was reused
    hits = open_engine(indexed, log=False).search(SearchRequest(query="zyxwvutsr", mode="lexical")).results
    assert hits and hits[0].path == NOTE
