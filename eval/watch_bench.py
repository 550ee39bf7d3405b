"""Edit-to-searchable benchmark for `hippo watch` (issue 14 point 5): `python -m eval.watch_bench`.

Builds a vault of N notes (`eval.scale_vault`, BEIR passages), indexes it with `hippo run`, starts the
librarian (`hippo serve`) and `hippo watch` as real subprocesses, then:

- `noop_run_s`: the watcher's first pass over the already-indexed vault (a refresh_job run in the warm
  watcher process that finds nothing to embed), as the watcher reports it;
- `look_ms`: the cost of one look at the vault (a stat per note and the comparison), which is all a
  pass costs when no note changed (median of 5, in this process);
- `warm_up_s`: the watcher loading Kiwi and Great Expectations while idle after its first pass (the
  edit waits for it: a long-lived watcher is warm by the time a person edits);
- `edit_searchable_s`: one paragraph of one note rewritten with a made-up word → that word found in
  that note by a lexical search through the running librarian's REST API;
- `add_searchable_s`: the same for a new note.

Embeddings come from `eval.fake_embedder` (deterministic, no model), so the figures are the pipeline's
own cost. Every figure carries the load average when it was taken. Prints JSON (and writes `--json`).

`--keep` leaves the work folder; `--reuse FOLDER` measures on the index such a folder holds (a copy of it:
it is edited) instead of building one, after one primed edit run (`prime_run_s`) of the code measured;
`--code CHECKOUT` runs the hippo processes from another checkout (before / after on copies of one index).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from eval.beir import DEFAULT_DATA
from eval.results import write_result
from eval.scale import DIM, FAKE_MODEL, free_port, search
from eval.scale_system import Children, loadavg, log, print_figures
from eval.scale_vault import add_note, edit_one_paragraph, generate_vault, load_corpora, marker_word

REPO = Path(__file__).resolve().parents[1]
TIMEOUT_S = 3600.0


class Lines:
    """A child's stderr, line by line, each with the monotonic time it arrived."""

    def __init__(self, proc: subprocess.Popen, logfile: Path) -> None:
        self.items: list[tuple[float, str]] = []
        self.lock = threading.Lock()
        self.proc = proc

        def pump() -> None:
            assert proc.stderr is not None
            with open(logfile, "w", encoding="utf-8") as out:
                for raw in proc.stderr:
                    line = raw.decode("utf-8", "replace").rstrip("\n")
                    out.write(line + "\n")
                    out.flush()
                    with self.lock:
                        self.items.append((time.monotonic(), line))

        threading.Thread(target=pump, daemon=True).start()

    def wait_for(self, pattern: str, after: float, timeout: float = TIMEOUT_S) -> tuple[float, str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                for at, line in self.items:
                    if at >= after and re.search(pattern, line):
                        return at, line
            if self.proc.poll() is not None:
                raise RuntimeError(f"the child exited {self.proc.returncode} before {pattern!r}")
            time.sleep(0.05)
        raise RuntimeError(f"{pattern!r} not seen in {timeout:.0f} s")


def figure(value: float, **extra: Any) -> dict[str, Any]:
    return {"value": round(value, 3), "loadavg_1m": loadavg()[0], **extra}


def found(client: httpx.Client, base: str, marker: str, path: str) -> bool:
    return any(hit["path"] == path for hit in search(client, base, marker, "lexical")["results"])


def to_searchable(client: httpx.Client, base: str, marker: str, path: str, since: float) -> float:
    while not found(client, base, marker, path):
        if time.monotonic() - since > TIMEOUT_S:
            raise RuntimeError(f"{marker!r} not found in {path}")
        time.sleep(0.1)
    return time.monotonic() - since


def generated_notes(vault: Path) -> list[str]:
    """The generated notes of a kept vault, in generation order (`eval.scale_vault` numbers them)."""
    paths = [p.relative_to(vault).as_posix() for p in vault.glob("*/**/note-*.md")]
    return sorted(paths, key=lambda rel: (int(re.search(r"note-(\d+)", rel).group(1)), rel))  # type: ignore[union-attr]


def run(
    notes: int,
    data: Path,
    seed: int,
    work: Path,
    children: Children,
    reuse: bool = False,
    code: Path | None = None,
) -> dict[str, Any]:
    vault, home, dagster = work / "vault", work / "home", work / "dagster"
    corpora = load_corpora(data)
    if reuse:  # a kept work folder: its index is there; this run's markers and new note are its own
        made_notes = generated_notes(vault)
        tag = f"{seed}-{time.time_ns()}"
        log(f"vault: reusing {len(made_notes):,} notes in {vault}")
    else:
        log(f"vault: {notes:,} notes in {vault}")
        made_notes = generate_vault(vault, corpora, notes, seed).notes
        tag = str(seed)
    proc = children.start(
        "fake embedder",
        [sys.executable, "-m", "eval.fake_embedder", "--port", "0", "--dim", str(DIM)],
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        cwd=REPO,
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    port_line = proc.stdout.readline().decode().strip()
    embed_url = f"http://127.0.0.1:{port_line.split()[1]}/v1"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIPPO_") and k != "DAGSTER_HOME"}
    env.update(
        HIPPO_VAULT=str(vault),
        HIPPO_HOME=str(home),
        DAGSTER_HOME=str(dagster),
        HIPPO_EMBED_URL=embed_url,
        HIPPO_EMBED_MODEL=FAKE_MODEL,
        HIPPO_EMBED_DIM=str(DIM),
        PYTHONUNBUFFERED="1",
    )
    if code is not None:  # the hippo processes run another checkout's code (`--code`)
        env["PYTHONPATH"] = str(code.resolve())
    figures: dict[str, Any] = {"notes": len(made_notes), "reused_index": reuse, "code": str(code or REPO)}

    if reuse:
        # One edit indexed by this code first: an index kept by other code has no row hashes for the
        # checks yet (`check_memo.check_new_rows`), which this run writes, as a build would.
        edit_one_paragraph(vault, made_notes[0], marker_word(seed, f"prime-{tag}"), corpora, seed)
    log("build: hippo run …" if not reuse else "prime: one edit, hippo run …")
    t0 = time.monotonic()
    build = children.start("hippo run", [sys.executable, "-m", "hippo_cli.main", "run"], env, work)
    if build.wait(timeout=TIMEOUT_S) != 0:
        raise RuntimeError("the first hippo run failed")
    figures["prime_run_s" if reuse else "build_s"] = figure(time.monotonic() - t0)
    log(f"first run: {time.monotonic() - t0:.1f} s")

    log("no-op: hippo run (a new process: imports included) …")
    t0 = time.monotonic()
    noop = children.start("hippo run (no-op)", [sys.executable, "-m", "hippo_cli.main", "run"], env, work)
    if noop.wait(timeout=TIMEOUT_S) != 0:
        raise RuntimeError("the no-op hippo run failed")
    figures["noop_cli_run_s"] = figure(time.monotonic() - t0)

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    children.start(
        "hippo serve", [sys.executable, "-m", "hippo_cli.main", "serve", "--port", str(port)], env, work
    )
    with httpx.Client() as client:
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            try:
                if client.get(f"{base}/health", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the librarian did not start")
            time.sleep(0.2)
        search(client, base, "warm up", "lexical")
    log(f"librarian on {base}")

    watcher = children.start(
        "hippo watch",
        [sys.executable, "-m", "hippo_cli.main", "watch", "--debounce", "0.5"],
        env,
        work,
        stderr=subprocess.PIPE,
    )
    lines = Lines(watcher, work / "watch.log")
    at, line = lines.wait_for(r"indexed in [\d.]+ s", after=0)
    figures["noop_run_s"] = figure(float(re.search(r"indexed in ([\d.]+) s", line).group(1)))  # type: ignore[union-attr]
    log(f"watcher: first pass (nothing to embed) {figures['noop_run_s']['value']:.1f} s")

    sys.path.insert(0, str(REPO))
    from hippo_core.vault.vault_changes import changed_paths
    from hippo_resources.vault import Vault

    reader = Vault(root=str(vault))
    before = reader.look(indexed_only=True, inbox=True).stats()
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        changed_paths(before, reader.look(indexed_only=True, inbox=True).stats())
        times.append(time.perf_counter() - t0)
    figures["look_ms"] = figure(statistics.median(times) * 1000, files=len(before))

    # A long-lived watcher loads Kiwi and Great Expectations while idle after its first pass; the edit is
    # made once that is done, as it is for any edit after the first seconds (a watcher without the
    # warm-up line is edited at once, its first edit then pays the loading).
    try:
        at, line = lines.wait_for(r"warm: .* loaded in [\d.]+ s", after=0, timeout=600)
        figures["warm_up_s"] = figure(float(re.search(r"loaded in ([\d.]+) s", line).group(1)))  # type: ignore[union-attr]
    except RuntimeError:
        figures["warm_up_s"] = None
    with httpx.Client() as client:
        note = made_notes[len(made_notes) // 2]
        marker = marker_word(seed, f"watch-edit-{tag}" if reuse else "watch-edit")
        assert not found(client, base, marker, note), "the marker is not unique"
        time.sleep(1.0)  # the watcher is idle
        t0 = time.monotonic()
        edit_one_paragraph(vault, note, marker, corpora, seed)
        figures["edit_searchable_s"] = figure(to_searchable(client, base, marker, note, t0), note=note)
        _, line = lines.wait_for(r"indexed in", after=t0)
        figures["edit_searchable_s"]["watcher_run"] = line.split("] ", 1)[-1]
        log(f"edit: searchable after {figures['edit_searchable_s']['value']:.1f} s ({line})")

        added = f"notes/added/watch-added-{tag}.md"
        marker = marker_word(seed, f"watch-add-{tag}" if reuse else "watch-add")
        time.sleep(1.0)
        t0 = time.monotonic()
        add_note(vault, added, marker, corpora, seed)
        figures["add_searchable_s"] = figure(to_searchable(client, base, marker, added, t0), note=added)
        _, line = lines.wait_for(r"indexed in", after=t0)
        figures["add_searchable_s"]["watcher_run"] = line.split("] ", 1)[-1]
        log(f"add: searchable after {figures['add_searchable_s']['value']:.1f} s ({line})")
    children.stop(watcher, grace=120)
    figures["watcher_exit_code"] = watcher.returncode
    return figures


def watch_table(figures: dict[str, Any]) -> dict[str, Any]:
    """The figures `eval/results` keeps: a row per timed figure (value and the load beside it), the rest as is."""
    timed = {k: v for k, v in figures.items() if isinstance(v, dict) and "value" in v}
    return {"timings": timed} | {k: v for k, v in figures.items() if k not in timed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.watch_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument(
        "--reuse",
        type=Path,
        help="a work folder a --keep run left (vault, home, dagster): measure on its index instead of "
        "building one; it is changed (edits, a new note) and kept",
    )
    parser.add_argument(
        "--code",
        type=Path,
        help="run hippo run / serve / watch from this checkout (e.g. /work/main for before)",
    )
    args = parser.parse_args(argv)
    work = args.reuse or Path(tempfile.mkdtemp(prefix="hippo-watch-bench-"))
    children = Children()
    try:
        figures = run(
            args.notes, args.data, args.seed, work, children, reuse=args.reuse is not None, code=args.code
        )
    finally:
        children.close()
        if not args.keep and args.reuse is None:
            shutil.rmtree(work, ignore_errors=True)
    print_figures(figures, args.json)
    write_result(f"watch_bench-n{args.notes}", watch_table(figures), argv, module="eval.watch_bench")
    return 0


if __name__ == "__main__":
    sys.exit(main())
