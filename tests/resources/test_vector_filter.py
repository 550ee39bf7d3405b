"""`VectorStore.nearest` (over-fetch, filter in memory) returns what Chroma's metadata filter returns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hippo_resources import VectorStore

N, DIM = 800, 16


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[VectorStore, dict[str, dict[str, str]]]:
    rng = np.random.default_rng(42)
    vs = VectorStore(path=str(Path(tmp_path_factory.mktemp("chroma"))))
    ids = [f"c{i:04d}" for i in range(N)]
    vectors = rng.normal(size=(N, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    statuses = rng.choice(["canonical", "draft", "archived"], size=N, p=[0.5, 0.2, 0.3])
    lanes = rng.choice(["wiki", "sources", "conversations"], size=N, p=[0.6, 0.35, 0.05])
    metas = [{"status": str(s), "lane": str(lane)} for s, lane in zip(statuses, lanes, strict=True)]
    vs.upsert(ids, vectors, metas)
    return vs, dict(zip(ids, metas, strict=True))


def queries(n: int) -> np.ndarray:
    q = np.random.default_rng(7).normal(size=(n, DIM)).astype(np.float32)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def test_archived_excluded_in_memory_equals_chromas_filter(store) -> None:  # noqa: ANN001
    vs, meta = store
    col = vs.collection()
    keep = lambda cid: meta[cid]["status"] != "archived"  # noqa: E731
    where = {"status": {"$nin": ["archived"]}}
    allowed = sum(keep(c) for c in meta)
    for q in queries(40):
        slow = vs.query(q, 20, where=where, collection=col)
        fast = vs.nearest(q, 20, keep, where=where, total=N, allowed=allowed, collection=col)
        assert [c for c, _ in fast] == [c for c, _ in slow]
        assert all(meta[c]["status"] != "archived" for c, _ in fast) and len(fast) == 20
        np.testing.assert_allclose([s for _, s in fast], [s for _, s in slow], rtol=1e-5)


def test_a_narrow_filter_widens_or_falls_back_and_still_agrees(store) -> None:  # noqa: ANN001
    vs, meta = store
    col = vs.collection()
    keep = lambda cid: meta[cid]["lane"] == "conversations"  # noqa: E731
    where = {"lane": {"$in": ["conversations"]}}
    allowed = sum(keep(c) for c in meta)
    assert 0 < allowed < N // 8
    for q in queries(10):
        slow = vs.query(q, 10, where=where, collection=col)
        # without the share hint: widening until enough survive
        widened = vs.nearest(q, 10, keep, where=where, collection=col)
        # with it: straight to Chroma's filter
        direct = vs.nearest(q, 10, keep, where=where, total=N, allowed=allowed, collection=col)
        assert [c for c, _ in widened] == [c for c, _ in slow] == [c for c, _ in direct]


def test_more_than_the_collection_and_nothing_allowed(store) -> None:  # noqa: ANN001
    vs, meta = store
    q = queries(1)[0]
    everything = vs.nearest(q, N + 100, lambda cid: True)
    assert len(everything) == N
    assert vs.nearest(q, 10, lambda cid: False, allowed=0) == []
    assert vs.nearest(q, 10, lambda cid: False, where={"lane": {"$in": ["none"]}}) == []
    assert vs.query(q, 0) == []
