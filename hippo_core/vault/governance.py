"""Governance vocabulary: the allowed values of `type`, `status` and `trust`."""

from __future__ import annotations

from typing import Literal

DocType = Literal["concept", "entity", "comparison", "query", "map", "source-summary", "conversation"]
Status = Literal["draft", "canonical", "verified", "needs-review", "archived", "reference", "raw-source"]
Trust = Literal["source", "human_edit", "llm_summary", "llm_context", "web_staging"]

DOC_TYPES: tuple[str, ...] = DocType.__args__  # type: ignore[attr-defined]
STATUSES: tuple[str, ...] = Status.__args__  # type: ignore[attr-defined]
TRUSTS: tuple[str, ...] = Trust.__args__  # type: ignore[attr-defined]

# Canonical knowledge: `verified` is a canonical page a person checked against its sources (`verified_by`
# names them). The pipeline never overwrites a verified page; a card for it becomes a proposal.
CANONICAL_STATUSES: tuple[str, ...] = ("canonical", "verified")
