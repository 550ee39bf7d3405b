"""`hippo work`, `hippo hook install`, `hippo ghost audit` and the SessionEnd hook's background ingest,
each as a real `hippo` subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hippo_resources.ghost_store import GhostStore
from hippo_resources.vault import Vault
from hippo_work import GhostLayer
from tests.conftest import make_vault

REPO_ROOT = Path(__file__).parent.parent.parent
FIXTURES = REPO_ROOT / "tests" / "fixtures"
TRANSCRIPTS = FIXTURES / "conversations" / "claude_code"


def hippo(
    env: dict[str, str], *args: str, stdin: str = "", cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hippo_cli.main", *args], input=stdin, capture_output=True, text=True,
        env=env, cwd=cwd, timeout=600, check=False,
    )  # fmt: skip


@pytest.fixture
def env(tmp_path: Path, embed_cache: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("HIPPO_", "DAGSTER_"))}
    return {
        **base,
        "PYTHONPATH": str(REPO_ROOT),
        "HIPPO_HOME": str(tmp_path / "home"),
        "HIPPO_VAULT": str(make_vault(tmp_path, with_inbox=False)),
        "HIPPO_EMBED_CACHE": str(embed_cache),
        "OMP_NUM_THREADS": "1",
    }


def test_work_commands_print_the_tools_results(env: dict[str, str], tmp_path: Path) -> None:
    args = ["--project", "payments-api", "--json"]
    cp = ["work", "checkpoint", *args, "--summary", "Pool fix.", "--session-id", "s1", "--event-id", "e1"]
    first = hippo(env, *cp)
    assert first.returncode == 0, first.stderr
    assert json.loads(hippo(env, *cp).stdout) == {**json.loads(first.stdout), "duplicate": True}
    secret = hippo(env, "work", "checkpoint", *args, "--summary", "AKIA" + "QWERTYUIOPASDFGH", "--session-id",
                   "s1", "--event-id", "e2")  # fmt: skip
    assert secret.returncode == 2 and json.loads(secret.stdout)["error"]["code"] == "refused"
    log = hippo(env, "work", "worklog", *args, "--entry", "Pool fix", "--next", "CI run")
    assert json.loads(log.stdout)["path"] == "50-ops/payments-api/worklog.md"
    hippo(env, "work", "handoff", *args, "--text", "-", stdin="Start from the CI run.")
    resume = json.loads(hippo(env, "work", "resume", *args).stdout)
    assert (
        resume["handoff"] == "Start from the CI run." and resume["checkpoints"][0]["summary"] == "Pool fix."
    )
    page = json.loads(hippo(env, "work", "sync", *args, "--since", resume["cursor"]).stdout)
    assert page["entries"] == [] and page["has_more"] is False
    # Without --project: the git repository the command runs in names the project.
    repo = tmp_path / "billing-svc"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    text = hippo(
        env, "work", "checkpoint", "--summary", "x", "--session-id", "s", "--event-id", "1", cwd=repo / "src"
    )
    assert text.returncode == 0 and text.stdout.strip() == "seq 1"
    assert (
        json.loads(hippo(env, "work", "sync", "--project", "billing-svc", "--json").stdout)["entries"][0][
            "summary"
        ]
        == "x"
    )
    bad = hippo(env, "work", "sync", "--project", "Billing Svc")
    assert bad.returncode == 2 and "must be lowercase" in bad.stderr


def test_hook_install_shows_writes_and_uninstall_removes_exactly_it(
    env: dict[str, str], tmp_path: Path
) -> None:
    home = tmp_path / "user"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    original = (
        json.dumps(
            {"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}, indent=2
        )
        + "\n"
    )
    settings.write_text(original, encoding="utf-8")
    shown = hippo(env, "hook", "install", "claude-code", "--config-home", str(home), "--dry-run")
    assert "SessionStart" in shown.stdout and settings.read_text(encoding="utf-8") == original
    done = hippo(env, "hook", "install", "claude-code", "--config-home", str(home))
    assert done.returncode == 0 and "written to" in done.stdout
    data = json.loads(settings.read_text(encoding="utf-8"))
    command = data["hooks"]["SessionEnd"][0]["hooks"][0]["command"]
    assert f"HIPPO_HOME={env['HIPPO_HOME']}" in command and command.endswith("hook claude-code")
    assert data["hooks"]["Stop"] and data["model"] == "opus"
    hippo(env, "hook", "install", "claude-code", "--config-home", str(home), "--uninstall")
    assert settings.read_text(encoding="utf-8") == original
    codex_env = {**env, "CODEX_HOME": str(home / ".codex")}
    assert hippo(codex_env, "hook", "install", "codex").returncode == 0
    assert 'notify = ["env"' in (home / ".codex" / "config.toml").read_text(encoding="utf-8")
    assert "SessionStart" in (home / ".codex" / "hooks.json").read_text(encoding="utf-8")


def test_ghost_audit_prints_the_read_log(env: dict[str, str]) -> None:
    home, vault = Path(env["HIPPO_HOME"]), Vault(root=env["HIPPO_VAULT"])
    layer = GhostLayer(GhostStore(path=str(home / "ghost.sqlite")), vault)
    memory = layer.remember("retry once", "Retry a flaky fetch once, never in a loop.", "infra", "shared")
    layer.promote()
    text = vault.abs("90-system/ghost-allowlist.md").read_text(encoding="utf-8")
    vault.write_text("90-system/ghost-allowlist.md", text.replace("- [ ] ", "- [x] "))
    assert [d.memory_id for d in layer.promote().promoted] == [memory.memory_id]
    layer.search("flaky fetch", "billing", session_id="sess-9")
    out = hippo(env, "ghost", "audit", "--json")
    (read,) = json.loads(out.stdout)["reads"]
    assert (read["memory_id"], read["session_id"], read["project"], read["query"]) == (
        memory.memory_id, "sess-9", "billing", "flaky fetch")  # fmt: skip
    assert "infra/retry-once" in hippo(env, "ghost", "audit").stdout


def test_session_end_ingests_the_transcript_in_the_background(env: dict[str, str], tmp_path: Path) -> None:
    projects = tmp_path / "claude-projects"
    shutil.copytree(TRANSCRIPTS, projects)
    transcript = next(projects.rglob("*.jsonl"))
    repo = tmp_path / "payments-api"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    run_env = {**env, "HIPPO_CLAUDE_PROJECTS": str(projects), "DAGSTER_HOME": str(tmp_path / "dagster")}
    payload = (FIXTURES / "hooks" / "claude_code_session_end.json").read_text(encoding="utf-8")
    payload = payload.replace("TRANSCRIPT", str(transcript)).replace("CWD", str(repo))
    end = hippo(run_env, "hook", "claude-code", stdin=payload)
    assert (end.returncode, end.stdout) == (0, "")
    hook_log = (Path(env["HIPPO_HOME"]) / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert "checkpoint payments-api seq 1; ingest started (pid" in hook_log
    pid = int(hook_log.rsplit("(pid ", 1)[1].split(")")[0])
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(1)
    ingest_log = (Path(env["HIPPO_HOME"]) / "logs" / "hook-ingest.log").read_text(encoding="utf-8")
    assert "hook ingest claude-code" in ingest_log
    recent = hippo(
        run_env, "search", "test_pool_exhaustion", "--lane", "conversations", "--json", "--mode", "lexical"
    )
    assert recent.returncode == 0, ingest_log[-2000:]
    hits = json.loads(recent.stdout)["results"]
    assert hits and hits[0]["anchor"].startswith("conversations/")
