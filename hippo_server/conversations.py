"""REST of conversation memory under /api/v1/: recent conversations, one conversation, and session
capture. The service is `hippo_work.conversations`; failures are mapped by the app (`failure_of`)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse

from hippo_work.conversations import (
    CaptureRequest,
    ConversationMemory,
)


def register_routes(app: FastAPI, memory: ConversationMemory) -> None:
    """REST equivalents under /api/v1/ (behind the same bearer-token guard as search)."""

    @app.get("/api/v1/conversations", tags=["conversations"])
    def recent(days: int = 7, project: str | None = None, limit: int = 50) -> Any:
        return memory.recent(days, project, limit)

    @app.get("/api/v1/conversations/{conversation_id}", tags=["conversations"])
    def get_conversation(conversation_id: str, around: int | None = None, window: int = 10) -> Any:
        return memory.get(conversation_id, around, window)

    @app.post("/api/v1/captures", tags=["conversations"], status_code=201)
    def capture(body: dict[str, Any]) -> Any:
        out = memory.capture(CaptureRequest.model_validate(body))
        return JSONResponse(status_code=201, content=out)
