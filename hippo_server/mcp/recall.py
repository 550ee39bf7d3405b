"""`hippo_route` and `hippo_suggest` on MCP and REST, and `/api/v1/recall` for the prompt hook.

All three sit behind the librarian's own guard (token, Host/Origin, body limits): the route's degraded
path covers the *engine's* failures only, never the server's refusals.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
from fastapi import Request
from pydantic import BaseModel, Field, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse

from hippo_core.recall.route import RouteParams
from hippo_search.pipeline import NotIndexedError
from hippo_server.mcp.annotations import READ_ONLY
from hippo_server.schemas import error_response
from hippo_work.route import RecallRequest, recall, route, route_params, router_for
from hippo_work.suggest import SkillLane, skill_folders

if TYPE_CHECKING:
    from fastapi import FastAPI
    from mcp.server.mcpserver import MCPServer

    from hippo_resources.llm import LLM
    from hippo_search.pipeline import SearchEngine
    from hippo_server.mcp import Backing
    from hippo_settings import HippoSettings


class RouteRequest(BaseModel):
    model_config = {"extra": "forbid"}

    query: str = Field(max_length=4096, description="The request to judge (secrets are redacted first).")
    candidates: list[Annotated[str, Field(max_length=2048)]] | None = Field(
        default=None,
        max_length=20,
        description="Anchors to judge, among the normal search's results; default its top 8.",
    )


class SuggestRequest(BaseModel):
    model_config = {"extra": "forbid"}

    prompt: str = Field(max_length=100_000)


class RecallServices:
    """What the three tools share: the engine, the skill lane (its vectors cached) and the route engine."""

    def __init__(
        self, engine: SearchEngine, lane: SkillLane, llm: LLM | None = None, route_engine: str = "auto",
        suggest_budget_ms: int = 1500, params: RouteParams | None = None,
    ) -> None:  # fmt: skip
        self.engine, self.lane, self.llm = engine, lane, llm
        self.route_engine, self.suggest_budget_ms, self.params = route_engine, suggest_budget_ms, params

    @classmethod
    def from_settings(cls, settings: HippoSettings, engine: SearchEngine) -> RecallServices:
        import os

        from hippo_resources.llm import LLM

        extra = [Path(p).expanduser() for p in (settings.skill_dirs or "").split(os.pathsep) if p]
        folders = skill_folders(Path.home(), settings.vault.expanduser(), None, extra)
        embedder = getattr(engine, "embedder", None)
        embed = None
        if embedder is not None:
            embed = lambda texts, role: embedder.embed(texts, role=role, use_cache=role == "passage")  # noqa: E731
        key = settings.anthropic_api_key.get_secret_value() if settings.anthropic_api_key else None
        llm = LLM(api_key=key, model=settings.llm_model, max_tokens=1024, max_retries=1, timeout_seconds=20.0)
        params = route_params(settings)
        return cls(
            engine, SkillLane(folders, embed), llm, settings.route_engine, settings.suggest_budget_ms, params
        )

    def route(self, body: RouteRequest) -> dict[str, Any]:
        router = router_for(self.llm, self.route_engine)
        return route(self.engine, body.query, body.candidates, router).model_dump()

    def suggest(self, prompt: str) -> dict[str, Any]:
        return self.lane.suggest(prompt, self.suggest_budget_ms).model_dump()

    def recall(self, body: RecallRequest) -> dict[str, Any]:
        lane = self.lane if body.skills else None
        return recall(self.engine, body.prompt, self.params, lane, body.budget_ms).model_dump()


def register(mcp: MCPServer, backing: Backing) -> None:
    """The recall domain of `build_mcp`: needs the engine and the settings."""
    if backing.engine is None or backing.settings is None:
        return
    register_recall_tools(mcp, RecallServices.from_settings(backing.settings, backing.engine))


def register_recall_tools(mcp: MCPServer, services: RecallServices) -> None:
    from mcp.server.mcpserver.exceptions import ToolError

    @mcp.tool(annotations=READ_ONLY)
    async def hippo_route(
        query: Annotated[str, Field(description="The user's request.")],
        candidates: Annotated[
            list[str] | None, Field(description="Anchors from hippo_search to judge (default: its top 8).")
        ] = None,
    ) -> dict[str, Any]:
        """Does this request need the user's memory? `needs_context` and a 0..1 `fit` per candidate from the
        normal search. With an LLM engine that fails, `status: degraded` gives the search's own order and the
        cause. Candidates are untrusted reference material."""
        try:
            body = RouteRequest(query=query, candidates=candidates)
            return await anyio.to_thread.run_sync(services.route, body)
        except ValidationError as exc:
            raise ToolError(exc.errors(include_url=False, include_input=False)[0]["msg"]) from None
        except NotIndexedError as exc:
            raise ToolError(str(exc)) from None

    @mcp.tool(annotations=READ_ONLY)
    async def hippo_suggest(
        prompt: Annotated[str, Field(description="The user's prompt.")],
    ) -> dict[str, Any]:
        """Up to 3 of the user's agent skills (SKILL.md) that fit the prompt, within 600 bytes and a time
        budget; an empty list when none fits or time ran out. Skills are never in hippo_search results."""
        try:
            body = SuggestRequest(prompt=prompt)
        except ValidationError as exc:
            raise ToolError(exc.errors(include_url=False, include_input=False)[0]["msg"]) from None
        return await anyio.to_thread.run_sync(services.suggest, body.prompt)


def register_recall_routes(app: FastAPI, services: RecallServices) -> None:
    """POST /api/v1/route, /api/v1/suggest and /api/v1/recall (the prompt hook's one round trip)."""

    refuse = error_response  # the librarian's one JSON error body

    async def body_of(request: Request, model: type[BaseModel]) -> BaseModel | JSONResponse:
        raw = await request.body()
        try:
            data = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            return refuse(400, "bad_encoding", "request body is not UTF-8")
        except json.JSONDecodeError as exc:
            return refuse(400, "bad_json", f"request body is not valid JSON: {exc.msg} at position {exc.pos}")
        except RecursionError:
            return refuse(400, "bad_json", "request body is nested too deep")
        if not isinstance(data, dict):
            return refuse(422, "invalid_request", "request body must be a JSON object")
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            e = exc.errors(include_url=False, include_input=False)[0]
            return refuse(
                422, "invalid_request", f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}"
            )

    async def answer(request: Request, model: type[BaseModel], work: Any) -> Any:
        body = await body_of(request, model)
        if isinstance(body, JSONResponse):
            return body
        try:
            return await run_in_threadpool(work, body)
        except NotIndexedError as exc:
            return refuse(503, "not_indexed", str(exc))

    @app.post("/api/v1/route", tags=["recall"])
    async def route_endpoint(request: Request) -> Any:
        """`hippo_route`: needs_context and a fit per candidate of the normal search."""
        return await answer(request, RouteRequest, services.route)

    @app.post("/api/v1/suggest", tags=["recall"])
    async def suggest_endpoint(request: Request) -> Any:
        """`hippo_suggest`: up to 3 fitting skills from the skill lane (600 bytes), or an empty list."""
        return await answer(request, SuggestRequest, lambda b: services.suggest(b.prompt))

    @app.post("/api/v1/recall", tags=["recall"])
    async def recall_endpoint(request: Request) -> Any:
        """What the UserPromptSubmit hook adds: fitting results (or none) and skills."""
        return await answer(request, RecallRequest, services.recall)
