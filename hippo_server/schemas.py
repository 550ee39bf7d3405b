"""The librarian's request and response models: they are the search library's (`hippo_search.envelope`)."""

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
    "validation_message",
]
