"""Agents' work memory and the ghost layer: the calls REST, MCP, the CLI and the hooks share.

`WorkMemory` (resume, sync, checkpoint, worklog, handoff) and `GhostLayer` (remember, search,
feedback, promote, audit) over the `WorkStore`, `GhostStore` and `Vault` resources. Errors are
`hippo_core.agents.work_memory.WorkMemoryError` subclasses with a `code` for the transports to map.

Names are imported on first use: the hooks import `hippo_cli.hooks.session` at every agent session start,
and must not pay for the ghost layer's numpy and embedder.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_LAZY = {
    "GhostLayer": "hippo_work.ghost",
    "WorkMemory": "hippo_work.service",
    "WorkLimits": "hippo_work.config",
    "limits_from_settings": "hippo_work.config",
    "InvalidCursor": "hippo_core.agents.work_memory",
    "NotFound": "hippo_core.agents.work_memory",
    "Refused": "hippo_core.agents.work_memory",
    "Unavailable": "hippo_core.agents.work_memory",
    "WorkMemoryError": "hippo_core.agents.work_memory",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'hippo_work' has no attribute {name!r}")
