"""The backup retention rule and export months, with dates."""

from __future__ import annotations

import datetime as dt

from hippo_core.backups import (
    export_months_to_prune,
    month_of,
    months_back,
    snapshot_name,
    snapshot_time,
    snapshots_to_keep,
)

UTC = dt.UTC


def at(day: str, hour: int = 4, minute: int = 0) -> dt.datetime:
    return dt.datetime.fromisoformat(day).replace(hour=hour, minute=minute, tzinfo=UTC)


def nightly(first: str, days: int) -> list[dt.datetime]:
    start = at(first)
    return [start + dt.timedelta(days=i) for i in range(days)]


def test_sixty_nightly_snapshots_keep_seven_days_and_four_weeks() -> None:
    taken = nightly("2026-10-01", 61)  # Thu 1 Oct … Mon 30 Nov 2026
    kept = sorted(snapshots_to_keep(taken))
    days = [t.date().isoformat() for t in kept]
    # the newest of the 4 most recent ISO weeks: Sun 15 Nov, Sun 22 Nov, Sun 29 Nov and Mon 30 Nov (week 49)
    # and the 7 most recent days 24–30 Nov
    assert days == [
        "2026-11-15",
        "2026-11-22",
        "2026-11-24",
        "2026-11-25",
        "2026-11-26",
        "2026-11-27",
        "2026-11-28",
        "2026-11-29",
        "2026-11-30",
    ]


def test_several_snapshots_a_day_keep_the_newest_of_each_day() -> None:
    taken = [at("2026-11-30", h) for h in (1, 4, 13, 22)] + [at("2026-11-29", h) for h in (4, 23)]
    assert snapshots_to_keep(taken, daily=7, weekly=0) == {at("2026-11-30", 22), at("2026-11-29", 23)}


def test_a_month_without_backups_does_not_prune_the_last_good_ones() -> None:
    old = nightly("2026-09-01", 20)  # then backups stopped for two months
    new = [at("2026-11-30")]
    kept = snapshots_to_keep(old + new)
    assert at("2026-11-30") in kept
    # the 6 newest of the old days are kept as "daily", not thrown away for being older than a week
    assert {at(f"2026-09-{d}") for d in range(15, 21)} <= kept
    assert len(kept) == 7 + 2  # + the newest of two earlier ISO weeks (Sun 6 Sep and Sun 13 Sep)


def test_snapshot_names_sort_in_time_and_round_trip() -> None:
    t = dt.datetime(2026, 12, 1, 4, 0, 7, tzinfo=UTC)
    assert snapshot_name(t) == "20261201T040007Z"
    assert snapshot_time(snapshot_name(t)) == t
    assert snapshot_name(t.astimezone(dt.timezone(dt.timedelta(hours=9)))) == "20261201T040007Z"
    assert snapshot_time("exports") is None and snapshot_time(".20261201T040007Z.partial") is None


def test_month_of_reads_epoch_seconds_and_iso_strings() -> None:
    assert month_of(dt.datetime(2026, 11, 30, 23, 59, tzinfo=UTC).timestamp()) == "2026-11"
    assert month_of("2026-12-01T00:00:01+00:00") == "2026-12"
    assert month_of("2026-12-01T08:00:00+09:00") == "2026-11"  # 23:00 UTC the day before


def test_export_months_are_kept_for_the_configured_number_of_months() -> None:
    now = at("2026-12-15")
    assert months_back(now, 0) == "2026-12" and months_back(now, 12) == "2025-12"
    assert months_back(now, 23) == "2025-01"
    months = ["2024-11", "2024-12", "2025-01", "2025-06", "2026-12"]
    assert export_months_to_prune(months, now, keep_months=24) == ["2024-11", "2024-12"]
    assert export_months_to_prune(months, now, keep_months=0) == []  # 0 keeps them forever
