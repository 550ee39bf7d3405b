"""MCP tool of the nightly dream: `hippo_profile`, what the person and their agents have been occupied
with over 7 / 30 / 90 days. The service is `hippo_work.dream`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

import anyio
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from hippo_server.mcp.annotations import READ_ONLY
from hippo_work.dream import ProfileRefused, Profiles, dream_store

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from hippo_server.mcp import Backing


def register(mcp: MCPServer, backing: Backing) -> None:
    if backing.settings is None:
        return
    profiles = Profiles(dream_store(backing.settings))

    @mcp.tool(annotations=READ_ONLY)
    async def hippo_profile(
        window: Annotated[
            Literal[7, 30, 90] | None, Field(description="Days: 7, 30 or 90; omit for all three.")
        ] = None,
    ) -> dict[str, Any]:
        """The person's interest profile from the nightly dream: top subjects, tags and projects of what was
        searched, written and checkpointed over the last 7 / 30 / 90 days, and what is heating and cooling."""
        try:
            return await anyio.to_thread.run_sync(profiles.profile, window)
        except ProfileRefused as exc:
            raise ToolError(f"refused: {exc}") from None
