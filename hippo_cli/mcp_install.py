"""`hippo mcp install CLIENT [--uninstall]`: the stdio server's entry (`hippo mcp`) in an agent's MCP config.

Where each client reads its MCP servers (checked against their documentation, December 2026):
- Claude Code: `~/.claude.json`, top-level `mcpServers` (what `claude mcp add --scope user` writes),
  entries `{"type": "stdio", "command", "args", "env"}`;
- Codex: `$CODEX_HOME/config.toml` (default `~/.codex/config.toml`), a `[mcp_servers.NAME]` table with
  `command`, `args`, `env`;
- Cursor: `~/.cursor/mcp.json`, `mcpServers` entries `{"command", "args", "env"}`;
- Claude Desktop: `claude_desktop_config.json` in `~/Library/Application Support/Claude/` (macOS),
  `%APPDATA%\\Claude\\` (Windows), `~/.config/Claude/` (Linux), `mcpServers` as Cursor's.

The entry is shown before it is written; the file is written through a symlink (the link stays); nothing
but the entry changes; `--uninstall` removes exactly that entry. A file that is not valid JSON/TOML or not
UTF-8 gets a message, never a rewrite.
"""

from __future__ import annotations

import json
import os
import platform
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

CLIENTS = ("claude-code", "codex", "cursor", "claude-desktop")
Client = Literal["claude-code", "codex", "cursor", "claude-desktop"]
NAME = "hippocampus"


class McpInstallError(ValueError):
    """The client's file cannot take (or give back) the entry without touching what is not ours."""


class McpPlan(BaseModel):
    client: str
    path: str
    entry: str  # the entry as it appears in the file
    before: str | None
    after: str | None  # None: the file is removed (uninstall left nothing that was there before)
    changed: bool


