"""Scoped bearer tokens: what a caller of the librarian may do (issue 22, item 8).

`HIPPO_TOKENS` lists tokens with a scope, separated by spaces, commas of projects inside an entry:

    <token>:<read|write>[:<project>,<project>…]

`read` offers the reading tools only (search, get, bundle, status, resume, sync, conversations, ghost
search); `write` everything. With projects, the token reaches only those projects' work memory: a call
that names another project, or that would read every project (the ghost audit, the conversation list
without a project), is refused. The single `HIPPO_MCP_TOKEN` stays a token with every right.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass

SCOPES = ("read", "write")
# Arguments (MCP) and query or body fields (REST) that name a project.
PROJECT_FIELDS = ("project", "current_project")
# Tools (and their REST routes, by the same names) that only read.
READ_TOOLS = frozenset({
    "hippo_search", "hippo_get", "hippo_bundle", "hippo_status", "hippo_resume", "hippo_sync",
    "hippo_list_recent_conversations", "hippo_get_conversation", "hippo_ghost_search",
    "hippo_route", "hippo_suggest", "hippo_profile", "hippo_facts",
})  # fmt: skip
# Calls that span every project unless they name one: a project-limited token must name one.
NEEDS_PROJECT = frozenset({"hippo_list_recent_conversations"})
# Calls that always span every project: never for a project-limited token.
ALL_PROJECTS = frozenset({"hippo_ghost_audit", "hippo_get_conversation"})


class TokenConfigError(ValueError):
    """HIPPO_TOKENS cannot be read; the message names the entry by position, never its token."""


@dataclass(frozen=True)
class Access:
    """What one caller may do: `read_only` and, when set, the only `projects` it reaches."""

    read_only: bool = False
    projects: frozenset[str] | None = None

    def offers(self, call: str) -> bool:
        """Whether the tool is listed for this token at all (a read-only token sees no write tool)."""
        if self.read_only and call not in READ_TOOLS:
            return False
        return not (self.projects is not None and call in ALL_PROJECTS)

    def refusal(self, call: str, args: Mapping[str, object]) -> str | None:
        """Why this token may not make `call` with `args` (None: it may)."""
        if self.read_only and call not in READ_TOOLS:
            return f"this token is read-only: {call} is not allowed"
        if self.projects is None:
            return None
        if call in ALL_PROJECTS:
            return f"this token is limited to projects {sorted(self.projects)}: {call} spans every project"
        named = [v for k in PROJECT_FIELDS if isinstance(v := args.get(k), str) and v]
        for project in named:
            if project not in self.projects:
                return f"this token is limited to projects {sorted(self.projects)}; {project!r} is not one"
        if not named and call in NEEDS_PROJECT:
            return f"this token is limited to projects {sorted(self.projects)}: name the project"
        return None


FULL = Access()


@dataclass(frozen=True)
class Token:
    secret: bytes
    access: Access


def parse_tokens(text: str | None) -> tuple[Token, ...]:
    """The entries of HIPPO_TOKENS; TokenConfigError names a bad entry by its position only."""
    out = []
    for n, entry in enumerate((text or "").split(), 1):
        secret, _, rest = entry.partition(":")
        scope, _, projects = rest.partition(":")
        if len(secret) < 16 or not secret.isascii() or not secret.isprintable():
            raise TokenConfigError(
                f"HIPPO_TOKENS entry {n}: the token must be 16 or more visible ASCII characters"
            )
        if scope not in SCOPES:
            raise TokenConfigError(f"HIPPO_TOKENS entry {n}: scope must be one of {', '.join(SCOPES)}")
        names = frozenset(p for p in projects.split(",") if p) if projects else None
        out.append(Token(secret.encode(), Access(read_only=scope == "read", projects=names)))
    return tuple(out)


def access_of(given: bytes, single: bytes | None, tokens: tuple[Token, ...]) -> Access | None:
    """The access of a presented bearer token, or None when it is no token of this librarian. Every
    token is compared (in constant time each), so timing does not tell which one matched."""
    found = None
    if single is not None and hmac.compare_digest(given, single):
        found = FULL
    for token in tokens:
        if hmac.compare_digest(given, token.secret) and found is None:
            found = token.access
    return found
