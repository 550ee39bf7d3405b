"""`python -m eval.work_bench`: resume latency and size on a project with 1,000 checkpoints.

Builds a throwaway store (SQLite, and PostgreSQL with `--pg-dsn`) and a throwaway git vault with a
worklog of 300 entries and a handoff, then times `WorkMemory.resume` against the same call on the
same project before its checkpoints were written (the baseline: the vault files and the connection),
and reports the JSON size against the budget.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from hippo_core.agents.work_memory import new_worklog, worklog_line
from hippo_resources.vault import Vault
from hippo_resources.work_store import WorkStore
from hippo_work.config import WorkLimits
from hippo_work.service import WorkMemory

PROJECT = "bench-project"


def fill(memory: WorkMemory, checkpoints: int, sessions: int) -> None:
    for i in range(checkpoints):
        session = f"sess-{i % sessions:03d}"
        kind = "conversation" if i % 3 == 0 else "work"
        summary = f"Step {i}: changed the retry policy of the payment client and reran the suite. " * 3
        memory.checkpoint(PROJECT, kind, summary.strip(), session, f"evt-{i}", agent="bench")


def make_vault(root: Path, entries: int) -> Vault:
    vault = Vault(root=str(root))
    root.mkdir(parents=True)
    vault.init_git()
    start = dt.date(2026, 1, 1)
    text = new_worklog(PROJECT, start.isoformat())
    lines = [text.rstrip("\n"), ""]
    month = None
    for i in range(entries):
        day = start + dt.timedelta(days=i)
        if day.strftime("%Y-%m") != month:
            month = day.strftime("%Y-%m")
            lines += ["", f"## {month}", ""]
        nxt = "check the nightly run" if i % 4 else None
        lines.append(worklog_line(day.isoformat(), "agent", f"Entry {i} about the payment client", nxt))
    vault.write_text(f"50-ops/{PROJECT}/worklog.md", "\n".join(lines) + "\n")
    vault.commit("bench vault")
    return vault


def timed(fn, repeats: int) -> list[float]:  # noqa: ANN001
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def run(store: WorkStore, vault: Vault, repeats: int, checkpoints: int, sessions: int) -> dict[str, object]:
    memory = WorkMemory(store, vault, WorkLimits())
    memory.handoff(
        PROJECT, "Start from the flaky retry test; the pool timeout is fixed. " * 10, agent="bench"
    )
    memory.resume(PROJECT, session_id="new-session")  # schema created, files cached by the OS
    baseline = timed(lambda: memory.resume(PROJECT, session_id="new-session"), repeats)  # same files, no feed
    t0 = time.perf_counter()
    fill(memory, checkpoints, sessions)
    fill_s = time.perf_counter() - t0
    memory.resume(PROJECT, session_id="new-session")  # warm
    full = timed(lambda: memory.resume(PROJECT, session_id="new-session"), repeats)
    result = memory.resume(PROJECT, session_id="new-session")
    size = len(json.dumps(result.dump(), ensure_ascii=False, separators=(",", ":")).encode())
    return {
        "backend": store.backend,
        "checkpoints": checkpoints,
        "sessions": sessions,
        "fill_seconds": round(fill_s, 2),
        "resume_ms_median": round(statistics.median(full), 2),
        "resume_ms_p95": round(sorted(full)[int(0.95 * (len(full) - 1))], 2),
        "no_checkpoints_ms_median": round(statistics.median(baseline), 2),
        "ratio_vs_no_checkpoints": round(statistics.median(full) / statistics.median(baseline), 2),
        "resume_bytes": size,
        "budget_bytes": memory.limits.resume_budget,
        "checkpoints_shown": len(result.checkpoints),
        "open_items_shown": len(result.open_items),
        "omitted": result.omitted.dump() if result.omitted else None,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoints", type=int, default=1000)
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument(
        "--pg-dsn", default=None, help="also run on PostgreSQL (a throwaway schema is dropped after)"
    )
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rows = [
            run(
                WorkStore(path=str(root / "work.sqlite")),
                make_vault(root / "vault-sqlite", 300),
                args.repeats, args.checkpoints, args.sessions,
            )
        ]  # fmt: skip
        if args.pg_dsn:
            schema = f"hippo_bench_{uuid.uuid4().hex[:8]}"
            try:
                rows.append(
                    run(
                        WorkStore(pg_dsn=args.pg_dsn, pg_schema=schema),
                        make_vault(root / "vault-pg", 300),
                        args.repeats, args.checkpoints, args.sessions,
                    )
                )  # fmt: skip
            finally:
                subprocess.run(
                    ["psql", args.pg_dsn, "-q", "-c", f"DROP SCHEMA IF EXISTS {schema} CASCADE"], check=False
                )
    for row in rows:
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
