"""MkDocs hook: the generated parts of the docs, made from the code at build time so they never go stale.

A page asks for a part with a marker line; the hook replaces it:
    <!-- generated: settings-table -->   every HIPPO_* setting (`hippo_settings.settings_table`)
    <!-- generated: mcp-tools -->        every MCP tool: name, description, input schema (the tools' own)
    <!-- generated: cli-help -->         `hippo --help` and every subcommand's help (the CLI's own parser)
    <!-- generated: frontmatter -->      the frontmatter contract (`hippo_core.vault.frontmatter.Frontmatter`)
    <!-- generated: stores -->           the stores the vault cannot rebuild (`hippo_resources.stores`)
    <!-- generated: asset-graph -->      the asset graph as a Mermaid diagram (`tests/wiring.txt`)
    <!-- generated: wiring -->           assets, checks, jobs, schedules and sensors (`tests/wiring.txt`)
An unknown marker fails the build.
"""

from __future__ import annotations

import inspect
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
    from hippo_settings import settings_table as table

    return table()


def _tools() -> list[Any]:
    """Every tool the stdio server can offer (`hippo mcp`, ungated), listed by the MCP SDK's own client."""
    import anyio
    from mcp import Client

    from hippo_search.pipeline import open_engine
    from hippo_server.mcp import build_mcp
    from hippo_settings import HippoSettings
    from hippo_work.conversations import ConversationMemory
    from hippo_work.wiring import WorkServices

    with tempfile.TemporaryDirectory(prefix="hippo-docs-") as tmp:
        # built as `hippo mcp` builds it (hippo_server/mcp/stdio.py), without the gate: every tool
        settings = HippoSettings(vault=Path(tmp) / "vault", home=Path(tmp) / "home")
        engine = open_engine(settings)
        services = WorkServices.from_settings(settings, engine.vault, None)
        memory = ConversationMemory(settings.chunks_dir, engine.vault)
        mcp = build_mcp(engine, memory, services, settings)

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
        return " | ".join(f"`{v}`" for v in schema["enum"])
    return str(kind)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def mcp_tools() -> str:
    """A section per tool: its description, then a table of its parameters from the input schema."""
    out: list[str] = []
    for tool in _tools():
        schema = tool.input_schema or {}
        required = set(schema.get("required", []))
        hints = tool.annotations
        kind = "read-only" if hints is not None and hints.read_only_hint else "writes"
        out += [f"### `{tool.name}`", "", f"*{kind}*", "", inspect.cleandoc(tool.description or ""), ""]
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


