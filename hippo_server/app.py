"""The librarian: FastAPI REST plus MCP (streamable HTTP at /mcp) over the materialized stores."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qsl

import anyio
from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hippo_core.safety.text_input import BadTextError, decode_utf8
from hippo_core.safety.tokens import FULL, Token, access_of, parse_tokens
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
from hippo_search.pipeline import SearchEngine, open_engine
from hippo_server.conversations import register_routes
from hippo_server.dream_routes import register_dream_routes
from hippo_server.facts_routes import register_facts_routes
from hippo_server.mcp import build_mcp
from hippo_server.mcp.recall import RecallServices, register_recall_routes
from hippo_server.schemas import (
    error_response,
    failure_of,
    failure_response,
    log_failure,
    read_document,
    redacted,
    request_error_message,
)
from hippo_server.work_routes import register_work_routes
from hippo_settings import HippoSettings
from hippo_work.conversations import ConversationMemory
from hippo_work.wiring import WorkServices

MAX_BODY_BYTES = 16 * 1024
MAX_JSON_DEPTH = 64  # far above any request the API takes; json.loads overflows near 1,000
OPEN_PATHS = ("/health",)


# The call each REST route makes, named as its MCP tool: a scoped token's rights are checked by name.
REST_CALLS = {
    ("POST", "/api/v1/search"): "hippo_search",
    ("POST", "/api/v1/bundle"): "hippo_bundle",
    ("POST", "/api/v1/feedback"): "hippo_feedback",
    ("GET", "/api/v1/documents"): "hippo_get",
    ("GET", "/api/v1/status"): "hippo_status",
    ("GET", "/api/v1/conversations"): "hippo_list_recent_conversations",
    ("POST", "/api/v1/captures"): "hippo_capture_session",
    ("GET", "/api/v1/work/resume"): "hippo_resume",
    ("GET", "/api/v1/work/sync"): "hippo_sync",
    ("POST", "/api/v1/work/checkpoint"): "hippo_checkpoint",
    ("POST", "/api/v1/work/worklog"): "hippo_worklog",
    ("POST", "/api/v1/work/handoff"): "hippo_handoff",
    ("POST", "/api/v1/work/remember"): "hippo_remember",
    ("POST", "/api/v1/work/ghost/search"): "hippo_ghost_search",
    ("POST", "/api/v1/work/ghost/feedback"): "hippo_feedback",
    ("GET", "/api/v1/work/ghost/audit"): "hippo_ghost_audit",
    ("POST", "/api/v1/route"): "hippo_route",
    ("POST", "/api/v1/suggest"): "hippo_suggest",
    ("POST", "/api/v1/recall"): "hippo_route",
    ("GET", "/api/v1/profile"): "hippo_profile",
    ("GET", "/api/v1/facts"): "hippo_facts",
}
CONVERSATION_PREFIX = "/api/v1/conversations/"


def rest_call(method: str, path: str) -> str | None:
    """The MCP tool name of a REST request (None: no call of the librarian, e.g. the OpenAPI page)."""
    if method == "GET" and path.startswith(CONVERSATION_PREFIX):
        return "hippo_get_conversation"
    return REST_CALLS.get((method, path.rstrip("/") or "/"))


def allowed(value: bytes, patterns: tuple[str, ...]) -> bool:
    """`value` (a Host or an Origin) matches one of `patterns` (`name:*` means any port), as the MCP
    transport's own DNS-rebinding check does."""
    text = value.decode("latin-1")
    for pattern in patterns:
        if text == pattern or (pattern.endswith(":*") and text.startswith(pattern[:-1])):
            return True
        if pattern.endswith(":*") and text == pattern[:-2]:
            return True
    return False


