"""The first hour (issue 25): one home remembered in the config file, every printed "Next" line runs as
printed, `hippo init` refuses symlinked system folders, `hippo mcp install` writes each client's entry."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

import pytest

from hippo_cli.doctor import settings_rows
from hippo_cli.main import main
from hippo_settings import ConfigFileError, HippoSettings, env_names

REPO = Path(__file__).resolve().parents[2]  # the checkout: what a spawned `hippo` imports

HIPPO = str(Path(sys.executable).parent / "hippo")


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A person's home with no HIPPO_* variables: only the config file can name the vault."""
    home = tmp_path / "person"
    home.mkdir()
    for name in [*env_names().values(), "DAGSTER_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "CODEX_HOME"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    return home


def test_precedence_is_flag_then_environment_then_config_file_then_default(tmp_path: Path) -> None:
    config = tmp_path / "xdg" / "hippocampus" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('vault = "/from/file/vault"\nhome = "stores"\ndagster_home = "/from/file/dagster"\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HIPPO_HOME": "/from/env/home"}
    settings = HippoSettings.from_env(env, vault=Path("/from/flag"))
    assert settings.vault == Path("/from/flag") and settings.source_of("vault") == "flag"
    assert settings.home == Path("/from/env/home") and settings.source_of("home") == "environment"
    assert (
        settings.dagster_home == Path("/from/file/dagster")
        and settings.source_of("dagster_home") == "config file"
    )
    assert settings.source_of("port") == "default" and settings.config_file == config
    # a relative path in the file is taken from the file's folder
    assert HippoSettings.from_env({"XDG_CONFIG_HOME": str(tmp_path / "xdg")}).home == config.parent / "stores"
    rows = {r.variable: r.source for r in settings_rows(settings)}
    assert rows["HIPPO_VAULT"] == "flag" and rows["DAGSTER_HOME"] == "config file"
    assert HippoSettings.from_env({}).config_file is None  # no HOME, no XDG: no file read


@pytest.mark.parametrize("content", [b'vault = "unclosed\n', b'vault = "caf\xe9"\n', b"vault = 3\n"])
def test_a_broken_config_file_is_a_message_not_a_traceback(
    content: bytes, user_home: Path, capsys: pytest.CaptureFixture
) -> None:
    config = user_home / ".config" / "hippocampus" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_bytes(content)
    with pytest.raises(ConfigFileError, match="config file"):
        HippoSettings.from_env()
    assert main(["status"]) == 2
    err = capsys.readouterr().err
    assert str(config) in err and "Traceback" not in err


def test_init_remembers_the_vault_and_its_next_line_runs_from_anywhere(
    user_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    notes = user_home / "MyVault"
    (notes / ".obsidian").mkdir(parents=True)
    (notes / "Garden.md").write_text("# Garden\n\nTomatoes in May.\n")
    assert main(["init", str(notes)]) == 0  # lists, changes nothing
    out = capsys.readouterr().out
    assert "Nothing was changed" in out and not (user_home / ".config").exists()
    apply_line = out.strip().splitlines()[-1].split("To apply: ", 1)[1]
    assert shlex.split(apply_line)[1:] == ["init", "--yes", str(notes)]

    assert main(["init", "--yes", str(notes)]) == 0
    out = capsys.readouterr().out
    config = user_home / ".config" / "hippocampus" / "config.toml"
    data = tomllib.loads(config.read_text())
    assert data["vault"] == str(notes)
    assert all(Path(data[k]).is_absolute() for k in ("home", "dagster_home"))
    assert Path(data["home"]).is_relative_to(user_home / ".local" / "share" / "hippocampus")
    next_line = out.strip().splitlines()[-1]
    assert next_line.startswith("Next: ") and next_line.endswith(" run")
    settings = HippoSettings.from_env()
    assert settings.vault == notes and settings.source_of("vault") == "config file"

    # The printed line, run as printed from another folder, with no variable exported.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    argv = shlex.split(next_line.removeprefix("Next: "))
    argv[0] = HIPPO if argv[0] == "hippo" else argv[0]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HIPPO_EMBED_THREADS": "1", "PYTHONPATH": str(REPO)}
    run = subprocess.run(argv, cwd=elsewhere, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert (Path(data["dagster_home"]) / "dagster.yaml").exists()  # the remembered Dagster home was used
    assert (Path(data["home"]) / "lexical").is_dir()

    # Adopting a second vault gives it stores of its own; the first keeps its index.
    other = user_home / "Other"
    assert main(["init", str(other)]) == 0
    capsys.readouterr()
    second = tomllib.loads(config.read_text())
    assert second["vault"] == str(other) and second["home"] != data["home"]


def test_config_set_and_show_name_the_source(user_home: Path, capsys: pytest.CaptureFixture) -> None:
    assert (
        main(["config", "set", "--vault", str(user_home / "v"), "--dagster-home", str(user_home / "d")]) == 0
    )
    capsys.readouterr()
    assert main(["config", "get", "dagster_home"]) == 0
    assert capsys.readouterr().out.strip() == str(user_home / "d")
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    assert f"vault         {user_home / 'v'}  [config file]" in out
    assert "home          " in out and "[default]" in out


def test_a_symlinked_config_file_stays_a_link(user_home: Path, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "hippo.toml"
    real.parent.mkdir()
    real.write_text('home = "/keep/me"\n')
    link = user_home / ".config" / "hippocampus" / "config.toml"
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    assert main(["config", "set", "--vault", str(user_home / "v")]) == 0
    assert link.is_symlink()
    assert tomllib.loads(real.read_text()) == {"vault": str(user_home / "v"), "home": "/keep/me"}


@pytest.mark.parametrize("linked", ["00-inbox", "90-system", "SCHEMA.md"])
def test_init_refuses_a_symlinked_system_folder_and_creates_nothing_outside(
    linked: str, user_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    notes = user_home / "Notes"
    notes.mkdir()
    (notes / "a.md").write_text("# a\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (notes / linked).symlink_to(outside / "missing.md" if linked.endswith(".md") else outside)
    assert main(["init", "--yes", str(notes)]) == 2
    err = capsys.readouterr().err
    assert f"{notes / linked} is a symbolic link" in err and "Traceback" not in err
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in notes.iterdir()) == sorted(["a.md", linked])  # nothing added either


# --- hippo mcp install -------------------------------------------------------------------------------------
CLIENT_FILES = {
    "claude-code": ".claude.json",
    "codex": ".codex/config.toml",
    "cursor": ".cursor/mcp.json",
    "claude-desktop": ".config/Claude/claude_desktop_config.json",
}


def _servers(client: str, path: Path) -> dict:
    if client == "codex":
        return tomllib.loads(path.read_text()).get("mcp_servers", {})
    return json.loads(path.read_text()).get("mcpServers", {})


@pytest.mark.parametrize("client", list(CLIENT_FILES))
def test_mcp_install_writes_the_stdio_entry_and_uninstall_removes_exactly_it(
    client: str, user_home: Path, capsys: pytest.CaptureFixture
) -> None:
    if client == "claude-desktop" and sys.platform != "linux":
        pytest.skip("the Linux location is the one under test")
    path = user_home / CLIENT_FILES[client]
    path.parent.mkdir(parents=True, exist_ok=True)
    if client == "codex":
        before = 'model = "o4"\n\n[mcp_servers.other]\ncommand = "npx"\nargs = ["-y", "x"]\n'
    else:
        before = json.dumps(
            {"theme": "dark", "mcpServers": {"other": {"command": "npx", "args": ["x"]}}}, indent=2
        )
    real = user_home / "dotfiles" / path.name
    real.parent.mkdir(exist_ok=True)
    real.write_text(before)
    path.symlink_to(real)  # a dotfiles setup: the file is written through the link
    vault = user_home / "v"
    assert main(["mcp", "install", client, "--vault", str(vault)]) == 0
    out = capsys.readouterr().out
    assert f"# add to {path}" in out and '"mcp"' in out  # shown before written
    assert path.is_symlink()
    ours = _servers(client, real)["hippocampus"]
    assert Path(ours["command"]).name == "hippo" and Path(ours["command"]).is_absolute()
    assert ours["args"] == ["mcp"] and ours["env"]["HIPPO_VAULT"] == str(vault)
    assert "other" in _servers(client, real)
    if client == "claude-code":
        assert ours["type"] == "stdio"
    assert main(["mcp", "install", client, "--vault", str(vault)]) == 0  # again: nothing to change
    assert "nothing to change" in capsys.readouterr().out

    assert main(["mcp", "install", client, "--uninstall"]) == 0
    capsys.readouterr()
    assert path.is_symlink()
    if client == "codex":
        assert real.read_text() == before
    else:
        assert json.loads(real.read_text()) == json.loads(before)


@pytest.mark.parametrize(
    ("client", "content", "says"),
    [
        ("cursor", b'{"mcpServers": {', "not valid JSON"),
        ("codex", b"[mcp_servers\n", "not valid TOML"),
        ("claude-code", b'{"x": "caf\xe9"}', "not UTF-8"),
        ("cursor", b'{"mcpServers": {"hippocampus": {"url": "http://x/mcp"}}}', "does not start `hippo mcp`"),
    ],
)
def test_mcp_install_on_a_file_it_cannot_edit_says_why_and_writes_nothing(
    client: str, content: bytes, says: str, user_home: Path, capsys: pytest.CaptureFixture
) -> None:
    path = user_home / CLIENT_FILES[client]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    assert main(["mcp", "install", client]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert path.read_bytes() == content


def test_the_stdio_server_entry_starts_and_lists_tools(user_home: Path, tmp_path: Path) -> None:
    """What the client starts (`hippo mcp` with the entry's env) answers an MCP initialize + tools/list."""
    from hippo_cli.vault_init import init_vault

    vault = tmp_path / "vault"
    init_vault(vault)
    assert main(["mcp", "install", "cursor", "--vault", str(vault), "--home", str(tmp_path / "h")]) == 0
    entry = json.loads((user_home / ".cursor" / "mcp.json").read_text())["mcpServers"]["hippocampus"]
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]  # fmt: skip
    env = {"PATH": os.environ["PATH"], "HOME": str(user_home), "PYTHONPATH": str(REPO), **entry["env"]}
    # stdin stays open until the answer to tools/list is read: a client that closed it at once could see
    # the server end the session (EOF) before it answered, on a busy machine
    log = tmp_path / "mcp-stderr.log"
    with log.open("w") as stderr:
        proc = subprocess.Popen(
            [entry["command"], *entry["args"]],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        answer = None
        watchdog = threading.Timer(120, proc.kill)  # a server that neither answers nor exits is killed
        watchdog.start()
        try:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
            proc.stdin.flush()
            for line in proc.stdout:  # one JSON-RPC message a line; ends when the server exits
                reply = json.loads(line) if line.strip() else {}
                if reply.get("id") == 2:
                    answer = reply
                    break
        finally:
            proc.stdin.close()  # EOF: the server ends its session and exits
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            proc.stdout.close()
            watchdog.cancel()
    err = log.read_text(errors="replace")
    assert answer is not None, err[-2000:]
    tools = answer["result"]["tools"]
    assert any(t["name"].startswith("hippo_") for t in tools), err[-2000:]
