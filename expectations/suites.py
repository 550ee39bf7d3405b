"""Great Expectations suites for the derived stores. Each takes the table its check builds."""

from __future__ import annotations

from typing import Any

from hippo_core.vault.vault_layout import LANES

NORM_TOLERANCE = 1e-3


def chunk_suite() -> list[Any]:
    """Chunks: unique ids, an anchor, non-empty text, a lane from the vocabulary, governance values present.

    `status` and `trust` may hold a person's own value (`status: done`): kept as written, rank neutral.
    """
    import great_expectations.expectations as gxe  # heavy (seconds): imported when a check runs

    return [
        gxe.ExpectColumnValuesToNotBeNull(column="chunk_id"),
        gxe.ExpectColumnValuesToBeUnique(column="chunk_id"),
        gxe.ExpectColumnValuesToNotBeNull(column="anchor"),
        gxe.ExpectColumnValueLengthsToBeBetween(column="text_stripped", min_value=1),
        gxe.ExpectColumnValuesToBeInSet(column="lane", value_set=list(LANES)),
        gxe.ExpectColumnValuesToNotBeNull(column="status"),
        gxe.ExpectColumnValuesToNotBeNull(column="trust"),
    ]


def vector_suite(dim: int) -> list[Any]:
    """Chunks joined with stored vectors: exactly one vector per chunk, right dimension, unit norm, no orphans."""
    import great_expectations.expectations as gxe  # heavy (seconds): imported when a check runs

    return [
        gxe.ExpectColumnValuesToBeInSet(column="has_chunk", value_set=[True]),
        gxe.ExpectColumnValuesToBeBetween(column="vector_count", min_value=1, max_value=1),
        gxe.ExpectColumnValuesToBeBetween(column="dim", min_value=dim, max_value=dim),
        gxe.ExpectColumnValuesToBeBetween(
            column="norm", min_value=1 - NORM_TOLERANCE, max_value=1 + NORM_TOLERANCE
        ),
        gxe.ExpectColumnPairValuesToBeEqual(
            column_A="embed_hash", column_B="stored_embed_hash", ignore_row_if="either_value_is_missing"
        ),
    ]


def source_suite() -> list[Any]:
    """Source copies: the declared sha256 is present and equals the hash of the body on disk."""
    import great_expectations.expectations as gxe  # heavy (seconds): imported when a check runs

    return [
        gxe.ExpectColumnValuesToNotBeNull(column="declared_sha256"),
        gxe.ExpectColumnPairValuesToBeEqual(column_A="declared_sha256", column_B="actual_sha256"),
    ]