class FailureMiddleware:
    """Any exception a route lets out becomes the mapped 4xx/5xx with its reason (`failure_of`), logged
    in one line off the event loop; nothing reaches the server's traceback printer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:  # noqa: BLE001 - every failure is mapped; none is a traceback
            failure = failure_of(exc)
            log_failure(f"{scope.get('method')} {scope.get('path')}", failure, exc)
            if not started:
                await failure_response(failure)(scope, receive, send)


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
        tokens: tuple[Token, ...] = (),
        hosts: tuple[str, ...] = (),
        origins: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.token = token.encode("utf-8") if token else None
        self.tokens = tokens
        self.max_body = max_body
        self.body_timeout = body_timeout
        self.hosts = hosts
        self.origins = origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        path = scope.get("path", "")
        if path not in OPEN_PATHS:
            # DNS rebinding: a page in a browser reaches a loopback server under a name of its own
            if self.hosts and not allowed(headers.get(b"host", b""), self.hosts):
                await error_response(421, "bad_host", "the Host header names no address of this librarian")(
                    scope, receive, send
                )
                return
            origin = headers.get(b"origin")
            if origin is not None and self.origins and not allowed(origin, self.origins):
                await error_response(403, "bad_origin", "requests from this Origin are not allowed")(
                    scope, receive, send
                )
                return
        access = FULL
        if (self.token or self.tokens) and path not in OPEN_PATHS:
            scheme, _, given = headers.get(b"authorization", b"").partition(b" ")
            # bytes, not str: a non-ASCII header must be a wrong token, not a TypeError (issue 9, point 3)
            found = access_of(given.strip(), self.token, self.tokens) if scheme.lower() == b"bearer" else None
            if found is None:
                await error_response(401, "unauthorized", "missing or wrong bearer token (HIPPO_MCP_TOKEN)")(
                    scope, receive, send
                )
                return
            access = found
        scope.setdefault("state", {})["hippo_access"] = access
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
            await error_response(
                408, "body_timeout", f"request body not received within {self.body_timeout:g} s"
            )(scope, receive, send)
            return
        except ClientGone:
            return
        if body is not None and json_too_deep(body):
            await error_response(400, "bad_json", f"request body nests deeper than {MAX_JSON_DEPTH} levels")(
                scope, receive, send
            )
            return
        method = scope.get("method", "")
        call = rest_call(method, path)
        if access.read_only and call is None and method not in ("GET", "HEAD") and path != "/mcp":
            # a route this table does not name yet: a read-only token only reads
            await error_response(403, "forbidden", "this token is read-only")(scope, receive, send)
            return
        if access is not FULL and call is not None:
            refusal = access.refusal(call, call_arguments(scope, body))
            if refusal:
                await error_response(403, "forbidden", refusal)(scope, receive, send)
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
        await error_response(413, "body_too_large", f"request body is over {self.max_body} bytes")(
            scope, receive, send
        )


def call_arguments(scope: Scope, body: bytes | None) -> dict[str, object]:
    """The named arguments of a REST call (query parameters, then a JSON object body's fields), for the
    scope check; what cannot be read counts as no argument (the route itself refuses it)."""
    args: dict[str, object] = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
    if body:
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            data = None
        if isinstance(data, dict):
            args.update(data)
    return args


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
    hosts = ("127.0.0.1:*", "localhost:*", "[::1]:*", "testserver", f"{settings.host}:*")
    origins = ("http://127.0.0.1:*", "http://localhost:*")
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=list(hosts), allowed_origins=list(origins)
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
    app.add_middleware(FailureMiddleware)
    app.add_middleware(
        GuardMiddleware,
        token=settings.mcp_token,
        tokens=parse_tokens(settings.tokens.get_secret_value() if settings.tokens else None),
        body_timeout=settings.body_timeout,
        hosts=hosts,
        origins=origins,
    )

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(422, "invalid_request", request_error_message(exc))

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
            return error_response(400, "bad_encoding", str(exc))
        except json.JSONDecodeError as exc:
            return error_response(
                400, "bad_json", f"request body is not valid JSON: {exc.msg} at position {exc.pos}"
            )
        if not isinstance(data, dict):
            return error_response(422, "invalid_request", "request body must be a JSON object")
        try:
            req = SearchRequest.model_validate(data)
        except ValidationError as exc:
            return error_response(422, "invalid_request", validation_message(exc))
        response = await run_in_threadpool(engine.search, req, log=False)
        # logged by the engine's one logging thread: no request thread waits on the ledger's commit
        engine.log_later(req, response)
        return redacted(response)

    @app.post("/api/v1/bundle", tags=["search"], response_model=EvidenceBundle)
    def bundle(body: BundleRequest) -> Any:
        """Top sections for a question with a sufficiency score; weak bundles are recorded as gaps."""
        return redacted(build_bundle(engine, body.question, body.k))

    @app.post("/api/v1/feedback", tags=["search"])
    def feedback(body: FeedbackRequest) -> Any:
        """Was this anchor useful for this query? Judgements become golden-set candidates."""
        record_feedback(engine, body.query, body.anchor, body.useful)
        return {"recorded": True}

    @app.get("/api/v1/documents", tags=["search"], response_model=Section)
    def get_document(ref: str) -> Any:
        """A document (`path`) or one section (`path#heading`); 422 `bad_frontmatter` for a note whose
        frontmatter is not readable YAML (failures are mapped by `failure_of`)."""
        return redacted(read_document(engine, ref))

    register_routes(app, memory)  # /api/v1/conversations, /api/v1/captures
    register_work_routes(app, work)  # /api/v1/work/
    register_dream_routes(app, settings)  # /api/v1/profile
    register_facts_routes(app, settings)  # /api/v1/facts
    app.mount("/", mcp_app)
    return app
