"""Group `index`: the vault parsed into documents and chunks, embedded into Chroma and indexed by BM25."""

# No `from __future__ import annotations` here: Dagster reads the Config and resource
# annotations of asset functions at definition time and cannot resolve them from strings.

import datetime as dt
import hashlib
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    Config,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)
from pydantic import Field

from expectations import suites
from hippo_assets import check_memo
from hippo_assets.index import GROUP
from hippo_assets.index.tables import CHUNK_SCHEMA, DOCUMENT_SCHEMA, VECTOR_METADATA
from hippo_assets.ingest.assets import sources
from hippo_core.index import chunking
from hippo_core.index.bm25 import BM25Params
from hippo_core.index.bm25_update import Generation
from hippo_core.index.chunking import ChunkParams
from hippo_core.index.tokenize import Tokenizer, TokenizerConfig
from hippo_core.ranking import time as event_time
from hippo_core.ranking.time import iso_time, note_date
from hippo_core.safety import text_input
from hippo_core.safety.scrub import scrub, scrub_value
from hippo_core.safety.text_input import BadTextError
from hippo_core.vault import documents, fingerprints, frontmatter, vault_layout
from hippo_core.vault.documents import (
    Document,
    check_removal,
    chunk_rows,
    document_key,
    foreign_value_report_from,
    parse_document,
    removal_kind,
)
from hippo_core.vault.frontmatter import FrontmatterError
from hippo_core.vault.vault_layout import is_indexed
from hippo_resources import (
    ChunkStore,
    Embedder,
    EmbedderError,
    LexicalStore,
    Vault,
    VaultError,
    VectorStore,
    vector_ledger,
)
from hippo_resources.chunk_store import (
    CHUNKS,
    CONVERSATION_CHUNKS,
    DOCUMENTS,
    MESSAGES,
    PENDING_SCHEMA,
    PENDING_VECTORS,
    VECTOR_LEDGER_STATE,
    VECTOR_STATE,
    CorruptTableError,
)
from hippo_resources.files import write_text_atomic
from hippo_resources.scan_cache import ScanCache
from hippo_resources.tables import row_hashes
from hippo_resources.vector_store import VectorStoreCorrupt

# Kept in the scan cache beside each document row, so the run's report needs no second parse.
_REPORT_SCHEMA: dict[str, pl.DataType] = {"foreign_json": pl.Utf8, "frontmatter_problem": pl.Utf8}


def _parse_row(rel: str, data: bytes) -> dict:
    doc = parse_document(rel, data)
    return {
        **doc.model_dump(),
        "foreign_json": json.dumps(doc.foreign, ensure_ascii=False) if doc.foreign else None,
        "frontmatter_problem": doc.frontmatter_problem,
    }


def _note_report(table: pl.DataFrame, skipped: list[dict[str, str]]) -> dict:
    """What the scan skipped, values outside the contract (once per value), and ignored frontmatter.

    Read from the scan table's cached columns (issue 14 point 2's report), not by parsing notes again.
    """
    rows = table.filter(pl.col("error").is_null()).select("path", "foreign_json", "frontmatter_problem")
    foreign = [(p, json.loads(f)) for p, f, _ in rows.iter_rows() if f]
    ignored = [{"path": p, "reason": r} for p, _, r in rows.iter_rows() if r]
    return {
        "unknown_frontmatter_values": MetadataValue.json(foreign_value_report_from(foreign)),
        "frontmatter_ignored": MetadataValue.json(scrub_value(ignored)),
        "skipped_paths": MetadataValue.json(scrub_value(skipped)),
    }


