"""What changed in the vault between two looks, from each file's size and modification time.

A look is a mapping of vault-relative path → (size, mtime_ns): cheap to take (one stat per file, no
reads), and enough to notice an edit, a new note and a removal. Its fingerprint is the whole-vault
sensor's cursor; the difference of two looks is what `hippo watch` re-indexes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

Stat = tuple[int, int]  # (size in bytes, mtime in ns)


def fingerprint(look: Mapping[str, Stat]) -> str:
    """One short digest of every path with its size and mtime: equal looks, equal fingerprints."""
    digest = hashlib.sha256()
    for rel in sorted(look):
        size, mtime = look[rel]
        digest.update(f"{rel}\0{size}\0{mtime}\n".encode())
    return digest.hexdigest()[:32]


def changed_paths(before: Mapping[str, Stat], after: Mapping[str, Stat]) -> list[str]:
    """Paths added, removed or changed (size or mtime) from one look to the next, sorted."""
    return sorted(rel for rel in before.keys() | after.keys() if before.get(rel) != after.get(rel))
