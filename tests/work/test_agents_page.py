"""The agents page stays true to the code: MCP config lines that parse, and the stores table generated
from the registry."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import tomllib
from pathlib import Path

from hippo_resources.stores import NON_REBUILDABLE

ROOT = Path(__file__).parent.parent.parent
PAGE = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
SECTION = PAGE.split("## Connect an agent", 1)[1].split("\n## ", 1)[0]


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", SECTION, flags=re.S)


def test_the_stores_table_is_generated_from_the_registry() -> None:
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs/_hooks/generate.py")
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = hook.on_page_markdown(PAGE, None, None, None)
    rows = dict(
        re.findall(r"^\| `(\w+)` \| (.+?) \|$", page.split("## Stores the vault cannot rebuild")[1], re.M)
    )
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
