"""Render `30-reviews/gap-queue.md` from the ledger's gaps (pure: same gaps → same bytes)."""

from __future__ import annotations

import datetime as dt
from typing import Any

REPEATED = 3


def _day(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d")


def render_gap_queue(gaps: list[dict[str, Any]]) -> str:
    open_gaps = [g for g in gaps if g["status"] == "open"]
    answered = [g for g in gaps if g["status"] == "answered"]
    lines = [
        "---",
        "type: map",
        "status: reference",
        "trust: llm_context",
        "title: Gap queue",
        "---",
        "",
        "# Gap queue",
        "",
        "Questions the vault could not answer well (zero hits or weak evidence), most asked first.",
        f"Asked {REPEATED}+ times: ⚠ repeated miss. Written by the `gap_report` asset; edits are overwritten.",
        "",
        f"## Open ({len(open_gaps)})",
        "",
    ]
    if open_gaps:
        lines += [
            "| query | kind | asked | first seen | last seen | nearest partial hits |",
            "|---|---|---|---|---|---|",
        ]
        for g in open_gaps:
            flag = "⚠ " if g["times_asked"] >= REPEATED else ""
            nearest = ", ".join(f"[[{a}]]" for a in g["nearest"][:3]) or "—"
            query = g["query"].replace("|", "\\|")
            lines.append(
                f"| {flag}{query} | {g['kind']} | {g['times_asked']} | {_day(g['first_seen'])} | "
                f"{_day(g['last_seen'])} | {nearest} |"
            )
    else:
        lines.append("Nothing open.")
    lines += ["", f"## Answered ({len(answered)})", ""]
    for g in answered:
        lines.append(f"- {g['query']} → [[{g['answered_by']}]] ({_day(g['answered_at'])})")
    return "\n".join(lines) + "\n"
