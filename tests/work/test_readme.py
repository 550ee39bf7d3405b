"""The README's agent section stays true to the code: the store registry, and MCP config lines that parse."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path

from hippo_resources.stores import NON_REBUILDABLE

README = (Path(__file__).parent.parent.parent / "README.md").read_text(encoding="utf-8")
SECTION = README.split("## Agents that continue", 1)[1].split("\n## ", 1)[0]


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", SECTION, flags=re.S)


def test_the_readme_lists_exactly_the_registered_non_rebuildable_stores() -> None:
    rows = dict(re.findall(r"^\| `(\w+)` \| (.+?) \|$", SECTION, flags=re.M))
    assert rows == NON_REBUILDABLE


def test_the_mcp_lines_for_each_client_parse_and_start_hippo_mcp() -> None:
    codex = tomllib.loads(blocks("toml")[0])["mcp_servers"]["hippocampus"]
    assert codex["args"] == ["mcp"] and codex["command"].endswith("/hippo")
    desktop = json.loads(blocks("json")[0])["mcpServers"]["hippocampus"]
    assert desktop["args"] == ["mcp"] and set(desktop["env"]) == set(codex["env"]) == {
        "HIPPO_VAULT",
        "HIPPO_HOME",
    }
    (claude,) = [ln for b in blocks("bash") for ln in b.splitlines() if ln.startswith("claude mcp add")]
    argv = shlex.split(claude)
    assert argv[argv.index("--") + 1 :] == [codex["command"], "mcp"]
