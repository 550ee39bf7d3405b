"""The vault scan's memory: what each Markdown file parsed to last time, keyed by size, mtime and hash.

A run reads and parses only the files that changed. A file whose size and mtime (ns) equal the last
scan's is taken as unchanged without being read, like git's index; any other file is read and hashed,
and a file whose bytes hash as before (touched, restored, copied over with the same text) reuses its
earlier parse. A file modified within `RACY_NS` of the moment it was last read is always hashed
again: a same-size edit in the same mtime tick would otherwise go unseen ("racily clean" in git).

The cache is one parquet table, self-contained (each row holds the parse result of the bytes its hash
names), written after the documents table: a crash between the two leaves an older, still correct
cache. Its file name carries a fingerprint of the parsing code and the vault root, so a changed
parser or another vault starts from an empty cache.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from hippo_resources.tables import forget, read_table, write_table

RACY_NS = 2_000_000_000
"""mtime granularity margin: coarse file systems (FAT, some network mounts) tick in 2 s."""

STAT_SCHEMA: dict[str, pl.DataType] = {
    "size": pl.Int64(),
    "mtime_ns": pl.Int64(),
    "scanned_ns": pl.Int64(),
    "digest": pl.Utf8(),
    "error": pl.Utf8(),
}


@dataclass
class ScanResult:
    """One scan: the cache table (every readable file's parse or error) and what was done."""

    table: pl.DataFrame
    parsed: list[str] = field(default_factory=list)
    rehashed_unchanged: list[str] = field(default_factory=list)
    reused: int = 0


class ScanCache:
    """Parse results of the vault's Markdown files, reused while a file has not changed.

    `parse(rel, data)` returns the row (a dict over `record_schema`) or raises one of `errors`,
    whose message is kept and reported again on later runs without re-reading the file. A `read` that
    raises one of `errors` (a file that became a FIFO, grew over the limit or vanished after the walk)
    is kept the same way: one file never fails the scan.
    """

    def __init__(
        self,
        directory: Path,
        fingerprint: str,
        record_schema: dict[str, pl.DataType],
        errors: tuple[type[Exception], ...],
    ) -> None:
        self.directory = Path(directory)
        self.fingerprint = fingerprint
        self.record_schema = record_schema
        self.schema = {**record_schema, **STAT_SCHEMA}
        self.errors = errors

    @property
    def file(self) -> Path:
        return self.directory / f"scan-cache-{self.fingerprint}.parquet"

    def load(self) -> pl.DataFrame:
        """The last scan's table; empty when there is none or it cannot be read."""
        try:
            table = read_table(self.file, keep=True)
        except (OSError, pl.exceptions.PolarsError):
            return pl.DataFrame(schema=self.schema)
        if dict(table.schema) != self.schema:
            return pl.DataFrame(schema=self.schema)
        return table

    def scan(
        self,
        files: Iterable[str],
        stat: Callable[[str], Any],
        read: Callable[[str], bytes],
        parse: Callable[[str, bytes], dict[str, Any]],
    ) -> ScanResult:
        """Scan `files` (vault-relative, in the order wanted); `stat` returns an `os.stat_result`."""
        prev = self.load()
        known = {
            path: (size, mtime, scanned, digest)
            for path, size, mtime, scanned, digest in prev.select(
                "path", "size", "mtime_ns", "scanned_ns", "digest"
            ).iter_rows()
        }
        keep: list[str] = []  # paths whose previous row is reused
        restat: dict[str, tuple[int, int, int]] = {}  # reused after a re-hash: new size, mtime, scan time
        fresh: list[dict[str, Any]] = []
        order: list[str] = []
        result = ScanResult(table=prev)
        for rel in files:
            now = time.time_ns()
            try:
                st = stat(rel)
            except OSError:
                continue  # gone since the walk: the next scan does not list it
            order.append(rel)
            size, mtime = int(st.st_size), int(st.st_mtime_ns)
            entry = known.get(rel)
            if entry is not None and entry[0] == size and entry[1] == mtime and mtime < entry[2] - RACY_NS:
                keep.append(rel)
                continue
            try:
                data = read(rel)
            except self.errors as exc:
                row = {k: None for k in self.record_schema} | {"path": rel, "error": f"unreadable: {exc}"}
                fresh.append(row | {"size": size, "mtime_ns": mtime, "scanned_ns": now, "digest": None})
                result.parsed.append(rel)
                continue
            digest = hashlib.sha256(data).hexdigest()
            if entry is not None and entry[3] == digest:
                keep.append(rel)
                restat[rel] = (len(data), mtime, now)
                result.rehashed_unchanged.append(rel)
                continue
            try:
                row = {**parse(rel, data), "error": None}
            except self.errors as exc:
                row = {k: None for k in self.record_schema} | {"path": rel, "error": str(exc)}
            fresh.append(row | {"size": len(data), "mtime_ns": mtime, "scanned_ns": now, "digest": digest})
            result.parsed.append(rel)
        result.reused = len(keep)
        kept = prev.filter(pl.col("path").is_in(keep))
        if restat:
            fix = pl.DataFrame(
                {
                    "path": list(restat),
                    "_size": [v[0] for v in restat.values()],
                    "_mtime": [v[1] for v in restat.values()],
                    "_scanned": [v[2] for v in restat.values()],
                },
                schema={"path": pl.Utf8, "_size": pl.Int64, "_mtime": pl.Int64, "_scanned": pl.Int64},
            )
            kept = (
                kept.join(fix, on="path", how="left")
                .with_columns(
                    pl.coalesce("_size", "size").alias("size"),
                    pl.coalesce("_mtime", "mtime_ns").alias("mtime_ns"),
                    pl.coalesce("_scanned", "scanned_ns").alias("scanned_ns"),
                )
                .select(list(self.schema))
            )
        new = pl.DataFrame(fresh, schema=self.schema)
        ranked = pl.DataFrame(
            {"path": order, "_order": range(len(order))}, schema={"path": pl.Utf8, "_order": pl.Int64}
        )
        table = pl.concat([kept, new]).join(ranked, on="path", how="inner").sort("_order").drop("_order")
        result.table = table
        return result

    def save(self, table: pl.DataFrame) -> None:
        """Replace the cache (atomically) and remove caches of other fingerprints."""
        self.directory.mkdir(parents=True, exist_ok=True)
        write_table(self.file, table, keep=True)
        for other in self.directory.glob("scan-cache-*.parquet"):
            if other != self.file:
                forget(other)
                other.unlink(missing_ok=True)
