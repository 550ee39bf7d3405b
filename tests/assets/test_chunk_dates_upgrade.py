"""A conversation chunk table written before chunks had a `date` still joins the chunk table: each
turn is dated by the time it was written (until memory_job writes the table again)."""

from __future__ import annotations

import polars as pl

from hippo_assets.index.assets import _with_date
from hippo_assets.index.tables import CHUNK_SCHEMA


def test_an_old_conversation_table_gets_its_turns_dates() -> None:
    old = {k: v for k, v in CHUNK_SCHEMA.items() if k != "date"}
    frame = pl.DataFrame(
        [{"chunk_id": "a", "updated": "2024-01-01T10:00:00+09:00"}, {"chunk_id": "b", "updated": None}],
        schema=old,
    )
    upgraded = _with_date(frame).select(list(CHUNK_SCHEMA))
    assert upgraded["date"].to_list() == ["2024-01-01T01:00:00", None]
    assert dict(upgraded.schema) == CHUNK_SCHEMA
    current = upgraded.with_columns(pl.lit("2025-05-05").alias("date"))
    assert _with_date(current)["date"].to_list() == ["2025-05-05", "2025-05-05"]  # a dated table is kept
