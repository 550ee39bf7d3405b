"""ChatGPT data export: `conversations.json` (a message tree per conversation) inside the export ZIP."""

from __future__ import annotations

from typing import Any

from hippo_core.conversations.models import (
    TOO_DEEP,
    Conversation,
    Message,
    Parsed,
    Problem,
    finish,
    iso,
    malformed,
    too_deep,
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


def parse_chatgpt(conversations: Any, where: str) -> Parsed:
    """ChatGPT `conversations.json`: a list of message trees; only the current branch is kept."""
    out = Parsed()
    if not isinstance(conversations, list):
        out.problems.append(Problem(where=where, reason="conversations.json is not a list"))
        return out
    for index, conv in enumerate(conversations):
        if too_deep(conv):
            out.problems.append(Problem(where=f"{where}[{index}]", reason=TOO_DEEP))
            continue
        try:
            if not isinstance(conv, dict) or not isinstance(conv.get("mapping"), dict):
                out.problems.append(
                    Problem(where=f"{where}[{index}]", reason="conversation without a message tree")
                )
                continue
            cid = str(conv.get("conversation_id") or conv.get("id") or f"chatgpt-{index}")
            msgs: list[Message] = []
            for node in _chatgpt_branch(conv["mapping"], conv.get("current_node")):
                msg = node.get("message") if isinstance(node, dict) else None
                if not isinstance(msg, dict):
                    continue
                role = (msg.get("author") or {}).get("role")
                content = msg.get("content") or {}
                parts = content.get("parts") or (
                    [content["text"]] if isinstance(content.get("text"), str) else []
                )
                text = "\n".join(p for p in parts if isinstance(p, str)).strip()
                if not text or (msg.get("metadata") or {}).get("is_visually_hidden_from_conversation"):
                    continue
                is_tool = role == "tool" or content.get("content_type") in ("code", "execution_output")
                if role not in ("user", "assistant", "system", "tool"):
                    out.problems.append(
                        Problem(where=f"{where}[{index}]", reason=f"unknown author role {role!r}")
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
                origin=where,
            )
            out.conversations.append(finish(conversation, msgs))
            out.messages.extend(msgs)
        except (AttributeError, TypeError, ValueError) as exc:
            out.problems.append(malformed(f"{where}[{index}]", exc))
    return out
