"""REST of conversation memory under /api/v1/: recent conversations, one conversation, and session
capture. The service is `hippo_work.conversations`."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from hippo_core.safety.text_input import BadTextError
from hippo_server.schemas import validation_message
from hippo_work.conversations import (
    CaptureRejected,
    CaptureRequest,
    ConversationMemory,
    ConversationNotFound,
)


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse(status_code=status, content={"error": {"code": code, "message": message}})


def register_routes(app: FastAPI, memory: ConversationMemory) -> None:
    """REST equivalents under /api/v1/ (behind the same bearer-token guard as search)."""

    @app.get("/api/v1/conversations", tags=["conversations"])
    def recent(days: int = 7, project: str | None = None, limit: int = 50) -> Any:
        try:
            return memory.recent(days, project, limit)
        except BadTextError as exc:
            return _error(422, "invalid_request", str(exc))

    @app.get("/api/v1/conversations/{conversation_id}", tags=["conversations"])
    def get_conversation(conversation_id: str, around: int | None = None, window: int = 10) -> Any:
        try:
            return memory.get(conversation_id, around, window)
        except BadTextError as exc:
            return _error(422, "invalid_request", str(exc))
        except ConversationNotFound as exc:
            return _error(404, "not_found", str(exc))

    @app.post("/api/v1/captures", tags=["conversations"], status_code=201)
    def capture(body: dict[str, Any]) -> Any:
        try:
            out = memory.capture(CaptureRequest.model_validate(body))
        except ValidationError as exc:
            return _error(422, "invalid_request", validation_message(exc))
        except CaptureRejected as exc:
            return _error(422, "rejected", str(exc))
        return JSONResponse(status_code=201, content=out)
