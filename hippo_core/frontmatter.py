"""The frontmatter contract: parse, validate and write YAML frontmatter.

A document that breaks the contract is reported and skipped by the caller; it never crashes a run.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hippo_core.governance import DocType, Status, Trust
from hippo_core.vault_layout import SOURCES, WIKI

FENCE = "---"


class FrontmatterError(ValueError):
    """The document's frontmatter cannot be read; the message says why, for a human."""


class Frontmatter(BaseModel):
    """The governed fields of a document. Unknown keys are kept (Obsidian users add their own)."""

    model_config = ConfigDict(extra="allow")

    type: DocType | None = None
    status: Status = "reference"
    trust: Trust = "human_edit"
    title: str | None = None
    created: str | None = None
    updated: str | None = None
    tags: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    aliases: list[str] = Field(default_factory=list)
    sector: str | None = None
    confidence: float | None = None
    contested: bool = False

    @field_validator("created", "updated", mode="before")
    @classmethod
    def _iso_date(cls, v: Any) -> Any:
        if isinstance(v, dt.datetime | dt.date):
            return v.isoformat()
        return v

    @field_validator("tags", "sources", "aliases", mode="before")
    @classmethod
    def _listify(cls, v: Any) -> Any:
        if v is None:
            return []
        if isinstance(v, str):
            return [v]
        if isinstance(v, list):
            return [str(x) for x in v if x is not None]
        return v

    @field_validator("title", "sector", mode="before")
    @classmethod
    def _stringify(cls, v: Any) -> Any:
        return None if v is None else str(v)

    @model_validator(mode="after")
    def _verified_names_who(self) -> Frontmatter:
        if self.status == "verified" and not str((self.model_extra or {}).get("verified_by") or "").strip():
            raise ValueError("status verified requires verified_by (who checked it against its sources)")
        return self


def defaults_for_path(path: str) -> dict[str, str]:
    """Defaults for a document that has no frontmatter, by where it lives."""
    if path.startswith(SOURCES + "/"):
        return {"status": "raw-source", "trust": "source"}
    if path.startswith(WIKI + "/"):
        return {"status": "draft", "trust": "human_edit"}
    return {"status": "reference", "trust": "human_edit"}


def split(text: str) -> tuple[str | None, str]:
    """Split a document into (raw YAML or None, body). Only a leading `---` line opens frontmatter."""
    if not text.startswith(FENCE):
        return None, text
    first_nl = text.find("\n")
    if first_nl == -1 or text[:first_nl].strip() != FENCE:
        return None, text
    pos = first_nl + 1
    while True:
        nl = text.find("\n", pos)
        line = text[pos:] if nl == -1 else text[pos:nl]
        if line.strip() in (FENCE, "..."):
            body = "" if nl == -1 else text[nl + 1 :]
            return text[first_nl + 1 : pos], body
        if nl == -1:
            raise FrontmatterError("frontmatter opened with '---' but never closed")
        pos = nl + 1


def parse_mapping(raw: str | None) -> dict[str, Any]:
    """Parse raw YAML frontmatter into a mapping, with a clear error for anything else."""
    if raw is None or not raw.strip():
        return {}
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FrontmatterError(f"invalid YAML in frontmatter{where}: {problem}") from None
    except ValueError as exc:  # e.g. an impossible date such as 2024-02-30
        raise FrontmatterError(f"invalid value in frontmatter: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontmatterError(f"frontmatter must be a mapping of keys, got {type(data).__name__}")
    return {str(k): v for k, v in data.items()}


def validate(data: dict[str, Any], path: str = "") -> Frontmatter:
    """Check fields against the contract. Blank properties (Obsidian writes `status:`) take the defaults."""
    present = {k: v for k, v in data.items() if v is not None}
    try:
        return Frontmatter.model_validate({**defaults_for_path(path), **present})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
            if err["loc"]
            else err["msg"].removeprefix("Value error, ")
            for err in exc.errors(include_url=False)
        )
        raise FrontmatterError(f"frontmatter breaks the contract: {problems}") from None


def parse(text: str, path: str = "") -> tuple[Frontmatter, str]:
    """Parse and validate a document's frontmatter. Returns (frontmatter, body)."""
    raw, body = split(text)
    return validate(parse_mapping(raw), path), body


def render(fields: dict[str, Any], body: str) -> str:
    """Write a document: YAML frontmatter (keys in the given order) then the body."""
    dumped = yaml.safe_dump(fields, allow_unicode=True, sort_keys=False, default_flow_style=False)
    if not body.startswith("\n"):
        body = "\n" + body
    return f"{FENCE}\n{dumped}{FENCE}\n{body}"
