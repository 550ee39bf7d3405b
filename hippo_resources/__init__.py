"""Dagster resources, one per outside system, built from `HippoSettings`."""

from __future__ import annotations

from hippo_core.settings import HippoSettings
from hippo_resources.chunk_store import ChunkStore
from hippo_resources.embedder import Embedder, EmbedderError
from hippo_resources.ledger import Ledger
from hippo_resources.lexical_store import LexicalStore
from hippo_resources.vault import Vault, VaultError
from hippo_resources.vector_store import VectorStore

__all__ = [
    "ChunkStore",
    "Embedder",
    "EmbedderError",
    "Ledger",
    "LexicalStore",
    "Vault",
    "VaultError",
    "VectorStore",
    "build_resources",
]


def build_embedder(settings: HippoSettings) -> Embedder:
    return Embedder(
        backend=settings.embed_backend,
        model=settings.embed_model,
        dim=settings.embed_dim,
        url=settings.embed_url,
        api_key=settings.embed_api_key,
        cache_path=str(settings.embed_cache),
        threads=settings.embed_threads,
    )


def build_resources(settings: HippoSettings) -> dict[str, object]:
    """The resource dict that Definitions, `materialize` in tests and the server share."""
    s = settings.model_copy(update={"home": settings.home.resolve(), "vault": settings.vault.resolve()})
    return {
        "vault": Vault(root=str(s.vault)),
        "chunk_store": ChunkStore(root=str(s.chunks_dir)),
        "embedder": build_embedder(s),
        "vector_store": VectorStore(path=str(s.chroma_dir)),
        "lexical_store": LexicalStore(root=str(s.lexical_dir)),
        "ledger": Ledger(path=str(s.ledger_path)),
    }
