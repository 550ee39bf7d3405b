"""The librarian's request and response models: they are the search library's (`hippo_search.envelope`).

Here only what belongs to the HTTP face: FastAPI's own request errors as one line, and replies that
encode whatever the input held.
"""

from fastapi.exceptions import RequestValidationError

from hippo_search.envelope import (
    UNTRUSTED_NOTICE,
    BundleRequest,
    FeedbackRequest,
    Mode,
    SearchHit,
    SearchRequest,
    SearchResponse,
    Section,
    validation_message,
)

__all__ = [
    "UNTRUSTED_NOTICE",
    "BundleRequest",
    "FeedbackRequest",
    "Mode",
    "SearchHit",
    "SearchRequest",
    "SearchResponse",
    "Section",
    "printable",
    "request_error_message",
    "validation_message",
]


def printable(text: str) -> str:
    """`text` with lone surrogates replaced by `?`: a reply that echoes bad input must still encode."""
    return text.encode("utf-8", "replace").decode("utf-8")


def request_error_message(exc: RequestValidationError) -> str:
    """FastAPI's request errors (bodies and parameters it parsed) as `validation_message` words them,
    never echoing the input: a lone surrogate in a key or value cannot break the 422."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "body"
        parts.append(f"{loc}: {err['msg'].removeprefix('Value error, ')}")
    return printable("; ".join(parts))
