"""Dagster resources, one per outside system, and `build_resources`: the one place that builds them all."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from importlib import import_module
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from pydantic import SecretStr

if TYPE_CHECKING:
    from hippo_resources.chunk_store import ChunkStore
    from hippo_resources.conversation_store import ConversationStore
    from hippo_resources.dream_store import DreamStore
    from hippo_resources.embedder import Embedder, EmbedderError
    from hippo_resources.fact_store import FactStore
    from hippo_resources.ghost_store import GhostStore
    from hippo_resources.ledger import Ledger
    from hippo_resources.lexical_store import LexicalStore
    from hippo_resources.llm import LLM
    from hippo_resources.reranker import Reranker
    from hippo_resources.vault import Vault, VaultError
    from hippo_resources.vector_store import VectorStore
    from hippo_resources.work_store import WorkStore
    from hippo_settings import HippoSettings

# Imported on first use, so that `hippo_resources.work_feed` (the agent hooks) does not bring Chroma,
# the embedder and Dagster along with the package.
_LAZY = {
    "LLM": "llm",
    "ChunkStore": "chunk_store",
    "ConversationStore": "conversation_store",
    "DreamStore": "dream_store",
    "Embedder": "embedder",
    "EmbedderError": "embedder",
    "FactStore": "fact_store",
    "GhostStore": "ghost_store",
    "Ledger": "ledger",
    "Reranker": "reranker",
    "LexicalStore": "lexical_store",
    "Vault": "vault",
    "VaultError": "vault",
    "VectorStore": "vector_store",
    "WorkStore": "work_store",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"hippo_resources.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'hippo_resources' has no attribute {name!r}")


__all__ = [
    "LLM",
    "ChunkStore",
    "ConversationStore",
    "DreamStore",
    "Embedder",
    "EmbedderError",
    "FactStore",
    "GhostStore",
    "HippoResources",
    "Ledger",
    "LexicalStore",
    "Reranker",
    "Vault",
    "VaultError",
    "VectorStore",
    "WorkStore",
    "build_resources",
]


@dataclass(frozen=True)
class HippoResources(Mapping[str, Any]):
    """Every resource, typed (`res.embedder`), and a mapping by resource key (`res["embedder"]`, `{**res}`)
    for `Definitions(resources=...)` and `materialize(resources=...)`."""

    vault: Vault
    chunk_store: ChunkStore
    embedder: Embedder
    vector_store: VectorStore
    lexical_store: LexicalStore
    ledger: Ledger
    llm: LLM
    conversation_store: ConversationStore
    work_store: WorkStore
    ghost_store: GhostStore
    dream_store: DreamStore
    fact_store: FactStore
    reranker: Reranker

    @property
    def dlt(self) -> Any:
        """dagster-dlt's runner; imported only when asked for (dlt is slow to import, the librarian needs none)."""
        from dagster_dlt import DagsterDltResource

        return DagsterDltResource()

    def __getitem__(self, key: str) -> Any:
        if key not in self._keys():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())

    @classmethod
    def _keys(cls) -> tuple[str, ...]:
        return (*(f.name for f in fields(cls)), "dlt")


def _secret(settings: HippoSettings, field: str, env_secrets: bool) -> Any:
    """A secret's value, or `EnvVar(NAME)` when it came from the process environment and the caller wants
    Dagster to resolve it at run time (the UI then shows the variable's name, never its value)."""
    from dagster import EnvVar

    name = settings.from_process_env(field) if env_secrets else None
    if name:
        return EnvVar(name)
    value = getattr(settings, field)
    return value.get_secret_value() if isinstance(value, SecretStr) else value


def build_embedder(settings: HippoSettings, env_secrets: bool = False) -> Embedder:
    from hippo_resources.embedder import Embedder

    return Embedder(
        backend=settings.embed_backend,
        model=settings.embed_model,
        dim=settings.embed_dim,
        url=settings.embed_url,
        api_key=_secret(settings, "embed_api_key", env_secrets),
        cache_path=str(settings.embed_cache),
        calibration_path=str(settings.calibration_path),
        threads=settings.embed_threads,
        batch_tokens=settings.embed_batch_tokens,
        retry_attempts=settings.embed_retries,
    )


