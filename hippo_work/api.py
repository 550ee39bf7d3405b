"""The parameters of the work-memory and ghost calls, described once: the MCP tools' schemas, the REST
bodies and the CLI flags all take their descriptions and enums from here."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from hippo_core.ghost import Scope
from hippo_core.work_memory import CheckpointKind

DESCRIBE: dict[str, str] = {
    "project": "The project, a plain slug (a-z, 0-9, '-', '_'), e.g. the git repository's folder name.",
    "session_id": "Your session's id (the same for every call of this session).",
    "since": "Cursor '<generation>:<seq>' from hippo_resume or the last hippo_sync; '0' reads from the start.",
    "limit": "Entries per page (default 100, at most 500).",
    "kind": "'work': what you did and what is next; 'conversation': a summary of the conversation.",
    "summary": "The checkpoint's text (at most 8 KB; refused when it holds a secret or an injection).",
    "event_id": "Unique per write within the session; a resend with the same id returns the first record.",
    "base_cursor": "The cursor you last read up to; entries you had not seen come back as `unseen`.",
    "agent": "Who writes (e.g. 'claude-code'), shown in the worklog.",
    "entry": "What was done, one line.",
    "next": "What comes next (leave out when nothing is open).",
    "text": "The whole handoff for the next session (Markdown).",
    "name": "The memory's title (it becomes the file name).",
    "body": "The lesson, in a few sentences that make sense outside this project.",
    "scope": "'project' keeps it here; 'shared' offers it to other projects once a person approves it.",
    "query": "What you are looking for.",
    "current_project": "The project you work in now.",
    "k": "How many memories at most (default 5).",
    "anchor": "A result's anchor (search: 'path#heading'; ghost: 'ghost/<project>/<memory>').",
    "useful": "True when the result helped, false when it did not.",
    "verbose": "Long form: every field, also the ones left out to keep results short.",
}


def described(name: str, **kwargs: object) -> object:
    return Field(description=DESCRIBE[name], **kwargs)  # type: ignore[arg-type]


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CheckpointRequest(Request):
    project: str = described("project")
    kind: CheckpointKind = described("kind")
    summary: str = described("summary")
    session_id: str = described("session_id")
    event_id: str = described("event_id")
    base_cursor: str | None = described("base_cursor", default=None)
    agent: str | None = described("agent", default=None)
    verbose: bool = described("verbose", default=False)


class WorklogRequest(Request):
    project: str = described("project")
    entry: str = described("entry")
    next: str | None = described("next", default=None)
    agent: str | None = described("agent", default=None)


class HandoffRequest(Request):
    project: str = described("project")
    text: str = described("text")
    agent: str | None = described("agent", default=None)


class RememberRequest(Request):
    name: str = described("name")
    body: str = described("body")
    project: str = described("project")
    scope: Scope = described("scope", default="project")


class GhostSearchRequest(Request):
    query: str = described("query")
    current_project: str = described("current_project")
    session_id: str | None = described("session_id", default=None)
    k: int | None = described("k", default=None, ge=1, le=50)
    verbose: bool = described("verbose", default=False)


class GhostFeedbackRequest(Request):
    anchor: str = described("anchor")
    useful: bool = described("useful")
    session_id: str | None = described("session_id", default=None)
    project: str | None = described("project", default=None)


ErrorCode = Literal["refused", "invalid_cursor", "not_found", "unavailable", "invalid_request"]
