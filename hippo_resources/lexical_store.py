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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.ipc as ipc
import scipy.sparse as sp
from dagster import ConfigurableResource

from hippo_core.index.bm25 import (
    COUNTS,
    POSTINGS,
    Base,
    BM25Index,
    BM25Params,
    Delta,
    TermCounts,
    check_format,
)
from hippo_core.index.bm25_update import BaseRows, Generation, Update
from hippo_resources.files import fsync_dir, fsync_file, write_text_atomic
from hippo_resources.npy import read_npy, read_npz, write_npy, write_npz

MANIFEST = "CURRENT.json"
CHUNK_TABLE = "chunks.arrow"
ROW_IDS = "row_ids.npy"
ROW_KEYS = "row_keys.npy"
OLD_FORMAT_META = "bm25.json"
"""What a generation of the format before segments holds (weights and table in one folder)."""
BASE_META = "base.json"
BASE_TERMS = "base.terms.json"
DELTA_META = "delta.json"
DELTA_ARRAYS = "delta.npz"


# --- a segment's files: the core's arrays written and read back ------------------------------------------


def _write_json(path: Path, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, ensure_ascii=False, separators=(",", ":")))


def _read_meta(path: Path) -> dict[str, Any]:
    """A segment's header; ValueError for another format version (it is rebuilt, never misread)."""
    meta = json.loads(path.read_text(encoding="utf-8"))
    check_format(meta)
    return meta


def save_base(directory: Path, base: Base, meta: dict[str, Any]) -> None:
    """Postings as plain `.npy` files (memory-mapped by `load_base`), the vocabulary, then `base.json`
    last: its presence says the rest is there. Each file is written atomically (fsync'd)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, arr in base.postings.arrays().items():
        write_npy(directory / f"postings.{name}.npy", arr)
    _write_json(directory / BASE_TERMS, base.terms)
    _write_json(directory / BASE_META, {**meta, **base.header()})


def read_base_meta(directory: Path) -> dict[str, Any]:
    return _read_meta(directory / BASE_META)


def read_base_terms(directory: Path) -> list[str]:
    terms = json.loads((directory / BASE_TERMS).read_text(encoding="utf-8"))
    if not isinstance(terms, list):
        raise ValueError(f"{BASE_TERMS} is not a list")
    return terms


def load_base(directory: Path) -> Base:
    """The arrays memory-mapped (read-only): loading costs the header, the vocabulary is read when first
    asked for and unused postings stay on disk."""
    arrays = {n: read_npy(directory / f"postings.{n}.npy", mmap=True) for n in POSTINGS}
    try:
        return Base.from_arrays(lambda: read_base_terms(directory), arrays, read_base_meta(directory))
    except ValueError as exc:
        raise ValueError(f"{directory.name}: {exc}") from None


def save_counts(directory: Path, counts: TermCounts, prefix: str = "counts") -> None:
    """The CSR arrays as plain `.npy` files (a writer maps them and reads only the rows it copies)."""
    for name, arr in counts.arrays().items():
        write_npy(directory / f"{prefix}.{name}.npy", arr)


def load_counts_matrix(directory: Path, n_cols: int, prefix: str = "counts") -> sp.csr_array:
    """The saved count matrix, memory-mapped."""
    arrays = {n: read_npy(directory / f"{prefix}.{n}.npy", mmap=True) for n in COUNTS}
    return TermCounts.matrix_from_arrays(arrays, n_cols)


def load_counts(directory: Path, terms: list[str], prefix: str = "counts") -> TermCounts:
    return TermCounts(terms, load_counts_matrix(directory, len(terms), prefix))


def save_delta(
    directory: Path, delta: Delta, meta: dict[str, Any], extra: dict[str, np.ndarray] | None = None
) -> None:
    """One uncompressed npz of the small arrays (and the caller's `extra` ones, read back with
    `read_delta_extra`) and `delta.json` (with the new terms) last: its presence says the rest is there."""
    write_npz(directory / DELTA_ARRAYS, delta.arrays(extra))
    _write_json(directory / DELTA_META, {**meta, **delta.header()})


def read_delta_meta(directory: Path) -> dict[str, Any]:
    return _read_meta(directory / DELTA_META)


def read_delta_extra(directory: Path, names: list[str] | tuple[str, ...]) -> list[np.ndarray]:
    arrays = read_npz(directory / DELTA_ARRAYS, [f"extra.{n}" for n in names])
    return [arrays[f"extra.{n}"] for n in names]


def load_delta(directory: Path) -> Delta:
    meta = read_delta_meta(directory)
    arrays = {k: v for k, v in read_npz(directory / DELTA_ARRAYS).items() if not k.startswith("extra.")}
    try:
        return Delta.from_arrays(arrays, meta)
    except ValueError as exc:
        raise ValueError(f"{directory.name}: {exc}") from None


class GenerationUnreadable(ValueError):
    """A generation (or its base) is missing, of another format version, or damaged."""


@dataclass(frozen=True)
class BaseSegment:
    """A base as readers hold it: its postings (memory-mapped) and its chunk table (mapped Arrow). Shared
    by every generation over it: the librarian keeps it across reloads."""

    name: str
    base: Base
    table: pa.Table


@dataclass(frozen=True)
class LexicalView:
    """One generation as readers see it: `index` rows are the base's then the delta's (`table()`, the same
    order); tombstoned rows never score and are not in `live_table()`."""

    generation: str
    meta: dict[str, Any]
    base: BaseSegment
    delta: Delta
    delta_table: pa.Table
    index: BM25Index

    def table(self) -> pl.DataFrame:
        """Every row of the view, tombstones included, in index row order."""
        frames = [_frame(self.base.table), _frame(self.delta_table)]
        return pl.concat(frames, rechunk=False) if self.delta_table.num_rows else frames[0]

    def live_table(self) -> pl.DataFrame:
        """The generation's chunk table: live rows in table order (what was indexed)."""
        table = self.table()
        positions = self.index.tie_keys
        if positions is None:
            return table
        live = np.flatnonzero(positions >= 0)
        order = live[np.argsort(positions[live], kind="stable")]
        return table[order]


