"""Benchmark figures as JSON: what every `python -m eval.<name>` writes when it finishes.

One file per benchmark, `eval/results/<name>.json`, overwritten by the latest run (git keeps the earlier
ones); `python -m eval.render_docs` turns them into `docs/benchmarks/`. Each file says how its figures
were made: the command, the commit, the date, the machine's cores and load. `EVAL_RESULTS_DIR` sends the
files elsewhere (the test suite does, so a test run never rewrites the committed results).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"


def results_dir() -> Path:
    """Where results go: `EVAL_RESULTS_DIR` when set, else the committed `eval/results/`."""
    return Path(os.environ.get("EVAL_RESULTS_DIR") or RESULTS)


def _commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty", "--exclude", "*"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _relative(arg: str) -> str:
    """An argument naming a path under the checkout is recorded relative to it (no machine paths)."""
    if arg.startswith("/"):
        try:
            return os.path.relpath(arg, ROOT)
        except ValueError:
            return arg
    return arg


def command(module: str, argv: list[str] | None) -> str:
    """The command line that reproduces a run, from the checkout's root."""
    args = sys.argv[1:] if argv is None else list(argv)
    return " ".join(["python -m", module, *(shlex.quote(_relative(a)) for a in args)]).strip()


def write_result(
    name: str, figures: dict[str, Any], argv: list[str] | None, module: str | None = None
) -> Path:
    """Write `<name>.json` with the figures and how they were made; returns the file written.

    `argv` is what the benchmark's `main` parsed (None: the process's own arguments); `module` defaults to
    `eval.<name>`. Figures are plain JSON: numbers, strings, lists of row dicts, dicts of dicts.
    """
    load = os.getloadavg() if hasattr(os, "getloadavg") else (None, None, None)
    record = {
        "name": name,
        "command": command(module or f"eval.{name}", argv),
        "commit": _commit(),
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": {"cores": os.cpu_count(), "loadavg": [round(x, 2) for x in load if x is not None]},
        "figures": figures,
    }
    out = results_dir()
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, ensure_ascii=False, indent=2, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)
    print(f"results: {path}", file=sys.stderr)
    return path
