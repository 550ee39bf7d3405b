"""Secret-shaped strings and stored prompt-injection patterns.

Public API (reused outside the compile loop, e.g. to scrub conversation logs):
`find_secrets(text)`, `redact_secrets(text)`, `find_injections(text)`, each over plain text.
Patterns err on the side of flagging: a false positive costs a human glance, a miss leaks a key.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

SECRET_PATTERNS: dict[str, re.Pattern[str]] = {
    "private_key": re.compile(r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----"),
    "anthropic_key": re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    "openai_key": re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_\-]{20,}"),
    "aws_access_key": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "github_token": re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"),
    "slack_token": re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),
    "google_api_key": re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"),
    "jwt": re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    "assigned_secret": re.compile(
        r"(?i)\b(?:password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)\b\s*[:=]\s*"
        r"['\"]?[^\s'\"]{8,}"
    ),
}

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
    found: list[Finding] = []
    for kind, pattern in patterns.items():
        for m in pattern.finditer(text):
            shown = m.group(0) if reveal else f"{m.group(0)[:4]}…({len(m.group(0))} chars)"
            found.append(Finding(kind=kind, start=m.start(), end=m.end(), excerpt=shown[:80]))
    return sorted(found, key=lambda f: (f.start, f.kind))


def find_secrets(text: str) -> list[Finding]:
    """Secret-shaped strings; the excerpt shows only the first characters, never the secret."""
    return _scan(text, SECRET_PATTERNS, reveal=False)


def find_injections(text: str) -> list[Finding]:
    """Stored prompt-injection patterns (English and Korean)."""
    return _scan(text, INJECTION_PATTERNS, reveal=True)


def redact_secrets(text: str, mask: str = "[REDACTED:{kind}]") -> str:
    """Replace every secret-shaped span with a marker naming its kind."""
    spans = find_secrets(text)
    out, pos = [], 0
    for f in spans:
        if f.start < pos:
            continue  # overlapping pattern (e.g. sk-ant- is also sk-): the first one wins
        out += [text[pos : f.start], mask.format(kind=f.kind)]
        pos = f.end
    out.append(text[pos:])
    return "".join(out)
