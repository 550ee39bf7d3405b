"""Claude Code session logs: `~/.claude/projects/<project>/<session>.jsonl` (HIPPO_CLAUDE_PROJECTS)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

from hippo_core.conversations.models import (
    Conversation,
    Message,
    Parsed,
    Problem,
    blocks_text,
    finish,
    iso,
    json_lines,
    malformed,
)

FILES = ("**/*.jsonl",)  # under the projects folder


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
        try:
            kind = obj.get("type")
            if kind == "summary":
                title = title or (obj["summary"] if isinstance(obj.get("summary"), str) else None)
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
        except (AttributeError, TypeError, ValueError) as exc:
            out.problems.append(malformed(f"{where}:{number}", exc))
    out.conversations.append(
        finish(
            Conversation(
                conversation_id=session_id, source="claude_code", title=title, project=project, origin=where
            ),
            out.messages,
        )
    )
    return out


def project_hint(rel: PurePosixPath) -> str | None:
    """`-home-dev-payments-api/<session>.jsonl` → `api` (the last word of the project folder)."""
    return rel.parts[0].strip("-").rsplit("-", 1)[-1] if len(rel.parts) > 1 else None


def parse_file(
    rel: PurePosixPath, where: str, lines: Iterable[tuple[int, str]], state: Mapping[str, Any]
) -> Parsed:
    """New lines of one session file; `state` carries the session id and position of earlier runs."""
    return parse_claude_code(
        lines,
        state.get("conversation_id") or rel.stem,
        project_hint(rel),
        where,
        first_position=state.get("position", 0),
    )
