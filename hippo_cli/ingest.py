"""`hippo ingest`: one conversation source through dlt, then into the index, with progress."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hippo_core.settings import HippoSettings

# CLI name → (dlt asset key, op name, needs a FILE)
KINDS: dict[str, tuple[str, str, bool]] = {
    "claude-code": ("claude_code_log", "claude_code_ingest", False),
    "codex": ("codex_log", "codex_ingest", False),
    "chatgpt": ("chatgpt_export", "chatgpt_ingest", True),
    "claude-ai": ("claude_ai_export", "claude_ai_ingest", True),
}
DOWNSTREAM = ("conversation_chunks", "vault_documents", "chunks", "embeddings", "lexical_index")


def ingest_conversations(
    settings: HippoSettings, kind: str, file: str | None, no_segments: bool = False
) -> int:
    from hippo_assets.definitions import ASSET_CHECKS, ASSETS, MEMORY_ASSETS, MEMORY_CHECKS
    from hippo_cli.runner import get_instance, run_assets
    from hippo_resources import build_resources
    from hippo_resources.conversation_store import memory_resources

    key, op, needs_file = KINDS[kind]
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
    selection = " or ".join(f"key:{k}" for k in (key, *DOWNSTREAM))
    resources = {**build_resources(settings), **memory_resources(settings, os.environ)}
    ok = run_assets(
        [*ASSETS, *MEMORY_ASSETS, *ASSET_CHECKS, *MEMORY_CHECKS],
        resources,
        selection,
        get_instance(),
        run_config,
        out=sys.stderr,  # looked up now: a default bound at import would outlive a swapped stderr
    )
    return 0 if ok else 1
