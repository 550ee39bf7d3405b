"""A corrupt Chroma folder and corrupt parquet tables are detected and rebuilt from the vault by the next
run; search works again (and the rebuild takes its vectors from the embedding cache, not the embedder)."""

from __future__ import annotations

import json
from pathlib import Path

from dagster import DagsterInstance

from hippo_resources import build_resources
from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import open_engine
from hippo_settings import HippoSettings
from tests.conftest import run_graph
from tests.reliability.servers import FakeEmbedder


def garble(path: Path) -> None:
    size = max(path.stat().st_size, 4096)
    path.write_bytes(b"\x00garbage, not a database\xff" * (size // 26 + 1))


def materialized(result) -> dict[str, dict]:  # noqa: ANN001 - Dagster's execution result
    return {
        e.asset_key.to_user_string(): e.step_materialization_data.materialization.metadata
        for e in result.all_events
        if e.event_type_value == "ASSET_MATERIALIZATION"
    }


def test_a_corrupt_chroma_folder_and_corrupt_parquet_are_rebuilt_from_the_vault(
    http_settings: HippoSettings, embedder: FakeEmbedder
) -> None:
    settings = http_settings
    assert run_graph(settings).success
    expected = {h.anchor for h in open_engine(settings).search(SearchRequest(query="sleep")).results}
    assert expected
    texts = embedder.texts()

    garble(settings.chroma_dir / "chroma.sqlite3")
    for table in ("documents.parquet", "chunks.parquet"):
        garble(settings.chunks_dir / table)
    live = json.loads((settings.lexical_dir / "CURRENT.json").read_text())
    garble(settings.lexical_dir / live["base"] / "chunks.arrow")  # the live base's chunk table

    result = run_graph(settings, instance=DagsterInstance.ephemeral())
    assert result.success
    meta = materialized(result)["embeddings"]
    aside = meta["vector_store_set_aside"].value
    assert aside and Path(aside).is_dir()  # kept for inspection, out of the way
    assert meta["embedded"].value == meta["chunks"].value  # every vector rebuilt ...
    assert embedder.texts() == texts  # ... from the embedding cache

    res = build_resources(settings)
    chunks = set(res.chunk_store.chunks()["chunk_id"].to_list())
    assert set(res.vector_store.existing()) == chunks
    lexical = materialized(result)["lexical_index"]
    assert lexical["segment"].value == "base" and lexical["compaction"].value == "no base"  # built afresh
    assert lexical["tokenized"].value == lexical["chunks"].value
    response = open_engine(settings).search(SearchRequest(query="sleep"))
    assert response.status == "ok"
    assert {h.anchor for h in response.results} == expected
    assert any("semantic" in h.matched_by for h in response.results)
