"""Runs cost what changed: the scan's size/mtime/hash fast path and the incremental lexical index."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import polars as pl
from dagster import materialize

from hippo_assets.index.assets import lexical_texts, vault_documents
from hippo_core.index.bm25 import BM25Index
from hippo_core.index.tokenize import Tokenizer
from hippo_resources import LexicalStore, build_resources
from hippo_resources.vector_ledger import ledger_from_store
from hippo_settings import HippoSettings
from tests.assets.test_pipeline import checks, meta
from tests.conftest import run_graph

HOUR_NS = 3600 * 1_000_000_000


def scan(settings: HippoSettings) -> dict:
    result = materialize([vault_documents], resources=build_resources(settings))
    assert result.success
    return meta(result, "vault_documents")


def documents(settings: HippoSettings) -> pl.DataFrame:
    return pl.read_parquet(settings.chunks_dir / "documents.parquet")


def age_all(vault: Path) -> None:
    """Set every note's mtime an hour back, as for a vault nobody touched lately."""
    past = time.time_ns() - HOUR_NS
    for p in vault.rglob("*.md"):
        if ".git" not in p.parts:
            os.utime(p, ns=(past, past))


def same_size_edit(path: Path, old: str, new: str) -> None:
    assert len(old.encode()) == len(new.encode())
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    assert path.stat().st_size == before.st_size


def test_scan_fast_path_skips_unchanged_and_sees_same_size_edits_and_touches(
    settings: HippoSettings,
) -> None:
    age_all(settings.vault)
    first = scan(settings)
    assert first["parsed"] == first["documents"] >= 5 and first["reused"] == 0
    table_before = documents(settings)

    second = scan(settings)  # nothing changed: nothing read
    assert (second["parsed"], second["unchanged_after_hash"]) == (0, 0)
    assert second["reused"] == first["documents"]
    assert documents(settings).equals(table_before)

    # a same-size edit with a new mtime: seen via mtime, parsed again
    note = settings.vault / "20-wiki/data/dagster-assets.md"
    same_size_edit(note, "persistent object", "persistent OBJECT")
    stamp = time.time_ns() - HOUR_NS // 2
    os.utime(note, ns=(stamp, stamp))
    third = scan(settings)
    assert (third["parsed"], third["unchanged_after_hash"]) == (1, 0)
    body = documents(settings).filter(pl.col("path") == "20-wiki/data/dagster-assets.md")["body"][0]
    assert "persistent OBJECT" in body

    # touched but unchanged: hashed, found equal, not parsed
    touched = settings.vault / "20-wiki/health/sleep-hygiene.md"
    stamp = time.time_ns() - HOUR_NS // 4
    os.utime(touched, ns=(stamp, stamp))
    fourth = scan(settings)
    assert (fourth["parsed"], fourth["unchanged_after_hash"]) == (0, 1)
    assert documents(settings).equals(
        table_before.with_columns(
            pl.when(pl.col("path") == "20-wiki/data/dagster-assets.md")
            .then(pl.col("body").str.replace("persistent object", "persistent OBJECT", literal=True))
            .otherwise(pl.col("body"))
            .alias("body")
        )
        .drop("body_hash")
        .join(documents(settings).select("path", "body_hash"), on="path")
        .select(table_before.columns)
    )
    fifth = scan(settings)  # the touch was recorded: back to the fast path
    assert (fifth["parsed"], fifth["unchanged_after_hash"]) == (0, 0)


def test_scan_rehashes_a_file_modified_right_when_it_was_scanned(settings: HippoSettings) -> None:
    """Racily clean: an edit in the same mtime tick as the scan, same size, mtime put back."""
    age_all(settings.vault)
    note = settings.vault / "20-wiki/data/morphology.md"
    now = time.time_ns()
    os.utime(note, ns=(now, now))
    scan(settings)
    text = note.read_text(encoding="utf-8")
    i = next(i for i, c in enumerate(text) if c.isascii() and c.isalpha() and c.islower())
    same_size_edit(note, text[i : i + 1] * 1, text[i].upper())
    os.utime(note, ns=(now, now))  # same size, same mtime as the scan saw
    again = scan(settings)
    assert again["parsed"] == 1
    body = documents(settings).filter(pl.col("path") == "20-wiki/data/morphology.md")["body"][0]
    assert body in note.read_text(encoding="utf-8")


