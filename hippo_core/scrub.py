"""Credential scrubbing: secrets in agent logs are replaced by typed placeholders before anything is stored.

Best effort by design: the patterns catch the common, well-shaped credentials (vendor API key
prefixes, bearer tokens, JWTs, private key blocks, passwords inside URLs, `.env`-style assignments of
secret-looking names). A secret with no recognisable shape can still slip through, so exports should
be treated as sensitive even after scrubbing.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, Field

# Order matters: specific shapes first, so a GitHub token inside an assignment is reported as github.
SCRUB_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
            r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)"
        ),
    ),
    ("anthropic_key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")),
    ("openai_key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b")),
    (
        "aws_secret_key",
        re.compile(
            r"(?i)(?<![A-Za-z0-9])(aws_secret_access_key|aws_secret_key|secretaccesskey)"
            r"(\s*[:=]\s*[\"']?)[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])"
        ),
    ),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b")),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    ("slack_webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+")),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("google_oauth_token", re.compile(r"\bya29\.[0-9A-Za-z_\-]{20,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("bearer_token", re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9_\-\.=~+/]{16,}")),
    # scheme://user:password@host — keep the user and host, drop the password.
    (
        "url_password",
        re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@\"'<>]+:)(?!\[REDACTED)[^\s@/\"'<>]{1,256}(@)"),
    ),
    # key=value connection strings: Password=...; pwd=...
    ("connection_password", re.compile(r"(?i)(\b(?:password|pwd)\s*=\s*)(?!\[REDACTED)[^\s;\"'&]{3,}")),
    # .env-style assignments of secret-looking names: API_KEY=..., export DB_PASSWORD="...", "token": "..."
    (
        "env_secret",
        re.compile(
            r"(?im)(\b[A-Z0-9_\-]*(?:SECRET|PASSWORD|PASSWD|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?)"
            r"[A-Z0-9_\-]*[\"']?\s*[:=]\s*[\"']?)(?!\[REDACTED)([^\s\"'`,;]{6,})"
        ),
    ),
)

KINDS: tuple[str, ...] = tuple(kind for kind, _ in SCRUB_PATTERNS)


def placeholder(kind: str) -> str:
    return f"[REDACTED:{kind}]"


class ScrubResult(BaseModel):
    text: str
    counts: dict[str, int] = Field(default_factory=dict)


def _replacement(kind: str, pattern: re.Pattern[str]):  # noqa: ANN202
    groups = pattern.groups
    if kind == "url_password":
        return lambda m: f"{m.group(1)}{placeholder(kind)}{m.group(2)}"
    if kind in ("bearer_token", "connection_password"):
        return lambda m: f"{m.group(1)}{placeholder(kind)}"
    if kind == "aws_secret_key":
        return lambda m: f"{m.group(1)}{m.group(2)}{placeholder(kind)}"
    if kind == "env_secret":
        return lambda m: f"{m.group(1)}{placeholder(kind)}"
    assert groups == 0, kind
    return lambda m: placeholder(kind)


_COMPILED = tuple((kind, pattern, _replacement(kind, pattern)) for kind, pattern in SCRUB_PATTERNS)


def scrub(text: str) -> ScrubResult:
    """Replace every recognised credential with `[REDACTED:<kind>]`; count replacements per kind."""
    counts: Counter[str] = Counter()
    if not text:
        return ScrubResult(text=text or "")
    for kind, pattern, repl in _COMPILED:
        text, n = pattern.subn(repl, text)
        if n:
            counts[kind] += n
    return ScrubResult(text=text, counts=dict(counts))


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

    def merge(self, counts: dict[str, int]) -> None:
        self.counts.update(counts)

    def as_dict(self) -> dict[str, int]:
        return {k: self.counts[k] for k in KINDS if self.counts.get(k)}


def find_secrets(text: str) -> list[str]:
    """The kinds of credential present in `text` (for rejecting captures rather than redacting them)."""
    return sorted(kind for kind, pattern, _ in _COMPILED if pattern.search(text))


def scrub_all(values: Iterable[str]) -> tuple[list[str], dict[str, int]]:
    tally = ScrubTally()
    return [tally.text(v) or "" for v in values], tally.as_dict()
