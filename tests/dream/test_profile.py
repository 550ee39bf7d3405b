"""The 7 / 30 / 90-day profile against figures computed by hand from a small diary of events."""

from __future__ import annotations

from datetime import date, timedelta

from hippo_core.dream.profile import ProfileEvent, daily_series, profile, snapshot

TODAY = date(2026, 12, 7)


def day(n: int) -> str:
    """n days before today."""
    return (TODAY - timedelta(days=n)).isoformat()


EVENTS = [
    # this week: "dagster" three times (days 0, 1, 6), "kiwi" once (day 2), project payments twice
    ProfileEvent(day=day(0), kind="query", subjects=["dagster", "sensor"]),
    ProfileEvent(day=day(1), kind="query", subjects=["dagster"]),
    ProfileEvent(day=day(6), kind="note", subjects=["dagster"], tags=["data"]),
    ProfileEvent(day=day(2), kind="query", subjects=["kiwi"]),
    ProfileEvent(day=day(0), kind="checkpoint", projects=["payments"]),
    ProfileEvent(day=day(3), kind="checkpoint", projects=["payments"]),
    # days 7..29: "caffeine" four times, "dagster" once, "kiwi" twice
    ProfileEvent(day=day(8), kind="query", subjects=["caffeine"]),
    ProfileEvent(day=day(10), kind="query", subjects=["caffeine", "kiwi"]),
    ProfileEvent(day=day(15), kind="source", subjects=["caffeine"], tags=["health"]),
    ProfileEvent(day=day(29), kind="query", subjects=["caffeine", "dagster", "kiwi"]),
    # days 30..89: "sleep" twice; day 95 is outside every window
    ProfileEvent(day=day(45), kind="query", subjects=["sleep"]),
    ProfileEvent(day=day(89), kind="note", subjects=["sleep"], tags=["health"]),
    ProfileEvent(day=day(95), kind="query", subjects=["ancient"]),
]


def snapshots() -> list:
    days = sorted({e.day for e in EVENTS})
    return [snapshot(d, EVENTS) for d in days]


def test_a_snapshot_counts_one_day() -> None:
    s = snapshot(day(0), EVENTS)
    assert s.kinds == {"query": 1, "checkpoint": 1}
    assert s.subjects == {"dagster": 1, "sensor": 1}
    assert s.projects == {"payments": 1}


def test_windows_equal_the_hand_computed_counts() -> None:
    prof = profile(snapshots(), TODAY)
    w7, w30, w90 = prof.windows
    assert (w7.days, w7.start, w7.end) == (7, day(6), day(0))
    assert w7.subjects == [("dagster", 3), ("kiwi", 1), ("sensor", 1)]
    assert w7.projects == [("payments", 2)]
    assert w7.tags == [("data", 1)]
    assert w7.kinds == {"query": 3, "note": 1, "checkpoint": 2}
    assert w30.subjects == [("caffeine", 4), ("dagster", 4), ("kiwi", 3), ("sensor", 1)]
    assert w30.tags == [("data", 1), ("health", 1)]
    assert w90.subjects == [("caffeine", 4), ("dagster", 4), ("kiwi", 3), ("sleep", 2), ("sensor", 1)]
    assert w90.tags == [("health", 2), ("data", 1)]


def test_heating_and_cooling() -> None:
    prof = profile(snapshots(), TODAY)
    # dagster: 3 this week vs 1 in the 23 days before: 3/7 >= 2 * 1/23 -> heating.
    # kiwi: 1 this week (< 2) -> not heating. caffeine: 0 this week, 4 before -> cooling.
    assert [(t.facet, t.term, t.last_7, t.before) for t in prof.heating] == [
        ("subjects", "dagster", 3, 1),
        ("projects", "payments", 2, 0),
    ]
    assert [(t.facet, t.term, t.before) for t in prof.cooling] == [("subjects", "caffeine", 4)]


def test_daily_series_has_every_day() -> None:
    series = daily_series(snapshots(), TODAY)
    assert len(series) == 90 and series[-1] == (day(0), 2) and series[0] == (day(89), 1)
    assert sum(n for _, n in series) == len(EVENTS) - 1  # the event 95 days ago is outside