def test_unreadable_file_is_reported_on_every_run_without_reparsing(settings: HippoSettings) -> None:
    """Only a note that cannot be read at all is skipped (issue 14); the reason is reported on every run."""
    bad = settings.vault / "20-wiki/data/broken.md"
    bad.write_bytes(b"---\ntitle: ok\n---\nbody \xff\xfe not utf-8\n")
    age_all(settings.vault)
    first = scan(settings)
    second = scan(settings)
    assert first["malformed"] == second["malformed"] == 1 and second["parsed"] == 0
    assert [f["path"] for f in second["malformed_files"]] == ["20-wiki/data/broken.md"]
    assert "20-wiki/data/broken.md" not in documents(settings)["path"].to_list()


def test_broken_frontmatter_is_indexed_and_reported_from_the_cache(settings: HippoSettings) -> None:
    """A note whose frontmatter is not YAML is indexed anyway; the reason stays in the report on a re-run
    that parses nothing (it comes from the scan cache, not a second parse)."""
    odd = settings.vault / "20-wiki/data/odd.md"
    odd.write_text("---\ntitle: [unclosed\nstatus: done\n---\nbody\n", encoding="utf-8")
    age_all(settings.vault)
    scan(settings)
    second = scan(settings)
    assert second["parsed"] == 0
    assert "20-wiki/data/odd.md" in documents(settings)["path"].to_list()
    assert [f["path"] for f in second["frontmatter_ignored"]] == ["20-wiki/data/odd.md"]


def rebuild_scores(settings: HippoSettings, queries: list[str]) -> dict[str, dict[str, float]]:
    """Per query, the score of every chunk id in the live generation and in an index rebuilt from every
    chunk's tokens (the slow path); asserts they are equal bit for bit and the top 10 are the same."""
    view = LexicalStore(root=str(settings.lexical_dir)).view()
    frame = pl.read_parquet(settings.chunks_dir / "chunks.parquet")
    assert view.live_table().equals(frame.drop("index_text"))  # the generation's table is the chunk table
    rebuilt = BM25Index.build(Tokenizer().tokenize_many(lexical_texts(frame)), view.index.params)
    ids = frame["chunk_id"].to_list()
    view_ids = view.table()["chunk_id"].to_list()
    live = view.index.live
    view_row = {cid: i for i, cid in enumerate(view_ids) if live[i]}
    rows = np.array([view_row[cid] for cid in ids])
    tok = Tokenizer()
    out = {}
    for q in queries:
        qt = tok.query_tokens(q)
        got, want = view.index.scores(qt), rebuilt.scores(qt)
        np.testing.assert_array_equal(got[rows], want, err_msg=q)
        assert not got[~live].any()
        assert [(view_ids[r], s) for r, s in view.index.top_k(qt, 10)] == [
            (ids[r], s) for r, s in rebuilt.top_k(qt, 10)
        ]
        out[q] = dict(zip(ids, want.tolist(), strict=True))
    return out


QUERIES = ["형태소 분석", "dagster asset", "수면 습관 카페인", "durable object", "커피 낮잠", "worklog"]


def lexical_paths(settings: HippoSettings, query: str, mode: str = "lexical") -> list[str]:
    from hippo_search.envelope import SearchRequest
    from hippo_search.pipeline import open_engine

    request = SearchRequest(query=query, mode=mode, limit=20, include_navigation=True)
    return [h.path for h in open_engine(settings, log=False).search(request, log=False).results]


