"""Fixtures for conversation memory: copies of the fixture logs (so tests can append), export ZIPs."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest
from dagster import DagsterInstance, materialize

from hippo_assets.memory.assets import LOADERS, conversation_chunks
from hippo_resources import build_resources
from hippo_settings import HippoSettings

FIXTURES = Path(__file__).parent.parent / "fixtures" / "conversations"
DLT_ASSETS = list(LOADERS.values())
CLAUDE_SESSION = "3f1c2a9e-7b4d-4e2a-9c1f-0a1b2c3d4e5f"
CHATGPT_ID = "6761a2b3-0000-4000-8000-000000000001"


def make_zip(target: Path, conversations_json: Path | bytes, member: str = "conversations.json") -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    data = conversations_json if isinstance(conversations_json, bytes) else conversations_json.read_bytes()
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(member, data)
        zf.writestr("user.json", b'{"id": "user-1"}')
    return target


@pytest.fixture
def logs(tmp_path: Path) -> dict[str, Path]:
    """Writable copies of the Claude Code and Codex folders, and export ZIPs in an exports folder."""
    root = tmp_path / "agent-logs"
    shutil.copytree(FIXTURES / "claude_code", root / "claude" / "projects")
    shutil.copytree(FIXTURES / "codex", root / "codex")
    exports = root / "exports"
    return {
        "claude": root / "claude" / "projects",
        "codex": root / "codex",
        "exports": exports,
        "chatgpt_zip": make_zip(
            exports / "chatgpt-2026-11-21.zip", FIXTURES / "chatgpt" / "conversations.json"
        ),
        "claude_ai_zip": make_zip(
            exports / "claude-2026-11-21.zip", FIXTURES / "claude_ai" / "conversations.json"
        ),
        "session": root / "claude" / "projects" / "-home-dev-payments-api" / f"{CLAUDE_SESSION}.jsonl",
    }


def memory_env(logs: dict[str, Path]) -> dict[str, str]:
    return {
        "HIPPO_CLAUDE_PROJECTS": str(logs["claude"]),
        "HIPPO_CODEX_HOME": str(logs["codex"]),
        "HIPPO_EXPORTS": str(logs["exports"]),
    }


def with_logs(settings: HippoSettings, logs: dict[str, Path], **more: object) -> HippoSettings:
    """The settings pointed at the copied agent-log folders."""
    return settings.model_copy(
        update={
            "claude_projects": logs["claude"],
            "codex_home": logs["codex"],
            "exports": logs["exports"],
            **more,
        }
    )


@pytest.fixture
def mem_resources(settings: HippoSettings, logs: dict[str, Path]) -> dict[str, object]:
    return dict(build_resources(with_logs(settings, logs)))


def load(resources: dict[str, object], assets=None, run_config=None, instance=None):  # noqa: ANN001, ANN201
    """Run the dlt assets (and the conversation tables) once, like a scheduled run would."""
    return materialize(
        [*(assets or DLT_ASSETS), conversation_chunks],
        resources=resources,
        instance=instance or DagsterInstance.ephemeral(),
        run_config=run_config,
    )


def metadata(result, key: str) -> dict:  # noqa: ANN001
    """The materialization metadata of one asset in a run, as plain values."""
    for event in result.get_asset_materialization_events():
        if event.asset_key.to_user_string() == key:
            return {k: v.value for k, v in event.materialization.metadata.items()}
    raise KeyError(key)
