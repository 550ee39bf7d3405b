"""The limits of the work-memory and ghost tools. The ones a person may want to change are settings
(`HIPPO_RESUME_BUDGET`, `HIPPO_GHOST_HALF_LIFE_DAYS` in `HippoSettings`); the rest are protocol limits."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from hippo_core.agents.ghost import DEFAULT_HALF_LIFE_DAYS
from hippo_core.agents.work_memory import DEFAULT_RESUME_BUDGET

if TYPE_CHECKING:
    from hippo_settings import HippoSettings


class WorkLimits(BaseModel):
    resume_budget: int = Field(default=DEFAULT_RESUME_BUDGET, ge=1024, le=256 * 1024)
    resume_sessions: int = Field(default=40, ge=1, le=1000, description="Other sessions resume looks at.")
    checkpoint_max_bytes: int = Field(default=8 * 1024, ge=256, le=1024 * 1024)
    worklog_max_bytes: int = Field(default=2 * 1024, ge=128, le=64 * 1024)
    handoff_max_bytes: int = Field(default=16 * 1024, ge=256, le=1024 * 1024)
    memory_max_bytes: int = Field(default=16 * 1024, ge=256, le=1024 * 1024)
    sync_page: int = Field(default=100, ge=1, le=1000)
    sync_page_max: int = Field(default=500, ge=1, le=5000)
    unseen_max: int = Field(default=50, ge=1, le=1000)
    ghost_half_life_days: float = Field(default=DEFAULT_HALF_LIFE_DAYS, gt=0, le=36500)
    ghost_results: int = Field(default=5, ge=1, le=50)


def limits_from_settings(settings: HippoSettings) -> WorkLimits:
    return WorkLimits(
        resume_budget=settings.resume_budget, ghost_half_life_days=settings.ghost_half_life_days
    )
