"""REST under /api/v1/work/: the work-memory and ghost calls with the MCP tools' parameters and results.

Errors (mapped once, by `hippo_server.schemas.failure_of`): a refused write is 422 `refused` (with `kind`:
secret, injection, too_large, bad_project, exists …), a cursor from another store generation is 409
`invalid_cursor`, an event id resent with another body 409 `conflict`, an unknown memory 404, a call whose
backing is missing (no vault, or a folder `hippo init` has not adopted) 503 `unavailable`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError

from hippo_core.safety.text_input import BadTextError, decode_utf8
from hippo_server.schemas import error_response, validation_message
from hippo_work.api import (
    CheckpointRequest,
    GhostFeedbackRequest,
    GhostSearchRequest,
    HandoffRequest,
    RememberRequest,
    WorklogRequest,
)

if TYPE_CHECKING:
    from hippo_work.wiring import WorkServices

M = TypeVar("M", bound=BaseModel)
TAGS: list[str | Any] = ["work memory"]


async def _body(request: Request, model: type[M]) -> M | JSONResponse:
    import json

    try:
        data = json.loads(decode_utf8(await request.body(), what="request body"))
    except BadTextError as exc:
        return error_response(400, "bad_encoding", str(exc))
    except json.JSONDecodeError as exc:
        return error_response(
            400, "bad_json", f"request body is not valid JSON: {exc.msg} at position {exc.pos}"
        )
    if not isinstance(data, dict):
        return error_response(422, "invalid_request", "request body must be a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        return error_response(422, "invalid_request", validation_message(exc))


async def _run(fn: Any, *args: Any, verbose: bool = False, status: int = 200) -> Any:
    """Run a service call off the event loop; its failures go to the app's one mapping."""
    out = await run_in_threadpool(fn, *args)
    return JSONResponse(status_code=status, content=out.dump(verbose))


def register_work_routes(app: FastAPI, services: WorkServices) -> None:
    work, ghost = services.work, services.ghost

    @app.get("/api/v1/work/resume", tags=TAGS)
    async def resume(project: str, session_id: str | None = None, verbose: bool = False) -> Any:
        """hippo_resume: handoff, other sessions' latest checkpoints, open worklog items, the sync cursor."""
        return await _run(lambda: work.resume(project, session_id=session_id), verbose=verbose)

    @app.get("/api/v1/work/sync", tags=TAGS)
    async def sync(project: str, since: str = "0", limit: int | None = None, verbose: bool = False) -> Any:
        """hippo_sync: a page of the change feed after `since` (`entries`, `cursor`, `has_more`)."""
        return await _run(lambda: work.sync(project, since, limit), verbose=verbose)

    @app.post("/api/v1/work/checkpoint", tags=TAGS)
    async def checkpoint(request: Request) -> Any:
        """hippo_checkpoint: 201 for a new record, 200 with `duplicate: true` for a resend."""
        body = await _body(request, CheckpointRequest)
        if isinstance(body, JSONResponse):
            return body
        args = (
            body.project,
            body.kind,
            body.summary,
            body.session_id,
            body.event_id,
            body.base_cursor,
            body.agent,
        )
        out = await run_in_threadpool(work.checkpoint, *args)
        return JSONResponse(status_code=200 if out.duplicate else 201, content=out.dump(body.verbose))

    @app.post("/api/v1/work/worklog", tags=TAGS, status_code=201)
    async def worklog(request: Request) -> Any:
        """hippo_worklog: append a line to 50-ops/<project>/worklog.md (one git commit)."""
        body = await _body(request, WorklogRequest)
        if isinstance(body, JSONResponse):
            return body
        return await _run(work.worklog, body.project, body.entry, body.next, body.agent, status=201)

    @app.post("/api/v1/work/handoff", tags=TAGS)
    async def handoff(request: Request) -> Any:
        """hippo_handoff: rewrite 50-ops/<project>/handoff.md (the previous one stays in git history)."""
        body = await _body(request, HandoffRequest)
        if isinstance(body, JSONResponse):
            return body
        return await _run(work.handoff, body.project, body.text, body.agent)

    @app.post("/api/v1/work/remember", tags=TAGS, status_code=201)
    async def remember(request: Request) -> Any:
        """hippo_remember: write a memory file; `scope: shared` asks a person to approve sharing it."""
        body = await _body(request, RememberRequest)
        if isinstance(body, JSONResponse):
            return body
        return await _run(ghost.remember, body.name, body.body, body.project, body.scope, status=201)

    @app.post("/api/v1/work/ghost/search", tags=TAGS)
    async def ghost_search(request: Request) -> Any:
        """hippo_ghost_search: approved shared memories; every returned memory is logged as read."""
        body = await _body(request, GhostSearchRequest)
        if isinstance(body, JSONResponse):
            return body
        return await _run(
            ghost.search, body.query, body.current_project, body.session_id, body.k, verbose=body.verbose
        )

    @app.post("/api/v1/work/ghost/feedback", tags=TAGS)
    async def ghost_feedback(request: Request) -> Any:
        """hippo_feedback for a ghost anchor: activation rises when useful, sinks when not."""
        body = await _body(request, GhostFeedbackRequest)
        if isinstance(body, JSONResponse):
            return body
        return await _run(ghost.feedback, body.anchor, body.useful, body.session_id, body.project)

    @app.get("/api/v1/work/ghost/audit", tags=TAGS)
    async def ghost_audit(limit: int = 100, since: str | None = None, memory_id: str | None = None) -> Any:
        """The append-only ghost read log, newest first (what, when, which session and project)."""
        return await _run(lambda: ghost.audit(limit, since, memory_id), verbose=True)
