"""The parameters of the work-memory and ghost calls, described once: the MCP tools' schemas, the REST
bodies and the CLI flags all take their descriptions and enums from here."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from hippo_core.agents.ghost import Scope
from hippo_core.agents.work_memory import CheckpointKind
from hippo_work.describe import DESCRIBE


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


ErrorCode = Literal["refused", "invalid_cursor", "conflict", "not_found", "unavailable", "invalid_request"]
