"""The pure part of time in search: dates as sortable strings, `as_of` bounds, newest-first order."""

from __future__ import annotations

import datetime as dt

import pytest

from hippo_core.ranking.time import (
    about_the_past,
    as_of_bound,
    in_span,
    iso_time,
    newest_first,
    note_date,
    time_reference,
)


def test_dates_become_sortable_iso_strings() -> None:
    assert iso_time(dt.date(2024, 3, 1)) == "2024-03-01"
    assert iso_time("2024-03-01T09:30") == "2024-03-01T09:30:00"
    assert iso_time("2024-03-01T09:30:00+09:00") == "2024-03-01T00:30:00"  # to UTC
    assert iso_time("2024-03-01 09:30:00Z") == "2024-03-01T09:30:00"
    assert iso_time(dt.datetime(2024, 3, 1, 9, 30, 5, 123)) == "2024-03-01T09:30:05"
    for bad in (None, "", "soon", "2024-02-30", True, "12"):
        assert iso_time(bad) is None
    # a day sorts before every time of that day, and after the day before
    assert "2024-02-29T23:59:59" < "2024-03-01" < "2024-03-01T00:00:00"


def test_a_notes_date_is_date_then_created_then_its_file() -> None:
    assert note_date(dt.date(2024, 3, 1), "2023-01-01") == "2024-03-01"
    # `created:` on the same day as `date:` keeps its time: it orders two notes of one day
    assert note_date("2024-03-01", "2024-03-01T15:58") == "2024-03-01T15:58:00"
    assert note_date(None, "2023-01-01") == "2023-01-01"
    assert (
        note_date("not a date", None, dt.datetime(2022, 5, 5, 1, 2, 3, tzinfo=dt.UTC))
        == "2022-05-05T01:02:03"
    )
    assert note_date(None, None, None) is None


def test_as_of_a_day_means_its_last_second_and_nonsense_is_refused() -> None:
    assert as_of_bound("2024-03-01") == "2024-03-01T23:59:59"
    assert as_of_bound("2024-03-01T08:00") == "2024-03-01T08:00:00"
    assert "2024-03-01T15:58:00" <= as_of_bound("2024-03-01") < "2024-03-02"
    with pytest.raises(ValueError, match="as_of must be an ISO date"):
        as_of_bound("last tuesday")


def test_newer_moves_above_older_only_within_the_window() -> None:
    scores = [1.0, 0.9, 0.5]
    dates = ["2023-01-01", "2024-01-01", "2025-01-01"]
    assert newest_first(scores, dates, 1.01) == [0, 1, 2]  # off
    assert newest_first(scores, dates, 0.85) == [1, 0, 2]  # 0.9 ≥ 0.85·1.0; 0.5 passes nobody
    assert newest_first(scores, dates, 0.5) == [2, 1, 0]  # each within the window of the one above
    assert newest_first(scores, dates, 0.0) == [2, 1, 0]
    # an undated result neither moves nor is passed
    assert newest_first([1.0, 0.95, 0.9], ["2023-01-01", None, "2025-01-01"], 0.5) == [0, 1, 2]
    # an older result never climbs
    assert newest_first([1.0, 0.99], ["2025-01-01", "2023-01-01"], 0.0) == [0, 1]


def test_a_newer_result_passes_only_when_it_covers_the_question_about_as_well() -> None:
    scores, dates, sources = [1.0, 0.9, 0.8], ["2023-01-01", "2024-01-01", "2025-01-01"], ["a", "b", "c"]
    coverage = [1.0, 0.8, 0.25]  # the newest shares one of the question's four terms
    assert newest_first(scores, dates, 0.5, sources, coverage, 0.0) == [2, 1, 0]  # a score ratio alone
    # at share 0.5 the 2024 result (0.8 ≥ 0.5·1.0) passes, the 2025 one (0.25 < 0.5·0.8) stays last
    assert newest_first(scores, dates, 0.5, sources, coverage, 0.5) == [1, 0, 2]
    assert newest_first(scores, dates, 0.5, sources, coverage, 1.0) == [0, 1, 2]
    # the score window still applies to a result that covers as much
    assert newest_first([1.0, 0.3], dates[:2], 0.5, None, [0.5, 0.5], 0.5) == [0, 1]


