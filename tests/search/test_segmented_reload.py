"""The librarian over a base + delta generation: after an edit it reads only the delta (the base's
postings, table, rows and row_of are the very objects it held), and it answers exactly as an engine opened
cold on the same generation, and as an engine over a fresh full build of the same vault."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import SearchEngine, open_engine
from hippo_settings import HippoSettings
from tests.assets.test_pipeline import meta
from tests.conftest import run_graph

TODAY = dt.date(2026, 12, 1)
REQUESTS: list[dict[str, Any]] = [
    {"query": "형태소 분석"},
    {"query": "dagster asset durable"},
    {"query": "수면 습관 카페인"},
    {"query": "worklog 회의"},
    {"query": "sleep", "path_prefix": "20-wiki/health"},
    {"query": "카페인", "lanes": ["wiki"]},
    {"query": "lemmatizers and morphology", "limit": 3},
]


def answers(engine: SearchEngine) -> list[Any]:
    engine.today = lambda: TODAY
    out = []
    for req in REQUESTS:
        for mode in ("hybrid", "lexical", "semantic"):
            resp = engine.search(SearchRequest(**req, mode=mode, include_navigation=True), log=False)
            out.append((resp.status, [h.model_dump() for h in resp.results]))
    return out


def test_an_edit_reloads_only_the_delta_and_answers_like_a_cold_engine(
    settings: HippoSettings, tmp_path: Path
) -> None:
    assert run_graph(settings).success
    engine = open_engine(settings, log=False)
    before = engine.snapshot()
    answers(engine)  # masks and titles of the first generation in use

    vault = settings.vault
    note = vault / "20-wiki/data/dagster-assets.md"
    note.write_text(note.read_text(encoding="utf-8").replace("persistent object", "durable object"), "utf-8")
    morph = vault / "20-wiki/data/morphology.md"
    morph.write_text(morph.read_text(encoding="utf-8") + "\n\nA sentence about lemmatizers.\n", "utf-8")
    sleep = vault / "20-wiki/health/sleep-hygiene.md"
    sleep.write_text(sleep.read_text(encoding="utf-8").replace("status: canonical", "status: draft"), "utf-8")
    (vault / "50-ops/worklog.md").unlink()
    result = run_graph(settings)
    assert result.success and meta(result, "lexical_index")["segment"] == "delta"

    after = engine.snapshot()
    assert after.generation != before.generation
    assert after.view is not None and before.view is not None
    assert after.view.base is before.view.base and after.index.base is before.index.base  # not read again
    assert after.base_part is before.base_part  # nor its rows, ids and row_of
    assert after.index.delta.n_rows > 0 and len(after.index.delta.dead) > 0
    assert all(after.ids[row] == cid and after.index.live[row] for cid, row in after.row_of.items())
    assert len(after.row_of) == after.index.n_docs
    assert not any(p == "50-ops/worklog.md" for p in after.live_table()["path"].to_list())

    warm = answers(engine)
    cold = open_engine(settings, log=False)
    assert cold.snapshot().generation == after.generation
    assert answers(cold) == warm
    assert any(hits for _, hits in warm)
    every = [h for _, hits in warm for h in hits]
    assert all(h["path"] != "50-ops/worklog.md" for h in every)  # deleted: from no lane
    sleep_hits = [h for h in every if h["path"] == "20-wiki/health/sleep-hygiene.md"]
    assert sleep_hits and all(h["status"] == "draft" for h in sleep_hits)  # the status change is seen

    # a fresh full build of the same vault in another home: the same answers
    scratch = HippoSettings(
        vault=vault, home=tmp_path / "scratch", embed_cache_path=settings.embed_cache_path
    )
    built = run_graph(scratch)
    assert built.success and meta(built, "lexical_index")["segment"] == "base"
    assert answers(open_engine(scratch, log=False)) == warm
