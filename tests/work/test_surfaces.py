"""Work memory over REST (/api/v1/work/), the ghost_memories asset with real Dagster materializations,
and the ghost read log through the librarian. The embedder is the real HTTP backend pointed at a closed
port, so ghost search takes its documented fallback (shared words) and no model is loaded."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import psycopg2
import pytest
from dagster import materialize
from fastapi.testclient import TestClient

from hippo_assets.ghost.assets import ghost_memories
from hippo_core.agents.ghost import ALLOWLIST
from hippo_core.wiki import approvals
from hippo_resources import build_resources
from hippo_resources.ghost_store import GhostStore
from hippo_resources.work_store import WorkStore
from hippo_server.app import create_app
from hippo_settings import HippoSettings
from tests.conftest import make_vault

AWS_KEY = "AKIA" + "QWERTYUIOPASDFGH"  # AWS-shaped, built so this file holds none
PROJECT = "payments-api"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PG_DSN = "postgresql://postgres@127.0.0.1:5432/hippo_agents_test"


def fresh_pg() -> str:
    """This file's own database, its work and ghost schemas dropped (and forgotten by this process)."""
    try:
        admin = psycopg2.connect(PG_DSN.rsplit("/", 1)[0] + "/postgres", connect_timeout=3)
    except psycopg2.Error as exc:
        pytest.skip(f"no local PostgreSQL: {exc}")
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_database WHERE datname = 'hippo_agents_test'")
        if cur.fetchone() is None:
            cur.execute("CREATE DATABASE hippo_agents_test")
    admin.close()
    with psycopg2.connect(PG_DSN) as conn, conn.cursor() as cur:
        cur.execute("DROP SCHEMA IF EXISTS hippo_work CASCADE; DROP SCHEMA IF EXISTS hippo_ghost CASCADE")
    WorkStore(pg_dsn=PG_DSN).forget_schema()
    GhostStore(pg_dsn=PG_DSN).forget_schema()
    return PG_DSN


@pytest.fixture(params=["sqlite", "postgres"])
def settings(tmp_path: Path, request: pytest.FixtureRequest) -> HippoSettings:
    return HippoSettings(
        vault=make_vault(tmp_path, with_inbox=False),
        home=tmp_path / "home",
        embed_url=f"http://127.0.0.1:{closed_port()}/v1",
        embed_retries=1,
        pg_dsn=fresh_pg() if request.param == "postgres" else None,
    )


@pytest.fixture
def client(settings: HippoSettings):  # noqa: ANN201
    with TestClient(create_app(settings)) as c:
        yield c


def checkpoint(client: TestClient, **fields: object):  # noqa: ANN201
    body = {"project": PROJECT, "kind": "work", "session_id": "sess-a", **fields}
    return client.post("/api/v1/work/checkpoint", json=body)