def test_an_edit_publishes_a_delta_and_search_equals_a_rebuild(settings: HippoSettings) -> None:
    first = run_graph(settings)
    assert first.success
    lex1 = meta(first, "lexical_index")
    assert lex1["tokenized"] == lex1["chunks"] and lex1["reused"] == 0
    assert (lex1["segment"], lex1["compaction"], lex1["tombstones"]) == ("base", "no base", 0)
    lexical = settings.lexical_dir
    (base,) = sorted(p.name for p in lexical.glob("base-*"))

    second = run_graph(settings)  # no-op: the same generation stays live
    lex2 = meta(second, "lexical_index")
    assert lex2["unchanged"] is True and lex2["tokenized"] == 0 and lex2["generation"] == lex1["generation"]

    # a one-note edit: a delta, no new base
    note = settings.vault / "20-wiki/data/dagster-assets.md"
    note.write_text(
        note.read_text(encoding="utf-8").replace("persistent object", "durable object"), encoding="utf-8"
    )
    third = run_graph(settings)
    assert third.success
    lex3 = meta(third, "lexical_index")
    assert (lex3["unchanged"], lex3["segment"]) == (False, "delta") and lex3["generation"] != lex1[
        "generation"
    ]
    assert 1 <= lex3["tokenized"] <= lex3["delta_rows"] and lex3["tombstones"] >= 1
    assert lex3["reused"] == lex3["chunks"] - lex3["tokenized"]
    assert sorted(p.name for p in lexical.glob("base-*")) == [base]
    assert "20-wiki/data/dagster-assets.md" in lexical_paths(settings, "durable object")
    rebuild_scores(settings, QUERIES)

    # a second edit replaces the delta: it holds both notes' changed rows, over the same base
    morph = settings.vault / "20-wiki/data/morphology.md"
    morph.write_text(morph.read_text(encoding="utf-8") + "\n\nA sentence about lemmatizers.\n", "utf-8")
    fourth = run_graph(settings)
    lex4 = meta(fourth, "lexical_index")
    assert lex4["segment"] == "delta" and lex4["delta_rows"] > lex3["delta_rows"]
    assert lex4["tombstones"] >= lex3["tombstones"] and lex4["tokenized"] >= 1
    assert sorted(p.name for p in lexical.glob("base-*")) == [base]
    rebuild_scores(settings, [*QUERIES, "lemmatizers"])

    # a status-only change in frontmatter reaches search (archived is excluded); no text is tokenized
    sleep = settings.vault / "20-wiki/health/sleep-hygiene.md"
    assert "20-wiki/health/sleep-hygiene.md" in lexical_paths(settings, "수면 습관")
    sleep.write_text(
        sleep.read_text(encoding="utf-8").replace("status: canonical", "status: archived"), "utf-8"
    )
    fifth = run_graph(settings)
    lex5 = meta(fifth, "lexical_index")
    assert lex5["segment"] == "delta" and lex5["tokenized"] == 0
    for mode in ("lexical", "hybrid", "semantic"):
        assert "20-wiki/health/sleep-hygiene.md" not in lexical_paths(settings, "수면 습관", mode), mode

    # a deleted note's chunks never come back from either lane
    assert "50-ops/worklog.md" in lexical_paths(settings, "worklog")
    (settings.vault / "50-ops/worklog.md").unlink()
    sixth = run_graph(settings)
    assert meta(sixth, "lexical_index")["segment"] == "delta"
    for mode in ("lexical", "hybrid", "semantic"):
        assert "50-ops/worklog.md" not in lexical_paths(settings, "worklog", mode), mode
    rebuild_scores(settings, QUERIES)

    # past the threshold: a new base (compaction), equal to a rebuild; the old base is pruned once no
    # kept generation extends it
    note.write_text(note.read_text(encoding="utf-8") + "\n\nCompaction paragraph.\n", "utf-8")
    config = {"ops": {"lexical_index": {"config": {"compact_share": 0.0, "compact_min_rows": 0}}}}
    seventh = run_graph(settings, run_config=config)
    lex7 = meta(seventh, "lexical_index")
    assert (lex7["segment"], lex7["delta_rows"], lex7["tombstones"]) == ("base", 0, 0)
    assert lex7["compaction"] == "delta past 0 rows" and lex7["tokenized"] >= 1
    assert lex7["reused"] == lex7["chunks"] - lex7["tokenized"]  # counts copied, not tokenized again
    bases = sorted(p.name for p in lexical.glob("base-*"))
    assert len(bases) == 2 and bases[0] == base  # kept generations still extend the first base
    rebuild_scores(settings, [*QUERIES, "compaction"])
    for _ in range(3):  # three more edits: the generations that extended the first base are pruned
        note.write_text(note.read_text(encoding="utf-8") + "\nMore.\n", "utf-8")
        assert meta(run_graph(settings), "lexical_index")["segment"] == "delta"
    assert sorted(p.name for p in lexical.glob("base-*")) == bases[1:]
    rebuild_scores(settings, QUERIES)


