"""The parquet tables of documents and chunks under HIPPO_HOME (rebuildable from the vault)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from dagster import ConfigurableResource

from hippo_resources.files import write_atomic

DOCUMENTS = "documents.parquet"
CHUNKS = "chunks.parquet"
# Written by the memory domain's conversation_chunks; CONVERSATION_CHUNKS is merged into CHUNKS by `chunks`.
CONVERSATION_CHUNKS = "conversation_chunks.parquet"
CONVERSATIONS = "conversations.parquet"
MESSAGES = "messages.parquet"
SEGMENTS = "segments.parquet"


class ChunkStore(ConfigurableResource):
    root: str

    @property
    def path(self) -> Path:
        return Path(self.root)

    def write(self, name: str, frame: pl.DataFrame) -> Path:
        """Write a table atomically (temp + fsync + rename)."""
        return write_atomic(self.path / name, frame.write_parquet)

    def read(self, name: str) -> pl.DataFrame:
        target = self.path / name
        if not target.exists():
            raise FileNotFoundError(
                f"{target} does not exist yet: materialize the assets first (`hippo run`)"
            )
        return pl.read_parquet(target)

    def documents(self) -> pl.DataFrame:
        return self.read(DOCUMENTS)

    def chunks(self) -> pl.DataFrame:
        return self.read(CHUNKS)