def test_rest_work_routes(client: TestClient, settings: HippoSettings) -> None:
    first = checkpoint(client, summary="Raised the pool timeout.", event_id="e1")
    again = checkpoint(client, summary="Raised the pool timeout.", event_id="e1")
    assert first.status_code == 201 and again.status_code == 200
    assert again.json() == {**first.json(), "duplicate": True}
    for i in range(2, 5):
        assert (
            checkpoint(client, summary=f"step {i}", event_id=f"e{i}", session_id="sess-b").status_code == 201
        )

    secret = checkpoint(client, summary=f"key {AWS_KEY}", event_id="e9")
    assert secret.status_code == 422 and secret.json()["error"]["kind"] == "secret"
    big = checkpoint(client, summary="x" * 9000, event_id="e10")
    assert big.status_code == 422 and big.json()["error"]["kind"] == "too_large"
    slug = client.get("/api/v1/work/sync", params={"project": "../etc"})
    assert slug.status_code == 422 and slug.json()["error"]["kind"] == "bad_project"
    unknown = client.post("/api/v1/work/checkpoint", json={"project": PROJECT, "kind": "chat"})
    assert unknown.status_code == 422 and unknown.json()["error"]["code"] == "invalid_request"

    page = client.get("/api/v1/work/sync", params={"project": PROJECT, "since": "0", "limit": 3}).json()
    assert [e["seq"] for e in page["entries"]] == [1, 2, 3] and page["has_more"] is True
    rest = client.get("/api/v1/work/sync", params={"project": PROJECT, "since": page["cursor"]}).json()
    assert [e["seq"] for e in rest["entries"]] == [4] and rest["has_more"] is False
    stale = checkpoint(
        client, summary="merged", event_id="e5", base_cursor=page["cursor"].replace(":3", ":1")
    )
    assert [e["seq"] for e in stale.json()["unseen"]] == [2, 3, 4]
    foreign = client.get("/api/v1/work/sync", params={"project": PROJECT, "since": "0123456789ab:2"})
    assert foreign.status_code == 409 and foreign.json()["error"]["code"] == "invalid_cursor"

    log = client.post(
        "/api/v1/work/worklog", json={"project": PROJECT, "entry": "pool fix", "next": "CI run"}
    )
    assert log.status_code == 201 and log.json()["line"].endswith("(agent): pool fix. Next: CI run.")
    h1 = client.post(
        "/api/v1/work/handoff", json={"project": PROJECT, "text": "First handoff.", "agent": "a"}
    )
    path = settings.vault / h1.json()["path"]
    person = path.read_text(encoding="utf-8").replace("First handoff.", "First handoff, corrected by me.")
    path.write_text(person, encoding="utf-8")
    h2 = client.post(
        "/api/v1/work/handoff", json={"project": PROJECT, "text": "Second handoff.", "agent": "b"}
    )
    assert h2.json()["kept_person_edit"] is True
    text = path.read_text(encoding="utf-8")
    assert "First handoff, corrected by me." in text and "Second handoff." in text
    history = subprocess.run(
        ["git", "-C", str(settings.vault), "log", "-p", "--format=%s", "--", h1.json()["path"]],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "+First handoff." in history  # the previous handoff stays in git history

    resume = client.get("/api/v1/work/resume", params={"project": PROJECT, "session_id": "sess-a"}).json()
    assert resume["handoff"] == "Second handoff." and resume["cursor"].endswith(":5")
    assert [i["what"] for i in resume["open_items"]] == ["pool fix."]
    assert {c["session_id"] for c in resume["checkpoints"]} == {"sess-b"}  # other sessions only
    assert (settings.home / "work.sqlite").exists() == (settings.pg_dsn is None)  # the store is where it says


def tick(vault: Path, path: str) -> None:
    text = (vault / ALLOWLIST).read_text(encoding="utf-8")
    line = next(ln for ln in approvals.parse(ALLOWLIST, text) if ln.card == path and not ln.ticked)
    (vault / ALLOWLIST).write_text(approvals.tick(text, line.line_no), encoding="utf-8")


def metadata(result, key: str):  # noqa: ANN001, ANN201
    (mat,) = result.asset_materializations_for_node("ghost_memories")
    return mat.metadata[key].value


def test_ghost_memories_asset_promotes_only_with_both_signals_and_every_read_is_logged(
    client: TestClient, settings: HippoSettings
) -> None:
    shared = client.post("/api/v1/work/remember", json={
        "name": "pool timeouts under CI load", "project": PROJECT, "scope": "shared",
        "body": "A 0.5 s connection-pool timeout fails under CI load; use 5 s and retry once."}).json()  # fmt: skip
    local = client.post("/api/v1/work/remember", json={
        "name": "staging quirks", "project": "infra", "scope": "project",
        "body": "The staging box reboots on Sundays."}).json()  # fmt: skip
    resources = dict(build_resources(settings))

    first = materialize([ghost_memories], resources=resources)
    assert first.success and metadata(first, "promoted") == 0
    reasons = {d["path"]: d["reason"] for d in metadata(first, "decisions")["not_promoted"]}
    assert "not ticked" in reasons[shared["path"]] and "scope is 'project'" in reasons[local["path"]]
    assert metadata(first, "proposed") == [shared["path"]]

    tick(settings.vault, shared["path"])
    second = materialize([ghost_memories], resources=resources)
    assert [d["memory_id"] for d in metadata(second, "decisions")["promoted"]] == [shared["memory_id"]]

    memory_file = settings.vault / shared["path"]
    memory_file.write_text(
        memory_file.read_text(encoding="utf-8") + "\nAlso: 10 s on ARM.\n", encoding="utf-8"
    )
    third = materialize([ghost_memories], resources=resources)
    (kept,) = metadata(third, "decisions")["kept"]
    assert "edited after approval" in kept["reason"]
    (refused,) = [d for d in metadata(third, "decisions")["not_promoted"] if d["path"] == shared["path"]]
    assert "edited after approval" in refused["reason"]

    found = client.post("/api/v1/work/ghost/search", json={
        "query": "connection pool timeout", "current_project": "billing", "session_id": "sess-z"}).json()  # fmt: skip
    (hit,) = found["results"]
    assert hit["memory_id"] == shared["memory_id"] and "10 s on ARM" not in hit["body"]  # the approved text
    assert found["untrusted"] is True and found["status"] == "degraded"
    client.post("/api/v1/work/ghost/search", json={"query": "pool", "current_project": "billing"})
    audit = client.get("/api/v1/work/ghost/audit").json()["reads"]
    assert [(r["memory_id"], r["session_id"], r["project"]) for r in audit] == [
        (shared["memory_id"], None, "billing"), (shared["memory_id"], "sess-z", "billing")]  # fmt: skip
    before = hit["score"]
    up = client.post("/api/v1/work/ghost/feedback", json={"anchor": hit["anchor"], "useful": True}).json()
    assert up["activation"] > 1.0
    again = client.post("/api/v1/work/ghost/search", json={
        "query": "connection pool timeout", "current_project": "billing", "verbose": True}).json()  # fmt: skip
    assert again["results"][0]["activation"] == up["activation"] and again["results"][0]["score"] > before
    missing = client.post("/api/v1/work/ghost/feedback", json={"anchor": "ghost/x/y", "useful": True})
    assert missing.status_code == 404
