"""`hippo init`: lay out a new vault, or adopt an existing folder of notes (an Obsidian vault) as it is.

An empty folder gets the layout, the seed pages and a git repository. A folder that already holds a
person's notes gets only what the pipeline needs (its system folders and SCHEMA.md), listed first and
applied only when confirmed (`--yes`); nothing of the person's is moved or rewritten, and the init
commit holds only the added files.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, Field

from hippo_core.vault import frontmatter, vault_layout
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
KEEP = ".gitkeep"  # an empty folder git can track


class VaultInitError(RuntimeError):
    pass


class InitPlan(BaseModel):
    """What `hippo init` adds to a folder: nothing else is created, and nothing existing is changed."""

    path: str
    adopting: bool  # the folder holds a person's files: only system folders and SCHEMA.md are added
    folders: list[str] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)  # vault-relative, never an existing file
    git_init: bool = False
    # Adopting a folder that is not a git repository: the person's files, committed first as they are, so
    # every later commit sits on top of them (a folder already under git keeps its history untouched).
    own_files: list[str] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.folders or self.files or self.git_init)

    def describe(self) -> str:
        lines = [f"hippo init would add to {self.path}:"]
        lines += [f"  folder  {f}/" for f in self.folders]
        lines += [f"  file    {f}" for f in self.files]
        if self.git_init and self.own_files:
            shown = ", ".join(self.own_files[:5]) + (
                f" and {len(self.own_files) - 5} more" if len(self.own_files) > 5 else ""
            )
            lines.append(
                f"  git     a repository (.git/): a first commit of your {len(self.own_files)} file(s) as they are "
                f"({shown}), then one commit of only the files above"
            )
        elif self.git_init:
            lines.append("  git     a repository (.git/), committing only the files above")
        elif self.files:
            lines.append("  git     one commit in your repository, holding only the files above")
        if self.adopting:
            lines.append("Your files stay where they are, unchanged.")
        return "\n".join(lines)


def looks_like_vault(path: Path) -> bool:
    return Vault(root=str(path)).is_initialised()


def _link_on_the_way(root: Path, rel: str) -> Path | None:
    """The first symbolic link among `root/rel` and the folders leading to it inside `root` (None: none)."""
    here = root
    for part in Path(rel).parts:
        here = here / part
        if here.is_symlink():
            return here
        if not here.exists():
            return None
    return None


def _refuse_links(root: Path, rels: list[str]) -> None:
    """Init creates nothing through a link: a system folder or file that is a link could point anywhere."""
    for rel in rels:
        link = _link_on_the_way(root, rel)
        if link is not None:
            try:
                target = os.readlink(link)
            except OSError:
                target = "?"
            raise VaultInitError(
                f"{link} is a symbolic link (to {target}); hippo init creates nothing through links. "
                "Replace it with a real folder or file, or remove it, then run hippo init again"
            )


def plan_init(path: Path) -> InitPlan:
    """What init would add to `path` (a missing or empty folder gets the full layout with seed pages).
    Raises VaultInitError when a path init would use is a symbolic link."""
    if path.exists() and not path.is_dir():
        raise VaultInitError(f"{path} exists and is not a folder")
    if path.is_dir():
        _refuse_links(path, [*vault_layout.FOLDERS, "SCHEMA.md", *SEED_FILES])
    own = path.is_dir() and any(p.name != ".git" for p in path.iterdir())
    adopting = own and not looks_like_vault(path)
    folders = [f for f in vault_layout.FOLDERS if not (path / f).is_dir()]
    candidates = ["SCHEMA.md"] if adopting else ["SCHEMA.md", *SEED_FILES]
    files = [rel for rel in candidates if not (path / rel).exists()]
    files += [f"{f}/{KEEP}" for f in folders]
    git_init = not (path / ".git").exists()
    return InitPlan(
        path=str(path.resolve()),
        adopting=adopting,
        folders=folders,
        files=files,
        git_init=git_init,
        own_files=_own_files(path) if adopting and git_init else [],
    )


def _own_files(root: Path) -> list[str]:
    """The person's files (vault-relative, sorted): what the first commit of an adopted folder holds."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        found += [Path(dirpath, n).relative_to(root).as_posix() for n in filenames]
    return sorted(found)


def apply_plan(plan: InitPlan) -> str | None:
    """Create exactly what the plan lists; never overwrite. Returns the init commit's sha (None if none)."""
    path = Path(plan.path)
    path.mkdir(parents=True, exist_ok=True)
    _refuse_links(path, [*plan.folders, *plan.files])  # a link made since the plan was shown
    vault = Vault(root=str(path))
    if plan.own_files:
        vault.init_git()
        vault.commit("Your notes as they were when hippo init adopted this folder")
    for folder in plan.folders:
        (path / folder).mkdir(parents=True, exist_ok=True)
    texts = {"SCHEMA.md": vault_layout.SCHEMA_MD, **SEED_FILES}
    for rel in plan.files:
        target = path / rel
        if target.exists():
            continue  # appeared since the plan was made: a person's file is never replaced
        if rel.endswith("/" + KEEP):
            target.touch()
        else:
            vault.write_text(rel, texts[rel])
    vault.init_git()  # the history of an adopted folder starts with the person's notes (above)
    what = "adopt an existing vault" if plan.adopting else "vault layout"
    # Only what init added: a person's files, and what they staged themselves, stay out of this commit.
    return vault.commit(f"hippo init: {what}", plan.files)


def init_vault(path: Path, adopt: bool = True) -> bool:
    """Create the layout, or adopt a folder of notes. Returns True if anything was created.

    `adopt=False` refuses a non-empty folder that is not a vault (the caller shows the plan first).
    """
    plan = plan_init(path)
    if plan.adopting and not adopt:
        raise VaultInitError(f"{path} holds files and is not a vault yet; run `hippo init --yes {path}`")
    apply_plan(plan)
    return bool(plan.folders or plan.files)
