"""`Reranker`: a cross-encoder behind an HTTP `/rerank` endpoint (TEI, vLLM and friends), off by default.

After fusion the librarian may send the query and its top N texts; the answer reorders those N. The
reranker is an outside system that can be slow or down, so it never fails a search: a timeout, an HTTP
error or a malformed answer returns the fused order with `status: degraded` and the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import httpx
from dagster import ConfigurableResource
from pydantic import BaseModel

from hippo_core.ranking.rerank import MalformedRerank, parse_scores
from hippo_core.safety.scrub import scrub


class RerankOutcome(BaseModel):
    """`scores` per document sent (None unless ok); `status` off / ok / degraded, with the reason."""

    status: Literal["off", "ok", "degraded"]
    scores: list[float] | None = None
    reason: str | None = None


class Reranker(ConfigurableResource):
    url: str | None = None  # the endpoint itself, e.g. http://tei:8080/rerank; None = stage off
    model: str | None = None  # sent when set (vLLM serves several)
    top_n: int = 20
    timeout_seconds: float = 5.0
    documents_field: Literal["documents", "texts"] = "documents"  # vLLM/Jina/Cohere vs TEI
    api_key: str | None = None

    @property
    def enabled(self) -> bool:
        return bool(self.url)

    def rerank(self, query: str, documents: Sequence[str]) -> RerankOutcome:
        """Relevance scores for `documents` (already cut to top N by the caller), or why there are none."""
        if not self.url:
            return RerankOutcome(status="off")
        if not documents:
            return RerankOutcome(status="ok", scores=[])
        body: dict[str, Any] = {"query": query, self.documents_field: list(documents)}
        if self.model:
            body["model"] = self.model
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            response = httpx.post(self.url, json=body, headers=headers, timeout=self.timeout_seconds)
        except httpx.TimeoutException:
            return _degraded(f"reranker timed out after {self.timeout_seconds:g} s")
        except httpx.HTTPError as exc:
            return _degraded(f"reranker unreachable: {type(exc).__name__}: {exc}")
        if response.status_code >= 400:
            return _degraded(f"reranker answered HTTP {response.status_code}")
        try:
            scores = parse_scores(response.json(), len(documents))
        except ValueError as exc:  # JSONDecodeError and MalformedRerank are both ValueErrors
            kind = "malformed answer" if isinstance(exc, MalformedRerank) else "answer is not JSON"
            return _degraded(f"reranker {kind}: {exc}")
        return RerankOutcome(status="ok", scores=scores)


def _degraded(reason: str) -> RerankOutcome:
    return RerankOutcome(status="degraded", reason=scrub(reason[:300]).text)
