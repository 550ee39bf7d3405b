"""Governance vocabulary: the allowed values of `type`, `status` and `trust`."""

from __future__ import annotations

from typing import Literal

DocType = Literal["concept", "entity", "comparison", "query", "map", "source-summary", "conversation"]
Status = Literal["draft", "canonical", "needs-review", "archived", "reference", "raw-source"]
Trust = Literal["source", "human_edit", "llm_summary", "llm_context", "web_staging"]

DOC_TYPES: tuple[str, ...] = DocType.__args__  # type: ignore[attr-defined]
STATUSES: tuple[str, ...] = Status.__args__  # type: ignore[attr-defined]
TRUSTS: tuple[str, ...] = Trust.__args__  # type: ignore[attr-defined]
