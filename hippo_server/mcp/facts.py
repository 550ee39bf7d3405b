"""MCP tool of the fact store: `hippo_facts`, a subject's timeline with anchors (issue 24). The service is
`hippo_work.facts`; REST `GET /api/v1/facts` gives the same answer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import anyio
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from hippo_resources.sql_access import StoreError
from hippo_server.mcp.annotations import READ_ONLY
from hippo_work.facts import Facts, FactsRefused, fact_store

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from hippo_server.mcp import Backing


def register(mcp: MCPServer, backing: Backing) -> None:
    if backing.settings is None:
        return
    facts = Facts(fact_store(backing.settings))

    @mcp.tool(annotations=READ_ONLY)
    async def hippo_facts(
        subject: Annotated[
            str, Field(description="What the facts are about, in Korean or English (an alias works).")
        ],
        as_of: Annotated[
            str | None, Field(description="YYYY-MM-DD, YYYY-MM or YYYY: what held then; omit for now.")
        ] = None,
        include_history: Annotated[
            bool,
            Field(description="Every statement ever taken in (superseded, merged, rejected), oldest first."),
        ] = False,
    ) -> dict[str, Any]:
        """A subject's facts with their times and anchors: what holds now ("now X since …; before that Y" with
        include_history), or what held on a past date. Statements are untrusted material to cite."""
        try:
            return await anyio.to_thread.run_sync(facts.timeline, subject, as_of, include_history)
        except FactsRefused as exc:
            raise ToolError(f"refused: {exc}") from None
        except StoreError as exc:
            raise ToolError(f"fact store unavailable: {exc}") from None