@asset(
    group_name=GROUP,
    kinds={"markdown", "parquet"},
    deps=[sources],
    description="Every Markdown file outside 30-reviews, 90-system and the inbox, parsed against the "
    "frontmatter contract. A malformed file is reported in the metadata and skipped, never fatal. Only "
    "files whose size, mtime or content changed since the last scan are parsed again.",
)
def vault_documents(
    context: AssetExecutionContext, vault: Vault, chunk_store: ChunkStore
) -> MaterializeResult:
    vault.check_exists()
    cache = ScanCache(
        chunk_store.path,
        _parser_fingerprint(vault),
        {**DOCUMENT_SCHEMA, **_REPORT_SCHEMA},
        (BadTextError, FrontmatterError, OSError, VaultError),
    )
    found = vault.look()
    scan = cache.scan(
        (rel for rel in found.notes if is_indexed(rel)),
        stat=vault.note_stats(),
        read=lambda rel: vault.read_bytes(rel, max_bytes=vault.note_max_bytes),
        parse=_parse_row,
    )
    bad = scan.table.filter(pl.col("error").is_not_null())
    errors = [{"path": p, "error": e} for p, e in bad.select("path", "error").iter_rows()]
    for err in errors:
        context.log.warning(f"skipped {err['path']}: {err['error']}")
    frame = _with_file_dates(
        scan.table.filter(pl.col("error").is_null()).select(list(DOCUMENT_SCHEMA)), vault
    )
    mismatches = [
        {"path": p, "folder": f, "frontmatter": d}
        for p, f, d in frame.filter(
            (pl.col("sector").fill_null("") != "")
            & (pl.col("sector_declared").fill_null("") != "")
            & (pl.col("sector") != pl.col("sector_declared"))
        )
        .select("path", "sector", "sector_declared")
        .iter_rows()
    ]
    # Nothing read and no note gone (every row reused, as many as the table has): the same table again.
    unchanged = (
        not scan.parsed
        and not scan.rehashed_unchanged
        and scan.reused == scan.table.height
        and _rows(chunk_store.path / DOCUMENTS) == frame.height
        and cache.file.exists()
    )
    if not unchanged:
        chunk_store.write(DOCUMENTS, frame)
        cache.save(scan.table)
    by_status = dict(frame.group_by("status").len().iter_rows()) if frame.height else {}
    return MaterializeResult(
        metadata={
            "documents": frame.height,
            "malformed": len(errors),
            "malformed_files": MetadataValue.json(errors),
            **_note_report(scan.table, found.skipped),
            "sector_mismatches": MetadataValue.json(mismatches),
            "by_status": MetadataValue.json(by_status),
            "parsed": len(scan.parsed),
            "unchanged_after_hash": len(scan.rehashed_unchanged),
            "reused": scan.reused,
            "unchanged": unchanged,
        }
    )


def _with_file_dates(frame: pl.DataFrame, vault: Vault) -> pl.DataFrame:
    """A note with neither `date:` nor `created:` is dated by its file's history: its mtime (UTC)."""
    missing = frame.filter(pl.col("date").is_null())["path"].to_list() if frame.height else []
    if not missing:
        return frame
    stat = vault.note_stats()
    dates = {}
    for rel in missing:
        try:
            stamp = dt.datetime.fromtimestamp(stat(rel).st_mtime, dt.UTC)
        except OSError:
            continue
        dates[rel] = note_date(None, None, stamp)
    filled = pl.col("path").replace_strict(dates, default=None, return_dtype=pl.Utf8)
    return frame.with_columns(pl.coalesce(pl.col("date"), filled).alias("date"))


def _with_date(frame: pl.DataFrame) -> pl.DataFrame:
    """A conversation chunk table written before chunks had a `date` (until memory_job writes it again):
    each turn's date from its `updated`, the time it was written."""
    if "date" in frame.columns:
        return frame
    return frame.with_columns(pl.col("updated").map_elements(iso_time, return_dtype=pl.Utf8).alias("date"))


def _rows(table: Path) -> int | None:
    """Rows of a parquet table, from its footer; None when it is missing or unreadable."""
    try:
        return int(pl.scan_parquet(table).select(pl.len()).collect().item())
    except (OSError, pl.exceptions.PolarsError):
        return None


def _parser_fingerprint(vault: Vault) -> str:
    """The parsing code, the document schema and the vault root: a cached parse is valid while these hold."""
    h = hashlib.sha256(str(vault.path.resolve()).encode("utf-8"))
    h.update(repr(DOCUMENT_SCHEMA).encode("utf-8"))
    for module in (documents, frontmatter, text_input, vault_layout, fingerprints, event_time):
        h.update(Path(module.__file__ or "").read_bytes())
    return h.hexdigest()[:16]


class ChunksConfig(Config):
    max_chars: int = Field(default=900, description="Largest chunk, in characters.")
    overlap_chars: int = Field(default=150, description="Trailing sentences carried into the next chunk.")


CHUNK_SOURCES = "chunk_sources.json"
"""Beside `chunks.parquet`: each document's key (`documents.document_key`) and where its rows are, with
the table file's size and mtime, so the next run copies the rows of unchanged documents."""


