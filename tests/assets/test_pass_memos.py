"""The keys a run takes from the last run's memory are the keys it would compute."""

from __future__ import annotations

import polars as pl

from hippo_assets.index.assets import _document_keys, _text_keys_of, lexical_texts, text_keys
from hippo_core.vault.documents import document_key
from hippo_resources.tables import row_hashes


def chunk_frame(texts: list[str], aliases: list[list[str] | None]) -> pl.DataFrame:
    return pl.DataFrame(
        {"index_text": texts, "aliases": aliases, "chunk_id": [f"c{i}" for i in range(len(texts))]}
    )


def test_text_keys_after_an_edit_equal_the_keys_of_every_text() -> None:
    first = chunk_frame(["a b", "c d", "e f"], [["x"], None, []])
    assert (_text_keys_of(first, row_hashes(first)) == text_keys(lexical_texts(first))).all()
    for edited in (
        chunk_frame(["a b", "c d changed", "e f", "new"], [["x"], None, [], None]),
        chunk_frame(["a b", "c d", "e f"], [["x", "y"], None, []]),  # an alias alone changes the text
        chunk_frame([], []),
    ):
        assert (_text_keys_of(edited, row_hashes(edited)) == text_keys(lexical_texts(edited))).all()


def test_document_keys_after_an_edit_equal_document_key_of_every_row() -> None:
    docs = pl.DataFrame({"path": ["a.md", "b.md"], "body": ["one", "two"], "tags": [["t"], None]})
    assert _document_keys(docs, "salt") == [document_key(r, "salt") for r in docs.iter_rows(named=True)]
    edited = docs.with_columns(pl.Series("body", ["one", "two, edited"]))
    assert _document_keys(edited, "salt") == [document_key(r, "salt") for r in edited.iter_rows(named=True)]
    assert _document_keys(edited, "other") == [document_key(r, "other") for r in edited.iter_rows(named=True)]
