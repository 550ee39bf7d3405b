"""BM25 generations on disk: an immutable base segment plus a small delta, switched in through a manifest.

    lexical/
      CURRENT.json        names the live generation; replaced with an fsync'd rename, last
      base-<time>/        a full build: postings, term counts, row identities and text keys, chunk table
      gen-<time>/         a generation: the base it extends, the delta (rows added or changed since the
                          base, tombstones, each row's table position) and the delta rows' chunk table

An edit writes only a new `gen-*` folder (small: the delta is rewritten whole, so a view is always the base
plus one delta); a compaction (no base yet, another analyzer or BM25 parameters, or a delta past the
threshold) writes a new base first. Every file is fsync'd inside a hidden `.partial` folder that is
renamed into place; `CURRENT.json` is switched last, so a crash at any point leaves the old generation
live and whole, and a reader that loaded one generation keeps a consistent view until it reloads.
A base is pruned once no kept generation refers to it.

The chunk tables are uncompressed Arrow IPC: readers memory-map them (pyarrow), so texts stay in the page
cache instead of a heap and nothing is decoded at load. The BM25 segments' files are this module's too
(`save_base`/`load_base`, `save_counts`/`load_counts_matrix`, `save_delta`/`load_delta`): the core builds
and scores the arrays, the store writes them (`hippo_resources.npy`, atomically) and reads them back
(memory-mapped, without `np.load`'s thread-unsafe header parser). Every reader of a generation (the librarian, the
compiler's related pages, `eval.crash`, tests) opens it through `LexicalStore.view`.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.ipc as ipc
from dagster import ConfigurableResource

from hippo_core.index.bm25 import BM25Params, TermCounts
from hippo_core.index.bm25_update import BaseRows, Generation, Update
from hippo_resources.files import fsync_dir, fsync_file, write_text_atomic
from hippo_resources.lexical_segments import (
    CHUNK_TABLE,
    MANIFEST,
    OLD_FORMAT_META,
    ROW_IDS,
    ROW_KEYS,
    BaseSegment,
    GenerationUnreadable,
    LexicalReader,
    LexicalView,
    load_base,
    load_counts,
    load_counts_matrix,
    load_delta,
    read_arrow,
    read_base_meta,
    read_delta_extra,
    read_delta_meta,
    save_base,
    save_counts,
    save_delta,
)
from hippo_resources.npy import read_npy, write_npy

# What this process last wrote or read for the next build, with the identity of the files it came from:
# `hippo watch`'s next pass starts from it instead of reading the base's identities and vocabulary again.
_LAST: dict[Path, tuple[tuple[Any, ...], Generation]] = {}


class LexicalStore(ConfigurableResource):
    root: str
    keep_generations: int = 3

    @property
    def path(self) -> Path:
        return Path(self.root)

    @property
    def reader(self) -> LexicalReader:
        return LexicalReader(self.path)

    def manifest(self) -> dict[str, Any] | None:
        """The live generation's manifest, or None before the first build."""
        return self.reader.manifest()

    # --- readers (`hippo_resources.lexical_segments`, which needs no Dagster) ----------------------------
    def open_base(self, name: str) -> BaseSegment:
        return self.reader.open_base(name)

    def view(self, generation: str | None = None, base: BaseSegment | None = None) -> LexicalView:
        """A generation (default: the live one) as readers see it. Pass the `base` of a view already held
        to reuse it when the generation extends the same base: only the delta is read."""
        return self.reader.view(generation, base)

    # --- the writer ------------------------------------------------------------------------------------
    def base_columns(self) -> list[str] | None:
        """The columns of the live generation's base chunk table (its schema only); None when unreadable."""
        manifest = self.manifest()
        if manifest is None:
            return None
        try:
            meta = read_delta_meta(self.path / str(manifest["generation"]))
            with pa.memory_map(str(self.path / str(meta["base"]) / CHUNK_TABLE)) as source:
                return list(ipc.open_file(source).schema.names)
        except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
            return None

    def previous(self) -> Generation | None:
        """The live generation as the next build reuses it (identities, keys, counts); None before the
        first build, for another format version, or one that cannot be read (the caller then builds a base
        from scratch)."""
        manifest = self.manifest()
        if manifest is None:
            return None
        folder = self.path / str(manifest["generation"])
        try:
            meta = read_delta_meta(folder)
            base_folder = self.path / str(meta["base"])
            stamp = _stamp(folder, base_folder)
            kept = _LAST.get(folder)
            if kept is not None and kept[0] == stamp:
                return kept[1]
            generation = self._read_generation(folder, base_folder, meta)
        except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
            return None
        _LAST.clear()
        _LAST[folder] = (stamp, generation)
        return generation

    def _read_generation(self, folder: Path, base_folder: Path, meta: dict[str, Any]) -> Generation:
        base = load_base(base_folder)
        counts = load_counts_matrix(base_folder, base.n_terms)  # the vocabulary is read when needed
        ids = read_npy(base_folder / ROW_IDS)
        keys = read_npy(base_folder / ROW_KEYS)
        base_rows = BaseRows(base, counts, ids, keys, name=base_folder.name)
        delta = load_delta(folder)
        delta_ids, delta_keys = read_delta_extra(folder, ("ids", "keys"))
        # the chunk tables must open and agree: a damaged one makes the next build start afresh
        if read_arrow(base_folder / CHUNK_TABLE).num_rows != base.n_rows:
            raise ValueError("base chunk table and postings disagree")
        if read_arrow(folder / CHUNK_TABLE).num_rows != delta.n_rows:
            raise ValueError("delta chunk table and postings disagree")
        params = BM25Params.model_validate(meta["params"])
        return Generation(base_rows, delta, delta_ids, delta_keys, params, str(meta.get("analyzer", "")))

    def write(self, update: Update, table: pl.DataFrame, meta: dict[str, Any]) -> str:
        """Write the update's generation (and its base when it is a new one) and make it live; returns its
        name. `table` is the new chunk table (the rows the update's `rows` index)."""
        self.path.mkdir(parents=True, exist_ok=True)
        gen = update.generation
        header = {"params": gen.params.model_dump(), "analyzer": gen.analyzer}
        if update.compacted:
            base_name = _fresh_name(self.path, "base")
            tmp = self.path / f".{base_name}.partial"
            tmp.mkdir()
            base_rows = gen.base_rows
            save_base(tmp, base_rows.base, header)
            save_counts(tmp, TermCounts(base_rows.base.terms, base_rows.counts))
            for file, arr in ((ROW_IDS, base_rows.ids), (ROW_KEYS, base_rows.keys)):
                write_npy(tmp / file, arr)
            _write_arrow(tmp / CHUNK_TABLE, table)
            fsync_dir(tmp)
            os.replace(tmp, self.path / base_name)
            fsync_dir(self.path)
            base_rows.name = base_name
        else:
            base_name = gen.base_rows.name
            if base_name is None:
                raise ValueError("a delta must extend a stored base")
        name = _fresh_name(self.path, "gen")
        tmp = self.path / f".{name}.partial"
        tmp.mkdir()
        index = gen.index
        stats = {
            "base": base_name,
            "n_base": index.n_base,
            "rows": index.n_docs,
            "tombstones": gen.tombstones,
            "total_length": int(index.doc_lengths[index.live].sum()),
            "average_idf": index.average_idf,
            "vocabulary": index.n_terms,
        }
        save_delta(tmp, gen.delta, {**header, **stats}, extra={"ids": gen.delta_ids, "keys": gen.delta_keys})
        # a compaction's delta is empty: its table keeps the schema
        _write_arrow(tmp / CHUNK_TABLE, table.clear() if update.compacted else table[update.rows])
        fsync_dir(tmp)
        os.replace(tmp, self.path / name)
        fsync_dir(self.path)
        _LAST.clear()
        _LAST[self.path / name] = (_stamp(self.path / name, self.path / base_name), gen)
        manifest = {
            "generation": name,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "base": base_name,
            "segment": "base" if update.compacted else "delta",
            "delta_rows": gen.delta.n_rows,
            "tombstones": gen.tombstones,
            **meta,
        }
        write_text_atomic(self.path / MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=2))
        self._prune(keep=name)
        return name

    def _prune(self, keep: str) -> None:
        """Keep the newest generations and the bases they extend; a reader still holding an older one has
        it mapped already (unlinked files stay readable)."""
        gens = sorted(p for p in self.path.glob("gen-*") if p.is_dir())
        for old in [g for g in gens if (g / OLD_FORMAT_META).is_file() and g.name != keep]:
            shutil.rmtree(old, ignore_errors=True)  # an older version's: never read again (600 MB at 100k)
            gens.remove(old)
        kept = gens[max(len(gens) - self.keep_generations, 0) :]
        for old in gens[: len(gens) - len(kept)]:
            if old.name != keep:
                shutil.rmtree(old, ignore_errors=True)
        used = set()
        for folder in kept:
            try:
                used.add(str(read_delta_meta(folder)["base"]))
            except (OSError, ValueError, KeyError):
                continue
        for base in self.path.glob("base-*"):
            if base.is_dir() and base.name not in used:
                shutil.rmtree(base, ignore_errors=True)
        for partial in self.path.glob(".*.partial"):
            shutil.rmtree(partial, ignore_errors=True)


def _fresh_name(root: Path, prefix: str) -> str:
    """A folder name from one UTC clock read: names sort in the order they were written."""
    ns = time.time_ns()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(ns // 1_000_000_000))
    return f"{prefix}-{stamp}-{ns % 1_000_000_000:09d}"


def _write_arrow(path: Path, table: pl.DataFrame) -> None:
    table.write_ipc(path, compression="uncompressed")
    fsync_file(path)


def _stamp(*folders: Path) -> tuple[Any, ...]:
    """The identity (inode, size, mtime) of the files a generation is read from: equal, nothing replaced
    or damaged them since this process last read or wrote them."""
    out = []
    for folder in folders:
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                st = entry.stat()
                out.append((folder.name, entry.name, st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


__all__ = [
    "BaseSegment",
    "LexicalReader",
    "LexicalView",
    "read_arrow",
    "CHUNK_TABLE",
    "GenerationUnreadable",
    "LexicalStore",
    "LexicalView",
    "MANIFEST",
    "load_base",
    "load_counts",
    "load_counts_matrix",
    "load_delta",
    "read_base_meta",
    "read_delta_extra",
    "read_delta_meta",
    "save_base",
    "save_counts",
    "save_delta",
]
