"""`hippo serve` loads the index, the query embedder and Kiwi on a background thread before any search."""

from __future__ import annotations

import threading

from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import open_engine
from hippo_server.serve import server_config
from hippo_settings import HippoSettings


def test_the_warm_up_thread_loads_the_index_before_the_first_search(indexed: HippoSettings) -> None:
    config = server_config(indexed, warm_up=True)
    engine = config.app.state.engine
    [thread] = [t for t in threading.enumerate() if t.name == "hippo-warm-index"]
    thread.join(timeout=600)
    assert not thread.is_alive()
    loaded = engine._snapshot
    assert loaded is not None  # loaded by the thread, before any request
    response = engine.search(SearchRequest(query="침실 온도"), log=False)
    assert response.generation == loaded.generation and engine._snapshot is loaded  # not loaded twice
    assert response.results[0].anchor == "20-wiki/health/sleep-hygiene.md#침실 환경"


def test_warming_an_empty_home_leaves_the_error_to_the_first_search(settings: HippoSettings) -> None:
    engine = open_engine(settings)
    engine.warm()  # nothing indexed yet: no exception from the background thread
    assert engine._snapshot is None
