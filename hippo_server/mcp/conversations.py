"""MCP tools of conversation memory: recent conversations, one conversation, and session capture
(`hippo_capture_session`, a draft note in the inbox). The service is `hippo_work.conversations`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import anyio
from mcp.types import ToolAnnotations
from pydantic import Field

from hippo_server.mcp.annotations import READ_ONLY
from hippo_work.conversations import (
    MAX_SUMMARY_BYTES,
    CaptureKind,
    CaptureRequest,
)

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from hippo_server.mcp import Backing


def d(text: str) -> Any:
    """A tool parameter's description, for the MCP schema."""
    return Field(description=text)


def register(mcp: MCPServer, backing: Backing) -> None:
    """Conversation memory and session capture, when the librarian serves them."""
    memory = backing.memory
    if memory is None:
        return

    @mcp.tool(annotations=READ_ONLY)
    async def hippo_list_recent_conversations(
        days: Annotated[int, d("Conversations active in the last this many days.")] = 7,
        project: Annotated[
            str | None, d("Only this project's conversations (its folder or repo name).")
        ] = None,
    ) -> dict[str, Any]:
        """Agent conversations (Claude Code, Codex, ChatGPT, claude.ai) active in the last `days` days,
        newest first, optionally for one project. Use hippo_get_conversation to read one."""
        return await anyio.to_thread.run_sync(memory.recent, days, project)

    @mcp.tool(annotations=READ_ONLY)
    async def hippo_get_conversation(
        conversation_id: Annotated[str, d("The conversation's id (from a search hit's anchor or the list).")],
        around: Annotated[
            int | None, d("Message position to centre on (the #m<position> of an anchor).")
        ] = None,
        window: Annotated[int, d("Messages either side of `around`.")] = 10,
    ) -> dict[str, Any]:
        """Messages of one conversation: all of them, or `window` messages either side of position `around`
        (a search hit's anchor `conversations/<id>#m<position>` gives both)."""
        return await anyio.to_thread.run_sync(memory.get, conversation_id, around, window)

    @mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False))
    async def hippo_capture_session(
        title: Annotated[str, d("A short title for the note.")],
        summary: Annotated[str, d(f"What the session learned, Markdown, at most {MAX_SUMMARY_BYTES} bytes.")],
        kind: Annotated[CaptureKind, d("What kind of note this is.")] = "session",
        project: Annotated[str | None, d("The project it belongs to.")] = None,
    ) -> dict[str, Any]:
        """Save what this session learned (a debugging result, a decision, a how-to) as a DRAFT note in the
        vault inbox; a human approves it before it becomes canonical. Never include credentials: a capture
        with secrets is refused."""
        request = CaptureRequest(title=title, summary=summary, kind=kind, project=project)  # type: ignore[arg-type]
        return await anyio.to_thread.run_sync(memory.capture, request)
