"""A changed table's check validates its new rows with Great Expectations and uniqueness over every row."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from expectations import suites
from hippo_assets import check_memo
from hippo_resources import ChunkStore


def table(n: int, **override: list) -> pl.DataFrame:
    rows = {
        "chunk_id": [f"c{i}" for i in range(n)],
        "anchor": [f"note-{i}.md" for i in range(n)],
        "lane": ["notes"] * n,
        "status": ["active"] * n,
        "trust": ["human_edit"] * n,
        "text_stripped": [f"text {i}" for i in range(n)],
    }
    return pl.DataFrame({**rows, **override})


def run(store: ChunkStore, frame: pl.DataFrame):
    return check_memo.check_new_rows(store, "chunks_are_valid", "chunks", frame, suites.chunk_suite())


def failed(result) -> set[str]:
    return {f["expectation"] for f in result.metadata["failures"].value}


def test_only_rows_not_validated_before_go_to_gx_and_uniqueness_covers_the_whole_table(
    tmp_path: Path,
) -> None:
    store = ChunkStore(root=str(tmp_path))
    first = run(store, table(50))
    assert first.passed and first.metadata["rows_validated"].value == 50

    edited = table(50).with_columns(
        pl.when(pl.col("chunk_id") == "c7")
        .then(pl.lit("edited"))
        .otherwise("text_stripped")
        .alias("text_stripped")
    )
    grown = pl.concat([edited, table(1, chunk_id=["c50"], anchor=["new.md"])])
    second = run(store, grown)
    assert second.passed
    assert (second.metadata["rows_validated"].value, second.metadata["rows_passed_before"].value) == (2, 49)

    # a new row whose id an unchanged row already has: GX sees only the new row, polars sees the table
    dup = run(store, pl.concat([grown, table(1, chunk_id=["c3"], text_stripped=["other"])]))
    assert not dup.passed and dup.metadata["rows_validated"].value == 1
    assert failed(dup) == {"expect_column_values_to_be_unique"}

    # a bad new row fails; the failure is not remembered, so the same table fails again
    bad = pl.concat([grown, table(1, chunk_id=["c99"], text_stripped=[""], lane=["nowhere"])])
    for _ in range(2):
        result = run(store, bad)
        assert not result.passed and result.metadata["rows_validated"].value == 1
        assert failed(result) == {
            "expect_column_value_lengths_to_be_between",
            "expect_column_values_to_be_in_set",
        }


def test_another_suite_or_schema_validates_every_row_again(tmp_path: Path) -> None:
    store = ChunkStore(root=str(tmp_path))
    assert run(store, table(20)).passed
    assert run(store, table(20)).metadata["rows_validated"].value == 0
    wider = table(20).with_columns(pl.lit("x").alias("extra"))
    assert run(store, wider).metadata["rows_validated"].value == 20
    assert len(list(tmp_path.glob(f"{check_memo.ROWS_PREFIX}chunks_are_valid.*.npy"))) == 1