def test_by_day_two_sources_of_one_day_keep_their_order() -> None:
    scores, sources = [1.0, 0.9, 0.8], ["a", "b", "c"]
    dates = ["2024-03-01T09:00:00", "2024-03-01T21:00:00", "2024-03-02"]
    assert newest_first(scores, dates, 0.5, sources) == [2, 1, 0]
    # by day the evening result is no newer than the morning one; the next day's passes both
    assert newest_first(scores, dates, 0.5, sources, by_day=True) == [2, 0, 1]
    # a day-only date and a time on that day are one day
    assert newest_first([1.0, 0.9], ["2024-03-01", "2024-03-01T08:00:00"], 0.5, by_day=True) == [0, 1]


def test_a_question_about_the_past_is_told_from_one_about_the_present() -> None:
    for past in (
        "How many days ago did I attend a networking event?",
        "Which came first, the move or the new job?",
        "What was my caffeine cutoff before the change?",
        "지난달에 읽은 책은?",
        "처음 산 자전거는 뭐였지?",
    ):
        assert about_the_past(past), past
    for present in (
        "What is my caffeine cutoff?",
        "How many bikes do I currently own?",
        "How many postcards have I added since I started collecting again?",
        "요즘 카페인 제한 시간은?",
        "Is the firstborn report due?",  # a word that only contains a cue is no cue
    ):
        assert not about_the_past(present), present


NOW = "2023-05-20T10:00:00"  # a Saturday


@pytest.mark.parametrize(
    ("question", "inside", "outside"),
    [
        # a point: the day it names ± half its unit and a day
        (
            "Which book did I finish a week ago?",
            ["2023-05-13", "2023-05-10T00:00:00"],
            ["2023-05-19", "2023-05-01"],
        ),
        ("What did I buy 10 days ago?", ["2023-05-10T12:00:00"], ["2023-05-13", "2023-05-07"]),
        ("I cooked something a couple of days ago", ["2023-05-18"], ["2023-05-15"]),
        (
            "What charity event did I join a month ago?",
            ["2023-04-20", "2023-04-05"],
            ["2023-05-15", "2023-03-01"],
        ),
        ("Who came to the concert last Saturday?", ["2023-05-13T20:00:00"], ["2023-05-20", "2023-05-06"]),
        ("Which bike did I fix the past weekend?", ["2023-05-14"], ["2023-05-08"]),
        ("what did I eat yesterday", ["2023-05-19T12:00:00"], ["2023-05-16"]),
        # a span: from its start to now
        ("the trips I took in the past three months", ["2023-03-01", "2023-05-19"], ["2023-02-10"]),
        ("sports events during the past month", ["2023-04-25"], ["2023-04-10"]),
        # Korean
        ("지난주에 본 영화는?", ["2023-05-13"], ["2023-05-01"]),
        ("3일 전에 산 것", ["2023-05-17"], ["2023-05-12"]),
        ("지난 토요일에 누구를 만났지?", ["2023-05-13"], ["2023-05-17"]),
        ("어제 먹은 것", ["2023-05-19"], ["2023-05-15"]),
        ("지난 2주 동안 읽은 책", ["2023-05-10"], ["2023-05-01"]),
    ],
)
def test_a_question_that_names_its_time_gets_that_span(
    question: str, inside: list[str], outside: list[str]
) -> None:
    span = time_reference(question, NOW)
    assert span is not None, question
    assert span[1] <= NOW  # never after the time the question is asked
    for date in inside:
        assert in_span(date, span), (question, date, span)
    for date in outside:
        assert not in_span(date, span), (question, date, span)


def test_a_question_that_asks_for_a_time_or_names_none_gets_no_span() -> None:
    for question in (
        "How many days ago did I meet Emma?",  # asks for the time, names none
        "What is my current highest score?",
        "the first three months of my collection",
        "Which came first, the move or the new job?",
        "몇 일 전에 만났지?",
    ):
        assert time_reference(question, NOW) is None, question
    assert time_reference("a week ago", "not a time") is None
    assert not in_span(None, ("2023-01-01", "2023-12-31"))  # an undated source is never in a span
    # relative to the time given: as of a past date the span moves with it
    assert time_reference("a week ago", "2023-01-08")[0].startswith("2022-12-")  # type: ignore[index]
