"""`hippo init`: lay out a new vault (or complete an existing one) and put it under git."""

from __future__ import annotations

from pathlib import Path

from hippo_core import vault_layout
from hippo_resources.vault import Vault

SEED_FILES = {
    "HOME.md": "---\ntype: map\nstatus: reference\ntrust: human_edit\ntitle: Home\n---\n\n# Home\n\nStart here.\n",
    "index.md": "---\ntype: map\nstatus: reference\ntrust: human_edit\ntitle: Index\n---\n\n# Index\n",
    "log.md": "---\ntype: map\nstatus: reference\ntrust: human_edit\ntitle: Log\n---\n\n# Log\n",
    "05-todo/research-topics.md": "---\ntype: map\nstatus: reference\ntrust: human_edit\ntitle: Research topics\n---\n\n# Research topics\n",
    "30-reviews/gap-queue.md": "---\ntype: map\nstatus: reference\ntrust: human_edit\ntitle: Gap queue\n---\n\n# Gap queue\n",
}


class VaultInitError(RuntimeError):
    pass


def looks_like_vault(path: Path) -> bool:
    return (path / "SCHEMA.md").exists() or all(
        (path / d).is_dir() for d in (vault_layout.INBOX, vault_layout.WIKI)
    )


def init_vault(path: Path) -> bool:
    """Create the layout. Refuses a non-empty folder that is not a vault. Returns True if anything was created."""
    if path.exists() and not path.is_dir():
        raise VaultInitError(f"{path} exists and is not a folder")
    if path.is_dir() and any(p for p in path.iterdir() if p.name != ".git") and not looks_like_vault(path):
        raise VaultInitError(f"{path} is not empty and does not look like a vault; choose an empty folder")
    path.mkdir(parents=True, exist_ok=True)
    vault = Vault(root=str(path))
    created = False
    for folder in vault_layout.FOLDERS:
        target = path / folder
        if not target.exists():
            target.mkdir(parents=True)
            (target / ".gitkeep").touch()
            created = True
    for rel, text in {"SCHEMA.md": vault_layout.SCHEMA_MD, **SEED_FILES}.items():
        if not (path / rel).exists():
            vault.write_text(rel, text)
            created = True
    vault.init_git()
    vault.commit("hippo init: vault layout")
    return created
