"""Agents' work memory and the ghost layer: the calls REST, MCP, the CLI and the hooks share.

`WorkMemory` (resume, sync, checkpoint, worklog, handoff) and `GhostLayer` (remember, search,
feedback, promote, audit) over the `WorkStore`, `GhostStore` and `Vault` resources. Errors are
`hippo_core.work_memory.WorkMemoryError` subclasses with a `code` for the transports to map.
"""

from hippo_core.work_memory import (
    InvalidCursor,
    NotFound,
    Refused,
    Unavailable,
    WorkMemoryError,
)
from hippo_work.config import WorkLimits, limits_from_env
from hippo_work.ghost import GhostLayer
from hippo_work.service import WorkMemory

__all__ = [
    "GhostLayer",
    "InvalidCursor",
    "NotFound",
    "Refused",
    "Unavailable",
    "WorkLimits",
    "WorkMemory",
    "WorkMemoryError",
    "limits_from_env",
]
