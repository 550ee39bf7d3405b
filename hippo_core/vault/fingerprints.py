"""Content hashes and stable ids: everything incremental keys on these."""

from __future__ import annotations

import hashlib


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    return sha256_bytes(text.encode("utf-8"))


def chunk_id(path: str, anchor: str, ordinal: int) -> str:
    """Stable id of a chunk: its place in the vault (path, section, position in the section).

    The id survives edits of the text; the text's own hash decides whether it is re-embedded.
    """
    return sha256_text(f"{path}\x00{anchor}\x00{ordinal}")[:24]


def embed_hash(model_id: str, role: str, text: str) -> str:
    """Hash of the exact input sent to the embedding model; a vector is reused while it matches."""
    return sha256_text(f"{model_id}\x00{role}\x00{text}")
