"""A lexical writer for kill tests: `python -m tests.reliability.delta_writer ROOT`.

Builds a base of `ROWS` synthetic chunks (or continues from the live generation), then edits one row per
step and publishes each as a delta, compacting every few steps, forever. Edit k's table is a function of
k alone (`table_after`), and each manifest carries its k, so a test that kills this process at any moment
knows exactly what the live generation must hold. Tokens are the text's words: the subject is the store.
"""

from __future__ import annotations

import hashlib
import sys

import numpy as np
import polars as pl

from hippo_core.index.bm25 import BM25Params
from hippo_core.index.bm25_update import Generation
from hippo_resources.lexical_store import LexicalStore
from hippo_resources.tables import row_hashes

ROWS = 3000
COMPACT_EVERY = 7


def table_after(k: int) -> pl.DataFrame:
    """The chunk table after edit k (0: the first base): edit j rewrites row j * 37 % ROWS."""
    texts = [f"chunk {i} about topic{i % 50} and word{i % 7} " * 8 for i in range(ROWS)]
    status = ["active"] * ROWS
    for j in range(1, k + 1):
        row = j * 37 % ROWS
        if j % 3:
            texts[row] = f"edited {j} topic{j % 50} fresh{j} " * 5
        else:
            status[row] = f"status-{j}"  # a metadata-only change
    return pl.DataFrame({"chunk_id": [f"c{i}" for i in range(ROWS)], "text": texts, "status": status})


def ids_keys(table: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    keys = [hashlib.blake2b(t.encode(), digest_size=16).digest() for t in table["text"].to_list()]
    return row_hashes(table), np.array(keys, dtype="S16").reshape(table.height)


def main(root: str) -> None:
    store = LexicalStore(root=root, keep_generations=2)
    params = BM25Params()
    previous = store.previous()
    manifest = store.manifest() or {}
    k = int(manifest.get("edit", -1))
    while True:
        k += 1
        table = table_after(k)
        texts = table["text"].to_list()

        def tokenize(rows: list[int], texts: list[str] = texts) -> list[list[str]]:
            return [texts[i].split() for i in rows]

        ids, keys = ids_keys(table)
        if previous is None:
            update = Generation.build(ids, keys, tokenize, params)
        else:
            update = previous.next(ids, keys, tokenize, -1 if k % COMPACT_EVERY == 0 else 10_000)
        store.write(update, table, {"edit": k})
        previous = update.generation
        print(f"published {k}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
    sys.exit(0)
