"""Soft delete: a note that leaves the vault is out of search at once, its vectors kept in the trash; back
within the retention period it is restored without embedding anything (the embedder's own count says so,
with the embedding cache deleted); purged after the retention period or by `hippo gc`."""

from __future__ import annotations

import pytest

from hippo_cli.main import main
from hippo_resources import build_resources
from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import open_engine
from hippo_settings import HippoSettings
from tests.conftest import run_graph
from tests.reliability.servers import FakeEmbedder

NOTE = "20-wiki/health/sleep-hygiene.md"


def paths(settings: HippoSettings, query: str, mode: str = "hybrid") -> set[str]:
    response = open_engine(settings).search(SearchRequest(query=query, mode=mode, limit=20))
    return {h.path for h in response.results}


def test_a_deleted_note_leaves_search_at_once_and_comes_back_without_embedding(
    http_settings: HippoSettings, embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = http_settings
    assert run_graph(settings).success
    res = build_resources(settings)
    note = settings.vault / NOTE
    body = note.read_bytes()
    ids = set(res.chunk_store.chunks().filter(res.chunk_store.chunks()["path"] == NOTE)["chunk_id"].to_list())
    assert ids and NOTE in paths(settings, "sleep hygiene") and NOTE in paths(settings, "sleep", "lexical")

    note.unlink()
    assert run_graph(settings).success
    assert NOTE not in paths(settings, "sleep hygiene")  # both lanes
    assert NOTE not in paths(settings, "sleep", "lexical")
    assert NOTE not in paths(settings, "sleep hygiene", "semantic")
    assert not ids & set(res.vector_store.existing())  # not in the live collection (no orphan)
    assert set(res.vector_store.trashed()) == ids  # kept in the trash
    deleted = res.chunk_store.deleted()
    assert set(deleted["chunk_id"].to_list()) == ids and set(deleted["path"].to_list()) == {NOTE}

    # back within the retention period, with the embedding cache gone: nothing is embedded again
    settings.embed_cache.unlink()
    texts = embedder.texts()
    note.write_bytes(body)
    assert run_graph(settings).success
    assert embedder.texts() == texts
    assert ids <= set(res.vector_store.existing()) and not res.vector_store.trashed()
    assert res.chunk_store.deleted().height == 0
    assert NOTE in paths(settings, "sleep hygiene", "semantic")

    # deleted again, then `hippo gc`: gone for good; coming back now means embedding again
    note.unlink()
    assert run_graph(settings).success
    assert set(res.vector_store.trashed()) == ids
    monkeypatch.setenv("HIPPO_VAULT", str(settings.vault))
    monkeypatch.setenv("HIPPO_HOME", str(settings.home))
    monkeypatch.setenv("HIPPO_EMBED_URL", embedder.url)
    monkeypatch.setenv("HIPPO_EMBED_MODEL", "fake-hash")
    assert main(["gc"]) == 0
    assert not res.vector_store.trashed() and res.chunk_store.deleted().height == 0
    settings.embed_cache.unlink(missing_ok=True)
    texts = embedder.texts()
    note.write_bytes(body)
    assert run_graph(settings).success
    assert embedder.texts() - texts == len(ids)


def test_the_retention_period_purges_on_a_later_run(
    http_settings: HippoSettings, embedder: FakeEmbedder
) -> None:
    settings = http_settings.model_copy(update={"delete_retention_days": 0.0})
    assert run_graph(settings).success
    (settings.vault / NOTE).unlink()
    assert run_graph(settings).success
    res = build_resources(settings)
    assert res.vector_store.trashed()  # deleted this very run: kept until the next one
    assert run_graph(settings).success
    assert not res.vector_store.trashed() and res.chunk_store.deleted().height == 0


def test_the_mass_delete_guard_still_refuses(http_settings: HippoSettings) -> None:
    settings = http_settings
    assert run_graph(settings).success
    for md in (settings.vault / "20-wiki").rglob("*.md"):
        md.unlink()
    (settings.vault / "10-sources" / "kiwi-notes.md").unlink()
    result = run_graph(settings, raise_on_error=False)
    assert not result.success
    res = build_resources(settings)
    assert not res.vector_store.trashed()  # refused before anything moved
