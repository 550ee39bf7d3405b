"""BM25 index generations on disk, switched in atomically through a manifest.

A generation is a folder holding the BM25 matrix and the chunk table it was built from. `CURRENT.json`
names the live generation; it is replaced with an fsync'd rename, so a reader never sees a half-written
index, and a reader that loaded one generation keeps a consistent view until it reloads.

A generation also keeps the term counts it was built from and a content key per row (`counts.npz`,
`row_keys.npy`): the next build copies the rows of unchanged texts instead of tokenizing them again.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from dagster import ConfigurableResource

from hippo_core.bm25 import BM25Index, BM25Params, TermCounts
from hippo_resources.files import fsync_dir, fsync_file, write_text_atomic

MANIFEST = "CURRENT.json"
CHUNK_TABLE = "chunks.parquet"
CHUNK_TABLE_MAPPED = "chunks.arrow"
"""The same table as uncompressed Arrow IPC: polars memory-maps it on read, so the texts stay in the
page cache instead of the librarian's heap and nothing is decoded at load."""
COUNTS_FILE = "counts.npz"
ROW_KEYS_FILE = "row_keys.npy"


# The term counts this process last wrote, by generation folder (a generation is never changed once
# written): the next build in the same process (`hippo watch`'s next pass) starts from them instead of
# reading `counts.npz` again (about a second at 100k chunks).
_WRITTEN: dict[Path, TermCounts] = {}


class PreviousCounts:
    """What the next build reuses from a generation: row keys, params and analyzer at once; the term
    counts (and the vocabulary they need) only when read, since a no-op run never needs them."""

    def __init__(
        self, folder: Path, row_keys: np.ndarray, params: BM25Params, analyzer: str, n_terms: int
    ) -> None:
        self.folder = folder
        self.n_terms = n_terms
        self.generation = folder.name
        self.row_keys = row_keys
        self.params = params
        self.analyzer = analyzer
        self._counts: TermCounts | None = None

    @property
    def counts(self) -> TermCounts:
        if self._counts is None:
            counts = _WRITTEN.get(self.folder) or TermCounts.load(
                self.folder / COUNTS_FILE, BM25Index.read_terms(self.folder)
            )
            if counts.n_docs != len(self.row_keys):
                raise ValueError(f"{self.generation}: counts and row keys disagree")
            self._counts = counts
        return self._counts


class LexicalStore(ConfigurableResource):
    root: str
    keep_generations: int = 3

    @property
    def path(self) -> Path:
        return Path(self.root)

    def manifest(self) -> dict[str, Any] | None:
        """The live generation's manifest, or None before the first build."""
        try:
            return json.loads((self.path / MANIFEST).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None

    def write_generation(
        self,
        index: BM25Index,
        table: pl.DataFrame,
        meta: dict[str, Any],
        counts: TermCounts | None = None,
        row_keys: np.ndarray | None = None,
    ) -> str:
        """Write a new generation and make it live. Returns its name.

        `counts` (columns in the index's vocabulary order) and `row_keys` (one per row) let the next
        build reuse this one's tokens; without them the next build tokenizes everything.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        ns = time.time_ns()  # one clock read, UTC: names sort in the order they were written
        name = (
            f"gen-{time.strftime('%Y%m%dT%H%M%S', time.gmtime(ns // 1_000_000_000))}-{ns % 1_000_000_000:09d}"
        )
        tmp = self.path / f".{name}.partial"
        tmp.mkdir()
        index.save(tmp)
        table.write_parquet(tmp / CHUNK_TABLE, compression="lz4")  # half zstd's time; the Arrow copy is read
        fsync_file(tmp / CHUNK_TABLE)
        table.write_ipc(tmp / CHUNK_TABLE_MAPPED, compression="uncompressed")
        fsync_file(tmp / CHUNK_TABLE_MAPPED)
        if counts is not None and row_keys is not None:
            if counts.terms != list(index.vocab) or len(row_keys) != counts.n_docs:
                raise ValueError("counts and row keys must match the index they were built into")
            counts.save(tmp / COUNTS_FILE)
            np.save(tmp / ROW_KEYS_FILE, row_keys)
            fsync_file(tmp / ROW_KEYS_FILE)
        fsync_dir(tmp)
        os.replace(tmp, self.path / name)
        fsync_dir(self.path)
        _WRITTEN.clear()
        if counts is not None and row_keys is not None:
            _WRITTEN[self.path / name] = counts
        manifest = {"generation": name, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **meta}
        write_text_atomic(self.path / MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=2))
        self._prune(keep=name)
        return name

    def load(self, generation: str) -> tuple[BM25Index, pl.DataFrame]:
        folder = self.path / generation
        return BM25Index.load(folder), self.load_table(generation)

    def load_table(self, generation: str) -> pl.DataFrame:
        """The generation's chunk table, memory-mapped when it has the Arrow copy (older ones do not)."""
        folder = self.path / generation
        if (folder / CHUNK_TABLE_MAPPED).is_file():
            return pl.read_ipc(folder / CHUNK_TABLE_MAPPED)  # polars maps an uncompressed file
        return pl.read_parquet(folder / CHUNK_TABLE)

    def previous_counts(self) -> PreviousCounts | None:
        """The live generation's row keys (and, lazily, counts); None before the first build, for a
        generation written without them, or one that cannot be read (the caller then rebuilds)."""
        manifest = self.manifest()
        if manifest is None:
            return None
        folder = self.path / manifest["generation"]
        try:
            meta = BM25Index.read_meta(folder)
            row_keys = np.load(folder / ROW_KEYS_FILE, allow_pickle=False)
            params = BM25Params.model_validate(meta["params"])
        except (OSError, ValueError, KeyError):
            return None
        if len(row_keys) != meta.get("n_docs") or not (folder / COUNTS_FILE).is_file():
            return None
        return PreviousCounts(folder, row_keys, params, meta.get("analyzer", ""), int(meta["n_terms"]))

    def _prune(self, keep: str) -> None:
        """Keep the newest generations; a reader still holding an old one has it in memory already."""
        gens = sorted(p for p in self.path.glob("gen-*") if p.is_dir())
        for old in gens[: max(len(gens) - self.keep_generations, 0)]:
            if old.name != keep:
                shutil.rmtree(old, ignore_errors=True)
        for partial in self.path.glob(".gen-*.partial"):
            shutil.rmtree(partial, ignore_errors=True)
