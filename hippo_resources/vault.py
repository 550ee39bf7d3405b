"""The vault on disk and its git history: the one resource that writes canonical files."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from dagster import ConfigurableResource

from hippo_core import vault_layout

GIT_IDENTITY = ("-c", "user.name=Hippocampus", "-c", "user.email=hippocampus@localhost")


class VaultError(RuntimeError):
    pass


class Vault(ConfigurableResource):
    """Files under the vault root, addressed by vault-relative POSIX paths."""

    root: str

    @property
    def path(self) -> Path:
        return Path(self.root).expanduser().resolve()

    def abs(self, rel: str) -> Path:
        p = (self.path / rel).resolve()
        if p != self.path and self.path not in p.parents:
            raise VaultError(f"{rel!r} points outside the vault")
        return p

    def rel(self, p: Path) -> str:
        try:
            return p.resolve().relative_to(self.path).as_posix()
        except ValueError:
            raise VaultError(f"{p} is outside the vault") from None

    def _inside(self, p: Path) -> bool:
        """False for a symlink that leads out of the vault: never read or index through it."""
        return self.path in p.resolve().parents

    def check_exists(self) -> None:
        if not self.path.is_dir():
            raise VaultError(
                f"vault not found at {self.path}: run `hippo init {self.path}` or set HIPPO_VAULT"
            )

    def ensure_layout(self) -> None:
        for folder in vault_layout.FOLDERS:
            self.abs(folder).mkdir(parents=True, exist_ok=True)

    def inbox_files(self) -> list[str]:
        """Files waiting in the inbox (not hidden, not in .processed), sorted for determinism."""
        inbox = self.abs(vault_layout.INBOX)
        if not inbox.is_dir():
            return []
        return sorted(
            self.rel(p)
            for p in inbox.iterdir()
            if p.is_file() and not p.name.startswith(".") and self._inside(p)
        )

    def markdown_files(self) -> Iterator[str]:
        """Every Markdown file of the vault (hidden folders such as .git skipped), sorted."""
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.path):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in filenames:
                p = Path(dirpath) / name
                if (
                    name.lower().endswith((".md", ".markdown"))
                    and not name.startswith(".")
                    and self._inside(p)
                ):
                    out.append(self.rel(p))
        yield from sorted(out)

    def read_bytes(self, rel: str) -> bytes:
        return self.abs(rel).read_bytes()

    def exists(self, rel: str) -> bool:
        return self.abs(rel).exists()

    def write_text(self, rel: str, text: str) -> None:
        """Write atomically (temp file + fsync + rename): Obsidian never sees half a note."""
        target = self.abs(rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp")
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)

    def move(self, src: str, dst: str) -> str:
        """Move a file; if the destination exists, a numeric suffix keeps both."""
        target = self.abs(dst)
        target.parent.mkdir(parents=True, exist_ok=True)
        n = 1
        while target.exists():
            target = target.with_name(f"{Path(dst).stem}.{n}{Path(dst).suffix}")
            n += 1
        shutil.move(str(self.abs(src)), str(target))
        return self.rel(target)

    # --- git -------------------------------------------------------------------------------
    def is_git_repo(self) -> bool:
        return (self.path / ".git").exists()

    def git(self, *args: str) -> str:
        proc = subprocess.run(
            ["git", *GIT_IDENTITY, "-C", str(self.path), *args], capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            raise VaultError(f"git {' '.join(args)} failed: {proc.stderr.strip() or proc.stdout.strip()}")
        return proc.stdout

    def init_git(self) -> None:
        if not self.is_git_repo():
            self.git("init", "-q", "-b", "main")

    def commit(self, message: str, paths: list[str] | None = None) -> str | None:
        """One commit for a run's writes: the given paths (created, changed or moved away), or everything.

        Returns the commit sha; None when nothing changed or the vault is not a git repository.
        """
        if not self.is_git_repo():
            return None
        if paths is None:
            self.git("add", "-A")
        else:
            present = [p for p in paths if self.abs(p).exists()]
            gone = [p for p in paths if not self.abs(p).exists()]
            if present:
                self.git("add", "--", *present)
            if gone:
                self.git("rm", "-q", "--cached", "--ignore-unmatch", "--", *gone)
        if not self.git("diff", "--cached", "--name-only").strip():
            return None
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD").strip()