def vector_rows(settings: HippoSettings) -> pl.DataFrame:
    """What the live collection holds: id, stored metadata, dimension and norm, sorted by id."""
    store = build_resources(settings)["vector_store"]
    collection = store.collection()
    return ledger_from_store(store, collection).sort("chunk_id")


def test_chunks_and_embeddings_reuse_unchanged_rows_and_equal_a_rebuild(
    settings: HippoSettings, tmp_path: Path
) -> None:
    age_all(settings.vault)  # no note modified right when it is scanned (those are always hashed again)
    first = run_graph(settings)
    assert first.success and meta(first, "chunks")["rechunked"] == meta(first, "chunks")["documents"]
    age_all(settings.vault)  # the source copies the first run wrote from the inbox, too
    assert run_graph(settings).success  # records their new mtimes (hashed: the same bytes)
    table = settings.chunks_dir / "chunks.parquet"
    stamp = table.stat().st_mtime_ns

    noop = run_graph(settings)  # nothing changed: nothing chunked, embedded, written or read whole
    assert noop.success and all(checks(noop).values())
    assert (meta(noop, "chunks")["rechunked"], meta(noop, "chunks")["unchanged"]) == (0, True)
    assert table.stat().st_mtime_ns == stamp
    emb = meta(noop, "embeddings")
    assert (emb["embedded"], emb["read_whole_store"], emb["reused"]) == (0, False, emb["chunks"])
    assert meta(noop, "vault_documents")["unchanged"] is True
    memo = {e.check_name: "unchanged_since_passed" in e.metadata for e in noop.get_asset_check_evaluations()}
    assert memo["chunks_are_valid"] and memo["vectors_match_chunks"] and memo["source_hashes_match"]

    vault = settings.vault
    note = vault / "20-wiki/data/dagster-assets.md"
    note.write_text(
        note.read_text(encoding="utf-8") + "\n## Added section\n\nA brand new paragraph.\n", "utf-8"
    )
    (vault / "20-wiki/data/new-note.md").write_text(
        "---\ntitle: New note\nstatus: active\n---\n\n# New note\n\nFresh text about sourdough.\n", "utf-8"
    )
    (vault / "50-ops/worklog.md").unlink()
    edited = run_graph(settings)
    assert edited.success and all(checks(edited).values())
    assert meta(edited, "chunks")["rechunked"] == 2 and meta(edited, "chunks")["unchanged"] is False
    emb = meta(edited, "embeddings")
    assert emb["read_whole_store"] is False and 2 <= emb["embedded"] < emb["chunks"]
    evaluations = {e.check_name: e for e in edited.get_asset_check_evaluations()}
    assert str(evaluations["vectors_match_chunks"].metadata["vectors_read"].value).startswith("ledger")
    assert "unchanged_since_passed" not in evaluations["chunks_are_valid"].metadata

    scratch = HippoSettings(
        vault=vault, home=tmp_path / "scratch-home", embed_cache_path=settings.embed_cache_path
    )
    rebuilt = run_graph(scratch)
    assert rebuilt.success and meta(rebuilt, "chunks")["rechunked"] == meta(rebuilt, "chunks")["documents"]
    incremental = pl.read_parquet(table)
    assert incremental.equals(pl.read_parquet(scratch.chunks_dir / "chunks.parquet"))
    held = vector_rows(settings)
    assert held.drop("norm").equals(vector_rows(scratch).drop("norm"))
    np.testing.assert_allclose(held["norm"].to_numpy(), 1.0, atol=1e-3)
    ledger = pl.read_parquet(settings.chunks_dir / "vector_ledger.parquet").sort("chunk_id")
    assert ledger.drop("norm").equals(held.drop("norm"))
    assert set(ledger["chunk_id"]) == set(incremental["chunk_id"])
