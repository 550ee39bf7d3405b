"""Parsers for chat-service exports (ChatGPT and claude.ai `conversations.json`): plain data in, records out."""

from __future__ import annotations

from typing import Any

from hippo_core.conversations import Conversation, Message, Parsed, Problem, blocks_text, finish, iso


# --- ChatGPT export ------------------------------------------------------------------------------------
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
    return out


# --- claude.ai export ----------------------------------------------------------------------------------
def parse_claude_ai(conversations: Any, where: str) -> Parsed:
    """claude.ai `conversations.json`: a list of conversations with `chat_messages`."""
    out = Parsed()
    if not isinstance(conversations, list):
        out.problems.append(Problem(where=where, reason="conversations.json is not a list"))
        return out
    for index, conv in enumerate(conversations):
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
                out.problems.append(Problem(where=f"{where}[{index}]", reason=f"unknown sender {sender!r}"))
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
    return out