def config_path(client: Client, env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    if client == "claude-code":
        return home / ".claude.json"
    if client == "codex":
        return Path(env.get("CODEX_HOME") or home / ".codex") / "config.toml"
    if client == "cursor":
        return home / ".cursor" / "mcp.json"
    system = platform.system()
    if system == "Darwin":
        folder = home / "Library" / "Application Support" / "Claude"
    elif system == "Windows":
        folder = Path(env.get("APPDATA") or home / "AppData" / "Roaming") / "Claude"
    else:
        xdg = env.get("XDG_CONFIG_HOME")
        folder = (Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".config") / "Claude"
    return folder / "claude_desktop_config.json"


def server_entry(client: Client, command: str, env: Mapping[str, str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": command, "args": ["mcp"], "env": dict(env)}
    return {"type": "stdio", **entry} if client == "claude-code" else entry


def _is_hippo_mcp(entry: Any) -> bool:
    """An entry that starts `hippo mcp` (whatever the path and env): ours to replace or remove."""
    return (
        isinstance(entry, dict)
        and Path(str(entry.get("command", ""))).name == "hippo"
        and entry.get("args") == ["mcp"]
    )


def read_file(path: Path) -> str | None:
    if not path.exists():
        return None
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise McpInstallError(f"{path} is not UTF-8 text; nothing written") from None
    except OSError as exc:
        raise McpInstallError(f"cannot read {path}: {exc.strerror or exc}") from None


# --- JSON clients -------------------------------------------------------------------------------------
def _indent_of(text: str) -> int:
    m = re.search(r"\n( +)\S", text)
    return len(m.group(1)) if m else 2


def plan_json(
    client: Client, text: str | None, path: Path, entry: dict[str, Any], name: str, uninstall: bool
) -> McpPlan:
    data: Any = {}
    if text is not None and text.strip():
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise McpInstallError(
                f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); fix it first, nothing written"
            ) from None
    if not isinstance(data, dict):
        raise McpInstallError(f"{path} does not hold a JSON object; nothing written")
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise McpInstallError(f"{path}: `mcpServers` is not an object; nothing written")
    shown = json.dumps({name: entry}, indent=2, ensure_ascii=False)
    current = servers.get(name)
    unchanged = McpPlan(client=client, path=str(path), entry=shown, before=text, after=text, changed=False)
    if uninstall:
        if current is None:
            return unchanged
        if not _is_hippo_mcp(current):
            raise McpInstallError(f"{path}: the entry {name!r} does not start `hippo mcp`; left alone")
        servers = {k: v for k, v in servers.items() if k != name}
        after_data = {**data, "mcpServers": servers} if servers or "mcpServers" in data else data
        shown = json.dumps({name: current}, indent=2, ensure_ascii=False)
    else:
        if current == entry:
            return unchanged
        if current is not None and not _is_hippo_mcp(current):
            raise McpInstallError(
                f"{path} already has an entry {name!r} that does not start `hippo mcp`; remove it, or "
                "install under another name (--name)"
            )
        after_data = {**data, "mcpServers": {**servers, name: entry}}
    after = json.dumps(after_data, indent=_indent_of(text or ""), ensure_ascii=False) + "\n"
    return McpPlan(client=client, path=str(path), entry=shown, before=text, after=after, changed=True)


# --- Codex (TOML) -------------------------------------------------------------------------------------
_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def _toml_key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


def _toml_table(name: str, entry: dict[str, Any]) -> str:
    env = ", ".join(f"{_toml_key(k)} = {json.dumps(v, ensure_ascii=False)}" for k, v in entry["env"].items())
    return "\n".join(
        [
            f"[mcp_servers.{_toml_key(name)}]",
            f"command = {json.dumps(entry['command'], ensure_ascii=False)}",
            f"args = {json.dumps(entry['args'], ensure_ascii=False)}",
            f"env = {{ {env} }}" if env else "env = {}",
        ]
    )


def _load_toml(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise McpInstallError(f"{path} is not valid TOML ({exc}); fix it first, nothing written") from None


def _without(data: dict[str, Any], name: str) -> dict[str, Any]:
    servers = {k: v for k, v in data.get("mcp_servers", {}).items() if k != name}
    rest = {k: v for k, v in data.items() if k != "mcp_servers"}
    return {**rest, **({"mcp_servers": servers} if servers else {})}


def plan_codex(text: str | None, path: Path, entry: dict[str, Any], name: str, uninstall: bool) -> McpPlan:
    text = text or ""
    data = _load_toml(text, path)
    servers = data.get("mcp_servers", {})
    if not isinstance(servers, dict):
        raise McpInstallError(f"{path}: `mcp_servers` is not a table; nothing written")
    current = servers.get(name)
    table = _toml_table(name, entry)
    unchanged = McpPlan(
        client="codex", path=str(path), entry=table, before=text or None, after=text, changed=False
    )
    if current is not None and not _is_hippo_mcp(current):
        raise McpInstallError(
            f"{path} already has [mcp_servers.{name}] that does not start `hippo mcp`; "
            + ("left alone" if uninstall else "remove it, or install under another name (--name)")
        )
    if uninstall and current is None:
        return unchanged
    if not uninstall and current == entry:
        return unchanged
    base = text
    if current is not None:  # ours: cut its table (header to the next header that is not its own sub-table)
        lines = text.split("\n")
        own = {f"mcp_servers.{name}", f"mcp_servers.{_toml_key(name)}"}
        start = next(
            (i for i, ln in enumerate(lines) if (m := _HEADER.match(ln)) and m.group(1) in own), None
        )
        if start is None:
            raise McpInstallError(
                f"{path}: [mcp_servers.{name}] is not written as its own table; edit it by hand"
            )
        end = start + 1
        while end < len(lines):
            m = _HEADER.match(lines[end])
            if m and not any(m.group(1).startswith(o + ".") for o in own):
                break
            end += 1
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1
        drop_blank = start > 0 and not lines[start - 1].strip()
        kept = lines[: start - 1 if drop_blank else start] + lines[end:]
        base = "\n".join(kept)
        if _without(_load_toml(base, path), name) != _without(data, name) or name in _load_toml(
            base, path
        ).get("mcp_servers", {}):
            raise McpInstallError(f"{path}: removing [mcp_servers.{name}] would change more; edit it by hand")
    if uninstall:
        return McpPlan(client="codex", path=str(path), entry=table, before=text, after=base, changed=True)
    sep = "" if not base.strip() else ("\n" if base.endswith("\n") else "\n\n")
    after = (base if base.strip() else "") + sep + table + "\n"
    parsed = _load_toml(after, path)
    if parsed.get("mcp_servers", {}).get(name) != entry or _without(parsed, name) != _without(data, name):
        raise McpInstallError(
            f"{path}: could not add [mcp_servers.{name}] without changing more; nothing written"
        )
    return McpPlan(
        client="codex", path=str(path), entry=table, before=text or None, after=after, changed=True
    )


# --- planning and writing -----------------------------------------------------------------------------------
def plan(
    client: Client,
    command: str,
    env: Mapping[str, str],
    uninstall: bool = False,
    name: str = NAME,
    environ: Mapping[str, str] | None = None,
) -> McpPlan:
    path = config_path(client, environ)
    text = read_file(path)
    entry = server_entry(client, command, env)
    if client == "codex":
        return plan_codex(text, path, entry, name, uninstall)
    return plan_json(client, text, path, entry, name, uninstall)


def apply(plan: McpPlan) -> bool:
    """Write the plan's text atomically into the file a symlink points at (the link stays), keeping its
    permissions; False when there was nothing to change."""
    if not plan.changed or plan.after is None:
        return False
    target = Path(os.path.realpath(Path(plan.path).expanduser()))
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.hippo-tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(plan.after)
    if target.exists():
        os.chmod(tmp, target.stat().st_mode & 0o7777)
    os.replace(tmp, target)
    return True
