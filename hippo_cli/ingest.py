"""`hippo ingest KIND [FILE]`: one conversation format's job (dlt load, then the index), with progress."""

from __future__ import annotations

import sys
from pathlib import Path

from hippo_core.conversations.formats import BY_CLI_NAME
from hippo_settings import HippoSettings, env_names


def ingest_conversations(
    settings: HippoSettings, kind: str, file: str | None, no_segments: bool = False
) -> int:
    from hippo_assets.definitions import build_definitions
    from hippo_cli.runner import get_instance, run_job

    fmt = BY_CLI_NAME[kind]
    run_config: dict = {"ops": {}}
    if fmt.reader == "export":
        if not file:
            print(f"hippo ingest {kind}: give the export ZIP to load", file=sys.stderr)
            return 2
        path = Path(file).expanduser().resolve()
        if not path.is_file():
            print(f"hippo ingest {kind}: no file at {path}", file=sys.stderr)
            return 2
        run_config["ops"][fmt.op_name] = {"config": {"paths": [str(path)]}}
    elif file:
        print(f"hippo ingest {kind}: takes no FILE (set {env_names()[fmt.setting]})", file=sys.stderr)
        return 2
    if not settings.vault.is_dir():
        print(
            f"hippo ingest: vault not found at {settings.vault.resolve()} (set HIPPO_VAULT)", file=sys.stderr
        )
        return 2
    if no_segments:
        run_config["ops"]["conversation_chunks"] = {"config": {"segments": False}}
    job = build_definitions(settings).resolve_job_def(fmt.job_name)
    ok = run_job(job, get_instance(), run_config, out=sys.stderr)  # stderr looked up now, not at import
    return 0 if ok else 1
