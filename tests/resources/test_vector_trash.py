"""The trash keeps what this run trashed, even with a retention of 0 and a deletion time Chroma reads back a
hair earlier than it was written (it does not round-trip every float64)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hippo_resources import VectorStore


def test_what_this_run_trashed_survives_a_cutoff_equal_to_its_deletion_time(tmp_path: Path) -> None:
    vs = VectorStore(path=str(tmp_path / "chroma"))
    ids = [f"c{i}" for i in range(40)]
    vs.upsert(ids, np.eye(40, dtype=np.float32), [{"path": f"n{i}.md"} for i in range(40)])
    # times a fast machine produced, some of which Chroma returns rounded down (seen: ...3232527 → ...323253)
    when = 1796171556.3232527
    assert vs.move_to_trash(ids, deleted_at=when) == 40
    read_back = {float(m["deleted_at"]) for m in vs.trashed().values()}
    assert len(read_back) == 1
    assert vs.purge_trash(older_than=when, keep=set(ids)) == []  # this run's own deletions stay
    assert set(vs.trashed()) == set(ids)
    assert sorted(vs.purge_trash(older_than=when + 1.0)) == sorted(ids)  # a later run purges them
    assert vs.trashed() == {}
