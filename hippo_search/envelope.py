"""Pipeline stages 1 and 5: the search request and the envelope an agent receives.

One set of models for REST, MCP and `hippo search --json`, so the three give the same envelope for the
same query (tests/search/test_envelope.py holds them to it). Light on purpose: no store is imported here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from hippo_core.ranking.time import as_of_bound
from hippo_core.safety.text_input import BadTextError, validate_path_prefix, validate_query
from hippo_core.safety.untrusted import UNTRUSTED_NOTICE
from hippo_core.vault.vault_layout import LANES

Mode = Literal["hybrid", "lexical", "semantic"]


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(description="What to look for, in Korean or English (at most 1024 bytes).")
    limit: int = Field(default=10, ge=1, le=50, description="How many sections to return.")
    lanes: list[str] | None = Field(default=None, description=f"Content lanes to search: {', '.join(LANES)}.")
    path_prefix: str | None = Field(default=None, description="Only documents under this vault folder.")
    mode: Mode = Field(default="hybrid", description="hybrid (default), lexical only or semantic only.")
    include_tool_output: bool = Field(
        default=True, description="Conversation lane: false leaves out tool calls and tool outputs."
    )
    include_navigation: bool = Field(
        default=False,
        description="true also returns the generated navigation pages (HOME.md, index.md, log.md, sector hubs).",
    )
    as_of: str | None = Field(
        default=None,
        description="Search as of this ISO date or date-time: sources dated after it are left out before "
        "ranking (a date means its whole day). Default: now.",
    )
    include_history: bool = Field(
        default=False,
        description="true keeps superseded and older versions in their relevance order (not demoted, not "
        "reordered newest first), each with its date, to read the whole chain.",
    )

    @field_validator("query")
    @classmethod
    def _query(cls, v: str) -> str:
        try:
            return validate_query(v)
        except BadTextError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("as_of")
    @classmethod
    def _as_of(cls, v: str | None) -> str | None:
        if v is None or not str(v).strip():
            return None
        return as_of_bound(v)

    @field_validator("lanes")
    @classmethod
    def _lanes(cls, v: list[str] | None) -> list[str] | None:
        if v is None:
            return None
        unknown = sorted(set(v) - set(LANES))
        if unknown:
            raise ValueError(f"unknown lane(s) {unknown}; choose from {list(LANES)}")
        if not v:
            raise ValueError(f"lanes must not be empty; choose from {list(LANES)} or leave it out")
        return v

    @field_validator("path_prefix")
    @classmethod
    def _prefix(cls, v: str | None) -> str | None:
        if v is None:
            return None
        try:
            return validate_path_prefix(v) or None
        except BadTextError as exc:
            raise ValueError(str(exc)) from None


class BundleRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(max_length=1024)
    k: int = Field(default=5, ge=1, le=20)


class FeedbackRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(max_length=1024)
    anchor: str = Field(max_length=2048)
    useful: bool


class SearchHit(BaseModel):
    anchor: str = Field(description="path#heading: the section that answers, linkable in Obsidian.")
    chunk_id: str = Field(description="The best-matching chunk inside the section.")
    path: str
    heading: str | None
    title: str
    snippet: str = Field(description="The part of the chunk where the query's terms are (… where cut).")
    score: float
    matched_by: list[str] = Field(description="Which retrieval lanes found it: lexical, semantic.")
    lane: str = Field(description="Content lane: wiki, sources, notes, conversations.")
    status: str
    trust: str
    sector: str | None
    updated: str | None
    lexical_rank: int | None = None
    semantic_rank: int | None = None
    semantic_similarity: float | None = None
    coverage: float = Field(default=0.0, description="Share of the query's terms found in this section.")
    conversation_id: str | None = Field(default=None, description="Conversation lane: the conversation.")
    project: str | None = Field(default=None, description="Conversation lane: the project it belongs to.")
    role: str | None = Field(default=None, description="Conversation lane: user, assistant, tool or segment.")
    date: str | None = Field(
        default=None,
        description="The source's event time (ISO): a note's `date:`, else `created:`, else its file's "
        "history; a conversation turn's time.",
    )
    stale: bool = Field(
        default=False, description="Every fact this section states was superseded: kept findable, demoted."
    )
    superseded_by: list[str] = Field(
        default_factory=list, description="With `stale`: the anchors holding the newer values."
    )
    weak: bool = Field(
        default=False,
        description="Found by the semantic lane alone, under the solo-match floor: listed after every other "
        "hit, and no answer for the gap radar (a question in one language about a note in another lands here).",
    )


class FailedBefore(BaseModel):
    """A remembered knowledge gap: how often the question went unanswered, and when last."""

    times_asked: int
    last_seen: str
    message: str = "This question failed before; the vault needs more material on it."


class SearchResponse(BaseModel):
    kind: Literal["hippocampus.search"] = "hippocampus.search"
    untrusted: bool = True
    notice: str = UNTRUSTED_NOTICE
    status: Literal["ok", "degraded", "empty"] = Field(
        default="ok",
        description="`empty`: no hit cleared the floor (weak hits may still be listed); `degraded`: a lane "
        "or the reranker failed, see degraded_reason.",
    )
    degraded_reason: str | None = None
    query: str
    mode: Mode = "hybrid"
    generation: str | None = None
    gap: Literal["zero-hit", "weak"] | None = Field(
        default=None,
        description="Set when the vault does not answer well: the miss is recorded as a knowledge gap.",
    )
    failed_before: FailedBefore | None = Field(
        default=None,
        description="Set when this question (its normalised form) got no good answer at least twice before: "
        "the vault needs more material on it (a gap is never filled with generated text).",
    )
    results: list[SearchHit] = Field(default_factory=list)


class Section(BaseModel):
    kind: Literal["hippocampus.document"] = "hippocampus.document"
    untrusted: bool = True
    notice: str = UNTRUSTED_NOTICE
    anchor: str
    path: str
    heading: str | None
    title: str
    status: str
    trust: str
    text: str


def validation_message(exc: ValidationError) -> str:
    """One readable line per problem, e.g. `lanes: unknown lane(s) ['x']; choose from [...]`."""
    parts = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "body"
        parts.append(f"{loc}: {err['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)
