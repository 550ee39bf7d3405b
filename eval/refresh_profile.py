"""Where a refresh run's time goes, step by step: `python -m eval.refresh_profile --notes 1000`.

Builds a vault of N notes (`eval.scale_vault`), indexes it with `hippo run` against the fake embedder, then
runs `hippo run` three more times: with nothing changed, after one paragraph of one note was rewritten and
after a new note was added. For each run it prints the process's time to its first progress line (imports,
Definitions, instance) and the seconds from each step's start to the next event, read from `hippo run`'s own
progress lines. `--vault-from DIR` reuses a kept work folder (`--keep` here or in `eval.watch_bench`) instead of building again.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from eval.beir import DEFAULT_DATA
from eval.scale import DIM, FAKE_MODEL
from eval.scale_system import Children, loadavg, log, print_figures
from eval.scale_vault import add_note, edit_one_paragraph, generate_vault, load_corpora, marker_word
from eval.watch_bench import generated_notes

REPO = Path(__file__).resolve().parents[1]
LINE = re.compile(r"^\[\s*([\d.]+)s\] (.*)$")


def steps(lines: list[str]) -> dict[str, float]:
    """Seconds per step (`▶ step` to the next step's start or the run's end), from the progress lines."""
    marks = [(float(m.group(1)), m.group(2)) for m in map(LINE.match, lines) if m]
    out: dict[str, float] = {}
    starts = [(t, text[2:].strip()) for t, text in marks if text.startswith("▶")]
    end = marks[-1][0] if marks else 0.0
    for i, (t, name) in enumerate(starts):
        nxt = starts[i + 1][0] if i + 1 < len(starts) else end
        out[name] = round(nxt - t, 2)
    return out


def hippo_run(env: dict[str, str], work: Path, label: str) -> dict[str, Any]:
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "hippo_cli.main", "run"], env=env, cwd=work, capture_output=True, text=True
    )
    wall = time.monotonic() - t0
    (work / f"{label}.log").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    if proc.returncode != 0:
        raise RuntimeError(f"{label}: hippo run failed, see {work / (label + '.log')}")
    lines = (proc.stdout + proc.stderr).splitlines()
    marks = [float(m.group(1)) for m in map(LINE.match, lines) if m]
    total = re.search(r"succeeded in ([\d.]+) s", proc.stdout + proc.stderr)
    run_s = float(total.group(1)) if total else wall
    return {
        "wall_s": round(wall, 2),
        "start_s": round(wall - run_s, 2),  # process start to the run's start: imports and Definitions
        "first_line_s": marks[0] if marks else None,
        "steps": steps(lines),
        "summary": [ln.strip() for ln in lines if ln.strip().startswith("✔ ") and "check" not in ln][:8],
        "loadavg_1m": loadavg()[0],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m eval.refresh_profile", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--vault-from", type=Path, help="a kept work folder: skip generating and building")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    work = args.vault_from or Path(tempfile.mkdtemp(prefix="hippo-refresh-profile-"))
    children = Children()
    corpora = load_corpora(args.data)
    out: dict[str, Any] = {"notes": args.notes}
    try:
        proc = children.start(
            "fake embedder",
            [sys.executable, "-m", "eval.fake_embedder", "--port", "0", "--dim", str(DIM)],
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            cwd=REPO,
            stdout=subprocess.PIPE,
        )
        assert proc.stdout is not None
        port = proc.stdout.readline().decode().split()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("HIPPO_") and k != "DAGSTER_HOME"}
        env.update(
            HIPPO_VAULT=str(work / "vault"),
            HIPPO_HOME=str(work / "home"),
            DAGSTER_HOME=str(work / "dagster"),
            HIPPO_EMBED_URL=f"http://127.0.0.1:{port}/v1",
            HIPPO_EMBED_MODEL=FAKE_MODEL,
            HIPPO_EMBED_DIM=str(DIM),
            PYTHONUNBUFFERED="1",
        )
        if args.vault_from is None:
            made = generate_vault(work / "vault", corpora, args.notes, args.seed)
            (work / "notes.json").write_text(json.dumps(made.notes), encoding="utf-8")
            log("build …")
            out["build"] = hippo_run(env, work, "build")
            log(f"build {out['build']['wall_s']} s")
        listed = work / "notes.json"  # a folder `eval.watch_bench --keep` left has no list: read the vault
        notes = (
            json.loads(listed.read_text(encoding="utf-8"))
            if listed.is_file()
            else generated_notes(work / "vault")
        )
        out["noop"] = hippo_run(env, work, "noop")
        log(f"no-op {out['noop']['wall_s']} s")
        tag = f"{time.time_ns()}"
        edit_one_paragraph(
            work / "vault", notes[len(notes) // 2], marker_word(args.seed, tag), corpora, args.seed
        )
        out["edit"] = hippo_run(env, work, "edit")
        log(f"edit {out['edit']['wall_s']} s")
        add_note(
            work / "vault", f"notes/added/profile-{tag}.md", marker_word(args.seed, tag + "a"), corpora, 0
        )
        out["add"] = hippo_run(env, work, "add")
        log(f"add {out['add']['wall_s']} s")
    finally:
        children.close()
        if not args.keep and args.vault_from is None:
            shutil.rmtree(work, ignore_errors=True)
    if args.keep:
        log(f"kept {work}")
    print_figures(out, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
