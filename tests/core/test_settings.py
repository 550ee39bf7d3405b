"""One settings object: every HIPPO_* name, read from the environment only when asked, secrets as EnvVar in
the Definitions, and the docs' configuration table listing exactly those names."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from dagster import EnvVar

from hippo_assets.definitions import build_definitions
from hippo_resources import build_resources
from hippo_settings import HippoSettings, env_names, settings_table

ROOT = Path(__file__).parents[2]


def test_from_env_reads_a_mapping_and_flags_win(tmp_path: Path) -> None:
    env = {
        "HIPPO_VAULT": "/from/env",
        "HIPPO_EMBED_URL": "http://embed:8000",
        "HIPPO_EMBED_THREADS": "",  # blank means unset
        "HIPPO_AUTO_APPROVE": "1",
        "HIPPO_CRON_COMPILE": "5 2 * * *",
        "HIPPO_EMBED_CACHE": "/cache.sqlite",
        "ANTHROPIC_API_KEY": "sk-ant-test",
    }
    s = HippoSettings.from_env(env, vault=tmp_path, home=None)
    assert s.vault == tmp_path and s.home == Path(".hippo")  # a flag given wins; None leaves the setting
    assert (s.embed_backend, s.embed_threads, s.auto_approve) == ("http", None, True)  # a URL means http
    assert (s.cron_compile, s.embed_cache) == ("5 2 * * *", Path("/cache.sqlite"))
    assert s.anthropic_api_key.get_secret_value() == "sk-ant-test" and "sk-ant" not in repr(s)
    assert HippoSettings(vault=tmp_path).anthropic_api_key is None  # the constructor never reads the env


def test_secrets_reach_the_definitions_as_env_vars(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("HIPPO_PG_DSN", "postgresql://u:secret@db/hippo")
    monkeypatch.setenv("HIPPO_EMBED_API_KEY", "embed-secret")
    settings = HippoSettings.from_env(vault=tmp_path, home=tmp_path / "home")
    resources = build_definitions(settings).resources
    llm, store, embedder = resources["llm"], resources["conversation_store"], resources["embedder"]
    assert isinstance(llm.api_key, EnvVar) and llm.api_key.env_var_name == "ANTHROPIC_API_KEY"
    assert isinstance(store.pg_dsn, EnvVar) and store.pg_dsn.env_var_name == "HIPPO_PG_DSN"
    assert isinstance(embedder.api_key, EnvVar) and embedder.api_key.env_var_name == "HIPPO_EMBED_API_KEY"
    assert llm.process_config_and_initialize().api_key == "sk-ant-secret"  # what a run sees
    # outside Dagster (the librarian, tests) and for values not from the process environment: plain values
    assert build_resources(settings).llm.api_key == "sk-ant-secret"
    given = HippoSettings.from_env({"ANTHROPIC_API_KEY": "sk-given"}, vault=tmp_path)
    assert build_resources(given, env_secrets=True).llm.api_key == "sk-given"


def test_the_docs_settings_table_is_generated_from_the_settings() -> None:
    """docs/configuration.md asks the MkDocs hook for the table, which renders exactly the settings."""
    assert "<!-- generated: settings-table -->" in (ROOT / "docs/configuration.md").read_text(
        encoding="utf-8"
    )
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs/_hooks/generate.py")
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = hook.on_page_markdown("# Configuration\n\n<!-- generated: settings-table -->\n", None, None, None)
    listed = re.findall(r"^\| `([A-Z_]+)` \|", page, flags=re.MULTILINE)
    assert listed == list(env_names().values())
    assert settings_table() in page