def build_vector_store(settings: HippoSettings) -> VectorStore:
    """Embedded Chroma under HIPPO_HOME, or the Chroma server at HIPPO_CHROMA_URL."""
    from hippo_resources.vector_store import VectorStore

    if not settings.chroma_url:
        return VectorStore(path=str(settings.chroma_dir))
    url = urlparse(settings.chroma_url if "//" in settings.chroma_url else f"http://{settings.chroma_url}")
    ssl = url.scheme == "https"
    return VectorStore(
        path=str(settings.chroma_dir),
        host=url.hostname or "localhost",
        port=url.port or (443 if ssl else 8000),
        ssl=ssl,
    )


def build_vault(settings: HippoSettings) -> Vault:
    """The vault resource with its size limits from the settings (every hand-built reader should use it)."""
    from hippo_resources.vault import Vault

    return Vault(
        root=str(settings.vault),
        inbox_max_bytes=settings.inbox_max_bytes,
        inbox_max_chars=settings.inbox_max_chars,
        note_max_bytes=settings.note_max_bytes,
    )


def build_resources(settings: HippoSettings, env_secrets: bool = False) -> HippoResources:
    """Every resource from the settings: Definitions (with `env_secrets=True`), the CLI, the server, eval
    and tests all build them here. Paths are made absolute, so a run started elsewhere finds the same stores."""
    from hippo_resources.chunk_store import ChunkStore
    from hippo_resources.conversation_store import ConversationStore
    from hippo_resources.dream_store import DreamStore
    from hippo_resources.fact_store import FactStore
    from hippo_resources.ghost_store import GhostStore
    from hippo_resources.ledger import Ledger
    from hippo_resources.lexical_store import LexicalStore
    from hippo_resources.llm import LLM
    from hippo_resources.reranker import Reranker
    from hippo_resources.work_store import WorkStore

    s = settings.model_copy(update={"home": settings.home.resolve(), "vault": settings.vault.resolve()})
    return HippoResources(
        vault=build_vault(s),
        chunk_store=ChunkStore(root=str(s.chunks_dir), retention_days=s.delete_retention_days),
        embedder=build_embedder(s, env_secrets),
        vector_store=build_vector_store(s),
        lexical_store=LexicalStore(root=str(s.lexical_dir)),
        ledger=Ledger(path=str(s.ledger_path), pg_dsn=_secret(s, "pg_dsn", env_secrets)),
        llm=LLM(
            provider=s.llm_provider,
            api_key=_secret(
                s, "llm_api_key" if s.llm_provider == "openai" else "anthropic_api_key", env_secrets
            ),
            base_url=s.llm_base_url,
            model=s.llm_model,
            max_tokens=s.llm_max_tokens,
            max_retries=s.llm_retries,
        ),
        conversation_store=ConversationStore(
            root=str(s.conversations_dir),
            claude_projects=str(s.claude_projects.expanduser()),
            codex_home=str(s.codex_home.expanduser()),
            exports=str(s.exports_dir.expanduser()),
            pg_dsn=_secret(s, "pg_dsn", env_secrets),
        ),
        # the non-rebuildable stores of work memory and the ghost layer (hippo_resources.stores)
        work_store=WorkStore(path=str(s.work_store_path), pg_dsn=_secret(s, "pg_dsn", env_secrets)),
        ghost_store=GhostStore(path=str(s.ghost_store_path), pg_dsn=_secret(s, "pg_dsn", env_secrets)),
        dream_store=DreamStore(path=str(s.dream_store_path), pg_dsn=_secret(s, "pg_dsn", env_secrets)),
        fact_store=FactStore(path=str(s.fact_store_path), pg_dsn=_secret(s, "pg_dsn", env_secrets)),
        reranker=Reranker(
            url=s.rerank_url,
            model=s.rerank_model,
            top_n=s.rerank_top_n,
            timeout_seconds=s.rerank_timeout,
            documents_field=s.rerank_field,
        ),
    )
