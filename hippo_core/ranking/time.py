"""Time in search, the pure part: a source's date (its event time), `as_of` bounds and newest-first order.

A date is kept as an ISO string, `YYYY-MM-DD` when only the day is known, else `YYYY-MM-DDTHH:MM:SS`
(UTC, no offset), so that plain string comparison orders them: a day sorts before any time on that
day, and an `as_of` given as a day means the end of that day (`as_of_bound`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import Any

DAY_END = "T23:59:59"

# Words that put a question in the past or between two times ("how many days ago", "which came first",
# "지난달", "처음"): newest first would bury the older evidence such a question needs. Written from the two
# languages' grammar of time reference, not from a benchmark's questions; plain alternations (linear).
_PAST = re.compile(
    r"\b(?:ago|first|earliest|earlier|before|after|between|passed|previous|previously|originally|"
    r"used to|back then|yesterday|last (?:week|month|year|time)|when did|when was|when were|how long)\b"
    r"|전에|이전|처음|먼저|언제|지난|예전|원래|사이에|어제",
    re.IGNORECASE,
)


def iso_time(value: Any) -> str | None:
    """`value` (a date, a datetime or an ISO string, e.g. a frontmatter `date:`) as a sortable ISO string;
    None for anything that is not a date (an unparseable date is no date, not an error)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, dt.datetime):
        return _datetime(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    text = str(value).strip()
    if not text:
        return None
    if len(text) == 10:
        try:
            return dt.date.fromisoformat(text).isoformat()
        except ValueError:
            return None
    try:
        return _datetime(dt.datetime.fromisoformat(text.replace(" ", "T", 1)))
    except ValueError:
        return None


def _datetime(value: dt.datetime) -> str:
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value.replace(microsecond=0).isoformat()


def note_date(date: Any, created: Any, file_time: Any = None) -> str | None:
    """A note's event time: its `date:` frontmatter, else `created:`, else the file's history
    (`file_time`: the time git or the file system gives). When `date:` names a day and `created:` a
    time on that same day, the time is kept: it orders two notes of one day."""
    day = iso_time(date)
    made = iso_time(created)
    if day is not None:
        if made is not None and len(day) == 10 and made.startswith(day + "T"):
            return made
        return day
    return made if made is not None else iso_time(file_time)


def about_the_past(query: str) -> bool:
    """Whether a question refers to a past time or an order of events (then newest first is wrong)."""
    return _PAST.search(query) is not None


def as_of_bound(as_of: Any) -> str:
    """The latest event time visible `as_of` (a date means its last second). Raises ValueError on a
    value that is not a date, so a request with one is refused with the reason."""
    bound = iso_time(as_of)
    if bound is None:
        raise ValueError(f"as_of must be an ISO date or date-time, not {str(as_of)[:40]!r}")
    return bound + DAY_END if len(bound) == 10 else bound


def newest_first(
    scores: Sequence[float],
    dates: Sequence[str | None],
    window: float,
    sources: Sequence[str] | None = None,
    coverage: Sequence[float] | None = None,
    share: float = 0.0,
    by_day: bool = False,
) -> list[int]:
    """An order of the results (indexes into `scores`, which is best first) in which a newer result
    moves above an older one it scores within `window` of (its score ≥ window × the older's): when
    several sources answer the same question about the present, the newest comes first, and a result
    never passes one that answers clearly better, so the evidence stays where it was found. Undated
    results neither move nor are passed; with `sources` (each result's document), two results of one
    source keep their order: turns of one conversation are one thread, not versions of each other (on
    LoCoMo's "when did…" questions reordering them cost Hit@1). With `coverage` (each result's share of
    the question's terms), a newer result passes an older one only when it covers at least `share` × the
    older one's terms: another version of the same answer uses the question's words about as well, a newer
    text that merely shares a few of them does not (a score ratio alone let such a session jump to first
    place). With `by_day`, only a result of a later day is newer: two sources of one day keep their order,
    as two notes dated by the day alone (`date: 2024-03-01`) always did. `window` > 1 turns it off; 0
    sorts the dated ones by date."""
    order = list(range(len(scores)))
    if window > 1.0 or len(order) < 2:
        return order
    moved = True
    while moved:  # each swap removes one date inversion, so this ends (n² at worst; n is a page)
        moved = False
        for k in range(1, len(order)):
            upper, lower = order[k - 1], order[k]
            new, old = dates[lower], dates[upper]
            if new is None or old is None or new <= old or (by_day and new[:10] <= old[:10]):
                continue
            if sources is not None and sources[lower] == sources[upper]:
                continue
            if coverage is not None and coverage[lower] < share * coverage[upper] - 1e-9:
                continue
            if scores[lower] >= window * scores[upper]:
                order[k - 1], order[k] = lower, upper
                moved = True
    return order


# A question that names when something happened relative to the time it is asked ("a week ago", "10 days
# ago", "last Saturday", "in the past month", "지난주", "3일 전"): its answer was written around then, so
# sources dated there are the evidence, whatever their rank by words alone. Written from the grammar of
# relative time in both languages (a number or number word and a unit; `last`/`past`/`지난` and a unit or a
# weekday), not from a benchmark's questions; plain alternations (linear). "How many days ago…" names no
# time (it asks for one) and is no reference.
_EN_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "a couple of": 2, "a couple": 2, "couple of": 2, "two": 2, "a few": 3,
    "three": 3, "few": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "several": 4,
}  # fmt: skip
_KO_NUMBERS = {"한": 1, "하루": 1, "두": 2, "이틀": 2, "세": 3, "사흘": 3, "네": 4, "나흘": 4, "다섯": 5, "여섯": 6,
               "일곱": 7, "여덟": 8, "아홉": 9, "열": 10}  # fmt: skip
