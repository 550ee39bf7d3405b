"""claude.ai data export: `conversations.json` (conversations with `chat_messages`) inside the export ZIP."""

from __future__ import annotations

from typing import Any

from hippo_core.conversations.models import (
    TOO_DEEP,
    Conversation,
    Message,
    Parsed,
    Problem,
    blocks_text,
    finish,
    iso,
    malformed,
    too_deep,
)

FILES = ("claude*.zip",)  # export ZIPs in HIPPO_EXPORTS


def parse_claude_ai(conversations: Any, where: str) -> Parsed:
    """claude.ai `conversations.json`: a list of conversations with `chat_messages`."""
    out = Parsed()
    if not isinstance(conversations, list):
        out.problems.append(Problem(where=where, reason="conversations.json is not a list"))
        return out
    for index, conv in enumerate(conversations):
        if too_deep(conv):
            out.problems.append(Problem(where=f"{where}[{index}]", reason=TOO_DEEP))
            continue
        try:
            if not isinstance(conv, dict) or not isinstance(conv.get("chat_messages"), list):
                out.problems.append(
                    Problem(where=f"{where}[{index}]", reason="conversation without chat_messages")
                )
                continue
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
                    out.problems.append(
                        Problem(where=f"{where}[{index}]", reason=f"unknown sender {sender!r}")
                    )
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
            conversation = Conversation(
                conversation_id=cid,
                source="claude_ai",
                title=conv.get("name") or None,
                project=(conv.get("project") or {}).get("name")
                if isinstance(conv.get("project"), dict)
                else None,
                started=iso(conv.get("created_at")),
                ended=iso(conv.get("updated_at")),
                model=conv.get("model"),
                origin=where,
            )
            out.conversations.append(finish(conversation, msgs))
            out.messages.extend(msgs)
        except (AttributeError, TypeError, ValueError) as exc:
            out.problems.append(malformed(f"{where}[{index}]", exc))
    return out
