"""The vector ledger and the trash bookkeeping: what the live Chroma collection holds, kept beside the
chunk tables so a run need not read every id, metadata and vector back from Chroma.

One owner for the contract that `embeddings`, `vectors_match_chunks`, `hippo gc` and
`hippo_search.stored_hashes` share: the ledger's schema (`LEDGER_SCHEMA`), when it holds (`read_ledger`:
same collection, same count), how it is rebuilt from the store (`ledger_from_store`), written after the
store changed (`write_ledger`), and how the deleted set and the trash are kept in step (`settle_trash`,
`purge_deleted`). The asset bodies call these; they hold no file or Chroma detail themselves.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection
from typing import Any

import numpy as np
import polars as pl

from hippo_resources.chunk_store import (
    DELETED_CHUNKS,
    DELETED_SCHEMA,
    VECTOR_LEDGER,
    VECTOR_LEDGER_STATE,
    ChunkStore,
)
from hippo_resources.files import write_text_atomic
from hippo_resources.vector_store import VectorStore

VECTOR_METADATA = ("path", "anchor", "lane", "status", "trust", "embed_hash", "role")
"""What the vector store keeps beside each vector: enough to filter inside the nearest-neighbour search."""

LEDGER_SCHEMA: dict[str, pl.DataType] = {
    "chunk_id": pl.Utf8(),
    **{k: pl.Utf8() for k in VECTOR_METADATA},
    "dim": pl.Int64(),
    "norm": pl.Float64(),
}
"""One row per vector of the live collection: its id, the metadata stored with it, its dimension and norm.
`embeddings` diffs the chunk table against it instead of reading every id and metadata from Chroma, and
`vectors_match_chunks` checks it instead of reading every vector. It is written by `embeddings` only, after
the store changed, and removed before the store changes: a run killed in between leaves no ledger, and the
next run reads the store itself. It holds while the collection's id and count match its state file."""


def read_ledger(chunk_store: ChunkStore, collection: Any) -> pl.DataFrame | None:
    """The ledger when it describes this collection (same id, same count) in this schema; else None."""
    ledger = chunk_store.read_ledger(collection)
    return ledger if ledger is not None and dict(ledger.schema) == LEDGER_SCHEMA else None


def ledger_from_store(vector_store: VectorStore, collection: Any) -> pl.DataFrame:
    """The ledger read from the store: every id with its metadata, dimension and norm."""
    stored = vector_store.existing(collection)
    ids, mat = vector_store.vectors(collection=collection)
    sizes = dict(norms(ids, mat))
    rows = [
        {
            "chunk_id": cid,
            **{k: (None if meta.get(k) is None else str(meta.get(k))) for k in VECTOR_METADATA},
            "dim": sizes.get(cid, (0, 0.0))[0],
            "norm": sizes.get(cid, (0, 0.0))[1],
        }
        for cid, meta in stored.items()
    ]
    return pl.DataFrame(rows, schema=LEDGER_SCHEMA)


def norms(ids: list[str], mat: np.ndarray) -> list[tuple[str, tuple[int, float]]]:
    if not len(ids):
        return []
    lengths = np.linalg.norm(np.asarray(mat, dtype=np.float32), axis=1).tolist()
    return [(cid, (int(mat.shape[1]), float(n))) for cid, n in zip(ids, lengths, strict=True)]


