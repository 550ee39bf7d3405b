"""Agent conversations as plain records: parsers for each tool's files, no I/O beyond the bytes given.

Every parser returns `Parsed` (conversations, messages, and the problems it skipped with a reason),
so a bad line or an unknown event never loses the rest of the file.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

Source = Literal["claude_code", "codex", "codex_history", "chatgpt", "claude_ai"]
Role = Literal["user", "assistant", "system", "tool"]


class Message(BaseModel):
    message_id: str = Field(description="Stable across re-reads: the tool's own id, else file + line.")
    conversation_id: str
    position: int = Field(description="Order in the conversation (0-based), by the tool's own order.")
    role: Role
    text: str
    timestamp: str | None = Field(default=None, description="ISO 8601, UTC.")
    is_tool: bool = Field(default=False, description="A tool call or a tool's output, kept as text.")
    model: str | None = None


class Conversation(BaseModel):
    conversation_id: str
    source: Source
    title: str | None = None
    project: str | None = None
    started: str | None = None
    ended: str | None = None
    model: str | None = None
    origin: str = Field(default="", description="The file it was read from.")


class Problem(BaseModel):
    where: str
    reason: str


class Parsed(BaseModel):
    conversations: list[Conversation] = Field(default_factory=list)
    messages: list[Message] = Field(default_factory=list)
    problems: list[Problem] = Field(default_factory=list)

    def extend(self, other: Parsed) -> None:
        self.conversations.extend(other.conversations)
        self.messages.extend(other.messages)
        self.problems.extend(other.problems)


def iso(value: Any) -> str | None:
    """Epoch seconds or an ISO string → ISO 8601 UTC with seconds; None when absent or unreadable."""
    if value is None or value == "":
        return None
    try:
        if isinstance(value, int | float):
            stamp = dt.datetime.fromtimestamp(float(value), tz=dt.UTC)
        else:
            stamp = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
            if stamp.tzinfo is None:
                stamp = stamp.replace(tzinfo=dt.UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return stamp.astimezone(dt.UTC).isoformat(timespec="seconds")


def _json_text(value: Any, limit: int = 4000) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + " …"


def blocks_text(content: Any) -> tuple[str, bool]:
    """Text of a content-block list (Anthropic style). Returns (text, has_only_tool_blocks)."""
    if isinstance(content, str):
        return content, False
    if not isinstance(content, list):
        return "", False
    parts: list[str] = []
    tool = plain = 0
    for block in content:
        if isinstance(block, str):
            parts.append(block)
            plain += 1
            continue
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
            plain += 1
        elif kind == "tool_use":
            parts.append(f"[tool call {block.get('name', '?')}] {_json_text(block.get('input', {}))}")
            tool += 1
        elif kind == "tool_result":
            inner, _ = blocks_text(block.get("content"))
            parts.append(f"[tool output] {inner}")
            tool += 1
    return "\n".join(p for p in parts if p.strip()), tool > 0 and plain == 0


def _stamps(messages: list[Message]) -> tuple[str | None, str | None]:
    stamps = sorted(m.timestamp for m in messages if m.timestamp)
    return (stamps[0], stamps[-1]) if stamps else (None, None)


def finish(conv: Conversation, messages: list[Message]) -> Conversation:
    """Fill started/ended/model from the messages when the file did not say."""
    started, ended = _stamps(messages)
    models = [m.model for m in messages if m.model]
    return conv.model_copy(
        update={
            "started": conv.started or started,
            "ended": ended or conv.ended,
            "model": conv.model or (models[-1] if models else None),
        }
    )


# --- JSONL line reading --------------------------------------------------------------------------------
def json_lines(
    lines: Iterable[tuple[int, str]], where: str, problems: list[Problem]
) -> Iterable[tuple[int, dict]]:
    """Parse (line number, text) pairs; a non-JSON or non-object line is skipped with a reason."""
    for number, line in lines:
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(where=f"{where}:{number}", reason=f"not JSON ({exc.msg})"))
            continue
        if not isinstance(obj, dict):
            problems.append(Problem(where=f"{where}:{number}", reason="not a JSON object"))
            continue
        yield number, obj


# --- Claude Code ---------------------------------------------------------------------------------------
CLAUDE_CODE_QUIET = {"summary", "file-history-snapshot", "queue-operation"}


def parse_claude_code(
    lines: Iterable[tuple[int, str]],
    session_hint: str,
    project_hint: str | None,
    where: str,
    first_position: int = 0,
) -> Parsed:
    """One Claude Code session file (`~/.claude/projects/<project>/<session>.jsonl`), or its new lines.

    `first_position` continues the numbering when only the appended part of a file is read.
    """
    out = Parsed()
    session_id = session_hint
    project = project_hint
    title: str | None = None
    position = first_position
    for number, obj in json_lines(lines, where, out.problems):
        kind = obj.get("type")
        if kind == "summary":
            title = title or obj.get("summary")
            continue
        if kind in CLAUDE_CODE_QUIET:
            continue
        if kind not in ("user", "assistant", "system"):
            out.problems.append(Problem(where=f"{where}:{number}", reason=f"unknown event type {kind!r}"))
            continue
        if obj.get("cwd"):
            project = obj["cwd"].rstrip("/").rsplit("/", 1)[-1] or project
        msg = obj.get("message") or {}
        if kind == "system":
            text, only_tool = (obj.get("content") or "", False)
        else:
            text, only_tool = blocks_text(msg.get("content"))
        if not text.strip():
            continue
        role = "tool" if only_tool else (msg.get("role") or kind)
        out.messages.append(
            Message(
                message_id=obj.get("uuid") or f"{session_id}:{number}",
                conversation_id=session_id,
                position=position,
                role=role if role in ("user", "assistant", "system", "tool") else "system",
                text=text,
                timestamp=iso(obj.get("timestamp")),
                is_tool=only_tool,
                model=msg.get("model") if kind == "assistant" else None,
            )
        )
        position += 1
    out.conversations.append(
        finish(
            Conversation(
                conversation_id=session_id, source="claude_code", title=title, project=project, origin=where
            ),
            out.messages,
        )
    )
    return out


# --- Codex CLI -----------------------------------------------------------------------------------------
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
        kind = obj.get("type")
        payload = obj.get("payload") if isinstance(obj.get("payload"), dict) else {}
        if kind == "session_meta":
            session_id = payload.get("id") or session_id
            if payload.get("cwd"):
                project = payload["cwd"].rstrip("/").rsplit("/", 1)[-1]
            continue
        if kind == "turn_context":
            model = payload.get("model") or model
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
            text, role, is_tool = f"[tool call {payload.get('name', item)}] {_json_text(args)}", "tool", True
        elif item in ("function_call_output", "custom_tool_call_output"):
            output = payload.get("output")
            if isinstance(output, dict):
                output = output.get("content", output)
            text, role, is_tool = f"[tool output] {_json_text(output)}", "tool", True
        else:
            out.problems.append(Problem(where=f"{where}:{number}", reason=f"unknown response item {item!r}"))
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
    for cid, msgs in by_session.items():
        out.messages.extend(msgs)
        conv = Conversation(conversation_id=cid, source="codex_history", title="Codex prompts", origin=where)
        out.conversations.append(finish(conv, msgs))
    return out
