"""The limits of the work-memory and ghost tools. The lead folds these into the settings object; the
environment names they will have are in `ENV_NAMES`."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field

from hippo_core.ghost import DEFAULT_HALF_LIFE_DAYS
from hippo_core.work_memory import DEFAULT_RESUME_BUDGET


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


ENV_NAMES: dict[str, str] = {
    "resume_budget": "HIPPO_RESUME_BUDGET",
    "resume_sessions": "HIPPO_RESUME_SESSIONS",
    "checkpoint_max_bytes": "HIPPO_CHECKPOINT_MAX_BYTES",
    "worklog_max_bytes": "HIPPO_WORKLOG_MAX_BYTES",
    "handoff_max_bytes": "HIPPO_HANDOFF_MAX_BYTES",
    "memory_max_bytes": "HIPPO_MEMORY_MAX_BYTES",
    "sync_page": "HIPPO_SYNC_PAGE",
    "sync_page_max": "HIPPO_SYNC_PAGE_MAX",
    "unseen_max": "HIPPO_UNSEEN_MAX",
    "ghost_half_life_days": "HIPPO_GHOST_HALF_LIFE_DAYS",
    "ghost_results": "HIPPO_GHOST_RESULTS",
}


def limits_from_env(env: Mapping[str, str]) -> WorkLimits:
    """Until the settings object carries these: read the names above from an environment mapping."""
    return WorkLimits.model_validate({f: env[v] for f, v in ENV_NAMES.items() if env.get(v)})
