"""What a killed run leaves in the vault is committed by the next run, and nothing a person wrote is."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from hippo_settings import HippoSettings
from tests.conftest import run_graph


def git(vault: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(vault), *args], capture_output=True, text=True, check=True).stdout


def test_the_next_run_commits_what_a_killed_run_left(settings: HippoSettings) -> None:
    vault = settings.vault
    # inbox drops are untracked, as a person leaves them
    git(vault, "rm", "-q", "--cached", "00-inbox/coffee-nap.md", "00-inbox/meeting-notes.txt")
    git(vault, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-q", "-m", "untrack inbox")
    # what a run killed after its copies and moves, before its commit, leaves behind
    (vault / "10-sources" / "left-behind-1234abcd.md").write_text("---\nstatus: raw-source\n---\n# Left\n")
    (vault / "00-inbox" / ".processed").mkdir(parents=True, exist_ok=True)
    (vault / "00-inbox" / ".processed" / "moved.md").write_text("# Moved\n")
    lock = vault / ".git" / "index.lock"
    lock.write_text("")
    old = time.time() - 120
    os.utime(lock, (old, old))
    # and a person's own work in progress, which the pipeline must leave alone
    (vault / "20-wiki" / "health" / "draft.md").write_text("# My draft\n")
    (vault / "10-sources" / "mine").mkdir()
    (vault / "10-sources" / "mine" / "filed.md").write_text("# Filed by me\n")
    head = git(vault, "rev-parse", "HEAD").strip()

    assert run_graph(settings).success
    assert not lock.exists()
    commits = git(vault, "rev-list", f"{head}..HEAD").split()
    assert len(commits) == 1  # one run, one commit
    committed = set(git(vault, "show", "--name-only", "--format=", "HEAD").split())
    assert {"10-sources/left-behind-1234abcd.md", "00-inbox/.processed/moved.md"} <= committed
    status = git(vault, "status", "--porcelain=v1", "--untracked-files=all").splitlines()
    assert sorted(line[3:] for line in status) == ["10-sources/mine/filed.md", "20-wiki/health/draft.md"]
    assert "recover the writes of an interrupted run" in git(vault, "log", "-1", "--format=%B")


def test_a_fresh_lock_of_a_running_git_is_left_alone(settings: HippoSettings) -> None:
    from hippo_resources import Vault

    lock = settings.vault / ".git" / "index.lock"
    lock.write_text("")
    assert Vault(root=str(settings.vault)).clear_stale_lock() is False and lock.exists()
    lock.unlink()
