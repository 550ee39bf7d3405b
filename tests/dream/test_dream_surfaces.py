"""What the dream leaves for agents: `hippo_profile` over MCP and REST (one answer, a bad window refused),
and a question that failed twice says so in its search envelope."""

from __future__ import annotations

import datetime as dt

import anyio
from fastapi.testclient import TestClient
from mcp import Client

from hippo_core.dream.profile import ProfileEvent, snapshot
from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import open_engine
from hippo_server.app import create_app
from hippo_server.mcp import build_mcp
from hippo_settings import HippoSettings
from hippo_work.dream import dream_store

MISS = "qwzx vorblunk plimtrax"


def test_profile_over_mcp_and_rest_and_a_remembered_gap(indexed: HippoSettings) -> None:
    today = dt.datetime.now(dt.UTC).date()
    store = dream_store(indexed)
    events = [
        ProfileEvent(day=today.isoformat(), kind="query", subjects=["dagster", "sensor"]),
        ProfileEvent(day=(today - dt.timedelta(days=1)).isoformat(), kind="query", subjects=["dagster"]),
        ProfileEvent(
            day=(today - dt.timedelta(days=20)).isoformat(), kind="checkpoint", projects=["payments"]
        ),
    ]
    for day in sorted({e.day for e in events}):
        store.put_snapshot(snapshot(day, events))
    engine = open_engine(indexed)

    async def mcp_call(args: dict):  # noqa: ANN202
        async with Client(build_mcp(engine, settings=indexed)) as client:
            return await client.call_tool("hippo_profile", args)

    over_mcp = anyio.run(mcp_call, {"window": 7})
    assert not over_mcp.is_error
    body = over_mcp.structured_content
    assert [w["days"] for w in body["windows"]] == [7]
    assert body["windows"][0]["subjects"] == [["dagster", 2], ["sensor", 1]]
    bad = anyio.run(mcp_call, {"window": 8})
    assert bad.is_error

    with TestClient(create_app(indexed, engine)) as api:
        got = api.get("/api/v1/profile", params={"window": 7})
        assert got.status_code == 200, got.text
        rest = got.json()
        assert rest["windows"] == body["windows"] and rest["heating"] == body["heating"]
        every = api.get("/api/v1/profile").json()
        assert [w["days"] for w in every["windows"]] == [7, 30, 90]
        assert every["windows"][1]["projects"] == [["payments", 1]]
        refused = api.get("/api/v1/profile", params={"window": 8})
        assert refused.status_code == 422 and "error" in refused.json()

    # the same miss three times: the third answer says it failed before (twice), the first two do not
    answers = []
    for _ in range(3):
        response = engine.search(SearchRequest(query=MISS))
        engine.flush_log()
        answers.append(response)
    assert answers[0].gap == "zero-hit" and answers[0].failed_before is None
    assert answers[1].failed_before is None
    assert answers[2].failed_before is not None and answers[2].failed_before.times_asked == 2