@asset(
    group_name=GROUP,
    kinds={"polars", "parquet"},
    deps=[vault_documents, "conversation_chunks"],
    description="Heading-aware chunks (paragraph and sentence boundaries, with overlap), each with a stable "
    "id, a path#heading anchor, content and embed hashes and the governance fields. Only documents whose "
    "row changed are chunked again; the others' rows are copied from the last table, and an unchanged "
    "table is not written again.",
)
def chunks(
    context: AssetExecutionContext, config: ChunksConfig, chunk_store: ChunkStore, embedder: Embedder
) -> MaterializeResult:
    started = time.monotonic()
    docs = chunk_store.documents()
    params = ChunkParams(max_chars=config.max_chars, overlap_chars=config.overlap_chars)
    salt = _chunk_salt(embedder.model_id, params)
    previous = _previous_chunks(chunk_store, salt)
    before, before_docs, before_rows = previous or (pl.DataFrame(schema=CHUNK_SCHEMA), {}, 0)
    fresh: list[dict[str, Any]] = []
    pieces: list[np.ndarray] = []  # row numbers in `before`'s document rows followed by `fresh`
    sources: list[list[Any]] = []
    rechunked = start = 0
    keys = _document_keys(docs, salt)
    for i, (path, key) in enumerate(zip(docs["path"].to_list(), keys, strict=True)):
        old = before_docs.get(path)
        if old is not None and old[0] == key:
            first, n = old[1], old[2]
        else:
            record = docs.row(i, named=True)
            rows = chunk_rows(Document.model_validate(record), embedder.model_id, params)
            first, n = before_rows + len(fresh), len(rows)
            fresh.extend(rows)
            rechunked += 1
        pieces.append(np.arange(first, first + n, dtype=np.int64))
        sources.append([path, key, start, n])
        start += n
    order = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
    same_rows = previous is not None and not fresh and np.array_equal(order, np.arange(before_rows))
    frame = (
        before.head(before_rows)
        if same_rows
        else pl.concat([before.head(before_rows), pl.DataFrame(fresh, schema=CHUNK_SCHEMA)]).select(
            pl.all().gather(order)
        )
    )
    try:  # written by memory's conversation_chunks
        conversations = _with_date(chunk_store.read(CONVERSATION_CHUNKS)).select(list(CHUNK_SCHEMA))
    except FileNotFoundError:
        conversations = None
    except CorruptTableError as exc:
        # Left out until memory_job rewrites it; meanwhile its vectors wait in the trash, not lost.
        context.log.warning(f"conversation chunks left out this run: {exc}")
        conversations = None
    if conversations is not None:
        frame = pl.concat([frame, conversations])
    unchanged = same_rows and before.slice(before_rows).equals(
        conversations if conversations is not None else before.clear()
    )
    if not unchanged:
        written = chunk_store.write(CHUNKS, frame)
        state = {"salt": salt, "chunks_file": _file_stamp(written), "vault_rows": len(order)}
        write_text_atomic(chunk_store.path / CHUNK_SOURCES, json.dumps({**state, "documents": sources}))
    lengths = frame["text"].str.len_chars() if frame.height else pl.Series([0])
    return MaterializeResult(
        metadata={
            "chunks": frame.height,
            "documents": docs.height,
            "rechunked": rechunked,
            "new_rows": len(fresh),
            "unchanged": unchanged,
            "mean_chars": float(lengths.mean() or 0),
            "max_chars": int(lengths.max() or 0),
            "by_lane": MetadataValue.json(
                dict(frame.group_by("lane").len().iter_rows()) if frame.height else {}
            ),
            "seconds": round(time.monotonic() - started, 2),
        }
    )


_DOCUMENT_KEYS: dict[tuple[str, bytes], str] = {}
"""`document_key` by (salt, 128-bit hash of the documents row), from this process's last run: in `hippo
watch` every row but the edited notes' is the same as on the last pass, and is not turned into a dict and
hashed again (2 s at 10,000 notes)."""


def _document_keys(docs: pl.DataFrame, salt: str) -> list[str]:
    """`document_key` of every documents row, in order (those of unchanged rows from `_DOCUMENT_KEYS`)."""
    hashes = row_hashes(docs).tolist()
    keys: list[str] = []
    for i, h in enumerate(hashes):
        key = _DOCUMENT_KEYS.get((salt, h))
        keys.append(key if key is not None else document_key(docs.row(i, named=True), salt))
    _DOCUMENT_KEYS.clear()
    _DOCUMENT_KEYS.update(((salt, h), k) for h, k in zip(hashes, keys, strict=True))
    return keys


def _chunk_salt(model_id: str, params: ChunkParams) -> str:
    """What every document's chunk rows depend on besides the document: the model id (in embed_hash), the
    chunk sizes, the table schema and the chunking code."""
    h = hashlib.sha256(f"{model_id}\x00{params.model_dump_json()}\x00{CHUNK_SCHEMA!r}".encode())
    for module in (documents, chunking, fingerprints):
        h.update(Path(module.__file__ or "").read_bytes())
    return h.hexdigest()[:16]


