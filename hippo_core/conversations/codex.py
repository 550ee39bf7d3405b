"""Codex CLI: rollout files `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` and the prompt history
`~/.codex/history.jsonl` (HIPPO_CODEX_HOME)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

from hippo_core.conversations.models import (
    Conversation,
    Message,
    Parsed,
    Problem,
    finish,
    iso,
    json_lines,
    json_text,
    malformed,
)

HISTORY = PurePosixPath("history.jsonl")
FILES = ("sessions/**/*.jsonl", str(HISTORY))  # under the Codex home


CODEX_QUIET = {"event_msg", "compacted"}
CODEX_QUIET_ITEMS = {"reasoning"}


def _codex_content(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "\n".join(parts)


def parse_codex_session(
    lines: Iterable[tuple[int, str]], session_hint: str, where: str, first_position: int = 0
) -> Parsed:
    """One Codex CLI rollout file (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), or its new lines."""
    out = Parsed()
    session_id, project, model = session_hint, None, None
    position = first_position
    for number, obj in json_lines(lines, where, out.problems):
        try:
            kind = obj.get("type")
            payload = obj.get("payload") if isinstance(obj.get("payload"), dict) else {}
            if kind == "session_meta":
                session_id = payload["id"] if isinstance(payload.get("id"), str) else session_id
                if payload.get("cwd"):
                    project = payload["cwd"].rstrip("/").rsplit("/", 1)[-1]
                continue
            if kind == "turn_context":
                model = payload["model"] if isinstance(payload.get("model"), str) else model
                if payload.get("cwd"):
                    project = payload["cwd"].rstrip("/").rsplit("/", 1)[-1]
                continue
            if kind in CODEX_QUIET:
                continue
            if kind != "response_item":
                out.problems.append(Problem(where=f"{where}:{number}", reason=f"unknown event type {kind!r}"))
                continue
            item = payload.get("type")
            if item in CODEX_QUIET_ITEMS:
                continue
            if item == "message":
                role = payload.get("role")
                text, is_tool = _codex_content(payload.get("content")), False
                if role == "developer":
                    role = "system"
            elif item in ("function_call", "custom_tool_call", "local_shell_call"):
                args = payload.get("arguments") or payload.get("input") or payload.get("action") or ""
                text, role, is_tool = (
                    f"[tool call {payload.get('name', item)}] {json_text(args)}",
                    "tool",
                    True,
                )
            elif item in ("function_call_output", "custom_tool_call_output"):
                output = payload.get("output")
                if isinstance(output, dict):
                    output = output.get("content", output)
                text, role, is_tool = f"[tool output] {json_text(output)}", "tool", True
            else:
                out.problems.append(
                    Problem(where=f"{where}:{number}", reason=f"unknown response item {item!r}")
                )
                continue
            if not text.strip() or role not in ("user", "assistant", "system", "tool"):
                continue
            out.messages.append(
                Message(
                    message_id=f"{session_id}:{number}",
                    conversation_id=session_id,
                    position=position,
                    role=role,
                    text=text,
                    timestamp=iso(obj.get("timestamp")),
                    is_tool=is_tool,
                    model=model if role == "assistant" else None,
                )
            )
            position += 1
        except (AttributeError, TypeError, ValueError) as exc:
            out.problems.append(malformed(f"{where}:{number}", exc))
    conv = Conversation(
        conversation_id=session_id, source="codex", project=project, model=model, origin=where
    )
    out.conversations.append(finish(conv, out.messages))
    return out


def parse_codex_history(lines: Iterable[tuple[int, str]], where: str) -> Parsed:
    """`~/.codex/history.jsonl`: the prompts a user typed, one per line, grouped by session."""
    out = Parsed()
    by_session: dict[str, list[Message]] = {}
    for number, obj in json_lines(lines, where, out.problems):
        try:
            sid, text = obj.get("session_id"), obj.get("text")
            if not isinstance(sid, str) or not isinstance(text, str):
                out.problems.append(
                    Problem(where=f"{where}:{number}", reason="history line without session_id/text")
                )
                continue
            cid = f"codex-history-{sid}"
            msgs = by_session.setdefault(cid, [])
            stamp = iso(obj.get("ts"))
            msgs.append(
                Message(
                    message_id=f"{cid}:{number}",
                    conversation_id=cid,
                    position=number,  # the history file's line: stable when the file grows
                    role="user",
                    text=text,
                    timestamp=stamp,
                )
            )
        except (AttributeError, TypeError, ValueError) as exc:
            out.problems.append(malformed(f"{where}:{number}", exc))
    for cid, msgs in by_session.items():
        out.messages.extend(msgs)
        conv = Conversation(conversation_id=cid, source="codex_history", title="Codex prompts", origin=where)
        out.conversations.append(finish(conv, msgs))
    return out


def parse_file(
    rel: PurePosixPath, where: str, lines: Iterable[tuple[int, str]], state: Mapping[str, Any]
) -> Parsed:
    """New lines of a rollout file, or of the prompt history."""
    if rel == HISTORY:
        return parse_codex_history(lines, where)
    hint = state.get("conversation_id") or rel.stem.split("-", 6)[-1]
    return parse_codex_session(lines, hint, where, first_position=state.get("position", 0))
