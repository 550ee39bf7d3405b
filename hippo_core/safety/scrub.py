"""Credential redaction: every span `find_secrets` reports becomes `[REDACTED:<kind>]` before anything is stored.

Detection lives in `hippo_core.safety.scanners` (one rule table, linear time, normalised text); this module
only replaces what it finds. Redaction happens in the original text, not in the normalised copy the
scanner reads: a finding's span is mapped back to the characters it came from, and only those are
replaced, so everything around a secret (full-width letters, emoji joined by U+200D, Korean in any
normal form) is stored exactly as written. Best effort, like the scanner: a secret with no recognisable
shape can slip through, so exports should still be treated as sensitive.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from hippo_core.safety.scanners import SECRET_KINDS, find_secrets

KINDS: tuple[str, ...] = SECRET_KINDS


def placeholder(kind: str) -> str:
    return f"[REDACTED:{kind}]"


class ScrubResult(BaseModel):
    text: str
    counts: dict[str, int] = Field(default_factory=dict)


def scrub(text: str) -> ScrubResult:
    """Replace every recognised credential with `[REDACTED:<kind>]`; count replacements per kind."""
    if not text:
        return ScrubResult(text=text or "")
    counts: Counter[str] = Counter()
    parts: list[str] = []
    pos = 0
    for f in find_secrets(text):
        start = max(f.start, pos)  # two findings may share one original character (a ligature)
        parts += [text[pos:start], placeholder(f.kind)]
        pos = max(pos, f.end)
        counts[f.kind] += 1
    parts.append(text[pos:])
    return ScrubResult(text="".join(parts), counts=dict(counts))


class ScrubTally:
    """Counts per kind over a whole run, for the run metadata."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def text(self, value: str | None) -> str | None:
        if value is None:
            return None
        result = scrub(value)
        self.counts.update(result.counts)
        return result.text

    def as_dict(self) -> dict[str, int]:
        return {k: self.counts[k] for k in KINDS if self.counts.get(k)}


def scrub_value(value: Any, tally: ScrubTally | None = None) -> Any:
    """A JSON-like value with every string scrubbed: dict keys and values, list and tuple items, at any depth.

    Tuples come back as lists; numbers, booleans and None unchanged. Walks with an explicit stack, so a
    deeply nested value cannot overflow Python's recursion limit. Counts go to `tally` when given.
    """
    tally = tally or ScrubTally()

    def one(item: Any) -> Any:
        if isinstance(item, str):
            return tally.text(item)
        if isinstance(item, dict):
            copy: dict[Any, Any] = {}
            stack.append((item, copy))
            return copy
        if isinstance(item, list | tuple):
            items: list[Any] = []
            stack.append((item, items))
            return items
        return item

    stack: list[tuple[Any, Any]] = []
    root = one(value)
    while stack:
        source, target = stack.pop()
        if isinstance(source, dict):
            for key, item in source.items():
                target[one(key) if isinstance(key, str) else key] = one(item)
        else:
            target.extend(one(item) for item in source)
    return root
