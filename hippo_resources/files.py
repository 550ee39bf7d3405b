"""Atomic file writes: a reader (Obsidian, the librarian, another run) never sees half a file.

Write to a hidden temporary sibling, fsync it, rename it over the target, fsync the folder. Every store
that replaces a file goes through `write_atomic`: the vault, the chunk tables and the lexical store.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def fsync_file(path: Path) -> None:
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


def fsync_dir(path: Path) -> None:
    """Persist a folder's entries (a rename); best effort where folders cannot be opened (Windows)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(target: Path, write: Callable[[Path], object]) -> Path:
    """Replace `target` with what `write(temporary_path)` writes, atomically."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    write(tmp)
    fsync_file(tmp)
    os.replace(tmp, target)
    fsync_dir(target.parent)
    return target


def write_text_atomic(target: Path, text: str) -> Path:
    """UTF-8 text with `\\n` line endings, written atomically."""

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)

    return write_atomic(target, write)