def _file_stamp(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def _previous_chunks(
    chunk_store: ChunkStore, salt: str
) -> tuple[pl.DataFrame, dict[str, tuple[str, int, int]], int] | None:
    """The last chunk table, each document's (key, first row, rows) in it and how many rows are the vault
    documents' (conversation chunks follow them); None when there is nothing trustworthy to copy from."""
    try:
        state = json.loads((chunk_store.path / CHUNK_SOURCES).read_text(encoding="utf-8"))
        if state.get("salt") != salt or state.get("chunks_file") != _file_stamp(chunk_store.path / CHUNKS):
            return None
        before = chunk_store.chunks()
        spots = {str(p): (str(k), int(first), int(n)) for p, k, first, n in state["documents"]}
        rows = int(state["vault_rows"])
    except (OSError, ValueError, KeyError, TypeError, CorruptTableError):
        return None
    if dict(before.schema) != CHUNK_SCHEMA or rows > before.height:
        return None
    if any(first < 0 or first + n > rows for _, first, n in spots.values()):
        return None
    return before, spots, rows


@asset_check(
    asset=chunks,
    blocking=True,
    description="No empty chunk, unique ids, anchors, known governance values (GX).",
)
def chunks_are_valid(chunk_store: ChunkStore) -> AssetCheckResult:
    stamp = check_memo.file_stamp(chunk_store.path / CHUNKS)
    if check_memo.passed_on(chunk_store, "chunks_are_valid", stamp):
        return check_memo.unchanged_pass("the chunk table is")
    frame = chunk_store.read(
        CHUNKS, columns=["chunk_id", "anchor", "lane", "status", "trust", "text"]
    ).select(
        "chunk_id",
        "anchor",
        "lane",
        "status",
        "trust",
        pl.col("text").str.strip_chars().alias("text_stripped"),
    )
    result = check_memo.check_new_rows(chunk_store, "chunks_are_valid", "chunks", frame, suites.chunk_suite())
    return check_memo.remember(chunk_store, "chunks_are_valid", stamp, result)


class EmbeddingsConfig(Config):
    force: bool = Field(
        default=False,
        description="Allow a scan that removes more than half of the indexed notes, sources or conversations.",
    )


@asset(
    group_name=GROUP,
    kinds={"chroma", "python"},
    deps=[chunks],
    description="One vector per chunk in Chroma (cosine). Only chunks whose embed_hash changed are embedded; "
    "vectors of edited-away sections are removed; vectors of notes that left the vault move to the trash "
    "(purged after the retention period, reused when the note comes back). With the embedder unreachable "
    "the step still succeeds, `degraded`: the chunks without a vector are recorded and embedded by the next "
    "healthy run. A corrupt Chroma folder is set aside and rebuilt. A scan that would remove more than half "
    "of the indexed notes, of the sources or of the conversations is refused unless forced.",
)
def embeddings(
    context: AssetExecutionContext,
    config: EmbeddingsConfig,
    chunk_store: ChunkStore,
    embedder: Embedder,
    vector_store: VectorStore,
) -> MaterializeResult:
    frame = chunk_store.chunks()
    collection, set_aside = _open_vectors(context, vector_store)
    ledger = None if set_aside else vector_ledger.read_ledger(chunk_store, collection)
    full_read = ledger is None
    if ledger is None:  # no trustworthy ledger: read what the store holds (every id, metadata and norm)
        ledger = vector_ledger.ledger_from_store(vector_store, collection)
    current_paths = set(frame["path"].unique().to_list())
    indexed_paths = set(ledger["path"].unique().to_list())
    kind_of = {
        path: removal_kind(lane)
        for path, lane in ledger.select("path", "lane").unique(subset="path").iter_rows()
    }
    removed_docs = check_removal(indexed_paths, current_paths, config.force, kind_of=kind_of)

    # The diff is a join of the chunk table with the ledger: only changed rows become Python records.
    meta_cols = [pl.col(k).fill_null("").alias(k) for k in VECTOR_METADATA]
    joined = frame.join(
        ledger.select("chunk_id", *[pl.col(k).alias(f"stored_{k}") for k in VECTOR_METADATA]),
        on="chunk_id",
        how="left",
    )
    has_vector = pl.col("stored_embed_hash").is_not_null()
    same_text = has_vector & (pl.col("stored_embed_hash") == pl.col("embed_hash"))
    meta_differs = pl.any_horizontal(
        [pl.col(k).fill_null("") != pl.col(f"stored_{k}").fill_null("") for k in VECTOR_METADATA]
    )
    todo = joined.filter(~same_text).drop([f"stored_{k}" for k in VECTOR_METADATA]).to_dicts()
    retag = joined.filter(same_text & meta_differs).select("chunk_id", *meta_cols).to_dicts()
    had_vector = set(joined.filter(has_vector & ~same_text)["chunk_id"].to_list())
    vanished_rows = ledger.join(frame.select("chunk_id"), on="chunk_id", how="anti")
    vanished = vanished_rows["chunk_id"].to_list()
    left_rows = vanished_rows.filter(~pl.col("path").is_in(list(current_paths)))
    left = left_rows["chunk_id"].to_list()
    stored_left = {r["chunk_id"]: r for r in left_rows.to_dicts()}
    if todo or retag or vanished:
        chunk_store.forget_ledger()  # the store changes now: until the new ledger is written, none holds

    # Sections edited away go at once; whole notes that left the vault go to the trash (soft delete).
    vector_store.delete(sorted(set(vanished) - set(left)), collection)
    now = time.time()  # the trash and the deleted set keep sub-second times: two quick runs differ
    trashed = vector_store.move_to_trash(left, collection, deleted_at=now)

    # A note back within the retention period takes its vectors from the trash: nothing is re-embedded.
    reusable = vector_store.from_trash([r["embed_hash"] for r in todo])
    restored = [r for r in todo if r["embed_hash"] in reusable]
    norms: dict[str, tuple[int, float]] = {}  # chunk_id → (dim, norm) of the vectors written this run
    if restored:
        restored_mat = np.vstack([reusable[r["embed_hash"]] for r in restored])
        vector_store.upsert(
            [r["chunk_id"] for r in restored], restored_mat, [_vector_meta(r) for r in restored], collection
        )
        norms.update(vector_ledger.norms([r["chunk_id"] for r in restored], restored_mat))
    todo = [r for r in todo if r["embed_hash"] not in reusable]
    purged = vector_ledger.settle_trash(
        chunk_store, vector_store, set(reusable), current_paths, left, stored_left, now
    )

    started = time.monotonic()
    embedded, reason = _embed_lossless(context, embedder, vector_store, collection, todo, started, norms)
    waiting = todo[embedded:]
    if waiting:
        # A stale vector must not stand in for new text: the chunk waits for its own vector instead.
        vector_store.delete([r["chunk_id"] for r in waiting if r["chunk_id"] in had_vector], collection)
        context.log.warning(
            f"degraded: {len(waiting)} chunks waiting for vectors (the lexical index is still published): "
            f"{reason}"
        )
    pending = pl.DataFrame({k: [r[k] for r in waiting] for k in PENDING_SCHEMA}, schema=PENDING_SCHEMA)
    if waiting or chunk_store.pending().height or chunk_store.vector_state().get("status") != "ok":
        chunk_store.write_pending(pending, scrub(reason).text if reason else None)
    elif not (chunk_store.path / VECTOR_STATE).exists():
        chunk_store.write_pending(pending, None)
    if retag:
        vector_store.update_metadata(
            [r["chunk_id"] for r in retag], [{k: r[k] for k in VECTOR_METADATA} for r in retag], collection
        )
    changed = bool(todo or restored or retag or vanished)
    if changed or full_read:
        waiting_ids = [r["chunk_id"] for r in waiting]
        not_written = vector_ledger.write_ledger(
            chunk_store, collection, frame, ledger, norms, waiting_ids, full_read=full_read
        )
        if not_written:
            context.log.warning(not_written)
    return MaterializeResult(
        metadata={
            "status": "degraded" if waiting else "ok",
            "degraded_reason": scrub(reason).text if waiting and reason else "",
            "model_id": embedder.model_id,
            "dim": embedder.dim,
            "chunks": frame.height,
            "embedded": embedded,
            "waiting_for_vectors": len(waiting),
            "reused": frame.height - len(todo) - len(restored),
            "restored_from_trash": len(restored),
            "metadata_updated": len(retag),
            "removed_vectors": len(vanished) - len(left),
            "moved_to_trash": trashed,
            "purged_from_trash": purged,
            "removed_documents": removed_docs,
            "vector_store_set_aside": str(set_aside or ""),
            "read_whole_store": full_read,
            "seconds": round(time.monotonic() - started, 2),
        }
    )


EMBED_SLICE = 256  # chunks embedded and stored together: a failure loses at most this much progress


def _open_vectors(context: AssetExecutionContext, vector_store: VectorStore) -> tuple[Any, Path | None]:
    """The live collection; a corrupt embedded Chroma folder is set aside and started afresh (every vector
    is rebuilt from the chunks, mostly from the embedding cache)."""
    try:
        return vector_store.open_checked(), None
    except VectorStoreCorrupt as exc:
        aside = vector_store.set_aside()
        if aside is None:
            raise
        context.log.warning(f"the vector store could not be read ({exc}); set aside at {aside}, rebuilding")
        return vector_store.collection(), aside


def _embed_lossless(
    context: AssetExecutionContext,
    embedder: Embedder,
    vector_store: VectorStore,
    collection: Any,
    todo: list[dict[str, Any]],
    started: float,
    norms: dict[str, tuple[int, float]],
) -> tuple[int, str | None]:
    """Embed and store `todo` slice by slice. Returns how many got vectors (a prefix of `todo`) and, when
    the embedder failed, why: what was embedded is kept, the rest waits for the next run."""
    last_report = [0.0]
    total = len(todo)

    for start in range(0, total, EMBED_SLICE):
        part = todo[start : start + EMBED_SLICE]

        def progress(done: int, _n: int, offset: int = start) -> None:
            now = time.monotonic()
            if offset + done == total or now - last_report[0] > 2.0:
                last_report[0] = now
                context.log.info(f"{offset + done}/{total} chunks embedded ({now - started:.1f} s)")

        try:
            vectors = embedder.embed_passages([r["index_text"] for r in part], progress=progress)
        except EmbedderError as exc:
            return start, str(exc)
        vector_store.upsert(
            [r["chunk_id"] for r in part], vectors, [_vector_meta(r) for r in part], collection
        )
        norms.update(vector_ledger.norms([r["chunk_id"] for r in part], vectors))
    return total, None


def _vector_meta(row: dict) -> dict[str, str]:
    return {k: row[k] or "" for k in VECTOR_METADATA}


@asset_check(
    asset=embeddings,
    blocking=True,
    description="No orphan or duplicate vector, right dimension, unit norm, no stale embed_hash (GX): these "
    "block. Chunks still waiting for a vector (the embedder was unreachable) are a warning.",
)
def vectors_match_chunks(
    chunk_store: ChunkStore, vector_store: VectorStore, embedder: Embedder
) -> AssetCheckResult:
    collection = vector_store.collection()
    stamp = [
        *(check_memo.file_stamp(chunk_store.path / name) for name in (CHUNKS, VECTOR_LEDGER_STATE)),
        check_memo.file_stamp(chunk_store.path / PENDING_VECTORS),
        str(collection.id),
        collection.count(),
        embedder.dim,
    ]
    if check_memo.passed_on(chunk_store, "vectors_match_chunks", stamp):
        return check_memo.unchanged_pass("the chunk table, the vector ledger and the store's count are")
    frame = chunk_store.chunks().select("chunk_id", "embed_hash")
    ledger = vector_ledger.read_ledger(chunk_store, collection)
    if ledger is None:  # every vector and its metadata, read from the store
        vec, read = vector_ledger.stored_vectors(vector_store, collection), "whole store"
    else:  # the ledger (same collection, same count), with this run's vectors read back from the store
        written = (chunk_store.ledger_state() or {}).get("written") or []
        vec = vector_ledger.ledger_vectors(ledger, written, vector_store, collection)
        read = f"ledger, {len(written)} read back"
    vec = vec.group_by("chunk_id").agg(
        pl.col("vector_count").sum(),
        pl.col("dim").first(),
        pl.col("norm").first(),
        pl.col("stored_embed_hash").first(),
    )
    joined = frame.with_columns(pl.lit(True).alias("has_chunk")).join(
        vec, on="chunk_id", how="full", coalesce=True
    )
    joined = joined.with_columns(
        pl.col("has_chunk").fill_null(False),
        pl.col("vector_count").fill_null(0),
    )
    orphans = joined.filter(~pl.col("has_chunk")).height
    waiting = joined.filter(pl.col("vector_count") == 0)
    recorded = set(chunk_store.pending()["chunk_id"].to_list())
    unrecorded = waiting.filter(~pl.col("chunk_id").is_in(list(recorded))).height
    extra = {
        "orphan_vectors": orphans,
        "chunks_without_vector": waiting.height,
        "waiting_not_recorded": unrecorded,  # e.g. a run killed while embedding; the next run embeds them
        "vector_state": MetadataValue.json(chunk_store.vector_state()),
        "vectors_read": read,
    }
    # Blocking: only what is wrong in the vectors that exist. A chunk waiting for its vector is not.
    result = check_memo.check_new_rows(
        chunk_store,
        "vectors_match_chunks",
        "vectors",
        joined.filter(pl.col("vector_count") > 0),
        suites.vector_suite(embedder.dim),
        extra,
    )
    if result.passed and waiting.height:
        result = AssetCheckResult(
            passed=False,
            severity=AssetCheckSeverity.WARN,
            description=f"{waiting.height} chunks waiting for vectors",
            metadata=result.metadata,
        )
    return check_memo.remember(chunk_store, "vectors_match_chunks", stamp, result)


class LexicalConfig(Config):
    k1: float = 1.5
    b: float = 0.75
    compact_share: float = Field(
        default=0.05,
        ge=0.0,
        description="Write a new base (compaction) when more than this share of the rows would be in the "
        "delta or tombstoned (and more than compact_min_rows).",
    )
    compact_min_rows: int = Field(
        default=2000, ge=0, description="A delta of up to this many rows and tombstones never compacts."
    )


@asset(
    group_name=GROUP,
    kinds={"python", "arrow"},
    deps=[chunks, embeddings],
    description="BM25 over kiwipiepy morphemes, Hangul bigrams and aliases, published as a new generation "
    "and switched in atomically; it publishes the search generation, so it runs after the vectors are in "
    "place. A generation is a base segment plus a delta: an edit writes only the rows changed since the "
    "base (a changed row: any column, not only the text) and tombstones for the rows they replace; a new "
    "base is written when the delta passes its threshold. Only new texts are tokenized, and an unchanged "
    "chunk table publishes nothing new.",
)
def lexical_index(
    context: AssetExecutionContext,
    config: LexicalConfig,
    chunk_store: ChunkStore,
    lexical_store: LexicalStore,
    embedder: Embedder,
) -> MaterializeResult:
    started = time.monotonic()
    frame = chunk_store.chunks()
    tokenizer = Tokenizer(TokenizerConfig())
    analyzer = tokenizer.fingerprint()
    params = BM25Params(k1=config.k1, b=config.b)
    ids = row_hashes(frame)  # a row's identity: every column, so a status change is a changed row
    keys = _text_keys_of(frame, ids)
    table = frame.drop("index_text")
    prev = lexical_store.previous()
    reason = (
        "no base"
        if prev is None
        else "another analyzer"
        if prev.analyzer != analyzer
        else "other BM25 parameters"
        if prev.params != params
        else None
    )
    manifest = lexical_store.manifest() or {}
    if reason is None and lexical_store.base_columns() not in (None, table.columns):
        reason = "another chunk table schema"  # a base and a delta of other columns cannot be stacked
    vectors = _vector_status(chunk_store)
    if (
        prev is not None
        and reason is None
        and manifest.get("embed_model") == embedder.model_id
        # vectors that were waiting and are in place now (or the reverse) make a new generation
        and all(manifest.get(k) == v for k, v in vectors.items())
        and np.array_equal(prev.table_ids(), ids)
    ):
        context.log.info(f"lexical index unchanged; generation {manifest['generation']} stays live")
        return MaterializeResult(
            metadata={
                "generation": manifest["generation"],
                "chunks": frame.height,
                "vocabulary": manifest.get("vocabulary"),
                "tokenized": 0,
                "reused": frame.height,
                "unchanged": True,
                "seconds": round(time.monotonic() - started, 2),
            }
        )
    tokenize_s = 0.0

    def tokenize(rows: list[int]) -> list[list[str]]:
        nonlocal tokenize_s
        t0 = time.monotonic()
        tokens = tokenizer.tokenize_many(lexical_texts(_rows_at(frame, rows)))
        tokenize_s += time.monotonic() - t0
        return tokens

    if prev is None or reason == "another analyzer":
        update = Generation.build(ids, keys, tokenize, params, analyzer)
    else:
        limit = max(config.compact_min_rows, int(config.compact_share * frame.height))
        update = prev.next(ids, keys, tokenize, -1 if reason else limit, params)
        if update.compacted and reason is None:
            reason = f"delta past {limit} rows"
    generation = lexical_store.write(
        update,
        table,
        {
            "chunks": frame.height,
            "tokenizer": analyzer,
            "embed_model": embedder.model_id,
            "vocabulary": update.generation.index.n_terms,
            # `degraded` while chunks wait for vectors (the embedder was unreachable): searchable by keyword
            **vectors,
        },
    )
    segment = "base" if update.compacted else "delta"
    context.log.info(
        f"lexical index generation {generation} is live ({frame.height} chunks, {segment}"
        f"{f': {reason}' if update.compacted else f' of {len(update.rows)} rows'}, {update.tokenized} tokenized)"
    )
    return MaterializeResult(
        metadata={
            "generation": generation,
            "chunks": frame.height,
            "vocabulary": update.generation.index.n_terms,
            "segment": segment,
            "compaction": reason if update.compacted else None,
            "delta_rows": update.generation.delta.n_rows,
            "tombstones": update.generation.tombstones,
            "tokenized": update.tokenized,
            "reused": update.reused,
            "unchanged": False,
            "tokenize_seconds": round(tokenize_s, 2),
            "seconds": round(time.monotonic() - started, 2),
        }
    )


def _vector_status(chunk_store: ChunkStore) -> dict[str, Any]:
    """What the lexical generation's manifest says of the vectors beside it (ChunkStore.vector_state)."""
    state = chunk_store.vector_state()
    return {
        "status": state.get("status", "ok"),
        "degraded_reason": state.get("reason"),
        "pending_vectors": state.get("pending_vectors", 0),
    }


def lexical_texts(frame: pl.DataFrame) -> list[str]:
    """What BM25 indexes per chunk: the index text, then the document's aliases on one line."""
    return [
        f"{row['index_text']}\n{' '.join(row['aliases'] or [])}"
        for row in frame.select("index_text", "aliases").iter_rows(named=True)
    ]


_TEXT_KEYS: dict[bytes, bytes] = {}
"""`text_keys` by row identity (a 128-bit hash of the whole chunk row), from this process's last run: in
`hippo watch` only the edited chunks' texts are built and hashed again (1–2 s at 100k chunks)."""


def _text_keys_of(frame: pl.DataFrame, ids: np.ndarray) -> np.ndarray:
    """`text_keys(lexical_texts(frame))`, the texts of rows seen on the last run not built again."""
    hashes = ids.tolist()
    missing = [i for i, h in enumerate(hashes) if h not in _TEXT_KEYS]
    fresh = text_keys(lexical_texts(_rows_at(frame, missing))).tolist()
    found = dict(zip((hashes[i] for i in missing), fresh, strict=True))
    keys = [found[h] if h in found else _TEXT_KEYS[h] for h in hashes]
    _TEXT_KEYS.clear()
    _TEXT_KEYS.update(zip(hashes, keys, strict=True))
    return np.array(keys, dtype="S16").reshape(len(keys))


def _rows_at(frame: pl.DataFrame, rows: list[int]) -> pl.DataFrame:
    return frame.select(pl.all().gather(rows)) if rows else frame.clear()


def text_keys(texts: list[str]) -> np.ndarray:
    """A 128-bit content key per text (BLAKE2b): equal keys, equal tokens."""
    return np.array(
        [hashlib.blake2b(t.encode("utf-8"), digest_size=16).digest() for t in texts], dtype="S16"
    ).reshape(len(texts))


@asset_check(
    asset=embeddings,
    blocking=True,
    description="Every stored conversation message has at least one vector in the vector store (a warning "
    "while its chunks only wait for the embedder).",
)
def messages_have_vectors(chunk_store: ChunkStore, vector_store: VectorStore) -> AssetCheckResult:
    try:
        msgs = chunk_store.read(MESSAGES)
        chunks = chunk_store.chunks()
    except FileNotFoundError:
        return AssetCheckResult(passed=True, metadata={"messages": 0})
    if not msgs.height:
        return AssetCheckResult(passed=True, metadata={"messages": 0})
    collection = vector_store.collection()
    ledger = vector_ledger.read_ledger(chunk_store, collection)
    stored = set(vector_store.existing(collection) if ledger is None else ledger["chunk_id"].to_list())
    conv = chunks.filter((pl.col("lane") == "conversations") & (pl.col("granularity") == "message"))
    with_vec = conv.filter(pl.col("chunk_id").is_in(list(stored)))
    anchors = set(with_vec["anchor"].to_list())
    waiting = set(conv.filter(~pl.col("chunk_id").is_in(list(stored)))["anchor"].to_list())
    wanted = msgs.select(
        (
            pl.lit("conversations/")
            + pl.col("conversation_id")
            + pl.lit("#m")
            + pl.col("position").cast(pl.Utf8)
        ).alias("a")
    )["a"].to_list()
    missing = [a for a in wanted if a not in anchors]
    only_waiting = bool(missing) and all(a in waiting for a in missing)
    metadata = {
        "messages": len(wanted),
        "without_vector": len(missing),
        "examples": MetadataValue.json(missing[:20]),
    }
    if only_waiting:
        return AssetCheckResult(
            passed=False,
            severity=AssetCheckSeverity.WARN,
            description=f"{len(missing)} messages waiting for vectors",
            metadata=metadata,
        )
    return AssetCheckResult(passed=not missing, metadata=metadata)
