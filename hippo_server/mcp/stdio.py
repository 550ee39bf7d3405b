"""`hippo mcp`: the librarian's tools over stdio, gated by what exists (a vault, an index)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from hippo_search.pipeline import SearchEngine
    from hippo_settings import HippoSettings

# Tools whose backing is the vault (files a person reads) or the search index; `gate` removes them when
# the backing is absent, and keeps them when it cannot tell (a transient error).
VAULT_TOOLS = ("hippo_worklog", "hippo_handoff", "hippo_remember", "hippo_capture_session")
INDEX_TOOLS = ("hippo_search", "hippo_get", "hippo_bundle")


@dataclass(frozen=True)
class Capabilities:
    vault: bool
    index: bool
    why: tuple[str, ...] = ()


def capabilities(settings: HippoSettings, engine: SearchEngine | None) -> Capabilities:
    """Which backings exist. Only a definite absence removes tools; an error while checking (a locked or
    half-written file, a permission hiccup) counts as present, so a transient error keeps the tool listed."""
    why: list[str] = []
    root = Path(settings.vault).expanduser()
    try:
        vault = root.is_dir() and adopted(root)
    except OSError as exc:
        vault, _ = True, why.append(f"vault check failed ({exc}); vault tools kept")
    if not vault:
        reason = (
            f"{root} is not a Hippocampus vault yet (run `hippo init {root}`)"
            if root.is_dir()
            else f"no vault at {settings.vault}"
        )
        why.append(f"{reason}: {', '.join(VAULT_TOOLS)} are not offered")
    index = engine is not None
    if engine is not None:
        try:
            index = engine.lexical_store.manifest() is not None
        except Exception as exc:  # noqa: BLE001 - transient: keep the tools listed
            index = True
            why.append(f"index check failed ({type(exc).__name__}); search tools kept")
    if not index:
        why.append(f"nothing is indexed: {', '.join(INDEX_TOOLS)} are not offered (run `hippo run`)")
    return Capabilities(vault=vault, index=index, why=tuple(why))


def adopted(root: Path) -> bool:
    """`hippo init` adopted this folder (the vault's own test, `Vault.is_initialised`)."""
    from hippo_resources.vault import Vault

    return Vault(root=str(root)).is_initialised()


def gate(mcp: MCPServer, caps: Capabilities) -> list[str]:
    """Remove the tools whose backing is absent; returns their names."""
    drop = [*(VAULT_TOOLS if not caps.vault else ()), *(INDEX_TOOLS if not caps.index else ())]
    removed = []
    for name in drop:
        if mcp._tool_manager.get_tool(name) is not None:  # noqa: SLF001
            mcp.remove_tool(name)
            removed.append(name)
    return removed


def build_stdio_server(settings: HippoSettings) -> tuple[MCPServer, Capabilities]:
    """The librarian's tools plus work memory and the ghost layer, gated by what exists, for stdio."""
    from hippo_search.pipeline import open_engine
    from hippo_server.mcp import build_mcp
    from hippo_work.conversations import ConversationMemory
    from hippo_work.wiring import WorkServices

    engine = open_engine(settings)
    caps = capabilities(settings, engine)
    vault = engine.vault if caps.vault else None
    services = WorkServices.from_settings(settings, vault, engine.embedder)  # type: ignore[arg-type]
    memory = ConversationMemory(settings.chunks_dir, engine.vault)
    mcp = build_mcp(engine, memory, services, settings)
    gate(mcp, caps)
    return mcp, caps