def _subcommands(parser: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    import argparse

    out = [(path, parser)]
    for action in parser._actions:  # noqa: SLF001 - argparse has no public walk of subparsers
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for name, sub in action.choices.items():
                out += _subcommands(sub, (*path, name))
    return out


def cli_help() -> str:
    """`hippo --help`, then a section per subcommand with its own help, as argparse prints it."""
    import os

    from hippo_cli.main import build_parser

    os.environ["COLUMNS"] = "100"  # argparse wraps at the terminal's width; the page's is fixed
    out: list[str] = []
    for path, parser in _subcommands(build_parser()):
        title = " ".join(("hippo", *path))
        out += [f"### `{title}`" if path else "", "", "```text", parser.format_help().rstrip(), "```", ""]
    return "\n".join(out)


def _annotation(annotation: Any) -> str:
    """A field's type in words: `Literal[...]` → one of the values below, `X | None` → X (optional)."""
    import types
    import typing

    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return "one of the values below"
    if origin in (typing.Union, types.UnionType):
        return f"{_annotation(args[0])} (optional)"
    if origin is list:
        return f"list of {_annotation(args[0])}"
    return {str: "text", float: "number", bool: "true / false", int: "integer"}.get(
        annotation, str(annotation)
    )


def frontmatter() -> str:
    """The governed fields, their types and defaults, and the vocabularies of type, status and trust."""
    from hippo_core.vault.frontmatter import Frontmatter
    from hippo_core.vault.governance import DOC_TYPES, STATUSES, TRUSTS

    rows = ["| field | type | default |", "|---|---|---|"]
    for name, info in Frontmatter.model_fields.items():
        kind = _annotation(info.annotation)
        default = info.get_default(call_default_factory=True)
        rows.append(f"| `{name}` | {_cell(kind)} | {'' if default is None else f'`{default}`'} |")
    rows += [
        "",
        "| field | values |",
        "|---|---|",
        f"| `type` | {', '.join(f'`{v}`' for v in DOC_TYPES)} |",
        f"| `status` | {', '.join(f'`{v}`' for v in STATUSES)} |",
        f"| `trust` | {', '.join(f'`{v}`' for v in TRUSTS)} |",
    ]
    return "\n".join(rows)


def wiring_sections() -> dict[str, list[str]]:
    """`tests/wiring.txt` (the Dagster wiring snapshot a test keeps equal to the code), by section."""
    sections: dict[str, list[str]] = {}
    current = ""
    for line in (ROOT / "tests" / "wiring.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            current = line[3:].split(" (")[0]
            sections[current] = []
        elif line.strip() and current:
            sections[current].append(line)
    return sections


def _assets() -> list[tuple[str, str, list[str]]]:
    """(asset, group, deps) from the snapshot's `name (group): dep, dep  [partitions: …]` lines."""
    out = []
    for line in wiring_sections()["assets"]:
        head, deps = line.split(": ", 1)
        name, group = head.split(" (")
        deps = deps.split("  [")[0]
        out.append((name, group.rstrip(")"), [] if deps == "-" else deps.split(", ")))
    return out


def asset_graph() -> str:
    """Every asset in a subgraph per group, an arrow per dependency."""
    assets = _assets()
    lines = ["```mermaid", "flowchart LR"]
    for group in dict.fromkeys(g for _, g, _ in assets):
        lines.append(f"  subgraph group_{group} [{group}]")
        lines += [f"    {name}" for name, g, _ in assets if g == group]
        lines.append("  end")
    lines += [f"  {dep} --> {name}" for name, _, deps in assets for dep in deps]
    return "\n".join([*lines, "```"])


def wiring() -> str:
    """The snapshot's assets, checks, jobs, schedules and sensors as tables."""
    sections = wiring_sections()
    checks: dict[str, list[str]] = {}
    for line in sections["checks"]:
        asset, check = line.split(": ", 1)
        checks.setdefault(asset, []).append(check)
    out = ["| asset | group | depends on | checks |", "|---|---|---|---|"]
    for name, group, deps in _assets():
        out.append(
            f"| `{name}` | {group} | {', '.join(deps) or '–'} | {', '.join(checks.get(name, [])) or '–'} |"
        )
    out += ["", "| job | assets | checks |", "|---|---|---|"]
    for line in sections["jobs"]:
        job, rest = line.split(": ", 1)
        assets, job_checks = rest.split(" | ")
        out.append(f"| `{job}` | {assets} | {job_checks} |")
    out += ["", "| schedule | cron | time zone | job |", "|---|---|---|---|"]
    for line in sections["schedules"]:
        name, rest = line.split(": ", 1)
        cron, rest = rest.rsplit(", ", 1)
        zone, job = rest.split(" → ")
        out.append(f"| `{name}` | `{cron}` | {zone} | {job} |")
    out += ["", "| sensor | → job |", "|---|---|"]
    out += [f"| `{line.split(' → ', 1)[0]}` | {line.split(' → ', 1)[1]} |" for line in sections["sensors"]]
    return "\n".join(out)


def stores() -> str:
    from hippo_resources.stores import NON_REBUILDABLE

    return "\n".join(
        ["| store | holds |", "|---|---|", *(f"| `{k}` | {v} |" for k, v in NON_REBUILDABLE.items())]
    )


GENERATORS = {
    "stores": stores,
    "asset-graph": asset_graph,
    "wiring": wiring,
    "settings-table": settings_table,
    "mcp-tools": mcp_tools,
    "cli-help": cli_help,
    "frontmatter": frontmatter,
}


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    def replace(m: re.Match[str]) -> str:
        if m.group(1) not in GENERATORS:
            raise ValueError(f"{page.file.src_path}: unknown generated part {m.group(1)!r}")
        return GENERATORS[m.group(1)]()

    return MARKER.sub(replace, markdown)