def write_ledger(
    chunk_store: ChunkStore,
    collection: Any,
    frame: pl.DataFrame,
    before: pl.DataFrame,
    written: dict[str, tuple[int, float]],
    waiting: list[str],
    full_read: bool,
) -> str | None:
    """After the store changed: one row per chunk with a vector (every chunk but the waiting ones), the
    metadata this run stored, the dimension and norm of each vector written now or recorded before.
    Returns why no ledger was written (the next run then reads the store), or None."""
    sizes = before.select("chunk_id", "dim", "norm")
    if written:
        fresh = pl.DataFrame(
            {
                "chunk_id": list(written),
                "dim": [d for d, _ in written.values()],
                "norm": [n for _, n in written.values()],
            },
            schema={"chunk_id": pl.Utf8(), "dim": pl.Int64(), "norm": pl.Float64()},
        )
        sizes = pl.concat([sizes.join(fresh, on="chunk_id", how="anti"), fresh])
    ledger = (
        frame.select("chunk_id", *[pl.col(k).fill_null("").alias(k) for k in VECTOR_METADATA])
        .filter(~pl.col("chunk_id").is_in(waiting))
        .join(sizes, on="chunk_id", how="left")
        .select(list(LEDGER_SCHEMA))
        .cast(LEDGER_SCHEMA)
    )
    count = collection.count()
    if count != ledger.height or ledger["dim"].null_count():
        return (
            f"vector ledger not written: the store holds {count} vectors, the chunks say {ledger.height}; "
            "the next run reads the store"
        )
    chunk_store.write(VECTOR_LEDGER, ledger)
    state = {
        "collection": str(collection.id),
        "vectors": ledger.height,
        "written": sorted(written),  # read back by vectors_match_chunks
        "from_full_read": full_read,
        "updated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    write_text_atomic(chunk_store.path / VECTOR_LEDGER_STATE, json.dumps(state))
    return None


def settle_trash(
    chunk_store: ChunkStore,
    vector_store: VectorStore,
    reused_hashes: set[str],
    current_paths: set[str],
    left: list[str],
    stored: dict[str, dict[str, Any]],
    now: float,
) -> int:
    """Keep the deleted set and the trash in step: add what just left, drop what came back or was reused,
    purge what has been deleted longer than the retention period. Returns how many vectors were purged."""
    cutoff = chunk_store.retention_cutoff(now)
    trash = vector_store.trashed()
    back = [
        cid
        for cid, meta in trash.items()
        if meta.get("embed_hash") in reused_hashes or meta.get("path", "") in current_paths
    ]
    vector_store.drop_from_trash(back)
    purged = purge_deleted(chunk_store, vector_store, older_than=cutoff, keep=set(left))
    rows = [
        {
            **{k: str(stored[cid].get(k) or "") for k in DELETED_SCHEMA if k != "deleted_at"},
            "chunk_id": cid,
            "deleted_at": now,
        }
        for cid in left
    ]
    deleted = chunk_store.deleted()
    if rows:
        added = pl.DataFrame(rows, schema=DELETED_SCHEMA)
        deleted = pl.concat([deleted.select(list(DELETED_SCHEMA)).cast(DELETED_SCHEMA), added])
    if deleted.height or rows or (chunk_store.path / DELETED_CHUNKS).exists():
        kept = deleted.filter(
            ~pl.col("path").is_in(list(current_paths)) & (pl.col("deleted_at") >= cutoff)
        ).unique("chunk_id", keep="last")
        if rows or kept.height != deleted.height or not (chunk_store.path / DELETED_CHUNKS).exists():
            chunk_store.write_deleted(kept.select(list(DELETED_SCHEMA)).cast(DELETED_SCHEMA))
    return purged


def purge_deleted(
    chunk_store: ChunkStore, vector_store: VectorStore, older_than: float | None, keep: Collection[str] = ()
) -> int:
    """Purge soft-deleted vectors and rows deleted before `older_than` (epoch seconds; None: all of them),
    except the ids in `keep` (what this run trashed: kept until a later run even with a retention of 0).
    Returns how many vectors were purged. `embeddings` calls it with the retention cutoff, `hippo gc` too."""
    purged = vector_store.purge_trash(older_than=older_than, keep=keep)
    deleted = chunk_store.deleted()
    if deleted.height:
        keep = deleted.filter(pl.lit(False) if older_than is None else pl.col("deleted_at") >= older_than)
        if keep.height != deleted.height:
            chunk_store.write_deleted(keep)
    return len(purged)


VEC_SCHEMA: dict[str, pl.DataType] = {
    "chunk_id": pl.Utf8(),
    "vector_count": pl.Int64(),
    "dim": pl.Int64(),
    "norm": pl.Float64(),
    "stored_embed_hash": pl.Utf8(),
}


def stored_vectors(vector_store: VectorStore, collection: Any) -> pl.DataFrame:
    """One row per stored vector: id, dimension, norm and the embed_hash stored with it."""
    ids, mat = vector_store.vectors(collection=collection)
    stored = vector_store.existing(collection)
    return pl.DataFrame(
        {
            "chunk_id": ids,
            "vector_count": [1] * len(ids),
            "dim": [int(mat.shape[1])] * len(ids) if len(ids) else [],
            "norm": np.linalg.norm(mat, axis=1).tolist() if len(ids) else [],
            "stored_embed_hash": [stored.get(i, {}).get("embed_hash") for i in ids],
        },
        schema=VEC_SCHEMA,
    )


def ledger_vectors(
    ledger: pl.DataFrame, written: list[str], vector_store: VectorStore, collection: Any
) -> pl.DataFrame:
    """The ledger's rows, those of the vectors the last run wrote replaced by what the store gives back
    (a written vector the store lacks counts as missing)."""
    ids: list[str] = []
    dims: list[int] = []
    lengths: list[float] = []
    hashes: list[str | None] = []
    for cid, vector, meta in vector_store.read_back(written, collection):
        ids.append(cid)
        dims.append(int(vector.shape[0]))
        lengths.append(float(np.linalg.norm(vector)))
        hashes.append(meta.get("embed_hash"))
    back = pl.DataFrame(
        {
            "chunk_id": ids,
            "vector_count": [1] * len(ids),
            "dim": dims,
            "norm": lengths,
            "stored_embed_hash": hashes,
        },
        schema=VEC_SCHEMA,
    )
    kept = ledger.filter(~pl.col("chunk_id").is_in(written)).select(
        "chunk_id",
        pl.lit(1, dtype=pl.Int64).alias("vector_count"),
        "dim",
        "norm",
        pl.col("embed_hash").alias("stored_embed_hash"),
    )
    return pl.concat([kept, back])


__all__ = [
    "LEDGER_SCHEMA",
    "VECTOR_METADATA",
    "VEC_SCHEMA",
    "ledger_from_store",
    "ledger_vectors",
    "norms",
    "purge_deleted",
    "read_ledger",
    "settle_trash",
    "stored_vectors",
    "write_ledger",
]
