"""claude.ai data export: `conversations.json` (conversations with `chat_messages`) inside the export ZIP."""

from __future__ import annotations

from typing import Any

from hippo_core.conversations.models import (
    Conversation,
    Message,
    Parsed,
    Problem,
    blocks_text,
    export_where,
    iso,
    parse_export,
)

FILES = ("claude*.zip",)  # export ZIPs in HIPPO_EXPORTS


def _read_conversation(
    conv: dict, index: int, origin: str, problems: list[Problem]
) -> tuple[Conversation, list[Message]] | str:
    """One conversation of the export: its messages' text blocks (tool use kept as tool messages)."""
    if not isinstance(conv.get("chat_messages"), list):
        return "conversation without chat_messages"
    cid = str(conv.get("uuid") or f"claude-ai-{index}")
    msgs: list[Message] = []
    for m_index, msg in enumerate(conv["chat_messages"]):
        if not isinstance(msg, dict):
            continue
        text, only_tool = (
            blocks_text(msg.get("content")) if msg.get("content") else (msg.get("text") or "", False)
        )
        if not text.strip():
            text, only_tool = msg.get("text") or "", False
        if not text.strip():
            continue
        sender = msg.get("sender")
        role = "user" if sender == "human" else "assistant" if sender == "assistant" else None
        if role is None:
            problems.append(Problem(where=export_where(origin, index), reason=f"unknown sender {sender!r}"))
            continue
        msgs.append(
            Message(
                message_id=str(msg.get("uuid") or f"{cid}:{m_index}"),
                conversation_id=cid,
                position=len(msgs),
                role="tool" if only_tool else role,
                text=text,
                timestamp=iso(msg.get("created_at")),
                is_tool=only_tool,
            )
        )
    project = conv.get("project")
    conversation = Conversation(
        conversation_id=cid,
        source="claude_ai",
        title=conv.get("name") or None,
        project=project.get("name") if isinstance(project, dict) else None,
        started=iso(conv.get("created_at")),
        ended=iso(conv.get("updated_at")),
        model=conv.get("model"),
        origin=origin,
    )
    return conversation, msgs


def parse_claude_ai(conversations: Any, where: str) -> Parsed:
    """claude.ai `conversations.json`: a list of conversations with `chat_messages`."""
    return parse_export(conversations, where, _read_conversation)
