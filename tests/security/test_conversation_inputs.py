"""Hostile agent logs through `hippo ingest claude-code` (issue 9, points 18 and 19).

One session file holds a line of 200,000 nested arrays, an event nested 500 levels deep inside valid
JSON, an event of the wrong shape, and keys where no message text is: as the event `type`, as a
message `uuid`, as `message.model`, in the `cwd`. The run must load every good line (twice in a row,
without stopping), count what it skipped in its metadata, and store or log no key anywhere: not in the
Dagster run metadata or event log, the dlt tables, the chunk tables, nor `GET /api/v1/conversations`.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from dagster import AssetKey, DagsterInstance
from fastapi.testclient import TestClient

from hippo_cli.main import main
from hippo_server.app import create_app
from hippo_settings import HippoSettings
from tests.security.secret_shapes import ALNUM, URLSAFE, Gen, j

g = Gen(seed=19)
KEYS = {
    "type": j("gh", "p_") + g.s(ALNUM, 36),
    "uuid": j("gh", "p_") + g.s(ALNUM, 36),
    "model": j("sk-", "ant-", "api03-") + g.s(URLSAFE, 93) + "AA",
    "cwd": j("gl", "pat-") + g.s(URLSAFE, 20),
}
SESSION = "5e55a1b2-0000-4000-8000-000000000019"


def event(kind: str, text: str, n: int, **more: object) -> str:
    role = "assistant" if kind == "assistant" else "user"
    body = {"type": kind, "uuid": f"u{n}", "timestamp": f"2026-11-30T10:0{n}:00Z",
            "message": {"role": role, "content": text}, **more}  # fmt: skip
    return json.dumps(body)


def session_lines() -> list[str]:
    deep_event = json.loads(event("user", "x", 2))
    deep_event["message"]["content"] = [{"type": "tool_result", "content": json.loads("[" * 500 + "]" * 500)}]
    return [
        event("user", "Why do Kafka consumers replay offsets after a failed deploy?", 1),
        "[" * 200_000 + "]" * 200_000,  # the attack run's line
        json.dumps(deep_event),  # parses, but nests 500 levels
        event("assistant", "Offsets are committed only after processing; a crash replays.", 3),
        json.dumps({"type": KEYS["type"], "uuid": "u4"}),  # a key as the event type
        event("user", "Which setting controls the commit interval?", 5, uuid=KEYS["uuid"]),
        event(
            "assistant",
            "auto.commit.interval.ms, with enable.auto.commit.",
            6,
            message={"role": "assistant", "content": "auto.commit.interval.ms", "model": KEYS["model"]},
        ),
        event("user", "And for the payments service?", 7, cwd=f"/home/dev/{KEYS['cwd']}"),
        event("user", "a list where a folder belongs", 8, cwd=["not", "a", "path"]),  # wrong shape
    ]


def ingest(settings: HippoSettings, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv("HIPPO_CLAUDE_PROJECTS", str(settings.claude_projects))
    monkeypatch.setenv("HIPPO_EMBED_CACHE", str(settings.embed_cache))
    return main(["ingest", "claude-code", "--vault", str(settings.vault), "--home", str(settings.home)])


def loader_metadata(instance: DagsterInstance) -> dict:
    record = instance.get_latest_materialization_event(AssetKey("claude_code_log"))
    assert record is not None and record.asset_materialization is not None
    return {k: v.value for k, v in record.asset_materialization.metadata.items()}


def every_stored_string(*roots: Path) -> tuple[bytes, str]:
    """Raw bytes of every file under `roots`, and every string cell of every Parquet file (compressed
    pages hide text from a byte search)."""
    raw, cells = [], []
    for root in roots:
        for path in root.rglob("*"):
            if not path.is_file():
                continue
            raw.append(path.read_bytes())
            if path.suffix == ".parquet":
                frame = pl.read_parquet(path)
                for name, dtype in frame.schema.items():
                    if dtype == pl.String:
                        cells += [v for v in frame[name].to_list() if v]
    return b"\n".join(raw), "\n".join(cells)


def test_a_nested_line_is_skipped_and_no_key_is_stored_anywhere(
    settings: HippoSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    projects = tmp_path / "claude-projects"
    folder = projects / "-home-dev-payments-api"
    folder.mkdir(parents=True)
    (folder / f"{SESSION}.jsonl").write_text("\n".join(session_lines()) + "\n", encoding="utf-8")
    settings = settings.model_copy(update={"claude_projects": projects, "mcp_token": "conv-token"})
    dagster_home = tmp_path / "dagster"
    dagster_home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))

    assert ingest(settings, monkeypatch) == 0
    with DagsterInstance.get() as instance:
        meta = loader_metadata(instance)
    assert meta["new_messages"] == 5  # lines 1, 3 (u3), 5, 6 and 7; line 8 is the wrong shape
    reasons = meta["skipped_by_reason"]
    assert reasons["nested too deeply"] == 2, reasons
    assert reasons["malformed event"] == 1, reasons
    assert any(r.startswith("unknown event type '[REDACTED:") for r in reasons), reasons

    assert ingest(settings, monkeypatch) == 0  # the second run is not stuck on the same line either
    with DagsterInstance.get() as instance:
        assert loader_metadata(instance)["new_messages"] == 0

    messages = pl.read_parquet(settings.home / "chunks" / "messages.parquet")
    assert messages.height == 5
    assert "Offsets are committed only after processing; a crash replays." in messages["text"].to_list()

    with TestClient(create_app(settings), headers={"Authorization": "Bearer conv-token"}) as client:
        listed = client.get("/api/v1/conversations", params={"days": 3650})
        assert listed.status_code == 200
        convs = listed.json()["conversations"]
        assert [c["conversation_id"] for c in convs] == [SESSION]
        assert convs[0]["model"].startswith("[REDACTED:")
        one = client.get(f"/api/v1/conversations/{SESSION}")
        assert one.status_code == 200 and len(one.json()["messages"]) == 5
        served = listed.text + one.text

    raw, cells = every_stored_string(settings.home, dagster_home)
    for field, key in KEYS.items():
        assert key not in served, f"{field}: served by the API"
        assert key not in cells, f"{field}: stored in a Parquet table"
        assert key.encode() not in raw, f"{field}: stored or logged in a file under HIPPO_HOME/DAGSTER_HOME"
