"""MkDocs hook: the generated parts of the docs, made from the code at build time so they never go stale.

A page asks for a part with a marker line; the hook replaces it:
    <!-- generated: settings-table -->   every HIPPO_* setting (`hippo_core.settings.settings_table`)
    <!-- generated: mcp-tools -->        every MCP tool: name, description, input schema (the tools' own)
An unknown marker fails the build.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the checkout's own code, not whatever copy is installed
    sys.path.insert(0, str(ROOT))

MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.M)


def settings_table() -> str:
    from hippo_core.settings import settings_table as table

    return table()


def _tools() -> list[Any]:
    """Every tool the stdio server can offer (`hippo mcp`, ungated), listed by the MCP SDK's own client."""
    import anyio
    from mcp import Client

    from hippo_core.settings import HippoSettings
    from hippo_search.pipeline import open_engine
    from hippo_server.conversations import ConversationMemory
    from hippo_server.mcp.search import build_mcp
    from hippo_server.mcp.work import WorkServices

    with tempfile.TemporaryDirectory(prefix="hippo-docs-") as tmp:
        settings = HippoSettings(vault=Path(tmp) / "vault", home=Path(tmp) / "home")
        engine = open_engine(settings)
        services = WorkServices.from_settings(settings, engine.vault, None)
        mcp = build_mcp(engine, ConversationMemory(settings.chunks_dir, engine.vault), services)

        async def listed() -> list[Any]:
            async with Client(mcp) as client:
                return list((await client.list_tools()).tools)

        return sorted(anyio.run(listed), key=lambda t: t.name)


def _type(schema: dict[str, Any]) -> str:
    if "anyOf" in schema:
        return " or ".join(_type(s) for s in schema["anyOf"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"list of {_type(schema.get('items', {}))}"
    if "enum" in schema:
        return " \\| ".join(f"`{v}`" for v in schema["enum"])
    return str(kind)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def mcp_tools() -> str:
    """A section per tool: its description, then a table of its parameters from the input schema."""
    out: list[str] = []
    for tool in _tools():
        schema = tool.inputSchema or {}
        required = set(schema.get("required", []))
        hints = tool.annotations
        kind = "read-only" if hints is not None and hints.readOnlyHint else "writes"
        out += [f"### `{tool.name}`", "", f"*{kind}*", "", (tool.description or "").strip(), ""]
        props = schema.get("properties", {})
        if props:
            out += ["| parameter | type | required | default | description |", "|---|---|---|---|---|"]
            for name, prop in props.items():
                default = json.dumps(prop["default"], ensure_ascii=False) if "default" in prop else ""
                out.append(
                    f"| `{name}` | {_cell(_type(prop))} | {'yes' if name in required else ''} | "
                    f"{_cell(default)} | {_cell(prop.get('description', ''))} |"
                )
        else:
            out.append("No parameters.")
        out.append("")
    return "\n".join(out)


GENERATORS = {"settings-table": settings_table, "mcp-tools": mcp_tools}


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    def replace(m: re.Match[str]) -> str:
        if m.group(1) not in GENERATORS:
            raise ValueError(f"{page.file.src_path}: unknown generated part {m.group(1)!r}")
        return GENERATORS[m.group(1)]()

    return MARKER.sub(replace, markdown)
