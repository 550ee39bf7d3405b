"""The dream's double gate: memory must have settled (time) and there must be enough new to look at.

Seed S4: "(now - last_dream_at) > 24h AND sessions_since >= 5"; run too early and noise is taken for signal.
The first dream of a vault counts everything as new.
"""

from __future__ import annotations

from pydantic import BaseModel


class GateDecision(BaseModel):
    run: bool
    reason: str
    hours_since_last: float | None
    changed: int


def decide(
    last_dream_at: float | None,
    now: float,
    changed: int,
    min_hours: float,
    min_changes: int,
    force: bool = False,
) -> GateDecision:
    """Run when both conditions hold, or when forced; the reason says which condition held or failed."""
    hours = None if last_dream_at is None else max(0.0, (now - last_dream_at) / 3600.0)
    if force:
        return GateDecision(run=True, reason="forced", hours_since_last=hours, changed=changed)
    if hours is not None and hours < min_hours:
        return GateDecision(
            run=False,
            reason=f"last dream {hours:.1f} h ago (needs >= {min_hours:g} h)",
            hours_since_last=hours,
            changed=changed,
        )
    if changed < min_changes:
        return GateDecision(
            run=False,
            reason=f"{changed} new or changed item(s) since the last dream (needs >= {min_changes})",
            hours_since_last=hours,
            changed=changed,
        )
    first = "first dream; " if hours is None else f"{hours:.1f} h since the last dream; "
    return GateDecision(
        run=True, reason=f"{first}{changed} new or changed item(s)", hours_since_last=hours, changed=changed
    )
