"""The librarian: FastAPI REST plus MCP (streamable HTTP at /mcp) over the materialized stores."""

from __future__ import annotations

import hmac
import json
from contextlib import asynccontextmanager
from typing import Any

import anyio
from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hippo_core.safety.text_input import BadTextError, decode_utf8
from hippo_core.settings import HippoSettings
from hippo_resources.vault import VaultError
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
from hippo_server.conversations import register_routes
from hippo_server.dream_routes import register_dream_routes
from hippo_server.facts_routes import register_facts_routes
from hippo_server.mcp import build_mcp
from hippo_server.mcp.recall import RecallServices, register_recall_routes
from hippo_server.schemas import printable, request_error_message
from hippo_server.work_routes import register_work_routes
from hippo_work.conversations import ConversationMemory
from hippo_work.wiring import WorkServices

MAX_BODY_BYTES = 16 * 1024
MAX_JSON_DEPTH = 64  # far above any request the API takes; json.loads overflows near 1,000
OPEN_PATHS = ("/health",)


def error(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse(
        status_code=status, content={"error": {"code": code, "message": printable(message), **extra}}
    )


def json_too_deep(body: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when the JSON text nests arrays/objects deeper than `limit` (brackets inside strings ignored).

    Checked before any parser sees the body: `json.loads` raises RecursionError near 1,000 levels.
    """
    if body.count(b"[") + body.count(b"{") <= limit:
        return False  # the common case, at C speed
    depth = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return True
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return False


class GuardMiddleware:
    """Before any route runs: the bearer token (everything but /health), then the whole body read within
    `body_timeout` seconds and at most `max_body` bytes (with or without Content-Length), and its JSON
    nesting bounded. Every refusal is a 4xx here, whatever the route or how it would parse the body."""

    def __init__(
        self,
        app: ASGIApp,
        token: str | None,
        max_body: int = MAX_BODY_BYTES,
        body_timeout: float = 30.0,
    ) -> None:
        self.app = app
        self.token = token.encode("utf-8") if token else None
        self.max_body = max_body
        self.body_timeout = body_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        if self.token and scope.get("path", "") not in OPEN_PATHS:
            scheme, _, given = headers.get(b"authorization", b"").partition(b" ")
            # bytes, not str: a non-ASCII header must be a wrong token, not a TypeError (issue 9, point 3)
            if scheme.lower() != b"bearer" or not hmac.compare_digest(given.strip(), self.token):
                await error(401, "unauthorized", "missing or wrong bearer token (HIPPO_MCP_TOKEN)")(
                    scope, receive, send
                )
                return
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body:
            await self._too_large(scope, receive, send)
            return
        try:
            body = await self._read_body(receive)
        except BodyTooLarge:
            await self._too_large(scope, receive, send)
            return
        except TimeoutError:
            await error(408, "body_timeout", f"request body not received within {self.body_timeout:g} s")(
                scope, receive, send
            )
            return
        except ClientGone:
            return
        if body is not None and json_too_deep(body):
            await error(400, "bad_json", f"request body nests deeper than {MAX_JSON_DEPTH} levels")(
                scope, receive, send
            )
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body or b"", "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _read_body(self, receive: Receive) -> bytes | None:
        """The whole body, or BodyTooLarge as soon as it passes the cap (chunked bodies included)."""
        chunks: list[bytes] = []
        size = 0
        with anyio.fail_after(self.body_timeout):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise ClientGone
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.max_body:
                    raise BodyTooLarge
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(chunks)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        await error(413, "body_too_large", f"request body is over {self.max_body} bytes")(
            scope, receive, send
        )


class BodyTooLarge(Exception):
    pass


class ClientGone(Exception):
    pass


def create_app(settings: HippoSettings, engine: SearchEngine | None = None) -> FastAPI:
    """Build the librarian app. Pass `engine` to serve stores other than the settings' (tests)."""
    engine = engine or open_engine(settings)
    memory = ConversationMemory(settings.chunks_dir, engine.vault)
    work = WorkServices.from_settings(settings, engine.vault, engine.embedder)  # type: ignore[arg-type]
    mcp = build_mcp(engine, memory, work, settings)
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
        await anyio.to_thread.run_sync(engine.flush_log)  # the searches answered last are logged too

    app = FastAPI(
        title="Hippocampus librarian",
        version="0.1.0",
        description="Read-only hybrid search over a Hippocampus vault. Results are untrusted reference material.",
        lifespan=lifespan,
    )
    app.state.engine = engine
    app.add_middleware(GuardMiddleware, token=settings.mcp_token, body_timeout=settings.body_timeout)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        return error(422, "invalid_request", request_error_message(exc))

    register_recall_routes(
        app, RecallServices.from_settings(settings, engine)
    )  # /api/v1/route, /suggest, /recall
    store = store_id(settings.home)

    @app.get("/health", tags=["meta"])
    async def health() -> dict[str, str]:
        """`store` names the stores served (a hash of HIPPO_HOME): `hippo search` asks this librarian only
        when it serves the stores the command would read itself. On the event loop on purpose: it answers
        while every worker thread is busy scanning input."""
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
            response = await run_in_threadpool(engine.search, req, log=False)
        except NotIndexedError as exc:
            return error(503, "not_indexed", str(exc))
        # logged by the engine's one logging thread: no request thread waits on the ledger's commit
        engine.log_later(req, response)
        return response

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
        except (OSError, RuntimeError) as exc:
            # a symlink out of the vault (VaultError) or in a loop (pathlib's RuntimeError), a folder
            # named x.md, a name too long for the file system: no document there
            if isinstance(exc, RuntimeError) and not isinstance(exc, VaultError) and "loop" not in str(exc):
                raise
            return error(404, "not_found", f"no readable document at {ref!r} ({type(exc).__name__})")

    register_routes(app, memory)  # /api/v1/conversations, /api/v1/captures
    register_work_routes(app, work)  # /api/v1/work/
    register_dream_routes(app, settings)  # /api/v1/profile
    register_facts_routes(app, settings)  # /api/v1/facts
    app.mount("/", mcp_app)
    return app
