"""Issue 9 points 14, 15, 16: inbox size limit, inbox symlinks reported, a symlink loop never fails a run.

Real Dagster materializations of `sources` and `vault_documents` on a real vault with real symlinks.
"""

from __future__ import annotations

import os
from pathlib import Path

from dagster import materialize

from hippo_assets.index.assets import vault_documents
from hippo_assets.ingest.assets import sources
from hippo_resources import build_resources
from hippo_settings import HippoSettings


def run(settings: HippoSettings):  # noqa: ANN201
    result = materialize([sources, vault_documents], resources=build_resources(settings))
    assert result.success
    meta = {}
    for node in ("sources", "vault_documents"):
        mats = result.asset_materializations_for_node(node)
        meta[node] = {k: v.value for k, v in mats[0].metadata.items()}
    return meta


def test_a_symlink_loop_anywhere_is_skipped_and_reported(settings: HippoSettings) -> None:
    vault = settings.vault
    os.symlink(vault / "20-wiki/loop-b.md", vault / "20-wiki/loop-a.md")
    os.symlink(vault / "20-wiki/loop-a.md", vault / "20-wiki/loop-b.md")
    os.symlink(vault / "10-sources/self.md", vault / "10-sources/self.md")
    os.symlink(vault, vault / "20-wiki/back-to-root")  # a folder loop
    (vault / "00-inbox/self.md").write_text("# Self\n\nA note named like the loop.\n", encoding="utf-8")
    meta = run(settings)
    reported = {s["path"]: s["reason"] for s in meta["sources"]["vault_skipped"]}
    assert reported["20-wiki/loop-a.md"].startswith("symlink loop")
    assert reported["10-sources/self.md"].startswith("symlink loop")
    assert reported["20-wiki/back-to-root"] == "symlinked folder: not followed"
    assert meta["sources"]["ingested"] == 3  # the fixture inbox still went through
    assert "10-sources/self.1.md" in meta["sources"]["new_sources"]  # the loop keeps its name
    skipped = {s["path"] for s in meta["vault_documents"]["skipped_paths"]}
    assert {"20-wiki/loop-a.md", "20-wiki/loop-b.md", "10-sources/self.md"} <= skipped


def test_inbox_symlinks_are_reported_not_followed(settings: HippoSettings, tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("# Outside the vault\n", encoding="utf-8")
    inbox = settings.vault / "00-inbox"
    os.symlink(outside, inbox / "outside.md")
    os.symlink(settings.vault / "SCHEMA.md", inbox / "inside.md")  # even one inside the vault
    meta = run(settings)["sources"]
    assert {s["path"] for s in meta["inbox_symlinks"]} == {"00-inbox/outside.md", "00-inbox/inside.md"}
    assert all("not followed" in s["reason"] for s in meta["inbox_symlinks"])
    assert not [p for p in meta["new_sources"] if "outside" in p or "inside" in p]
    assert (inbox / "outside.md").is_symlink() and (inbox / "inside.md").is_symlink()  # left as they are


def test_an_inbox_file_over_the_size_limit_stays_with_the_reason(settings: HippoSettings) -> None:
    big = settings.vault / "00-inbox/huge-note.md"
    big.write_text("# Huge\n\n" + "a sentence of a very long note. " * 650_000, encoding="utf-8")  # ~20 MB
    meta = run(settings)["sources"]
    rejected = {r["file"]: r for r in meta["rejected_files"]}
    assert rejected["00-inbox/huge-note.md"]["kind"] == "too_large"
    assert "HIPPO_INBOX_MAX_CHARS" in rejected["00-inbox/huge-note.md"]["reason"]
    assert big.exists() and meta["ingested"] == 2
    small = settings.model_copy(update={"inbox_max_bytes": 1000})
    (settings.vault / "00-inbox/medium.txt").write_text("b" * 5000, encoding="utf-8")
    meta = run(small)["sources"]
    reason = {r["file"]: r["reason"] for r in meta["rejected_files"]}["00-inbox/medium.txt"]
    assert "5,000 bytes; the limit is 1,000 (HIPPO_INBOX_MAX_BYTES)" in reason
