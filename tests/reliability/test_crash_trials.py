"""kill -9 of a real `hippo run` at seeded moments, then a normal run: it exits 0 and converges (chunks =
vectors, BM25 CURRENT valid, no index.lock, vault files intact, git tracks every pipeline write, no run
left STARTED). CI runs three trials (during `sources`, during `embeddings` and at the run's end, when the
vault commit is made); `python -m eval.crash` runs 20 spread over every step, `lexical_index` included (a
kill mid-delta is also the second test's subject, on the writer itself). A lexical writer is also killed at random moments of its
delta and base writes (`tests/reliability/delta_writer.py`)."""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from eval.crash import run_trials, summary
from hippo_resources.lexical_store import LexicalStore
from tests.reliability.delta_writer import ROWS, ids_keys, table_after


def test_killed_runs_converge(tmp_path: Path, embed_cache: Path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("HIPPO_EMBED_CACHE", str(embed_cache))
    out = io.StringIO()
    targets = ("sources", "embeddings", "run end")
    results = run_trials(tmp_path, trials=len(targets), seed=11, notes=2, out=out, targets=targets)
    report = out.getvalue()
    totals = summary(results)
    assert totals["converged"] == totals["trials"] == 3, report
    assert totals["killed"] >= 2, report  # a kill may land after a short step ended; most must not
    # the kill during `sources` (copies written, inbox files moved, no commit yet) left nothing untracked
    sources = results[0]
    assert sources.checks["git_untracked_or_dirty"] == 0 and sources.checks["runs_left_started"] == 0, report


def test_a_lexical_writer_killed_mid_write_leaves_the_last_generation_live(tmp_path: Path) -> None:
    """SIGKILL of a real writer publishing deltas and compactions, at seeded moments: each time, the live
    generation is whole, readable and exactly the table of the edit its manifest names, and the writer
    started next continues from it and clears what the killed one left."""
    root = tmp_path / "lexical"
    rng = random.Random(5)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2]), *sys.path])}
    mid_write = 0
    editions = set()
    for _ in range(10):
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.reliability.delta_writer", str(root)],
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        try:
            assert proc.stdout is not None and proc.stdout.readline().startswith("published")
            time.sleep(rng.uniform(0.0, 0.3))
        finally:
            proc.kill()
            proc.wait()
        mid_write += bool(list(root.glob(".*.partial")) or list(root.glob(".CURRENT.json.*.tmp")))
        manifest = json.loads((root / "CURRENT.json").read_text(encoding="utf-8"))
        editions.add(manifest["segment"])
        view = LexicalStore(root=str(root)).view()
        assert view.live_table().equals(table_after(int(manifest["edit"])))  # whole, and the right one
        assert view.index.n_docs == ROWS
        if int(manifest["edit"]) >= 1:
            assert view.index.top_k(["edited"], 3)
        assert LexicalStore(root=str(root)).previous() is not None  # the next build can start from it
    print(f"{mid_write} of 10 kills left a half-written generation or manifest")
    assert mid_write >= 2, f"only {mid_write} of 10 kills landed mid-write"  # about half do
    assert editions <= {"base", "delta"}
    store = LexicalStore(root=str(root), keep_generations=2)
    previous = store.previous()
    assert previous is not None
    k = int(store.manifest()["edit"]) + 1
    table = table_after(k)
    texts = table["text"].to_list()
    store.write(
        previous.next(*ids_keys(table), lambda rows: [texts[i].split() for i in rows], 10_000), table, {}
    )
    assert not list(root.glob(".*.partial")) and not list(root.glob(".CURRENT.json.*.tmp"))
    assert store.view().live_table().equals(table)
