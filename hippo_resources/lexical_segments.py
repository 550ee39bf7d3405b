"""The lexical index's segment files and their readers, without Dagster: what `LexicalStore` writes and
every reader opens (see `hippo_resources.lexical_store` for the layout and the atomic switch).

Kept apart from the resource so that a process that only reads an index (the prompt hook searching in
process when no librarian runs) pays for numpy and Arrow, not for Dagster's import.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

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
from hippo_resources.files import write_text_atomic
from hippo_resources.npy import read_npy, read_npz, write_npy, write_npz

if TYPE_CHECKING:
    import polars as pl
    import scipy.sparse as sp

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
        import polars as pl

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
    import polars as pl

    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame


def read_arrow(path: Path) -> pa.Table:
    """An uncompressed Arrow IPC file memory-mapped (zero-copy): the buffers keep the map alive, so a
    pruned generation stays readable (unlinked, still mapped) by whoever holds it."""
    return ipc.open_file(pa.memory_map(str(path))).read_all()


@dataclass(frozen=True)
class LexicalReader:
    """The live generation of the index under `root`, read only (`LexicalStore` reads through it too)."""

    root: Path

    def manifest(self) -> dict[str, Any] | None:
        """The live generation's manifest, or None before the first build."""
        try:
            return json.loads((self.root / MANIFEST).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None

    def open_base(self, name: str) -> BaseSegment:
        folder = self.root / name
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
        folder = self.root / generation
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
