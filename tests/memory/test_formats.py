"""One registry of conversation formats: every name a format has elsewhere comes from its row."""

from __future__ import annotations

from hippo_assets.memory.assets import DLT_KEYS, LOADERS
from hippo_assets.memory.definitions import FORMAT_JOBS
from hippo_cli.main import build_parser
from hippo_core.conversations.formats import BY_CLI_NAME, FORMATS
from hippo_resources import conversation_store
from hippo_settings import HippoSettings


def test_the_table_generates_loaders_jobs_cli_choices_and_store_sources() -> None:
    names = [f.name for f in FORMATS]
    assert names == ["claude_code", "codex", "chatgpt", "claude_ai"]
    assert list(LOADERS) == names
    for fmt in FORMATS:
        loader = LOADERS[fmt.name]
        assert [k.to_user_string() for k in loader.keys] == [fmt.asset_name]
        assert loader.op.name == fmt.op_name  # the name `hippo ingest` configures
        assert loader.group_names_by_key[loader.key] == "memory"
        assert fmt.setting in HippoSettings.model_fields
    assert [k.to_user_string() for k in DLT_KEYS] == [f.asset_name for f in FORMATS]
    assert [j.name for j in FORMAT_JOBS] == [f.job_name for f in FORMATS]
    assert tuple(names) == conversation_store.SOURCES
    ingest = next(
        a for a in build_parser()._subparsers._group_actions[0].choices["ingest"]._actions if a.dest == "kind"
    )
    assert list(ingest.choices) == list(BY_CLI_NAME) == ["claude-code", "codex", "chatgpt", "claude-ai"]
    # the names a format had before the table keep dlt's incremental state where it was
    assert [f.asset_name for f in FORMATS] == [
        "claude_code_log",
        "codex_log",
        "chatgpt_export",
        "claude_ai_export",
    ]
    assert BY_CLI_NAME["claude-ai"].dataset_name == "hippo_conversations_claude_ai"
