"""Agent conversations as plain records, and what every format's parser shares.

Every parser returns `Parsed` (conversations, messages, and the problems it skipped with a reason),
so a bad line, an unknown event or a value nested too deeply never loses the rest of the file.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

# JSON nesting a parser accepts: real events nest a few dozen levels at most, while `json.loads` and the
# recursive helpers here overflow Python's stack near 1,000 (one log line of 200,000 nested arrays).
MAX_JSON_DEPTH = 200
TOO_DEEP = f"nested too deeply (over {MAX_JSON_DEPTH} levels; skipped)"
MALFORMED = "malformed event"

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


def json_text(value: Any, limit: int = 4000) -> str:
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
            parts.append(f"[tool call {block.get('name', '?')}] {json_text(block.get('input', {}))}")
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


def too_deep(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when lists/dicts in `value` nest deeper than `limit` (walked with a stack, never recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        if not children:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def malformed(where: str, exc: Exception) -> Problem:
    """An event whose fields have the wrong shape (a list where text belongs): skipped, with the reason."""
    return Problem(where=where, reason=f"{MALFORMED} ({type(exc).__name__})")


# What an export format reads from one conversation object (the object, its index, the file it came from,
# the problem list): the conversation and its messages, or the reason it is skipped. It may add problems
# of its own (an unknown role) to the list, at `export_where(file, index)`.
ReadConversation = Callable[[dict, int, str, list[Problem]], "tuple[Conversation, list[Message]] | str"]


def export_where(origin: str, index: int) -> str:
    """Where a problem in the export's `index`-th conversation is reported."""
    return f"{origin}[{index}]"


def parse_export(conversations: Any, where: str, read: ReadConversation) -> Parsed:
    """The loop every export ZIP's `conversations.json` shares (ChatGPT, claude.ai): a list of conversation
    objects, each read by the format's `read`; one that is nested too deeply, not an object or malformed is
    skipped with its reason, and the others are kept."""
    out = Parsed()
    if not isinstance(conversations, list):
        out.problems.append(Problem(where=where, reason="conversations.json is not a list"))
        return out
    for index, conv in enumerate(conversations):
        here = export_where(where, index)
        if too_deep(conv):
            out.problems.append(Problem(where=here, reason=TOO_DEEP))
            continue
        if not isinstance(conv, dict):
            out.problems.append(Problem(where=here, reason="conversation is not an object"))
            continue
        try:
            got = read(conv, index, where, out.problems)
        except (AttributeError, TypeError, ValueError) as exc:
            out.problems.append(malformed(here, exc))
            continue
        if isinstance(got, str):
            out.problems.append(Problem(where=here, reason=got))
            continue
        conversation, messages = got
        out.conversations.append(finish(conversation, messages))
        out.messages.extend(messages)
    return out


# --- JSONL line reading --------------------------------------------------------------------------------
def json_lines(
    lines: Iterable[tuple[int, str]], where: str, problems: list[Problem]
) -> Iterable[tuple[int, dict]]:
    """Parse (line number, text) pairs; a non-JSON, non-object or too deeply nested line is skipped with a
    reason."""
    for number, line in lines:
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(where=f"{where}:{number}", reason=f"not JSON ({exc.msg})"))
            continue
        except RecursionError:
            problems.append(Problem(where=f"{where}:{number}", reason=TOO_DEEP))
            continue
        if not isinstance(obj, dict):
            problems.append(Problem(where=f"{where}:{number}", reason="not a JSON object"))
            continue
        if too_deep(obj):
            problems.append(Problem(where=f"{where}:{number}", reason=TOO_DEEP))
            continue
        yield number, obj
