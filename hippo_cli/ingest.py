"""`hippo ingest`: one conversation source through dlt, then into the index, with progress."""

from __future__ import annotations

import sys
from pathlib import Path

from hippo_core.settings import HippoSettings

# CLI name → (job, op name, needs a FILE)
KINDS: dict[str, tuple[str, str, bool]] = {
    "claude-code": ("claude_code_job", "claude_code_ingest", False),
    "codex": ("codex_job", "codex_ingest", False),
    "chatgpt": ("chatgpt_job", "chatgpt_ingest", True),
    "claude-ai": ("claude_ai_job", "claude_ai_ingest", True),
}


def ingest_conversations(
    settings: HippoSettings, kind: str, file: str | None, no_segments: bool = False
) -> int:
    from hippo_assets.definitions import build_definitions
    from hippo_cli.runner import get_instance, run_job

    job_name, op, needs_file = KINDS[kind]
    run_config: dict = {"ops": {}}
    if needs_file:
        if not file:
            print(f"hippo ingest {kind}: give the export ZIP to load", file=sys.stderr)
            return 2
        path = Path(file).expanduser().resolve()
        if not path.is_file():
            print(f"hippo ingest {kind}: no file at {path}", file=sys.stderr)
            return 2
        run_config["ops"][op] = {"config": {"paths": [str(path)]}}
    elif file:
        print(
            f"hippo ingest {kind}: takes no FILE (set HIPPO_CLAUDE_PROJECTS / HIPPO_CODEX_HOME)",
            file=sys.stderr,
        )
        return 2
    if not settings.vault.is_dir():
        print(
            f"hippo ingest: vault not found at {settings.vault.resolve()} (set HIPPO_VAULT)", file=sys.stderr
        )
        return 2
    if no_segments:
        run_config["ops"]["conversation_chunks"] = {"config": {"segments": False}}
    job = build_definitions(settings).resolve_job_def(job_name)
    ok = run_job(job, get_instance(), run_config, out=sys.stderr)
    return 0 if ok else 1
