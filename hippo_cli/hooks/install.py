"""`hippo hook install claude-code|codex [--uninstall]`: the exact settings entry, shown, then written.

Claude Code reads hooks from `~/.claude/settings.json`: `hooks.<Event>` is a list of matcher groups,
each `{"matcher"?: …, "hooks": [{"type": "command", "command": …, "timeout"?: seconds}]}` (Claude Code
hooks reference). Codex reads `notify = ["program", "arg", …]` at the top level of
`~/.codex/config.toml` and calls it with one JSON argument per finished turn (openai/codex
docs/config.md, "notify"); its newer hooks (`~/.codex/hooks.json`) have Claude Code's JSON shape, so
the same JSON planner adds the SessionStart resume there.

Every plan is computed from the file's current text and changes only our own entry: install adds it
(once), uninstall removes exactly it, and every other key, hook and line is left as it was.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

CLAUDE_EVENTS = ("SessionStart", "UserPromptSubmit", "SessionEnd")
# Codex's hooks.json (experimental, `[features] codex_hooks = true`) runs SessionStart and UserPromptSubmit
# with Claude Code's stdin JSON and `hookSpecificOutput.additionalContext`.
CODEX_HOOK_EVENTS = ("SessionStart", "UserPromptSubmit")
HOOK_TIMEOUT_SECONDS = 30
# The prompt hook keeps its own budget (HIPPO_RECALL_BUDGET_MS); this is the agent's safety net.
EVENT_TIMEOUT_SECONDS = {"UserPromptSubmit": 5}
CODEX_COMMENT = (
    "# Hippocampus: checkpoint every finished Codex turn (hippo hook install codex --uninstall removes it)"
)
_TABLE = re.compile(r"^\s*\[")


class InstallConflict(ValueError):
    """The file cannot take our entry without changing something that is not ours."""


class InstallPlan(BaseModel):
    path: str
    entry: str  # what is added or removed, as it appears in the file
    before: str | None
    after: str
    changed: bool


def hook_command(agent: str, executable: str = "hippo", env: Mapping[str, str] | None = None) -> str:
    """The shell command a hook runs: `HIPPO_HOME=… HIPPO_VAULT=… hippo hook <agent>`, quoted."""
    prefix = [f"{k}={shlex.quote(v)}" for k, v in (env or {}).items()]
    return " ".join([*prefix, shlex.quote(executable), "hook", agent])


def notify_argv(executable: str = "hippo", env: Mapping[str, str] | None = None) -> list[str]:
    """Codex runs `notify` as an argv (no shell): `env HIPPO_HOME=… hippo hook codex <json>`."""
    pairs = [f"{k}={v}" for k, v in (env or {}).items()]
    return [*(["env", *pairs] if pairs else []), executable, "hook", "codex"]


# --- JSON hook files (Claude Code settings.json, Codex hooks.json) ---------------------------------------
def _indent_of(text: str) -> int:
    m = re.search(r"\n( +)\S", text)
    return len(m.group(1)) if m else 2


def _load_json(text: str | None, path: str) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InstallConflict(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); fix it first"
        ) from None
    if not isinstance(data, dict):
        raise InstallConflict(f"{path} does not hold a JSON object")
    return data


def _ours(hook: Any, command: str) -> bool:
    return isinstance(hook, dict) and hook.get("type") == "command" and hook.get("command") == command


def plan_json_hooks(
    text: str | None, path: str, command: str, events: Sequence[str] = CLAUDE_EVENTS, uninstall: bool = False
) -> InstallPlan:
    """Add (or remove) one command hook per event in a `{"hooks": {Event: [groups]}}` file."""
    data = _load_json(text, path)
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallConflict(f"{path}: `hooks` is not an object")

    def entry(event: str) -> dict[str, Any]:
        timeout = EVENT_TIMEOUT_SECONDS.get(event, HOOK_TIMEOUT_SECONDS)
        return {"type": "command", "command": command, "timeout": timeout}

    changed = False
    for event in events:
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise InstallConflict(f"{path}: `hooks.{event}` is not a list")
        present = any(
            isinstance(g, dict) and any(_ours(h, command) for h in g.get("hooks") or []) for g in groups
        )
        if uninstall:
            kept_groups = []
            for g in groups:
                if (
                    isinstance(g, dict)
                    and isinstance(g.get("hooks"), list)
                    and any(_ours(h, command) for h in g["hooks"])
                ):
                    rest = [h for h in g["hooks"] if not _ours(h, command)]
                    changed = True
                    if rest:
                        kept_groups.append({**g, "hooks": rest})
                else:
                    kept_groups.append(g)
            if kept_groups:
                hooks[event] = kept_groups
            elif event in hooks:
                del hooks[event]
        elif not present:
            hooks[event] = [*groups, {"hooks": [entry(event)]}]
            changed = True
    if hooks:
        data["hooks"] = hooks
    elif uninstall and changed:
        data.pop("hooks", None)  # it only held our entries
    after = json.dumps(data, ensure_ascii=False, indent=_indent_of(text or "")) + "\n"
    shown = json.dumps({"hooks": {e: [{"hooks": [entry(e)]}] for e in events}}, ensure_ascii=False, indent=2)
    return InstallPlan(
        path=path, entry=shown, before=text, after=after if changed else (text or after), changed=changed
    )


# --- Codex config.toml: the top-level `notify` --------------------------------------------------------------
def _toml_array(argv: Sequence[str]) -> str:
    return "[" + ", ".join(json.dumps(a, ensure_ascii=False) for a in argv) + "]"


def _load_toml(text: str, path: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InstallConflict(f"{path} is not valid TOML ({exc}); fix it first") from None


def plan_codex_notify(
    text: str | None, path: str, argv: Sequence[str], uninstall: bool = False
) -> InstallPlan:
    """Set (or remove) `notify = [...]` at the top level of Codex's config.toml.

    Codex runs a single notify program: if another one is set, install refuses instead of replacing it."""
    text = text or ""
    line = f"notify = {_toml_array(argv)}"
    current = _load_toml(text, path)
    lines = text.split("\n")
    if uninstall:
        if current.get("notify") != list(argv):
            return InstallPlan(path=path, entry=line, before=text, after=text, changed=False)
        idx = next((i for i, ln in enumerate(lines) if ln.strip() == line), None)
        if idx is None:
            raise InstallConflict(f"{path}: notify is ours but not written as one line; remove it by hand")
        drop = {idx} | ({idx - 1} if idx > 0 and lines[idx - 1].strip() == CODEX_COMMENT else set())
        after = "\n".join(ln for i, ln in enumerate(lines) if i not in drop)
        _check_same_except_notify(current, _load_toml(after, path), path)
        return InstallPlan(path=path, entry=line, before=text, after=after, changed=True)
    if "notify" in current:
        if current["notify"] == list(argv):
            return InstallPlan(path=path, entry=line, before=text, after=text, changed=False)
        raise InstallConflict(
            f"{path} already sets notify = {_toml_array(current['notify'])}; Codex runs one notify program, "
            "so remove or chain it yourself, then install again"
        )
    # Root keys must come before the first table; go in after the last root line, so that uninstall,
    # which drops exactly these two lines, gives back the file byte for byte.
    at = next((i for i, ln in enumerate(lines) if _TABLE.match(ln)), len(lines))
    while at > 0 and not lines[at - 1].strip():
        at -= 1
    new_lines = lines[:at] + [CODEX_COMMENT, line] + lines[at:]
    after = "\n".join(new_lines)
    if not after.endswith("\n"):
        after += "\n"
    parsed = _load_toml(after, path)
    if parsed.get("notify") != list(argv):
        raise InstallConflict(f"{path}: could not place notify at the top level")
    _check_same_except_notify(current, parsed, path)
    return InstallPlan(path=path, entry=line, before=text or None, after=after, changed=True)


def _check_same_except_notify(before: dict[str, Any], after: dict[str, Any], path: str) -> None:
    strip = lambda d: {k: v for k, v in d.items() if k != "notify"}  # noqa: E731
    if strip(before) != strip(after):
        raise InstallConflict(f"{path}: the edit would change more than `notify`; nothing written")


# --- applying a plan ----------------------------------------------------------------------------------------
def read_text(path: Path) -> str | None:
    """The settings file's text (None when there is none); a file that is not UTF-8 text, or cannot be
    read, is a conflict with a message, never a traceback."""
    try:
        return path.read_text(encoding="utf-8") if path.exists() else None
    except UnicodeDecodeError as exc:
        raise InstallConflict(
            f"{path} is not UTF-8 text (byte {exc.start}); fix or re-save it as UTF-8 first"
        ) from None
    except OSError as exc:
        raise InstallConflict(f"{path} cannot be read ({exc.strerror or exc}); nothing written") from None


def write_target(path: Path) -> Path:
    """The file to write: a symlinked settings file (dotfiles) is written through, so the link stays a
    link and its target gets the entry."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def apply(plan: InstallPlan) -> bool:
    """Write the plan's text atomically (same permissions); False when there was nothing to change."""
    if not plan.changed:
        return False
    target = write_target(Path(plan.path).expanduser())
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.hippo-tmp")
    tmp.write_text(plan.after, encoding="utf-8")
    if target.exists():
        os.chmod(tmp, target.stat().st_mode & 0o7777)
    os.replace(tmp, target)
    return True


def claude_settings_path(home: Path | None = None) -> Path:
    return (home or Path.home()) / ".claude" / "settings.json"


def codex_config_path(home: Path | None = None) -> Path:
    return Path(os.environ.get("CODEX_HOME") or (home or Path.home()) / ".codex") / "config.toml"


def codex_hooks_path(home: Path | None = None) -> Path:
    return Path(os.environ.get("CODEX_HOME") or (home or Path.home()) / ".codex") / "hooks.json"
