"""NumPy arrays on disk, read without `ast`: `.npy` files memory-mapped or read, `.npz` members read.

`np.load` parses a `.npy` header with `ast.literal_eval`. On Python 3.11 that is not thread-safe: a
search loading a generation while another thread loaded arrays failed once with
`SystemError: AST constructor recursion depth mismatch`. The header `np.save` writes is a fixed
shape (`{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }`), so it is read here with one
linear regular expression, and the data is mapped (`np.memmap`) or copied (`np.frombuffer`) from the
offset the header gives. Files this cannot read (another shape of header, a pickled object array) raise
ValueError, as `np.load(allow_pickle=False)` would. Writing is NumPy's own (`np.save` uses no `ast`),
through `files.write_atomic`.
"""

from __future__ import annotations

import math
import re
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from hippo_resources.files import write_atomic

MAGIC = b"\x93NUMPY"
_HEADER = re.compile(
    r"\{'descr': '([<>|=]?[a-zA-Z][a-zA-Z0-9]*)', 'fortran_order': (True|False), 'shape': \(([0-9, ]*)\), \}"
)


def _header(head: bytes, where: str) -> tuple[np.dtype, tuple[int, ...], bool, int]:
    """(dtype, shape, fortran order, data offset) of a `.npy` file that starts with `head`."""
    if head[:6] != MAGIC or len(head) < 10:
        raise ValueError(f"{where}: not a .npy file")
    major = head[6]
    if major == 1:
        size, start = int.from_bytes(head[8:10], "little"), 10
    elif major in (2, 3):
        size, start = int.from_bytes(head[8:12], "little"), 12
    else:
        raise ValueError(f"{where}: .npy format version {major} is not read here")
    text = head[start : start + size].decode("latin-1" if major < 3 else "utf-8").strip()
    match = _HEADER.fullmatch(text)
    if match is None:
        raise ValueError(f"{where}: unexpected .npy header {text[:80]!r}")
    dtype = np.dtype(match.group(1))
    if dtype.hasobject:
        raise ValueError(f"{where}: object arrays are not read (they would need pickle)")
    shape = tuple(int(n) for n in match.group(3).replace(" ", "").split(",") if n)
    return dtype, shape, match.group(2) == "True", start + size


_HEAD_BYTES = 4096  # np.save pads headers to a multiple of 64 bytes; a 1-D or 2-D header is far shorter


def read_npy(path: Path, mmap: bool = False) -> np.ndarray:
    """The array of a `.npy` file: memory-mapped read-only (`mmap=True`) or read into memory."""
    with open(path, "rb") as fh:
        head = fh.read(_HEAD_BYTES)
        dtype, shape, fortran, offset = _header(head, Path(path).name)
        count = math.prod(shape)
        order = "F" if fortran else "C"
        if count == 0:
            return np.empty(shape, dtype=dtype, order=order)
        if mmap:
            return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape, order=order)
        fh.seek(offset)
        data = np.fromfile(fh, dtype=dtype, count=count)
    if len(data) != count:
        raise ValueError(f"{Path(path).name}: truncated ({len(data)} of {count} values)")
    return data.reshape(shape, order=order)


def _from_bytes(raw: bytes, where: str) -> np.ndarray:
    dtype, shape, fortran, offset = _header(raw[:_HEAD_BYTES], where)
    count = math.prod(shape)
    if len(raw) - offset < count * dtype.itemsize:
        raise ValueError(f"{where}: truncated")
    data = np.frombuffer(bytearray(raw), dtype=dtype, count=count, offset=offset)  # writable, like np.load
    return data.reshape(shape, order="F" if fortran else "C")


def read_npz(path: Path, names: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """The arrays of an `.npz` file (all, or those named), read into memory."""
    out = {}
    try:
        with zipfile.ZipFile(path) as zf:
            for member in zf.namelist():
                name = member.removesuffix(".npy")
                if member.endswith(".npy") and (names is None or name in names):
                    out[name] = _from_bytes(zf.read(member), f"{Path(path).name}:{member}")
    except zipfile.BadZipFile as exc:
        raise ValueError(f"{Path(path).name}: {exc}") from None
    missing = set(names or ()) - set(out)
    if missing:
        raise KeyError(f"{Path(path).name} has no array {sorted(missing)}")
    return out


def write_npy(path: Path, arr: np.ndarray) -> None:
    """One array as a `.npy` file, atomically (fsync'd, renamed into place)."""

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            np.save(fh, np.ascontiguousarray(arr), allow_pickle=False)

    write_atomic(Path(path), write)


def write_npz(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """Arrays as one uncompressed `.npz` file, atomically."""

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            np.savez(fh, allow_pickle=False, **arrays)

    write_atomic(Path(path), write)


__all__ = ["read_npy", "read_npz", "write_npy", "write_npz"]
