"""REST face of the fact store: `GET /api/v1/facts` (the same answer as the MCP `hippo_facts`). Bad input is
a 422 in the librarian's error shape; an unreachable store a 503."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from hippo_resources.sql_access import StoreError
from hippo_settings import HippoSettings
from hippo_work.facts import Facts, FactsRefused, fact_store


def register_facts_routes(app: FastAPI, settings: HippoSettings) -> None:
    facts = Facts(fact_store(settings))

    @app.get("/api/v1/facts", tags=["facts"], response_model=None)
    async def get_facts(
        subject: str = Query(description="What the facts are about (an alias works)"),
        as_of: str | None = Query(default=None, description="YYYY-MM-DD, YYYY-MM or YYYY; omit for now"),
        include_history: bool = Query(default=False, description="every statement ever taken in"),
    ) -> dict[str, Any] | JSONResponse:
        """A subject's timeline with anchors: now, as of a date, or its whole history."""
        try:
            return await run_in_threadpool(facts.timeline, subject, as_of, include_history)
        except FactsRefused as exc:
            field = "as_of" if str(exc).startswith("as_of") else "subject"
            raise RequestValidationError(
                [{"loc": ("query", field), "msg": str(exc), "type": "value_error"}]
            ) from None
        except StoreError as exc:
            return JSONResponse(
                status_code=503, content={"error": {"code": "unavailable", "message": f"fact store: {exc}"}}
            )
