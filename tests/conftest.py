"""Shared fixtures: a real vault (files + git) in a temp folder, real stores, a shared embedding cache.

The embedding cache is content-addressed and shared by the whole session, so a text embedded by one
test is not embedded again by the next: the same mechanism that makes `hippo run` re-runs free.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from dagster import DagsterInstance, materialize

from hippo_assets.definitions import ASSET_CHECKS, ASSETS
from hippo_cli.signals import restore_interrupt_signals
from hippo_cli.vault_init import init_vault
from hippo_resources import build_resources
from hippo_settings import HippoSettings

FIXTURES = Path(__file__).parent / "fixtures"

# Benchmarks the tests run write their figures here, never over the committed eval/results/ (eval/results.py).
os.environ.setdefault("EVAL_RESULTS_DIR", tempfile.mkdtemp(prefix="hippo-eval-results-"))

# CI may start the suite with SIGINT ignored; without this, Dagster would make SIGTERM ignored too and
# the log-mirroring `tail -F` children of every run would outlive their runs (hippo_cli/signals.py).
restore_interrupt_signals()

# The user's config file (`hippo init` writes it) must not reach the tests: every test, and every `hippo`
# subprocess it starts, finds an empty config folder of its own.
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="hippo-test-xdg-")
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="hippo-test-xdg-data-")


@pytest.fixture(autouse=True)
def own_config_folder(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config folder per test: a `hippo init` in one test does not name the vault of the next."""
    folder = tmp_path_factory.mktemp("xdg-config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
    return folder


@pytest.fixture(scope="session")
def embed_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("embed-cache") / "vectors.sqlite"


def make_vault(root: Path, with_inbox: bool = True) -> Path:
    """A fresh vault: `hippo init` layout, the fixture notes, an initial git commit."""
    vault = root / "vault"
    init_vault(vault)
    shutil.copytree(FIXTURES / "vault", vault, dirs_exist_ok=True)
    if with_inbox:
        shutil.copytree(FIXTURES / "inbox", vault / "00-inbox", dirs_exist_ok=True)
    from hippo_resources import Vault

    Vault(root=str(vault)).commit("fixtures")
    return vault


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return make_vault(tmp_path)


@pytest.fixture
def settings(tmp_path: Path, vault: Path, embed_cache: Path) -> HippoSettings:
    return HippoSettings(vault=vault, home=tmp_path / "home", embed_cache_path=embed_cache)


def run_graph(settings: HippoSettings, instance: DagsterInstance | None = None, **kwargs):  # noqa: ANN201
    """Materialize every asset and check on the given settings (ephemeral instance by default)."""
    return materialize(
        [*ASSETS, *ASSET_CHECKS],
        resources=build_resources(settings),
        instance=instance or DagsterInstance.ephemeral(),
        **kwargs,
    )


@pytest.fixture
def indexed(settings: HippoSettings) -> HippoSettings:
    """Settings whose vault has been materialized once."""
    result = run_graph(settings)
    assert result.success
    return settings