def _frame(table: pa.Table) -> pl.DataFrame:
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame


def read_arrow(path: Path) -> pa.Table:
    """An uncompressed Arrow IPC file memory-mapped (zero-copy): the buffers keep the map alive, so a
    pruned generation stays readable (unlinked, still mapped) by whoever holds it."""
    return ipc.open_file(pa.memory_map(str(path))).read_all()


# What this process last wrote or read for the next build, with the identity of the files it came from:
# `hippo watch`'s next pass starts from it instead of reading the base's identities and vocabulary again.
_LAST: dict[Path, tuple[tuple[Any, ...], Generation]] = {}


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

    # --- readers ---------------------------------------------------------------------------------------
    def open_base(self, name: str) -> BaseSegment:
        folder = self.path / name
        try:
            base = load_base(folder)
            table = read_arrow(folder / CHUNK_TABLE)
        except (OSError, KeyError, ValueError, pa.ArrowException) as exc:  # ValueError: another format
            raise GenerationUnreadable(f"base {name}: {exc}") from exc
        if table.num_rows != base.n_rows:
            raise GenerationUnreadable(f"base {name}: its chunk table and postings disagree")
        return BaseSegment(name, base, table)

    def view(self, generation: str | None = None, base: BaseSegment | None = None) -> LexicalView:
        """A generation (default: the live one) as readers see it. Pass the `base` of a view already held
        to reuse it when the generation extends the same base: only the delta is read."""
        if generation is None:
            manifest = self.manifest()
            if manifest is None:
                raise GenerationUnreadable("nothing is indexed yet")
            generation = str(manifest["generation"])
        folder = self.path / generation
        if (folder / OLD_FORMAT_META).is_file():
            raise GenerationUnreadable(
                f"generation {generation} was written by an older version (one folder)"
            )
        try:
            meta = read_delta_meta(folder)
            if base is None or base.name != meta["base"]:
                base = self.open_base(str(meta["base"]))
            delta = load_delta(folder)
            delta_table = read_arrow(folder / CHUNK_TABLE)
            params = BM25Params.model_validate(meta["params"])
        except (OSError, KeyError, ValueError, pa.ArrowException) as exc:  # ValueError: another format
            raise GenerationUnreadable(f"generation {generation}: {exc}") from exc
        if delta_table.num_rows != delta.n_rows:
            raise GenerationUnreadable(f"generation {generation}: its chunk table and delta disagree")
        index = BM25Index(base.base, delta, params, analyzer=str(meta.get("analyzer", "")))
        return LexicalView(generation, meta, base, delta, delta_table, index)

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
