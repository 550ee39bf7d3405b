"""What the nightly dream left for agents and people: the interest profile (`hippo_profile`), computed
from the dream store's daily snapshots, never from raw logs at question time."""

from __future__ import annotations

import datetime as dt
from typing import Any

from hippo_core.dream.profile import WINDOWS, profile
from hippo_resources.dream_store import DreamStore
from hippo_settings import HippoSettings
from hippo_work.wiring import _dsn


class ProfileRefused(ValueError):
    """The request names a window the profile does not keep."""


def dream_store(settings: HippoSettings) -> DreamStore:
    return DreamStore(path=str(settings.dream_store_path.expanduser().resolve()), pg_dsn=_dsn(settings))


class Profiles:
    def __init__(self, store: DreamStore) -> None:
        self.store = store

    def profile(self, window: int | None = None, today: dt.date | None = None) -> dict[str, Any]:
        """The 7 / 30 / 90-day windows (or one of them) with what is heating and cooling."""
        if window is not None and window not in WINDOWS:
            raise ProfileRefused(f"window must be one of {', '.join(map(str, WINDOWS))} (days), not {window}")
        today = today or dt.datetime.now(dt.UTC).date()
        snaps = self.store.snapshots((today - dt.timedelta(days=120)).isoformat())
        prof = profile(snaps, today)
        windows = [w.model_dump() for w in prof.windows if window is None or w.days == window]
        return {
            "kind": "hippocampus.profile",
            "today": prof.today,
            "snapshots": len(snaps),
            "note": "" if snaps else "no dream has taken a snapshot yet (hippo run --job dream_job --force)",
            "windows": windows,
            "heating": [t.model_dump() for t in prof.heating],
            "cooling": [t.model_dump() for t in prof.cooling],
        }
