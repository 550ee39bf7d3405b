"""HIPPO_CHROMA_URL reaches the vector store: Chroma in client/server mode, against a real `chroma run`."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from hippo_resources import build_resources
from hippo_settings import HippoSettings

CHROMA = Path(sys.executable).with_name("chroma")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def chroma_url(tmp_path: Path) -> Iterator[str]:
    if not CHROMA.exists():
        pytest.skip(f"the chroma CLI is not installed beside {sys.executable}")
    port = free_port()
    proc = subprocess.Popen(
        [str(CHROMA), "run", "--path", str(tmp_path / "server"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/api/v2/heartbeat", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            pytest.fail("chroma run did not answer within 60 s")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_chroma_url_setting_puts_vectors_on_the_server(tmp_path: Path, chroma_url: str) -> None:
    settings = HippoSettings.from_env(
        {"HIPPO_CHROMA_URL": chroma_url}, vault=tmp_path / "v", home=tmp_path / "h"
    )
    store = build_resources(settings).vector_store
    assert (store.host, store.port, store.ssl) == ("127.0.0.1", int(chroma_url.rsplit(":", 1)[1]), False)
    vector = np.zeros((1, 4), dtype=np.float32)
    vector[0, 0] = 1.0
    store.upsert(["c1"], vector, [{"path": "a.md"}])
    assert store.query(vector[0], 1) == [("c1", pytest.approx(1.0))]
    assert not (tmp_path / "h" / "chroma").exists()  # nothing embedded under HIPPO_HOME


def test_the_graph_indexes_into_a_chroma_server_and_search_reads_it(
    tmp_path: Path, vault: Path, embed_cache: Path, chroma_url: str
) -> None:
    from hippo_search.envelope import SearchRequest
    from hippo_search.pipeline import open_engine
    from tests.conftest import run_graph

    settings = HippoSettings.from_env(
        {"HIPPO_CHROMA_URL": chroma_url}, vault=vault, home=tmp_path / "home"
    ).model_copy(update={"embed_cache_path": embed_cache})
    result = run_graph(settings)
    assert result.success
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks["vectors_match_chunks"] is True
    assert not (tmp_path / "home" / "chroma").exists()  # the vectors are on the server
    res = build_resources(settings)
    chunk_ids = set(res.chunk_store.chunks()["chunk_id"].to_list())
    assert set(res.vector_store.existing()) == chunk_ids
    response = open_engine(settings).search(SearchRequest(query="낮잠 커피", mode="semantic"))
    assert response.status == "ok" and response.results
    assert all("semantic" in h.matched_by for h in response.results)

    # soft delete works on the server too: a note that leaves goes to the trash collection
    (vault / "20-wiki" / "health" / "sleep-hygiene.md").unlink()
    assert run_graph(settings).success
    assert {m["path"] for m in res.vector_store.trashed().values()} == {"20-wiki/health/sleep-hygiene.md"}
