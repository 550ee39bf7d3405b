"""Crash trials: `kill -9` of a real `hippo run` at seeded random moments spread over every step of
refresh_job, then a normal `hippo run`, then the invariants.

    python -m eval.crash [--trials 20] [--seed 7] [--notes 4] [--work DIR] [--json out.json]

Each trial drops new notes in the inbox (half of them committed to git, as a sync tool would, half
not), edits a wiki note without committing (a person's edit in progress), starts `hippo run` as a
subprocess, waits for the progress line of its target step (`▶ step`, or the run's last materialization
for "run end"), sleeps a seeded random part of that step's duration (measured in a first, unkilled
run), sends SIGKILL, and runs `hippo run` again. The rerun must exit 0 and converge:

- chunks = vectors: every chunk id has one vector, no orphan vector, no duplicate chunk id;
- the BM25 `CURRENT.json` is valid and names an existing generation (its base and its delta) whose live
  chunk table has exactly the chunks; no partial generation or base folder is left;
- no `.git/index.lock` is left in the vault;
- every vault file is byte-identical to before the killed run, except what the run is meant to write
  (each inbox note moved to `00-inbox/.processed/` with the same bytes, one new source copy each);
- git tracks everything the pipeline wrote: the only uncommitted paths are the person's own edits;
- no run of the killed trials is left `STARTED` in the Dagster instance.

Prints one line per trial and the totals (killed, converged), and writes them as JSON with --json.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[1]
FIXTURE_VAULT = ROOT / "tests" / "fixtures" / "vault"
# Every step of refresh_job in order, and the run's end (the vault's commit at resource teardown).
STEPS = (
    "sources",
    "sources_source_hashes_match",
    "vault_documents",
    "chunks",
    "chunks_chunks_are_valid",
    "embeddings",
    "embeddings_messages_have_vectors",
    "embeddings_vectors_match_chunks",
    "lexical_index",
    "run end",
)
RUN_END_MARK = "✔ lexical_index"
GIT = ["git", "-c", "user.name=Person", "-c", "user.email=person@localhost"]

TOPICS = [
    "커피를 마신 뒤 20분 낮잠을 자면 오후 집중력이 오른다는 실험 기록 {n}.",
    "Dagster asset checks block a run when chunk and vector counts disagree, trial {n}.",
    "형태소 분석기로 명사를 뽑고 한글 바이그램을 더해 BM25 색인을 만든다 {n}.",
    "The vault is a git repository; one run makes at most one commit, note {n}.",
]


@dataclass
class Trial:
    n: int
    target: str
    delay: float
    killed: bool = False
    killed_at: float | None = None
    last_step: str | None = None
    rerun_exit: int | None = None
    rerun_seconds: float | None = None
    checks: dict[str, Any] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    @property
    def converged(self) -> bool:
        return self.rerun_exit == 0 and not self.failures


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def vault_files(vault: Path) -> dict[str, str]:
    """Every file of the vault outside .git, path → sha256."""
    out = {}
    for p in vault.rglob("*"):
        rel = p.relative_to(vault).as_posix()
        if p.is_file() and not rel.startswith(".git/"):
            out[rel] = sha(p)
    return out


def git(vault: Path, *args: str) -> str:
    return subprocess.run([*GIT, "-C", str(vault), *args], capture_output=True, text=True, check=True).stdout


def make_vault(root: Path) -> Path:
    vault = root / "vault"
    subprocess.run(
        [sys.executable, "-m", "hippo_cli.main", "init", str(vault)], check=True, capture_output=True
    )
    shutil.copytree(FIXTURE_VAULT, vault, dirs_exist_ok=True)
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "fixtures")
    return vault


class Hippo:
    """`hippo run` as a subprocess with the trial's environment; progress lines are read as they come."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env

    def start(self) -> tuple[subprocess.Popen[str], list[tuple[float, str]]]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hippo_cli.main", "run"],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its children (log tails) can be cleaned up with the group
        )
        lines: list[tuple[float, str]] = []
        started = time.monotonic()

        def read() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                lines.append((time.monotonic() - started, line.rstrip("\n")))

        threading.Thread(target=read, daemon=True).start()
        return proc, lines

    def run(self, timeout: float = 600) -> tuple[int, list[tuple[float, str]], float]:
        started = time.monotonic()
        proc, lines = self.start()
        code = proc.wait(timeout=timeout)
        time.sleep(0.1)  # let the reader drain the pipe
        _kill_group(proc)
        return code, lines, time.monotonic() - started


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL whatever the run left in its process group (Dagster's log-tailing children)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def step_windows(lines: list[tuple[float, str]]) -> dict[str, float]:
    """How long each step of a finished run took, from its progress lines (start to the next step)."""
    starts = [(t, line.split("▶ ", 1)[1].strip()) for t, line in lines if "▶ " in line]
    end = next((t for t, line in lines if RUN_END_MARK in line), lines[-1][0] if lines else 0.0)
    out = {}
    for (t, step), nxt in zip(starts, [*starts[1:], (end, "")], strict=True):
        out[step] = max(nxt[0] - t, 0.05)
    out["run end"] = 0.5
    return out


def add_trial_changes(vault: Path, n: int, notes: int) -> tuple[list[str], list[str]]:
    """Inbox notes (half committed) and one uncommitted edit of a wiki note; returns (inbox, edited)."""
    inbox = []
    for i in range(notes):
        rel = f"00-inbox/trial-{n:02d}-{i}.md"
        body = "\n\n".join(t.format(n=f"{n}-{i}-{k}") for k, t in enumerate(TOPICS))
        (vault / rel).write_text(f"# Trial {n} note {i}\n\n{body}\n", encoding="utf-8")
        inbox.append(rel)
    committed = inbox[: notes // 2]
    if committed:
        git(vault, "add", "--", *committed)
        git(vault, "commit", "-q", "-m", f"sync: trial {n} notes")
    edited = "20-wiki/health/sleep-hygiene.md"
    with (vault / edited).open("a", encoding="utf-8") as f:
        f.write(f"\nA person's edit in progress, trial {n}.\n")
    return inbox, [edited]


def check(
    vault: Path, home: Path, before: dict[str, str], inbox: list[str], edited: list[str], dagster_home: Path
) -> tuple[dict[str, Any], list[str]]:
    """The invariants after the rerun; returns (figures, failures)."""
    from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

    from hippo_resources import build_resources
    from hippo_resources.lexical_store import MANIFEST, GenerationUnreadable
    from hippo_resources.vector_store import VectorStore
    from hippo_settings import HippoSettings

    failures: list[str] = []
    res = build_resources(HippoSettings(vault=vault, home=home))
    VectorStore.forget_clients()  # see what the subprocess wrote
    chunk_ids = res.chunk_store.chunks()["chunk_id"].to_list()
    vector_ids = set(res.vector_store.existing())
    figures: dict[str, Any] = {
        "chunks": len(chunk_ids),
        "vectors": len(vector_ids),
        "duplicate_chunks": len(chunk_ids) - len(set(chunk_ids)),
        "orphan_vectors": len(vector_ids - set(chunk_ids)),
        "missing_vectors": len(set(chunk_ids) - vector_ids),
    }
    for key in ("duplicate_chunks", "orphan_vectors", "missing_vectors"):
        if figures[key]:
            failures.append(f"{key}={figures[key]}")
    lexical = Path(res.lexical_store.root)
    try:
        manifest = json.loads((lexical / MANIFEST).read_text(encoding="utf-8"))
        view = res.lexical_store.view(manifest["generation"])
        rows = view.live_table()["chunk_id"].to_list()
        figures["bm25_rows"] = len(rows)
        figures["bm25_segment"] = manifest.get("segment")
        if sorted(rows) != sorted(chunk_ids) or view.index.n_docs != len(rows):
            failures.append(f"BM25 generation has {len(rows)} rows, chunks {len(chunk_ids)}")
    except (OSError, ValueError, KeyError, GenerationUnreadable) as exc:
        failures.append(f"CURRENT.json unusable: {exc}")
    figures["partial_generations"] = len(list(lexical.glob(".*.partial")))
    if figures["partial_generations"]:
        failures.append("partial generation folder left")
    if (vault / ".git" / "index.lock").exists():
        failures.append(".git/index.lock left")

    after = vault_files(vault)
    moved = {f"00-inbox/.processed/{Path(rel).name}": before[rel] for rel in inbox}
    expected_gone = set(inbox)
    new_sources = {p for p in after if p not in before and p.startswith("10-sources/") and p.count("/") == 1}
    changed = [p for p in before if p not in expected_gone and after.get(p) != before[p]]
    unexpected_new = sorted(set(after) - set(before) - set(moved) - new_sources)
    figures["vault_files_changed"] = len(changed)
    if changed:
        failures.append(f"vault files changed or lost: {changed[:5]}")
    if unexpected_new:
        failures.append(f"unexpected new vault files: {unexpected_new[:5]}")
    if any(p in after for p in expected_gone):
        failures.append("an inbox note is still in the inbox")
    if any(after.get(p) != h for p, h in moved.items()):
        failures.append("a moved inbox note is missing or changed in .processed")
    if len(new_sources) != len(inbox):
        failures.append(f"{len(new_sources)} new source copies for {len(inbox)} notes")
    dirty = {
        line[3:]
        for line in git(vault, "status", "--porcelain=v1", "--untracked-files=all").splitlines()
        if line.strip()
    }
    figures["git_untracked_or_dirty"] = len(dirty - set(edited))
    if dirty != set(edited):
        failures.append(
            f"git: uncommitted paths besides the person's edits: {sorted(dirty - set(edited))[:5]}"
        )

    os.environ["DAGSTER_HOME"] = str(dagster_home)  # the instance's dagster.yaml reads it
    instance = DagsterInstance.from_config(str(dagster_home))
    try:
        stuck = instance.get_run_records(
            filters=RunsFilter(statuses=[DagsterRunStatus.STARTED, DagsterRunStatus.STARTING])
        )
    finally:
        instance.dispose()
    figures["runs_left_started"] = len(stuck)
    if stuck:
        failures.append(f"{len(stuck)} run(s) left STARTED")
    return figures, failures


def run_trials(
    work: Path,
    trials: int,
    seed: int,
    notes: int,
    out=sys.stdout,  # noqa: ANN001
    targets: tuple[str, ...] = STEPS,
) -> list[Trial]:
    """`trials` kills, the n-th aimed at `targets[n % len(targets)]` after a seeded part of its duration."""
    rng = random.Random(seed)
    vault = make_vault(work)
    home, dagster_home = work / "home", work / "dagster"
    env = {
        **os.environ,
        "HIPPO_VAULT": str(vault),
        "HIPPO_HOME": str(home),
        "DAGSTER_HOME": str(dagster_home),
        "HIPPO_EMBED_THREADS": os.environ.get("HIPPO_EMBED_THREADS", "1"),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
        "PYTHONUNBUFFERED": "1",
    }
    env.setdefault("HIPPO_EMBED_CACHE", str(work / "embed-cache.sqlite"))
    hippo = Hippo(env)

    # a first, unkilled run on a trial's worth of changes: it must converge too, and it measures the steps
    add_trial_changes(vault, 0, notes)
    code, lines, seconds = hippo.run()
    if code != 0:
        raise SystemExit("the first run failed:\n" + "\n".join(line for _, line in lines[-30:]))
    windows = step_windows(lines)
    print(f"first run: {seconds:.1f} s; step windows: {json.dumps(windows)}", file=out, flush=True)
    git(vault, "checkout", "--", "20-wiki/health/sleep-hygiene.md")  # start the trials from a clean tree

    results = []
    for n in range(1, trials + 1):
        target = targets[(n - 1) % len(targets)]
        trial = Trial(n=n, target=target, delay=round(rng.uniform(0.0, 0.9) * windows.get(target, 0.5), 3))
        inbox, edited = add_trial_changes(vault, n, notes)
        before = vault_files(vault)
        proc, lines = hippo.start()
        started = time.monotonic()
        mark = RUN_END_MARK if target == "run end" else f"▶ {target}"
        while proc.poll() is None and not any(mark in line for _, line in lines):
            time.sleep(0.01)
        time.sleep(trial.delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            trial.killed = True
            trial.killed_at = round(time.monotonic() - started, 2)
        proc.wait()
        _kill_group(proc)
        steps = [line.split("▶ ", 1)[1].strip() for _, line in lines if "▶ " in line]
        trial.last_step = steps[-1] if steps else "(startup)"
        code, rerun_lines, seconds = hippo.run()
        trial.rerun_exit, trial.rerun_seconds = code, round(seconds, 1)
        if code != 0:
            trial.failures.append("rerun failed: " + " | ".join(line for _, line in rerun_lines[-5:]))
        trial.checks, failures = check(vault, home, before, inbox, edited, dagster_home)
        trial.failures += failures
        git(vault, "checkout", "--", *edited)
        results.append(trial)
        print(
            f"trial {n:2d} target={target:34s} delay={trial.delay:6.3f}s "
            f"{'killed at ' + str(trial.killed_at) + 's' if trial.killed else 'not killed (run ended first)':24s} "
            f"in {trial.last_step:34s} rerun={trial.rerun_exit} "
            f"chunks={trial.checks.get('chunks')} vectors={trial.checks.get('vectors')} "
            f"{'converged' if trial.converged else 'FAILED: ' + '; '.join(trial.failures)}",
            file=out,
            flush=True,
        )
    return results


def summary(results: list[Trial]) -> dict[str, Any]:
    killed = [t for t in results if t.killed]
    return {
        "trials": len(results),
        "killed": len(killed),
        "killed_converged": sum(t.converged for t in killed),
        "converged": sum(t.converged for t in results),
        "steps_killed_in": sorted({t.last_step for t in killed if t.last_step}),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.crash", description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--notes", type=int, default=4, help="inbox notes per trial")
    parser.add_argument("--work", type=Path, help="working folder (default: a temporary one, removed)")
    parser.add_argument("--json", type=Path, help="write every trial and the totals here")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="hippo-crash-"))
    try:
        results = run_trials(work, args.trials, args.seed, args.notes)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    totals = summary(results)
    print(
        f"\n{totals['killed_converged']}/{totals['killed']} killed runs converged "
        f"({totals['trials'] - totals['killed']} trial(s) where the run ended before the kill; "
        f"{totals['converged']}/{totals['trials']} trials converged in all); "
        f"killed in: {', '.join(totals['steps_killed_in'])}"
    )
    if args.json:
        args.json.write_text(
            json.dumps({"totals": totals, "trials": [asdict(t) for t in results]}, indent=2), encoding="utf-8"
        )
    return 0 if totals["converged"] == totals["trials"] else 1


if __name__ == "__main__":
    sys.exit(main())