_UNIT_DAYS = {
    "day": 1.0, "week": 7.0, "month": 30.44, "year": 365.25, "weekend": 7.0,
    "일": 1.0, "주": 7.0, "주일": 7.0, "달": 30.44, "개월": 30.44, "년": 365.25,
}  # fmt: skip
_WEEKDAYS = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6,
    "월": 0, "화": 1, "수": 2, "목": 3, "금": 4, "토": 5, "일": 6,
}  # fmt: skip
_EN_NUM = r"(\d{1,3}|a couple of|a couple|couple of|a few|an|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|few|several)"
_EN_UNIT = r"(day|week|month|year)s?"
_REF_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ago", re.compile(rf"\b{_EN_NUM}\s+{_EN_UNIT}\s+(?:ago|back|before today)\b", re.IGNORECASE)),
    ("range", re.compile(rf"\b(?:past|last|previous)\s+{_EN_NUM}\s+{_EN_UNIT}\b", re.IGNORECASE)),
    ("range1", re.compile(r"\b(?:the|this) (?:past|last)\s+(day|week|month|year)\b", re.IGNORECASE)),
    ("weekend", re.compile(r"\b(?:the |this )?(?:past|last) weekend\b", re.IGNORECASE)),
    (
        "weekday",
        re.compile(
            r"\b(?:last|this past|past)\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
            re.IGNORECASE,
        ),
    ),
    ("point1", re.compile(r"\blast\s+(week|month|year)\b", re.IGNORECASE)),
    ("yesterday", re.compile(r"\b(?:the day before )?yesterday\b", re.IGNORECASE)),
    (
        "ko_ago",
        re.compile(
            r"(\d{1,3}|한|하루|두|이틀|세|사흘|네|나흘|다섯|여섯|일곱|여덟|아홉|열)\s*(개월|주일|일|주|달|년)\s*(?:전|쯤 전)"
        ),
    ),
    (
        "ko_range",
        re.compile(
            r"(?:지난|최근)\s*(\d{1,3}|한|두|세|네|다섯|여섯|일곱|여덟|아홉|열)\s*(개월|주일|일|주|달|년)"
        ),
    ),
    ("ko_weekday", re.compile(r"지난\s*(?:주\s*)?([월화수목금토일])요일")),
    ("ko_point1", re.compile(r"지난\s*(주|달)|(작년)|(그저께|그제|어제)")),
)


