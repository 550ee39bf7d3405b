"""The librarian: FastAPI REST plus MCP (streamable HTTP at /mcp) over the materialized stores."""

from __future__ import annotations

import hmac
import json
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hippo_core.settings import HippoSettings
from hippo_core.text_input import BadTextError, decode_utf8
from hippo_search.bundle import EvidenceBundle, build_bundle, record_feedback
from hippo_search.client import store_id
from hippo_search.envelope import (
    BundleRequest,
    FeedbackRequest,
    SearchRequest,
    SearchResponse,
    Section,
    validation_message,
)
from hippo_search.pipeline import NotFoundError, NotIndexedError, SearchEngine, open_engine
from hippo_server.conversations import ConversationMemory, register_routes
from hippo_server.mcp_tools import build_mcp

MAX_BODY_BYTES = 16 * 1024
OPEN_PATHS = ("/health",)


def error(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse(status_code=status, content={"error": {"code": code, "message": message, **extra}})


class GuardMiddleware:
    """Bearer token on everything but /health, and a cap on request bodies, before any route runs."""

    def __init__(self, app: ASGIApp, token: str | None, max_body: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.token = token
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if self.token and path not in OPEN_PATHS:
            headers = dict(scope.get("headers") or [])
            auth = headers.get(b"authorization", b"").decode("latin-1")
            scheme, _, given = auth.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip(), self.token):
                await error(401, "unauthorized", "missing or wrong bearer token (HIPPO_MCP_TOKEN)")(
                    scope, receive, send
                )
                return
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body:
            await error(413, "body_too_large", f"request body is over {self.max_body} bytes")(
                scope, receive, send
            )
            return
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    raise BodyTooLarge
            return message

        try:
            await self.app(scope, limited_receive, send)
        except BodyTooLarge:
            await error(413, "body_too_large", f"request body is over {self.max_body} bytes")(
                scope, receive, send
            )


class BodyTooLarge(Exception):
    pass


def create_app(settings: HippoSettings, engine: SearchEngine | None = None) -> FastAPI:
    """Build the librarian app. Pass `engine` to serve stores other than the settings' (tests)."""
    engine = engine or open_engine(settings)
    memory = ConversationMemory(settings.chunks_dir, engine.vault)
    mcp = build_mcp(engine, memory)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", "testserver", f"{settings.host}:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*"],
    )
    mcp_app = mcp.streamable_http_app(
        streamable_http_path="/mcp", transport_security=security, host=settings.host
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI):  # noqa: ANN202
        async with mcp.session_manager.run():
            yield

    app = FastAPI(
        title="Hippocampus librarian",
        version="0.1.0",
        description="Read-only hybrid search over a Hippocampus vault. Results are untrusted reference material.",
        lifespan=lifespan,
    )
    app.state.engine = engine
    app.add_middleware(GuardMiddleware, token=settings.mcp_token)

    store = store_id(settings.home)

    @app.get("/health", tags=["meta"])
    def health() -> dict[str, str]:
        """`store` names the stores served (a hash of HIPPO_HOME): `hippo search` asks this librarian only
        when it serves the stores the command would read itself."""
        return {"status": "ok", "service": "hippocampus", "store": store}

    @app.get("/api/v1/status", tags=["meta"])
    def status() -> dict[str, Any]:
        return engine.status()

    @app.post(
        "/api/v1/search",
        tags=["search"],
        response_model=SearchResponse,
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": SearchRequest.model_json_schema()}},
            }
        },
    )
    async def search(request: Request) -> Any:
        raw = await request.body()
        try:
            data = json.loads(decode_utf8(raw, what="request body"))
        except BadTextError as exc:
            return error(400, "bad_encoding", str(exc))
        except json.JSONDecodeError as exc:
            return error(400, "bad_json", f"request body is not valid JSON: {exc.msg} at position {exc.pos}")
        if not isinstance(data, dict):
            return error(422, "invalid_request", "request body must be a JSON object")
        try:
            req = SearchRequest.model_validate(data)
        except ValidationError as exc:
            return error(422, "invalid_request", validation_message(exc))
        try:
            return await run_in_threadpool(engine.search, req)
        except NotIndexedError as exc:
            return error(503, "not_indexed", str(exc))

    @app.post("/api/v1/bundle", tags=["search"], response_model=EvidenceBundle)
    def bundle(body: BundleRequest) -> Any:
        """Top sections for a question with a sufficiency score; weak bundles are recorded as gaps."""
        try:
            return build_bundle(engine, body.question, body.k)
        except ValidationError as exc:
            return error(422, "invalid_request", validation_message(exc))
        except NotIndexedError as exc:
            return error(503, "not_indexed", str(exc))

    @app.post("/api/v1/feedback", tags=["search"])
    def feedback(body: FeedbackRequest) -> Any:
        """Was this anchor useful for this query? Judgements become golden-set candidates."""
        try:
            record_feedback(engine, body.query, body.anchor, body.useful)
        except (BadTextError, ValueError) as exc:
            return error(422, "invalid_request", str(exc))
        return {"recorded": True}

    @app.get("/api/v1/documents", tags=["search"], response_model=Section)
    def get_document(ref: str) -> Any:
        """A document (`path`) or one section (`path#heading`)."""
        try:
            return engine.get(ref)
        except BadTextError as exc:
            return error(422, "invalid_request", str(exc))
        except NotFoundError as exc:
            return error(404, "not_found", str(exc))

    register_routes(app, memory)  # /api/v1/conversations, /api/v1/captures
    app.mount("/", mcp_app)
    return app
