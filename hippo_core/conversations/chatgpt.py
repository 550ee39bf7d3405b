"""ChatGPT data export: `conversations.json` (a message tree per conversation) inside the export ZIP."""

from __future__ import annotations

from typing import Any

from hippo_core.conversations.models import (
    Conversation,
    Message,
    Parsed,
    Problem,
    export_where,
    iso,
    parse_export,
)

FILES = ("chatgpt*.zip",)  # export ZIPs in HIPPO_EXPORTS


def _chatgpt_branch(mapping: dict[str, Any], current: str | None) -> list[dict[str, Any]]:
    """The nodes of the current branch, root first: walk parents from `current_node`."""
    if not current or current not in mapping:
        # No pointer: follow the last child from the root, the branch the UI showed last.
        roots = [n for n in mapping.values() if isinstance(n, dict) and not n.get("parent")]
        node = roots[0] if roots else None
        chain = []
        while node is not None:
            chain.append(node)
            kids = node.get("children") or []
            node = mapping.get(kids[-1]) if kids else None
        return chain
    chain, seen = [], set()
    node_id: str | None = current
    while node_id and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        chain.append(mapping[node_id])
        node_id = mapping[node_id].get("parent")
    return chain[::-1]


def _read_conversation(
    conv: dict, index: int, origin: str, problems: list[Problem]
) -> tuple[Conversation, list[Message]] | str:
    """One conversation of the export: the messages of its current branch, hidden ones left out."""
    if not isinstance(conv.get("mapping"), dict):
        return "conversation without a message tree"
    cid = str(conv.get("conversation_id") or conv.get("id") or f"chatgpt-{index}")
    msgs: list[Message] = []
    for node in _chatgpt_branch(conv["mapping"], conv.get("current_node")):
        msg = node.get("message") if isinstance(node, dict) else None
        if not isinstance(msg, dict):
            continue
        role = (msg.get("author") or {}).get("role")
        content = msg.get("content") or {}
        parts = content.get("parts") or ([content["text"]] if isinstance(content.get("text"), str) else [])
        text = "\n".join(p for p in parts if isinstance(p, str)).strip()
        if not text or (msg.get("metadata") or {}).get("is_visually_hidden_from_conversation"):
            continue
        is_tool = role == "tool" or content.get("content_type") in ("code", "execution_output")
        if role not in ("user", "assistant", "system", "tool"):
            problems.append(
                Problem(where=export_where(origin, index), reason=f"unknown author role {role!r}")
            )
            continue
        msgs.append(
            Message(
                message_id=str(msg.get("id") or node.get("id")),
                conversation_id=cid,
                position=len(msgs),
                role="tool" if is_tool else role,
                text=text,
                timestamp=iso(msg.get("create_time")),
                is_tool=is_tool,
                model=(msg.get("metadata") or {}).get("model_slug"),
            )
        )
    conversation = Conversation(
        conversation_id=cid,
        source="chatgpt",
        title=conv.get("title"),
        started=iso(conv.get("create_time")),
        ended=iso(conv.get("update_time")),
        model=conv.get("default_model_slug"),
        origin=origin,
    )
    return conversation, msgs


def parse_chatgpt(conversations: Any, where: str) -> Parsed:
    """ChatGPT `conversations.json`: a list of message trees; only the current branch is kept."""
    return parse_export(conversations, where, _read_conversation)
