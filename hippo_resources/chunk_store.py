"""The parquet tables of documents and chunks under HIPPO_HOME (rebuildable from the vault).

Two small tables describe what the vector store lacks or hides, so other parts can honour them:
- `pending_vectors.parquet` + `vector_state.json`: chunks indexed lexically whose vectors are still
  waiting (the embedder was unreachable); the next healthy run embeds exactly those.
- `vector_ledger.parquet` + `vector_ledger.json`: one row per vector of the live collection (id, the
  metadata stored with it, dimension, norm), written by `embeddings` after the store changed and its state
  file removed before the store changes; it holds while the state names the collection and its count.
  The librarian checks its hits' embed_hash against it while the state file is the one it read.
- `deleted_chunks.parquet`: the deleted set, chunk rows of notes that left the vault, with `deleted_at`;
  they are in no live table (chunks, lexical generation, live vector collection) and are purged after
  `retention_days` or by `hippo gc`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import polars as pl
from dagster import ConfigurableResource

from hippo_resources.files import write_text_atomic
from hippo_resources.tables import file_identity, read_table, write_table

DOCUMENTS = "documents.parquet"
CHUNKS = "chunks.parquet"
# Written by the memory domain's conversation_chunks; CONVERSATION_CHUNKS is merged into CHUNKS by `chunks`.
CONVERSATION_CHUNKS = "conversation_chunks.parquet"
CONVERSATIONS = "conversations.parquet"
MESSAGES = "messages.parquet"
SEGMENTS = "segments.parquet"
PENDING_VECTORS = "pending_vectors.parquet"
VECTOR_STATE = "vector_state.json"
DELETED_CHUNKS = "deleted_chunks.parquet"
VECTOR_LEDGER = "vector_ledger.parquet"
VECTOR_LEDGER_STATE = "vector_ledger.json"
# Read by several steps of every run: kept in memory while unchanged on disk (`hippo_resources.tables`).
KEPT = frozenset({DOCUMENTS, CHUNKS})

PENDING_SCHEMA: dict[str, pl.DataType] = {"chunk_id": pl.Utf8(), "embed_hash": pl.Utf8(), "path": pl.Utf8()}
# The deleted set: what the vector store knew of each chunk of a note that left the vault, and when.
DELETED_SCHEMA: dict[str, pl.DataType] = {
    **{k: pl.Utf8() for k in ("chunk_id", "path", "anchor", "lane", "status", "trust", "embed_hash", "role")},
    "deleted_at": pl.Float64(),
}


class CorruptTableError(RuntimeError):
    """A table exists but cannot be read as parquet."""


class ChunkStore(ConfigurableResource):
    root: str
    retention_days: float = (
        7.0  # how long soft-deleted chunks and vectors are kept (HIPPO_DELETE_RETENTION_DAYS)
    )

    @property
    def path(self) -> Path:
        return Path(self.root)

    def write(self, name: str, frame: pl.DataFrame) -> Path:
        """Write a table atomically (temp + fsync + rename); the big ones stay in memory (`tables`)."""
        return write_table(self.path / name, frame, keep=name in KEPT)

    def read(self, name: str, columns: list[str] | None = None) -> pl.DataFrame:
        """A table (only `columns` when given: a check that needs no text reads none)."""
        target = self.path / name
        if not target.exists():
            raise FileNotFoundError(
                f"{target} does not exist yet: materialize the assets first (`hippo run`)"
            )
        try:
            return read_table(target, columns=columns, keep=name in KEPT)
        except pl.exceptions.PolarsError as exc:
            raise CorruptTableError(
                f"{target} is not a readable parquet table ({type(exc).__name__}: {str(exc)[:200]}); "
                "it is rebuilt from the vault by the next `hippo run`"
            ) from exc

    def documents(self) -> pl.DataFrame:
        return self.read(DOCUMENTS)

    def chunks(self) -> pl.DataFrame:
        return self.read(CHUNKS)

    # --- vectors waiting for the embedder ------------------------------------------------------
    def write_pending(self, frame: pl.DataFrame, reason: str | None) -> None:
        """Record the chunks without a vector and why (None: the embedder answered)."""
        self.write(PENDING_VECTORS, frame.select(list(PENDING_SCHEMA)).cast(PENDING_SCHEMA))
        state = {
            "status": "degraded" if frame.height else "ok",
            "reason": reason if frame.height else None,
            "pending_vectors": frame.height,
            "updated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        write_text_atomic(self.path / VECTOR_STATE, json.dumps(state, ensure_ascii=False, indent=2))

    def pending(self) -> pl.DataFrame:
        """Chunks recorded as waiting for a vector (empty when none or never recorded)."""
        try:
            return self.read(PENDING_VECTORS)
        except (FileNotFoundError, CorruptTableError):
            return pl.DataFrame(schema=PENDING_SCHEMA)

    def vector_state(self) -> dict[str, Any]:
        """`{"status": "ok"|"degraded", "reason", "pending_vectors", "updated"}` of the last embedding step."""
        try:
            return json.loads((self.path / VECTOR_STATE).read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {"status": "ok", "reason": None, "pending_vectors": 0, "updated": None}

    # --- the vector ledger: what the live collection holds ------------------------------------
    def ledger_state(self) -> dict[str, Any] | None:
        """The ledger's state (`collection`, `vectors`, `written`, ...); None when none holds now."""
        try:
            state = json.loads((self.path / VECTOR_LEDGER_STATE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return state if isinstance(state, dict) else None

    def ledger_identity(self) -> tuple[int, int, int] | None:
        """The state file's identity: it changes (or is None) as soon as a run starts changing the store."""
        return file_identity(self.path / VECTOR_LEDGER_STATE)

    def forget_ledger(self) -> None:
        """Called before the store changes: until a new ledger is written, none holds."""
        (self.path / VECTOR_LEDGER_STATE).unlink(missing_ok=True)

    def read_ledger(self, collection: Any, columns: list[str] | None = None) -> pl.DataFrame | None:
        """The ledger (only `columns` when given) when its state names this collection with the count the
        collection has; else None."""
        state = self.ledger_state()
        if state is None or state.get("collection") != str(collection.id):
            return None
        try:
            ledger = pl.read_parquet(self.path / VECTOR_LEDGER, columns=columns)
        except (OSError, pl.exceptions.PolarsError):
            return None
        if ledger.height != state.get("vectors") or collection.count() != ledger.height:
            return None
        return ledger

    # --- the deleted set ----------------------------------------------------------------------
    def deleted(self) -> pl.DataFrame:
        """Chunk rows of soft-deleted notes, with `deleted_at` (epoch seconds); empty when none."""
        try:
            return self.read(DELETED_CHUNKS)
        except (FileNotFoundError, CorruptTableError):
            return pl.DataFrame(schema=DELETED_SCHEMA)

    def write_deleted(self, frame: pl.DataFrame) -> None:
        self.write(DELETED_CHUNKS, frame)

    def retention_cutoff(self, now: float | None = None) -> float:
        """Epoch seconds before which a soft-deleted chunk is purged."""
        return (time.time() if now is None else now) - self.retention_days * 86400
