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
) -> list[int]:
    """An order of the results (indexes into `scores`, which is best first) in which a newer result
    moves above an older one it scores within `window` of (its score ≥ window × the older's): when
    several sources answer the same question about the present, the newest comes first, and a result
    never passes one that answers clearly better, so the evidence stays where it was found. Undated
    results neither move nor are passed; with `sources` (each result's document), two results of one
    source keep their order: turns of one conversation are one thread, not versions of each other (on
    LoCoMo's "when did…" questions reordering them cost Hit@1). `window` > 1 turns it off; 0 sorts
    the dated ones by date."""
    order = list(range(len(scores)))
    if window > 1.0 or len(order) < 2:
        return order
    moved = True
    while moved:  # each swap removes one date inversion, so this ends (n² at worst; n is a page)
        moved = False
        for k in range(1, len(order)):
            upper, lower = order[k - 1], order[k]
            new, old = dates[lower], dates[upper]
            if new is None or old is None or new <= old:
                continue
            if sources is not None and sources[lower] == sources[upper]:
                continue
            if scores[lower] >= window * scores[upper]:
                order[k - 1], order[k] = lower, upper
                moved = True
    return order
