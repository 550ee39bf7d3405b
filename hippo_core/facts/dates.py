"""Dates with a precision: a statement may say "2024-03-10", "March 2024", "2024년 3월" or only "2024".

A date is stored as the first day it can mean (`2024-03-01` for March 2024) plus its precision, so the
store sorts and compares plain ISO strings; `span` gives the last day it can mean, and two dates are
ordered only when their spans do not overlap. Anything else is kept with precision `unknown` and the
reason (never dropped). Every pattern is anchored and has no nested repetition (linear time).
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from typing import Literal

from pydantic import BaseModel

Precision = Literal["day", "month", "year", "unknown"]

_MONTHS = {
    name: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}

_ISO = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ][0-9:.+\-Z]{0,40})?")
_YM = re.compile(r"(\d{4})-(\d{1,2})")
_Y = re.compile(r"(\d{4})")
_SEP = re.compile(r"(\d{4})[./](\d{1,2})[./](\d{1,2})\.?")
_SEP_YM = re.compile(r"(\d{4})[./](\d{1,2})\.?")
_KO = re.compile(r"(\d{4})\s?년(?:\s?(\d{1,2})\s?월)?(?:\s?(\d{1,2})\s?일)?(?:\s?경)?")
_EN_DMY = re.compile(r"(\d{1,2})\s([A-Za-z]{3,9})\.?,?\s(\d{4})")
_EN_MDY = re.compile(r"([A-Za-z]{3,9})\.?\s(\d{1,2})(?:st|nd|rd|th)?,?\s(\d{4})")
_EN_MY = re.compile(r"([A-Za-z]{3,9})\.?,?\s(\d{4})")


class DatePoint(BaseModel):
    """A date and how precise it is; `value` is None exactly when the precision is `unknown`."""

    value: str | None = None  # YYYY-MM-DD, the first day the date can mean
    precision: Precision = "unknown"
    reason: str | None = None  # why a given text could not be read as a date

    @property
    def known(self) -> bool:
        return self.value is not None

    def span(self) -> tuple[str, str] | None:
        """(first day, last day) the date can mean."""
        if self.value is None:
            return None
        d = dt.date.fromisoformat(self.value)
        if self.precision == "year":
            return self.value, f"{d.year:04d}-12-31"
        if self.precision == "month":
            last = calendar.monthrange(d.year, d.month)[1]
            return self.value, f"{d.year:04d}-{d.month:02d}-{last:02d}"
        return self.value, self.value

    def label(self) -> str:
        """As a person would write it at its precision."""
        if self.value is None:
            return "unknown date"
        return {"year": self.value[:4], "month": self.value[:7]}.get(self.precision, self.value)


UNKNOWN = DatePoint()


def _make(year: int, month: int | None, day: int | None, raw: str) -> DatePoint:
    try:
        d = dt.date(year, month or 1, day or 1)
    except ValueError as exc:
        return DatePoint(reason=f"{raw!r} is not a calendar date ({exc})")
    precision: Precision = "day" if day else ("month" if month else "year")
    return DatePoint(value=d.isoformat(), precision=precision)


def _month(name: str) -> int | None:
    return _MONTHS.get(name.casefold().rstrip("."))


def parse_date(value: object) -> DatePoint:
    """A date from frontmatter or a statement: a date object, ISO text, `2024/3/10`, `2024년 3월`,
    `March 2024`, `10 March 2024`, `March 10, 2024`, or a year. Otherwise precision `unknown` + reason."""
    if value is None or value == "":
        return UNKNOWN
    if isinstance(value, dt.datetime):
        return DatePoint(value=value.date().isoformat(), precision="day")
    if isinstance(value, dt.date):
        return DatePoint(value=value.isoformat(), precision="day")
    if isinstance(value, int) and 1000 <= value <= 9999:
        return _make(value, None, None, str(value))
    raw = str(value).strip()[:80]
    if m := _ISO.fullmatch(raw):
        return _make(int(m[1]), int(m[2]), int(m[3]), raw)
    if m := _SEP.fullmatch(raw):
        return _make(int(m[1]), int(m[2]), int(m[3]), raw)
    if m := _YM.fullmatch(raw) or _SEP_YM.fullmatch(raw):
        return _make(int(m[1]), int(m[2]), None, raw)
    if m := _Y.fullmatch(raw):
        return _make(int(m[1]), None, None, raw)
    if m := _KO.fullmatch(raw):
        return _make(int(m[1]), int(m[2]) if m[2] else None, int(m[3]) if m[2] and m[3] else None, raw)
    if (m := _EN_DMY.fullmatch(raw)) and _month(m[2]):
        return _make(int(m[3]), _month(m[2]), int(m[1]), raw)
    if (m := _EN_MDY.fullmatch(raw)) and _month(m[1]):
        return _make(int(m[3]), _month(m[1]), int(m[2]), raw)
    if (m := _EN_MY.fullmatch(raw)) and _month(m[1]):
        return _make(int(m[2]), _month(m[1]), None, raw)
    return DatePoint(reason=f"{raw!r} is not a date this reader knows (kept with precision unknown)")


def order(a: DatePoint, b: DatePoint) -> Literal["before", "after", "overlap", "unknown"]:
    """Whether `a` lies wholly before or after `b`; `overlap` when their spans share a day (2024-03 and
    2024-03-10), `unknown` when either date is unknown."""
    sa, sb = a.span(), b.span()
    if sa is None or sb is None:
        return "unknown"
    if sa[1] < sb[0]:
        return "before"
    if sa[0] > sb[1]:
        return "after"
    return "overlap"
