"""Polars schemas of the derived tables, so an empty vault still yields well-typed tables."""

from __future__ import annotations

import polars as pl

from hippo_resources import vector_ledger

DOCUMENT_SCHEMA: dict[str, pl.DataType] = {
    "path": pl.Utf8(),
    "title": pl.Utf8(),
    "doc_type": pl.Utf8(),
    "status": pl.Utf8(),
    "trust": pl.Utf8(),
    "sector": pl.Utf8(),
    "sector_declared": pl.Utf8(),
    "aliases": pl.List(pl.Utf8()),
    "tags": pl.List(pl.Utf8()),
    "created": pl.Utf8(),
    "updated": pl.Utf8(),
    "date": pl.Utf8(),  # event time: `date:`, else `created:`, else the file's mtime (vault_documents)
    "lane": pl.Utf8(),
    "body": pl.Utf8(),
    "body_hash": pl.Utf8(),
}

CHUNK_SCHEMA: dict[str, pl.DataType] = {
    "chunk_id": pl.Utf8(),
    "path": pl.Utf8(),
    "anchor": pl.Utf8(),
    "heading": pl.Utf8(),
    "heading_path": pl.List(pl.Utf8()),
    "ordinal": pl.Int64(),
    "title": pl.Utf8(),
    "text": pl.Utf8(),
    "index_text": pl.Utf8(),
    "content_hash": pl.Utf8(),
    "embed_hash": pl.Utf8(),
    "lane": pl.Utf8(),
    "doc_type": pl.Utf8(),
    "status": pl.Utf8(),
    "trust": pl.Utf8(),
    "sector": pl.Utf8(),
    "aliases": pl.List(pl.Utf8()),
    "tags": pl.List(pl.Utf8()),
    "updated": pl.Utf8(),
    # The source's event time (hippo_core/ranking/time.py): what `as_of` masks on and results carry.
    "date": pl.Utf8(),
    # Conversation chunks (lane `conversations`); null for vault documents.
    "conversation_id": pl.Utf8(),
    "project": pl.Utf8(),
    "role": pl.Utf8(),
    "is_tool": pl.Boolean(),
    "granularity": pl.Utf8(),
    "position": pl.Int64(),
}

# What the vector store keeps beside each vector (owned by the vector ledger's resource module).
VECTOR_METADATA = vector_ledger.VECTOR_METADATA
