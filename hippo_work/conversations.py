"""Conversation memory for agents: recent conversations, one conversation's messages, and session capture.

The service REST (`hippo_server/conversations.py`) and MCP (`hippo_server/mcp/conversations.py`) share.
Reads the tables the `memory` group writes (already scrubbed of credentials) through `ChunkStore`. The
capture is the librarian's only write into the inbox: a draft note in 00-inbox/, written through the
vault's checked write path (refused for a folder `hippo init` has not adopted), refused when it is too
large, carries a credential or looks like a prompt injection; the inbox sensor then takes it through
the normal loop.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Literal

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, field_validator

from hippo_core.safety.scanners import find_injections, find_secrets
from hippo_core.safety.text_input import BadTextError, validate_query
from hippo_core.vault import frontmatter
from hippo_core.vault.sources import slugify
from hippo_core.vault.vault_layout import INBOX
from hippo_resources.chunk_store import CONVERSATIONS, MESSAGES, ChunkStore, CorruptTableError
from hippo_resources.vault import Vault, VaultError
from hippo_search.envelope import UNTRUSTED_NOTICE

MAX_TITLE_CHARS = 200
MAX_SUMMARY_BYTES = 12 * 1024  # under the librarian's 16 KiB request cap
MAX_SAME_NAME = 1000
CaptureKind = Literal["debugging", "decision", "howto", "finding", "session"]


class CaptureRejected(ValueError):
    """A capture that must not reach the vault; the message says why."""


class ConversationNotFound(LookupError):
    pass


class CaptureRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=MAX_TITLE_CHARS)
    summary: str = Field(min_length=1, description=f"Markdown, at most {MAX_SUMMARY_BYTES} bytes.")
    kind: CaptureKind = "session"
    project: str | None = Field(default=None, max_length=100)

    @field_validator("title", "summary", "project")
    @classmethod
    def _clean(cls, v: str | None) -> str | None:
        if v is None:
            return None
        if "\x00" in v:
            raise ValueError("contains a NUL character")
        try:
            size = len(v.encode("utf-8"))
        except UnicodeEncodeError:
            raise ValueError("is not valid UTF-8 (lone surrogate)") from None
        if size > MAX_SUMMARY_BYTES:
            raise ValueError(f"is {size} bytes; the limit is {MAX_SUMMARY_BYTES} bytes")
        if not v.strip():
            raise ValueError("is empty")
        return v.strip()


class ConversationMemory:
    def __init__(self, chunks_dir: Path, vault: Vault | None, now: Any = None) -> None:
        self.store = ChunkStore(root=str(chunks_dir))
        self.vault = vault
        self.now = now or (lambda: dt.datetime.now(dt.UTC))

    def _table(self, name: str) -> pl.DataFrame:
        """A conversation table; empty before the memory group first ran (or while it is rebuilt)."""
        try:
            return self.store.read(name)
        except (FileNotFoundError, CorruptTableError):
            return pl.DataFrame()

    def recent(self, days: int = 7, project: str | None = None, limit: int = 50) -> dict[str, Any]:
        """Conversations active in the last `days` days, newest first."""
        if not 1 <= days <= 3650:
            raise BadTextError("days must be between 1 and 3650")
        if not 1 <= limit <= 200:
            raise BadTextError("limit must be between 1 and 200")
        convs = self._table(CONVERSATIONS)
        since = (self.now() - dt.timedelta(days=days)).isoformat(timespec="seconds")
        rows: list[dict[str, Any]] = []
        if convs.height:
            last = pl.coalesce(pl.col("ended"), pl.col("started"))
            frame = convs.with_columns(last.alias("_last")).filter(pl.col("_last") >= since)
            if project:
                frame = frame.filter(pl.col("project") == project)
            rows = frame.sort("_last", descending=True).head(limit).drop("_last", "origin").to_dicts()
        return {"kind": "hippocampus.conversations", "untrusted": True, "notice": UNTRUSTED_NOTICE,
                "days": days, "project": project, "conversations": rows}  # fmt: skip

    def get(self, conversation_id: str, around: int | None = None, window: int = 10) -> dict[str, Any]:
        """One conversation's messages: all (up to 200), or `window` either side of position `around`."""
        conversation_id = validate_query(conversation_id, max_bytes=256)
        if not 0 <= window <= 100:
            raise BadTextError("window must be between 0 and 100")
        convs = self._table(CONVERSATIONS)
        found = convs.filter(pl.col("conversation_id") == conversation_id) if convs.height else convs
        if not found.height:
            raise ConversationNotFound(f"no conversation {conversation_id!r}")
        msgs = self._table(MESSAGES)
        msgs = (
            msgs.filter(pl.col("conversation_id") == conversation_id).sort("position")
            if msgs.height
            else msgs
        )
        if around is not None and msgs.height:
            msgs = msgs.filter((pl.col("position") - around).abs() <= window)
        else:
            msgs = msgs.head(200)
        keep = [c for c in ("position", "role", "text", "timestamp", "is_tool", "model") if c in msgs.columns]
        messages = [
            {**m, "anchor": f"conversations/{conversation_id}#m{m['position']}"}
            for m in (msgs.select(keep).to_dicts() if msgs.height else [])
        ]
        return {"kind": "hippocampus.conversation", "untrusted": True, "notice": UNTRUSTED_NOTICE,
                "conversation": found.drop("origin").to_dicts()[0], "around": around, "window": window,
                "messages": messages}  # fmt: skip

    def capture(self, request: CaptureRequest) -> dict[str, Any]:
        """Write a draft note into 00-inbox/ (never canonical); refuse secrets and injections."""
        if self.vault is None:
            raise CaptureRejected("no vault configured (HIPPO_VAULT)")
        try:
            self.vault.check_writable()
        except VaultError as exc:
            raise CaptureRejected(str(exc)) from None
        text = f"{request.title}\n{request.summary}\n{request.project or ''}"
        secrets = sorted({f.kind for f in find_secrets(text)})
        if secrets:
            raise CaptureRejected(
                f"refused: the capture contains credential(s) of kind {secrets}; remove them"
            )
        injections = sorted({f.kind for f in find_injections(text)})
        if injections:
            raise CaptureRejected(f"refused: the capture looks like a prompt injection ({injections})")
        now = self.now().replace(microsecond=0)
        tags = ["capture", request.kind] + ([slugify(request.project, 40)] if request.project else [])
        title = " ".join(request.title.splitlines())  # one line; `\\`, quotes, controls kept as written
        fields = {
            "type": "conversation",
            "status": "draft",
            "trust": "llm_context",
            "title": title,
            "created": now.date().isoformat(),
            "tags": tags,
        }
        note = frontmatter.render(fields, f"# {title}\n\n{request.summary}\n")  # YAML library (issue 9.9)
        stem = f"{INBOX}/{now.strftime('%Y%m%dT%H%M%S')}-{slugify(request.title, 50)}"
        for n in range(MAX_SAME_NAME):  # captures of one title in one second: .1, .2, ... never overwritten
            rel = f"{stem}.md" if n == 0 else f"{stem}.{n}.md"
            try:
                self.vault.create_text(rel, note)
                break
            except FileExistsError:
                continue
            except VaultError as exc:  # the inbox is a symlink out of the vault, or in a loop
                raise CaptureRejected(str(exc)) from None
        else:
            raise CaptureRejected(f"{MAX_SAME_NAME} captures named {stem}.md this second; try again")
        return {"kind": "hippocampus.capture", "path": rel, "status": "draft",
                "next": "the inbox sensor ingests it; it stays a draft until a human approves it"}  # fmt: skip
