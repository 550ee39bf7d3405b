"""`hippo ingest` as a user runs it: one source through dlt into search, with progress."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hippo_cli.main import main
from hippo_settings import HippoSettings
from tests.memory.conftest import CHATGPT_ID, memory_env


def test_ingest_help_lists_every_source() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "hippo_cli.main", "ingest", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert all(k in out for k in ("claude-code", "codex", "chatgpt", "claude-ai"))


def test_ingest_chatgpt_export_then_search(
    settings: HippoSettings,
    logs,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    for key, value in memory_env(logs).items():
        monkeypatch.setenv(key, value)
    common = ["--vault", str(settings.vault), "--home", str(settings.home)]
    monkeypatch.setenv("HIPPO_EMBED_CACHE", str(settings.embed_cache))
    assert main(["ingest", "chatgpt", str(logs["chatgpt_zip"]), *common]) == 0
    err = capsys.readouterr().err
    assert "chatgpt_ingest" in err or "chatgpt_export" in err  # step progress is shown
    assert (
        main(["search", *common, "kafka offsets after a failed deploy", "--lane", "conversations", "--json"])
        == 0
    )
    hits = json.loads(capsys.readouterr().out)["results"]
    assert hits and hits[0]["conversation_id"] == CHATGPT_ID
    # Bad invocations change nothing and say why.
    assert main(["ingest", "chatgpt", str(tmp_path / "missing.zip"), *common]) == 2
    assert main(["ingest", "claude-ai", *common]) == 2
    assert main(["ingest", "codex", "extra-file.zip", *common]) == 2
    assert "no file at" in capsys.readouterr().err


def test_definitions_register_the_memory_group(settings: HippoSettings) -> None:
    from dagster import AssetKey

    from hippo_assets.definitions import build_definitions

    defs = build_definitions(settings)
    job = defs.resolve_job_def("memory_job")
    keys = {k.to_user_string() for k in job.asset_layer.asset_graph.get_all_asset_keys()}
    assert {
        "claude_code_log",
        "codex_log",
        "chatgpt_export",
        "claude_ai_export",
        "conversation_chunks",
    } <= keys
    graph = defs.resolve_asset_graph()
    assert graph.get(AssetKey("claude_code_log")).group_name == "memory"
    assert AssetKey("conversation_chunks") in graph.get(AssetKey("chunks")).parent_keys
    checks = {c.name for c in graph.asset_check_keys}
    assert "messages_have_vectors" in checks
