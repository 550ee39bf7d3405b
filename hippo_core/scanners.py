"""Secret-shaped strings and stored prompt-injection patterns.

Public API (reused outside the compile loop, e.g. to scrub conversation logs):
`find_secrets(text)`, `redact_secrets(text)`, `find_injections(text)`, each over plain text.
Patterns err on the side of flagging: a false positive costs a human glance, a miss leaks a key.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from hippo_core.scrub import SCRUB_PATTERNS, scrub

# One set of credential shapes for the whole project: the conversation scrubber's (hippo_core.scrub).
SECRET_PATTERNS: dict[str, re.Pattern[str]] = dict(SCRUB_PATTERNS)

INJECTION_PATTERNS: dict[str, re.Pattern[str]] = {
    "ignore_instructions": re.compile(
        r"(?i)\b(?:ignore|disregard|forget)\b[^.\n]{0,40}\b(?:previous|prior|above|earlier|all)\b[^.\n]{0,20}"
        r"\b(?:instructions?|prompts?|rules?)\b"
    ),
    "role_override": re.compile(r"(?i)\byou are now\b|\bact as (?:the )?(?:system|admin|developer)\b"),
    "system_prompt_probe": re.compile(r"(?i)\b(?:reveal|print|show|repeat)\b[^.\n]{0,30}\bsystem prompt\b"),
    "chat_markup": re.compile(r"<\|im_start\|>|<\|system\|>|\[/?INST\]|<</?SYS>>"),
    "ko_ignore_instructions": re.compile(
        r"(?:이전|위의|앞의|모든)\s*(?:지시|명령|지침)[^\n]{0,10}(?:무시|잊어)"
    ),
}


class Finding(BaseModel):
    kind: str
    start: int
    end: int
    excerpt: str


def _scan(text: str, patterns: dict[str, re.Pattern[str]], reveal: bool) -> list[Finding]:
    """Matches in pattern order; a span already claimed by an earlier (more specific) pattern is not reported twice."""
    found: list[Finding] = []
    for kind, pattern in patterns.items():
        for m in pattern.finditer(text):
            if any(f.start < m.end() and m.start() < f.end for f in found):
                continue
            shown = m.group(0) if reveal else f"{m.group(0)[:4]}…({len(m.group(0))} chars)"
            found.append(Finding(kind=kind, start=m.start(), end=m.end(), excerpt=shown[:80]))
    return sorted(found, key=lambda f: (f.start, f.kind))


def find_secrets(text: str) -> list[Finding]:
    """Secret-shaped strings; the excerpt shows only the first characters, never the secret."""
    return _scan(text, SECRET_PATTERNS, reveal=False)


def find_injections(text: str) -> list[Finding]:
    """Stored prompt-injection patterns (English and Korean)."""
    return _scan(text, INJECTION_PATTERNS, reveal=True)


def redact_secrets(text: str) -> str:
    """Replace every secret-shaped span with `[REDACTED:<kind>]` (the conversation scrubber's rules)."""
    return scrub(text).text
