"""Approval files: one `- [ ]` line per card that passed the gates, carrying the card's fingerprint.

A person ticks the box in Obsidian (or runs `hippo approve CARD`); promotion writes the outcome back
on the same line after ` — `, so a processed line is never acted on twice.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

from hippo_core.vault import frontmatter

_LINE = re.compile(
    r"^- \[(?P<box>[ xX])\] \[\[(?P<target>[^\]|]+)(?:\|(?P<label>[^\]]*))?\]\] · fp:(?P<fp>[0-9a-f]{12})"
    r"(?P<auto> · auto-approved)?(?P<rest>.*)$"
)
OUTCOME_SEP = " — "

# open: waiting for a tick; ticked: ticked, not yet acted on; answered: the outcome is on the line.
LineState = Literal["open", "ticked", "answered"]


class ApprovalLine(BaseModel):
    file: str
    line_no: int
    ticked: bool
    card: str  # vault path of the staging card
    title: str
    fingerprint: str
    auto: bool
    outcome: str | None

    @property
    def state(self) -> LineState:
        if self.outcome is not None:
            return "answered"
        return "ticked" if self.ticked else "open"


def render_line(card: str, title: str, fp: str, auto: bool = False) -> str:
    box = "x" if auto else " "
    label = title.replace("|", "/").replace("]", ")")
    return f"- [{box}] [[{card.removesuffix('.md')}|{label}]] · fp:{fp}" + (
        " · auto-approved" if auto else ""
    )


def new_file(date: str) -> str:
    fields = {"type": "map", "status": "reference", "trust": "human_edit", "title": f"Approvals {date}"}
    return frontmatter.render(
        fields,
        f"# Approvals {date}\n\n"
        "Tick a box to approve a card for promotion. If the card changes after it was proposed, the\n"
        "approval is rejected (its fingerprint no longer matches) and the reason is written on the line.\n\n",
    )


def parse(file: str, text: str) -> list[ApprovalLine]:
    out = []
    for i, raw in enumerate(text.splitlines()):
        m = _LINE.match(raw.rstrip())
        if not m:
            continue
        rest = m.group("rest")
        outcome = rest.split(OUTCOME_SEP, 1)[1].strip() if OUTCOME_SEP in rest else None
        target = m.group("target").strip()
        out.append(
            ApprovalLine(
                file=file,
                line_no=i,
                ticked=m.group("box") in "xX",
                card=target if target.endswith(".md") else f"{target}.md",
                title=(m.group("label") or target).strip(),
                fingerprint=m.group("fp"),
                auto=bool(m.group("auto")),
                outcome=outcome,
            )
        )
    return out


def set_outcome(text: str, line_no: int, outcome: str, link_to: str | None = None) -> str:
    """Write the outcome next to the box (line endings and every other line kept as they are); `link_to`
    points the line's link at the page the card became (the staging card is gone after promotion)."""
    lines = text.split("\n")
    line = lines[line_no].rstrip()
    m = _LINE.match(line)
    if link_to and m:
        start, end = m.span("target")
        line = line[:start] + link_to.removesuffix(".md") + line[end:]
    lines[line_no] = f"{line}{OUTCOME_SEP}{outcome}"
    return "\n".join(lines)


def tick(text: str, line_no: int) -> str:
    """Tick a box exactly as a person would in Obsidian: `- [ ]` becomes `- [x]`."""
    lines = text.split("\n")
    if not lines[line_no].startswith("- [ ]"):
        raise ValueError("that line is not an open checkbox")
    lines[line_no] = "- [x]" + lines[line_no][5:]
    return "\n".join(lines)
