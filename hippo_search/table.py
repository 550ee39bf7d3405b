"""A generation's chunk table as the search reads it: columns, not one dict per row.

`table.to_dicts()` made a Python dict and a Python copy of every chunk's text per row (most of the
librarian's memory at 100k chunks). `Rows` keeps the table in Arrow and only the small per-row fields
ranking reads for every candidate as Python lists (repeated values such as statuses shared); a row is a
read-only view, and a long field (the text) is fetched from Arrow for the few rows that are shown.

A generation is a base segment plus a delta (`hippo_resources.lexical_store`): `Part` holds one
segment's table as the search reads it, and the librarian keeps the base's `Part` across generations
that extend the same base, so a new generation costs its delta (`Part.stack`).

`Masks` caches the filter masks (status, lanes, tool output, path prefix, and only live rows) per
distinct filter, so a query does not compare 100k statuses again.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import polars as pl
import pyarrow as pa

MAPPED_ONLY = ("text",)
"""Columns left in the memory-mapped Arrow file (read for the shown hits only): the texts are most of
the table, and `pl.read_ipc` copies them into memory (~2x the file's size in RSS)."""


def split_table(arrow: pa.Table) -> tuple[pl.DataFrame, pa.ChunkedArray | None]:
    """A segment's chunk table (memory-mapped Arrow, `lexical_store.read_arrow`) without its texts as a
    polars frame, and the texts as the mapped Arrow column, read for the shown hits only."""
    names = [n for n in arrow.column_names if n not in MAPPED_ONLY]
    frame = pl.from_arrow(arrow.select(names))
    assert isinstance(frame, pl.DataFrame)
    return frame, arrow.column("text") if "text" in arrow.column_names else None


LIGHT_COLUMNS = (
    "chunk_id",
    "path",
    "anchor",
    "heading",
    "title",
    "lane",
    "status",
    "trust",
    "doc_type",
    "sector",
    "updated",
    "date",
    "aliases",
    "conversation_id",
    "project",
    "role",
    "granularity",
    "position",
)
"""Read for every candidate of every query: kept as Python lists. Everything else stays in Arrow."""

_SHARED = ("lane", "status", "trust", "doc_type", "sector", "project", "role", "granularity")


class RowView(Mapping[str, Any]):
    """One row of `Rows`, read-only; `row["text"]` reads that one value from Arrow."""

    __slots__ = ("_i", "_rows")

    def __init__(self, rows: Rows, i: int) -> None:
        self._rows = rows
        self._i = i

    def __getitem__(self, key: str) -> Any:
        return self._rows.value(key, self._i)

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows.columns)

    def __len__(self) -> int:
        return len(self._rows.columns)


