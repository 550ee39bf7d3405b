"""REST face of the nightly dream: `GET /api/v1/profile` (the same answer as the MCP `hippo_profile`).
A window other than 7, 30 or 90 is a 422 in the librarian's error shape."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError

from hippo_settings import HippoSettings
from hippo_work.dream import ProfileRefused, Profiles, dream_store


def register_dream_routes(app: FastAPI, settings: HippoSettings) -> None:
    profiles = Profiles(dream_store(settings))

    @app.get("/api/v1/profile", tags=["dream"])
    async def get_profile(
        window: int | None = Query(default=None, description="7, 30 or 90 days; all three if omitted"),
    ) -> dict[str, Any]:
        """The interest profile the nightly dream keeps: 7 / 30 / 90-day windows, heating and cooling."""
        try:
            return await run_in_threadpool(profiles.profile, window)
        except ProfileRefused as exc:
            raise RequestValidationError(
                [{"loc": ("query", "window"), "msg": str(exc), "type": "value_error"}]
            ) from None
