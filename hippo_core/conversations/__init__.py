"""Agent conversations: the records (`models`), one parser module per format, and the `FORMATS` registry."""

from hippo_core.conversations.chatgpt import parse_chatgpt
from hippo_core.conversations.claude_ai import parse_claude_ai
from hippo_core.conversations.claude_code import parse_claude_code
from hippo_core.conversations.codex import parse_codex_history, parse_codex_session
from hippo_core.conversations.models import (
    Conversation,
    Message,
    Parsed,
    Problem,
    Role,
    Source,
    blocks_text,
    finish,
    iso,
    json_lines,
)

__all__ = [
    "Conversation",
    "Message",
    "Parsed",
    "Problem",
    "Role",
    "Source",
    "blocks_text",
    "finish",
    "iso",
    "json_lines",
    "parse_chatgpt",
    "parse_claude_ai",
    "parse_claude_code",
    "parse_codex_history",
    "parse_codex_session",
]
