"""The interest profile (seed S4 §3): one snapshot a day of what the person and their agents searched,
wrote and asked about, and 7 / 30 / 90-day windows over the snapshots with what is heating and cooling.

Snapshots are counts per day (never pruned), so a window is a sum over days and is never recomputed from
raw logs. A term heats when its last-7-day daily rate is at least twice its rate over the 23 days before
(and it was seen at least twice this week); it cools when it was seen at least three times in those 23
days and not at all this week.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import date, timedelta

from pydantic import BaseModel, Field

WINDOWS = (7, 30, 90)
FACETS = ("subjects", "tags", "projects")
TOP_N = 10


class ProfileEvent(BaseModel):
    """One thing that happened on a day: a query, a new source, a checkpoint, a written note."""

    day: str
    kind: str
    subjects: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    projects: list[str] = Field(default_factory=list)


class Snapshot(BaseModel):
    day: str
    kinds: dict[str, int] = Field(default_factory=dict)
    subjects: dict[str, int] = Field(default_factory=dict)
    tags: dict[str, int] = Field(default_factory=dict)
    projects: dict[str, int] = Field(default_factory=dict)


class Window(BaseModel):
    days: int
    start: str
    end: str
    kinds: dict[str, int]
    subjects: list[tuple[str, int]]
    tags: list[tuple[str, int]]
    projects: list[tuple[str, int]]


class Trend(BaseModel):
    facet: str
    term: str
    last_7: int
    before: int  # the 23 days before the last 7


class Profile(BaseModel):
    today: str
    windows: list[Window]
    heating: list[Trend]
    cooling: list[Trend]


def snapshot(day: str, events: Iterable[ProfileEvent]) -> Snapshot:
    kinds: Counter[str] = Counter()
    facets: dict[str, Counter[str]] = {f: Counter() for f in FACETS}
    for e in events:
        if e.day != day:
            continue
        kinds[e.kind] += 1
        for facet in FACETS:
            facets[facet].update(dict.fromkeys(getattr(e, facet), 1))
    return Snapshot(day=day, kinds=dict(kinds), **{f: dict(facets[f]) for f in FACETS})


def _sum(snapshots: Sequence[Snapshot], start: date, end: date, facet: str) -> Counter[str]:
    total: Counter[str] = Counter()
    for s in snapshots:
        if start <= date.fromisoformat(s.day) <= end:
            total.update(getattr(s, facet))
    return total


def _top(counter: Counter[str], n: int) -> list[tuple[str, int]]:
    return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def profile(snapshots: Sequence[Snapshot], today: date, top_n: int = TOP_N) -> Profile:
    windows = []
    for days in WINDOWS:
        start = today - timedelta(days=days - 1)
        windows.append(
            Window(
                days=days,
                start=start.isoformat(),
                end=today.isoformat(),
                kinds=dict(_sum(snapshots, start, today, "kinds")),
                **{f: _top(_sum(snapshots, start, today, f), top_n) for f in FACETS},
            )
        )
    heating: list[Trend] = []
    cooling: list[Trend] = []
    week_start = today - timedelta(days=6)
    before_start, before_end = today - timedelta(days=29), today - timedelta(days=7)
    for facet in FACETS:
        recent = _sum(snapshots, week_start, today, facet)
        before = _sum(snapshots, before_start, before_end, facet)
        for term in sorted(set(recent) | set(before)):
            r, b = recent[term], before[term]
            if r >= 2 and r / 7 >= 2 * (b / 23):
                heating.append(Trend(facet=facet, term=term, last_7=r, before=b))
            elif r == 0 and b >= 3:
                cooling.append(Trend(facet=facet, term=term, last_7=r, before=b))
    heating.sort(key=lambda t: (-t.last_7, t.term))
    cooling.sort(key=lambda t: (-t.before, t.term))
    return Profile(today=today.isoformat(), windows=windows, heating=heating[:top_n], cooling=cooling[:top_n])


def daily_series(snapshots: Sequence[Snapshot], today: date, days: int = 90) -> list[tuple[str, int]]:
    """Events per day over the last `days` (zeros included), for the digest's chart."""
    by_day = {s.day: sum(s.kinds.values()) for s in snapshots}
    return [
        ((today - timedelta(days=i)).isoformat(), by_day.get((today - timedelta(days=i)).isoformat(), 0))
        for i in range(days - 1, -1, -1)
    ]
