"""Degraded indexing is lossless: with the HTTP embedder down, `hippo run` still publishes the lexical
generation (new notes found by keyword, status `degraded` with the reason), records which chunks lack
vectors, and once the embedder is back the next run embeds exactly those."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from dagster import AssetCheckSeverity, DagsterInstance

from hippo_resources import build_resources
from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import open_engine
from hippo_settings import HippoSettings
from tests.conftest import run_graph
from tests.reliability.conftest import fake_embedder_settings
from tests.reliability.servers import FakeEmbedder

NEW_NOTE = "# Octopus gardening\n\nThe zebrafinch octopus tends a kelp garden behind the lighthouse.\n"


@pytest.fixture
def embedder() -> Iterator[FakeEmbedder]:
    fake = FakeEmbedder()
    yield fake
    fake.stop()


@pytest.fixture
def http_settings(tmp_path: Path, vault: Path, embedder: FakeEmbedder) -> HippoSettings:
    return fake_embedder_settings(embedder, vault, tmp_path, {"HIPPO_EMBED_RETRIES": "2"})


def check_evaluations(result) -> dict[str, object]:  # noqa: ANN001 - Dagster's execution result
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


def hippo_run(settings: HippoSettings, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HIPPO_VAULT": str(settings.vault),
        "HIPPO_HOME": str(settings.home),
        "HIPPO_EMBED_CACHE": str(settings.embed_cache),
        "HIPPO_EMBED_URL": str(settings.embed_url),
        "HIPPO_EMBED_MODEL": settings.embed_model,
        "HIPPO_EMBED_RETRIES": str(settings.embed_retries),
        "DAGSTER_HOME": str(tmp_path / "dagster"),
    }
    return subprocess.run(
        [sys.executable, "-m", "hippo_cli.main", "run"], env=env, capture_output=True, text=True, timeout=600
    )


def test_a_run_with_the_embedder_down_is_searchable_by_keyword_and_the_next_run_embeds_exactly_the_rest(
    http_settings: HippoSettings, embedder: FakeEmbedder, tmp_path: Path
) -> None:
    settings = http_settings
    embedder.start()
    assert run_graph(settings).success
    first = embedder.texts()
    assert first > 0
    res = build_resources(settings)
    before = set(res.chunk_store.chunks()["chunk_id"].to_list())

    # the embedder goes away; a person adds a note
    embedder.stop()
    (settings.vault / "20-wiki" / "octopus.md").write_text(NEW_NOTE, encoding="utf-8")
    proc = hippo_run(settings, tmp_path)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]

    manifest = json.loads((settings.lexical_dir / "CURRENT.json").read_text())
    assert manifest["status"] == "degraded"
    assert "unreachable" in manifest["degraded_reason"] and manifest["pending_vectors"] > 0
    new_ids = set(res.chunk_store.chunks()["chunk_id"].to_list()) - before
    pending = res.chunk_store.pending()
    assert set(pending["chunk_id"].to_list()) == new_ids  # exactly the new note's chunks wait
    assert set(pending["path"].to_list()) == {"20-wiki/octopus.md"}
    assert res.chunk_store.vector_state()["status"] == "degraded"

    # the new note is found by keyword; the search says why the semantic lane is missing
    response = open_engine(settings).search(SearchRequest(query="zebrafinch octopus"))
    assert response.status == "degraded" and response.degraded_reason
    assert response.results and response.results[0].path == "20-wiki/octopus.md"

    # the vectors check warns, it does not block
    instance = DagsterInstance.ephemeral()
    embedder_down = run_graph(settings, instance=instance)
    assert embedder_down.success
    evaluation = check_evaluations(embedder_down)["vectors_match_chunks"]
    assert not evaluation.passed and evaluation.severity == AssetCheckSeverity.WARN
    assert evaluation.description == f"{len(new_ids)} chunks waiting for vectors"

    # the embedder comes back on the same address: the next run embeds exactly the waiting chunks
    embedder.start()
    healed = run_graph(settings)
    assert healed.success
    assert embedder.texts() == len(new_ids)
    assert check_evaluations(healed)["vectors_match_chunks"].passed
    assert res.chunk_store.pending().height == 0
    manifest = json.loads((settings.lexical_dir / "CURRENT.json").read_text())
    assert manifest["status"] == "ok" and manifest["pending_vectors"] == 0
    stored = res.vector_store.existing()
    chunks = res.chunk_store.chunks()
    assert set(stored) == set(chunks["chunk_id"].to_list())
    hashes = dict(zip(chunks["chunk_id"].to_list(), chunks["embed_hash"].to_list(), strict=True))
    assert all(meta["embed_hash"] == hashes[cid] for cid, meta in stored.items())
    response = open_engine(settings).search(SearchRequest(query="zebrafinch octopus"))
    assert response.status == "ok"
    assert "semantic" in response.results[0].matched_by


def test_a_stale_vector_waits_instead_of_standing_in_for_new_text(
    http_settings: HippoSettings, embedder: FakeEmbedder
) -> None:
    """An edited section whose new text cannot be embedded loses its old vector: it waits, not lies."""
    settings = http_settings
    embedder.start()
    assert run_graph(settings).success
    embedder.stop()
    note = settings.vault / "20-wiki" / "health" / "sleep-hygiene.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nAdded: a walk after lunch helps too.\n", "utf-8")
    result = run_graph(settings)
    assert result.success
    res = build_resources(settings)
    chunks = res.chunk_store.chunks()
    stored = res.vector_store.existing()
    hashes = dict(zip(chunks["chunk_id"].to_list(), chunks["embed_hash"].to_list(), strict=True))
    assert all(meta["embed_hash"] == hashes[cid] for cid, meta in stored.items())  # nothing stale
    waiting = res.chunk_store.pending()
    assert waiting.height >= 1 and set(waiting["path"].to_list()) == {"20-wiki/health/sleep-hygiene.md"}
    assert not waiting.filter(pl.col("chunk_id").is_in(list(stored))).height
