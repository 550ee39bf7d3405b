"""BM25 index generations on disk, switched in atomically through a manifest.

A generation is a folder holding the BM25 matrix and the chunk table it was built from. `CURRENT.json`
names the live generation; it is replaced with an fsync'd rename, so a reader never sees a half-written
index, and a reader that loaded one generation keeps a consistent view until it reloads.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import polars as pl
from dagster import ConfigurableResource

from hippo_core.bm25 import BM25Index
from hippo_resources.files import fsync_dir, fsync_file, write_text_atomic

MANIFEST = "CURRENT.json"
CHUNK_TABLE = "chunks.parquet"


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

    def write_generation(self, index: BM25Index, table: pl.DataFrame, meta: dict[str, Any]) -> str:
        """Write a new generation and make it live. Returns its name."""
        self.path.mkdir(parents=True, exist_ok=True)
        ns = time.time_ns()  # one clock read, UTC: names sort in the order they were written
        name = (
            f"gen-{time.strftime('%Y%m%dT%H%M%S', time.gmtime(ns // 1_000_000_000))}-{ns % 1_000_000_000:09d}"
        )
        tmp = self.path / f".{name}.partial"
        tmp.mkdir()
        index.save(tmp)
        table.write_parquet(tmp / CHUNK_TABLE)
        fsync_file(tmp / CHUNK_TABLE)
        fsync_dir(tmp)
        os.replace(tmp, self.path / name)
        fsync_dir(self.path)
        manifest = {"generation": name, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **meta}
        write_text_atomic(self.path / MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=2))
        self._prune(keep=name)
        return name

    def load(self, generation: str) -> tuple[BM25Index, pl.DataFrame]:
        folder = self.path / generation
        return BM25Index.load(folder), pl.read_parquet(folder / CHUNK_TABLE)

    def _prune(self, keep: str) -> None:
        """Keep the newest generations; a reader still holding an old one has it in memory already."""
        gens = sorted(p for p in self.path.glob("gen-*") if p.is_dir())
        for old in gens[: max(len(gens) - self.keep_generations, 0)]:
            if old.name != keep:
                shutil.rmtree(old, ignore_errors=True)
        for partial in self.path.glob(".gen-*.partial"):
            shutil.rmtree(partial, ignore_errors=True)
