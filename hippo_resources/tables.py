"""The big derived parquet tables (documents, chunks, the scan cache): cheap to write, read once per process.

At 10,000 notes the chunk table is ~100k rows and 300 MB in memory, and one refresh run used to read it
five times (chunks, its check, embeddings, the vector check, the lexical index) and write it zstd-
compressed (3–4 s). Two things make a run's table I/O cost what changed instead:

- `write_table` writes them uncompressed (at 10,000 notes zstd cost 4.5 s for the chunks, lz4 2.2 s, none
  1.1 s; the documents and the scan cache 1.8 s / 1.0 s / 0.15 s each; about 4x zstd's size on disk),
  atomically as before;
- `read_table(keep=True)` and `write_table(keep=True)` keep the last frame of each path in memory with
  the file's identity (inode, size, mtime): a later read of the very same file (this process wrote it or
  read it, nobody replaced it since) takes the frame from memory. Every writer replaces a table by
  rename, so a table written by another process has another identity and is read from disk.

`hippo watch` thus reads these tables from disk once, not on every pass. Only these few tables are kept;
polars frames are immutable, so sharing one between steps is safe.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import polars as pl

from hippo_resources.files import write_atomic

COMPRESSION = "uncompressed"

_KEPT: dict[Path, tuple[tuple[int, int, int], pl.DataFrame]] = {}
_LOCK = threading.Lock()


def file_identity(path: Path) -> tuple[int, int, int] | None:
    """(inode, size, mtime_ns) of a file, None when it is missing: a file replaced by rename (every table
    and state file here) gets a new identity."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def read_table(path: Path, columns: list[str] | None = None, keep: bool = False) -> pl.DataFrame:
    """The table at `path` (only `columns` when given); from memory when kept and unchanged on disk.

    Raises what `pl.read_parquet` raises (FileNotFoundError, PolarsError)."""
    path = Path(path)
    with _LOCK:
        kept = _KEPT.get(path)
    if kept is not None and kept[0] == file_identity(path):
        return kept[1].select(columns) if columns is not None else kept[1]
    if not keep or columns is not None:
        return pl.read_parquet(path, columns=columns)
    before = file_identity(path)
    frame = pl.read_parquet(path)
    if before is not None and before == file_identity(path):  # not replaced while being read
        with _LOCK:
            _KEPT[path] = (before, frame)
    return frame


def write_table(path: Path, frame: pl.DataFrame, keep: bool = False) -> Path:
    """Replace the table at `path` atomically (`files.write_atomic`); keep `frame` as its content."""
    path = Path(path)
    with _LOCK:
        _KEPT.pop(path, None)
    written: list[tuple[int, int, int] | None] = []

    def write(tmp: Path) -> None:
        frame.write_parquet(tmp, compression=COMPRESSION)
        written.append(file_identity(tmp))  # a rename keeps inode, size and mtime

    write_atomic(path, write)
    if keep and written[0] is not None:
        with _LOCK:
            _KEPT[path] = (written[0], frame)
    return path


def forget(path: Path) -> None:
    """Drop what is kept of `path` (the file is being removed)."""
    with _LOCK:
        _KEPT.pop(Path(path), None)


def row_hashes(frame: pl.DataFrame) -> np.ndarray:
    """A 128-bit key per row (two polars row hashes with different seeds) as 16-byte strings: equal rows,
    equal keys. Stable within one polars version only, so kept on disk with that version beside it."""
    pair = np.stack([frame.hash_rows(seed=0).to_numpy(), frame.hash_rows(seed=1).to_numpy()], axis=1)
    return np.ascontiguousarray(pair, dtype=np.uint64).view("S16").reshape(frame.height)
