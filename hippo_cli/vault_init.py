"""`hippo init`: lay out a new vault (or complete an existing one) and put it under git."""

from __future__ import annotations

from pathlib import Path

from hippo_core import frontmatter, vault_layout
from hippo_resources.vault import Vault


def _seed(title: str, body: str = "") -> str:
    fields = {"type": "map", "status": "reference", "trust": "human_edit", "title": title}
    return frontmatter.render(fields, f"# {title}\n" + (f"\n{body}\n" if body else ""))


SEED_FILES = {
    "HOME.md": _seed("Home", "Start here."),
    "index.md": _seed("Index"),
    "log.md": _seed("Log"),
    "05-todo/research-topics.md": _seed("Research topics"),
    "30-reviews/gap-queue.md": _seed("Gap queue"),
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
