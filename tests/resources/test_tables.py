"""A kept table comes from memory only while the very file it was read from or written to is on disk."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl

from hippo_resources.tables import read_table, row_hashes, write_table


def test_a_kept_table_is_served_from_memory_until_another_writer_replaces_it(tmp_path: Path) -> None:
    path = tmp_path / "chunks.parquet"
    mine = pl.DataFrame({"chunk_id": ["a", "b"], "text": ["one", "two"]})
    write_table(path, mine, keep=True)
    assert read_table(path, keep=True) is mine  # this process wrote it: not read back
    assert read_table(path, columns=["text"]).equals(mine.select("text"))

    # another process replaces the file (a `hippo run` beside the watcher): read from disk again
    theirs = pl.DataFrame({"chunk_id": ["c"], "text": ["three"]})
    code = (
        "import polars as pl, sys; from hippo_resources.tables import write_table; "
        "write_table(__import__('pathlib').Path(sys.argv[1]), pl.DataFrame({'chunk_id': ['c'], 'text': ['three']}))"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, cwd=Path(__file__).parents[2])
    again = read_table(path, keep=True)
    assert again.equals(theirs)
    assert read_table(path, keep=True) is again  # kept now


def test_an_in_place_rewrite_of_the_same_file_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "documents.parquet"
    write_table(path, pl.DataFrame({"path": ["a.md"]}), keep=True)
    pl.DataFrame({"path": ["a.md", "b.md"]}).write_parquet(path)  # same inode, other size and mtime
    assert read_table(path, keep=True)["path"].to_list() == ["a.md", "b.md"]


def test_row_hashes_are_equal_for_equal_rows_only() -> None:
    frame = pl.DataFrame({"a": ["x", "y", "x", None], "b": [["p"], ["p"], ["p"], None]})
    hashes = row_hashes(frame)
    assert hashes[0] == hashes[2] and len(set(hashes.tolist())) == 3
    assert (row_hashes(frame) == hashes).all()
