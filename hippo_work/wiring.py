"""Build the work-memory and ghost services from the settings, touching only what they need.

The hooks run at every agent session start and end, so this module imports the two stores and the
vault directly (never `build_resources`, which brings Chroma, the embedder and dlt along)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_resources.files import read_regular
from hippo_work.config import limits_from_settings

if TYPE_CHECKING:
    from hippo_resources.ghost_store import GhostStore
    from hippo_resources.vault import Vault
    from hippo_resources.work_store import WorkStore
    from hippo_settings import HippoSettings
    from hippo_work.ghost import Embedding, GhostLayer
    from hippo_work.service import WorkMemory


def _dsn(settings: HippoSettings) -> str | None:
    return settings.pg_dsn.get_secret_value() if settings.pg_dsn else None


def work_store(settings: HippoSettings) -> WorkStore:
    from hippo_resources.work_store import WorkStore

    return WorkStore(path=str(settings.work_store_path.expanduser().resolve()), pg_dsn=_dsn(settings))


def ghost_store(settings: HippoSettings) -> GhostStore:
    from hippo_resources.ghost_store import GhostStore

    return GhostStore(path=str(settings.ghost_store_path.expanduser().resolve()), pg_dsn=_dsn(settings))


def vault_or_none(settings: HippoSettings) -> Vault | None:
    """The vault when its folder exists; the work memory still serves checkpoints without one."""
    from hippo_resources.vault import Vault

    root = settings.vault.expanduser()
    return Vault(root=str(root.resolve())) if root.is_dir() else None


def work_memory(settings: HippoSettings, vault: Vault | None = None) -> WorkMemory:
    from hippo_work.service import WorkMemory

    return WorkMemory(work_store(settings), vault or vault_or_none(settings), limits_from_settings(settings))


def ghost_layer(
    settings: HippoSettings, vault: Vault | None = None, embed: Embedding | None = None
) -> GhostLayer:
    from hippo_work.ghost import GhostLayer

    return GhostLayer(
        ghost_store(settings), vault or vault_or_none(settings), embed, limits_from_settings(settings)
    )


@dataclass
class WorkServices:
    """The two services the librarian's REST routes and MCP tools serve."""

    work: WorkMemory
    ghost: GhostLayer

    @classmethod
    def from_settings(
        cls, settings: HippoSettings, vault: Vault | None = None, embed: Embedding | None = None
    ) -> WorkServices:
        return cls(work_memory(settings, vault), ghost_layer(settings, vault, embed))


# --- the hooks' fast path: no Dagster ------------------------------------------------------------------
class VaultFiles:
    """The three reads `WorkMemory.resume` makes of the vault, without the `Vault` resource (and so
    without importing Dagster) for the SessionStart hook; paths are checked to stay inside the vault as
    `Vault.abs` does. Writes always go through `Vault`."""

    def __init__(self, root: Path) -> None:
        self.path = root.expanduser().resolve()

    def abs(self, rel: str) -> Path:
        p = (self.path / rel).resolve()
        if p != self.path and self.path not in p.parents:
            raise ValueError(f"{rel!r} points outside the vault")
        return p

    def exists(self, rel: str) -> bool:
        return self.abs(rel).exists()

    def read_bytes(self, rel: str) -> bytes:
        """A regular file only, opened without blocking (a FIFO named handoff.md never hangs a hook)."""
        return read_regular(self.abs(rel), rel)

    def is_git_repo(self) -> bool:
        return (self.path / ".git").exists()


def hook_work_memory(settings: HippoSettings, with_vault: bool = True) -> WorkMemory:
    """Work memory for the agent hooks: the plain work feed and (for resume) read-only vault files."""
    from hippo_resources.work_feed import PlainWorkFeed
    from hippo_work.service import WorkMemory

    feed = PlainWorkFeed(path=str(settings.work_store_path.expanduser().resolve()), pg_dsn=_dsn(settings))
    root = settings.vault.expanduser()
    files = VaultFiles(root) if with_vault and root.is_dir() else None
    return WorkMemory(feed, files, limits_from_settings(settings))  # type: ignore[arg-type]
