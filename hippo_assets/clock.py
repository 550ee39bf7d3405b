"""The clock the domains share: approval files and ledgers are named by the local day a person sees;
ledger lines carry UTC time."""

from __future__ import annotations

import datetime as dt


def today() -> str:
    return dt.date.today().isoformat()


def now() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