def time_reference(query: str, now: str) -> tuple[str, str] | None:
    """The span of time a question names relative to `now` (its ISO time: when it is asked, or `as_of`), as
    (start, end) ISO strings, or None when it names none. A point ("a week ago") becomes the point ± half
    its unit and a day (people round: "a month ago" is any day that month); a span ("in the past three
    months") runs from its start to `now`. The first reference in the question wins."""
    moment = iso_time(now)
    if moment is None:
        return None
    end = dt.datetime.fromisoformat(moment if "T" in moment else moment + DAY_END)
    best: tuple[int, tuple[dt.datetime, dt.datetime]] | None = None
    for kind, pattern in _REF_PATTERNS:
        m = pattern.search(query)
        if m is None or (best is not None and m.start() >= best[0]):
            continue
        span = _span(kind, m, end)
        if span is not None:
            best = (m.start(), span)
    if best is None:
        return None
    start, stop = best[1]
    return _datetime(start), _datetime(min(stop, end))


def _count(word: str) -> int:
    word = word.lower()
    if word.isdigit():
        return int(word)
    return _EN_NUMBERS.get(word) or _KO_NUMBERS.get(word, 1)


def _point(end: dt.datetime, days: float, unit: float) -> tuple[dt.datetime, dt.datetime]:
    slack = dt.timedelta(days=unit / 2 + 1)
    centre = end - dt.timedelta(days=days)
    return centre - slack, centre + slack


def _last_weekday(end: dt.datetime, weekday: int) -> tuple[dt.datetime, dt.datetime]:
    back = (end.weekday() - weekday) % 7 or 7  # "last Saturday" said on a Saturday is a week before
    day = (end - dt.timedelta(days=back)).replace(hour=0, minute=0, second=0)
    return day - dt.timedelta(days=1), day + dt.timedelta(days=2)


def _span(kind: str, m: re.Match[str], end: dt.datetime) -> tuple[dt.datetime, dt.datetime] | None:
    if kind in ("ago", "ko_ago"):
        n, unit = _count(m.group(1)), _UNIT_DAYS[m.group(2).lower()]
        return _point(end, n * unit, unit)
    if kind in ("range", "ko_range"):
        n, unit = _count(m.group(1)), _UNIT_DAYS[m.group(2).lower()]
        return end - dt.timedelta(days=n * unit + 1), end
    if kind == "range1":
        return end - dt.timedelta(days=_UNIT_DAYS[m.group(1).lower()] + 1), end
    if kind == "weekend":
        saturday = _last_weekday(end, 5)[0] + dt.timedelta(days=1)
        return saturday - dt.timedelta(days=1), saturday + dt.timedelta(days=3)
    if kind in ("weekday", "ko_weekday"):
        return _last_weekday(end, _WEEKDAYS[m.group(1).lower()])
    if kind == "point1":
        unit = _UNIT_DAYS[m.group(1).lower()]
        return _point(end, unit, unit)
    if kind == "yesterday":
        days = 2 if m.group(0).lower().startswith("the day before") else 1
        return _point(end, days, 1)
    if kind == "ko_point1":
        if m.group(3):
            return _point(end, 1 if m.group(3) == "어제" else 2, 1)
        unit = _UNIT_DAYS["년" if m.group(2) else m.group(1)]
        return _point(end, unit, unit)
    return None


def in_span(date: str | None, span: tuple[str, str] | None) -> bool:
    """Whether a source's date falls in a referenced span (an undated source never does)."""
    return span is not None and date is not None and span[0] <= date <= span[1]