class Rows(Sequence[RowView]):
    """The rows of a chunk table, indexable like the list of dicts it replaces."""

    def __init__(self, table: pl.DataFrame, texts: pa.ChunkedArray | None = None) -> None:
        self.table = table
        self.texts = texts  # the `text` column when it stays in the mapped file (`load_table`)
        self.columns = list(table.columns) + (["text"] if texts is not None else [])
        self._light: dict[str, list[Any]] = {}
        for name in LIGHT_COLUMNS:
            if name in table.columns:
                values = table[name].to_list()
                if name in _SHARED:  # a handful of distinct values: one object each
                    seen: dict[Any, Any] = {}
                    values = [seen.setdefault(v, v) for v in values]
                self._light[name] = values

    @classmethod
    def stack(cls, first: Rows, second: Rows) -> Rows:
        """`first`'s rows then `second`'s, sharing their columns (lists concatenated, Arrow chunks chained):
        a base's rows and a delta's, without converting the base's columns again."""
        if first.columns != second.columns:
            raise ValueError("rows of two tables with different columns")
        rows = cls.__new__(cls)
        rows.table = pl.concat([first.table, second.table], rechunk=False)
        rows.texts = (
            None
            if first.texts is None or second.texts is None
            else pa.chunked_array(first.texts.chunks + second.texts.chunks, type=first.texts.type)
        )
        rows.columns = first.columns
        rows._light = {k: v + second._light[k] for k, v in first._light.items()}
        return rows

    def value(self, key: str, i: int) -> Any:
        col = self._light.get(key)
        if col is not None:
            return col[i]
        if key not in self.columns:
            raise KeyError(key)
        if key == "text" and self.texts is not None:
            return self.texts[i].as_py()
        return self.table[key].slice(i, 1).to_list()[0]

    def column(self, key: str) -> list[Any]:
        """A whole column as a list (shared, do not modify)."""
        col = self._light.get(key)
        if col is not None:
            return col
        if key == "text" and self.texts is not None:
            return self.texts.to_pylist()
        return self.table[key].to_list()

    def __len__(self) -> int:
        return self.table.height

    @overload
    def __getitem__(self, i: int) -> RowView: ...
    @overload
    def __getitem__(self, i: slice) -> list[RowView]: ...
    def __getitem__(self, i: int | slice) -> RowView | list[RowView]:
        n = self.table.height
        if isinstance(i, slice):
            return [RowView(self, j) for j in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return RowView(self, i)


class Masks:
    """Filter masks over the rows, computed once per distinct filter (bounded, oldest dropped)."""

    LIMIT = 64

    def __init__(self, table: pl.DataFrame, live: np.ndarray | None = None) -> None:
        self.table = table
        self.live = live  # rows not tombstoned (None: all)
        self._cache: dict[tuple[Any, ...], np.ndarray] = {}

    def get(
        self,
        excluded_statuses: Sequence[str],
        lanes: Sequence[str] | None,
        include_tool_output: bool,
        path_prefix: str | None,
        as_of: str | None = None,
        span: tuple[str, str] | None = None,
    ) -> np.ndarray:
        key = (
            tuple(excluded_statuses),
            tuple(lanes or ()),
            include_tool_output,
            path_prefix or "",
            as_of or "",
            span,
        )
        mask = self._cache.get(key)
        if mask is None:
            mask = self._compute(*key)
            mask.setflags(write=False)  # shared between queries
            if len(self._cache) >= self.LIMIT:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = mask
        return mask

    def _compute(
        self,
        excluded: tuple[str, ...],
        lanes: tuple[str, ...],
        include_tool_output: bool,
        prefix: str,
        as_of: str,
        span: tuple[str, str] | None = None,
    ) -> np.ndarray:
        t = self.table
        if not t.height:
            return np.zeros(0, dtype=bool)
        expr = ~pl.col("status").is_in(list(excluded)).fill_null(False)
        if lanes:
            expr &= pl.col("lane").is_in(list(lanes)).fill_null(False)
        if not include_tool_output and "role" in t.columns:
            expr &= (pl.col("role") != "tool").fill_null(True)
        if prefix:
            prefix = prefix.rstrip("/")
            expr &= (pl.col("path") == prefix) | pl.col("path").str.starts_with(prefix + "/")
        if as_of and "date" in t.columns:
            # sources dated after `as_of` are masked before ranking; an undated one cannot be placed: kept
            expr &= (pl.col("date") <= as_of).fill_null(True)
        if span is not None:
            # the span of time a question names (time_reference): only sources dated in it, undated ones not
            if "date" not in t.columns:
                return np.zeros(t.height, dtype=bool)
            expr &= pl.col("date").is_between(pl.lit(span[0]), pl.lit(span[1])).fill_null(False)
        mask = t.select(expr.alias("m"))["m"].to_numpy().astype(bool, copy=True)
        if self.live is not None:
            mask &= self.live
        return mask


@dataclass(frozen=True)
class Part:
    """One segment's chunk table as the search reads it: the rows, each row's chunk id, and the row of
    each chunk id."""

    rows: Rows
    ids: list[str]
    row_of: dict[str, int]

    @classmethod
    def of(cls, arrow: pa.Table) -> Part:
        frame, texts = split_table(arrow)
        rows = Rows(frame, texts)
        ids = rows.column("chunk_id") if frame.height else []
        return cls(rows, ids, {cid: i for i, cid in enumerate(ids)})

    @classmethod
    def stack(cls, base: Part, delta: Part, dead: np.ndarray) -> Part:
        """The rows of a view: the base's then the delta's; `row_of` maps a chunk id to its live row only
        (a tombstoned row shares its id with the delta row that replaced it, or has none left)."""
        if not len(delta.ids) and not len(dead):
            return base
        n_base = len(base.ids)
        row_of = dict(base.row_of)
        for r in dead.tolist():
            cid = base.ids[r]
            if row_of.get(cid) == r:
                del row_of[cid]
        row_of.update((cid, n_base + j) for j, cid in enumerate(delta.ids))
        rows = Rows.stack(base.rows, delta.rows) if len(delta.ids) else base.rows
        return cls(rows, base.ids + delta.ids, row_of)
