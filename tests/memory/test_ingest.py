"""dlt loading through the dagster-dlt assets: incremental state, duplicates and every kind of bad input."""

from __future__ import annotations

import json
import threading
import time
import zipfile
from pathlib import Path

import polars as pl
from dagster import DagsterInstance

from hippo_assets.memory.assets import LOADERS
from hippo_assets.memory.dlt_sources import RunReport, read_new_lines
from hippo_settings import HippoSettings
from tests.memory.conftest import CHATGPT_ID, FIXTURES, load, make_zip, metadata


def messages(settings: HippoSettings) -> pl.DataFrame:
    return pl.read_parquet(settings.home / "chunks" / "messages.parquet")


def dlt_rows(settings: HippoSettings, source: str, table: str = "messages") -> int:
    files = list(
        (settings.home / "conversations" / "dlt" / f"hippo_conversations_{source}" / table).glob("*.parquet")
    )
    return sum(pl.read_parquet(f).height for f in files)


def test_every_format_loads_and_the_second_run_loads_nothing(settings: HippoSettings, mem_resources) -> None:
    instance = DagsterInstance.ephemeral()
    first = load(mem_resources, instance=instance)
    assert first.success
    assert [
        metadata(first, k)["new_messages"]
        for k in ("claude_code_log", "codex_log", "chatgpt_export", "claude_ai_export")
    ] == [6, 7, 5, 4]
    table = metadata(first, "conversation_chunks")
    assert (table["conversations"], table["messages"]) == (5, 22)
    convs = pl.read_parquet(settings.home / "chunks" / "conversations.parquet")
    claude = convs.filter(pl.col("source") == "claude_code").row(0, named=True)
    assert (claude["title"], claude["project"], claude["message_count"]) == (
        "Fix flaky Postgres connection pool test",
        "payments-api",
        6,
    )
    assert claude["model"] == "claude-sonnet-4-5" and claude["started"] == "2026-11-20T09:00:00+00:00"

    second = load(mem_resources, instance=instance)
    assert second.success
    assert all(
        metadata(second, k)["new_messages"] == 0
        for k in ("claude_code_log", "codex_log", "chatgpt_export", "claude_ai_export")
    )
    assert metadata(second, "chatgpt_export")["skipped_by_reason"] == {"duplicate export": 1}
    assert messages(settings).height == 22
    assert dlt_rows(settings, "chatgpt") == 5  # nothing appended at the destination either


def test_an_appended_session_loads_only_its_new_messages(
    settings: HippoSettings, mem_resources, logs
) -> None:
    assert load(mem_resources, [LOADERS["claude_code"]]).success
    new = {
        "type": "user", "uuid": "u7", "parentUuid": "u6", "sessionId": "3f1c2a9e-7b4d-4e2a-9c1f-0a1b2c3d4e5f",
        "cwd": "/home/dev/payments-api", "timestamp": "2026-11-20T09:10:00.000Z",
        "message": {"role": "user", "content": "Now add a regression test for the pool leak."},
    }  # fmt: skip
    with open(logs["session"], "a", encoding="utf-8") as fh:
        fh.write(json.dumps(new) + "\n")
    again = load(mem_resources, [LOADERS["claude_code"]])
    assert metadata(again, "claude_code_log")["new_messages"] == 1
    assert dlt_rows(settings, "claude_code") == 7
    msgs = messages(settings).sort("position")
    assert msgs["position"].to_list() == list(range(7))
    assert msgs["text"].to_list()[-1] == "Now add a regression test for the pool leak."
    conv = pl.read_parquet(settings.home / "chunks" / "conversations.parquet").row(0, named=True)
    assert conv["title"] == "Fix flaky Postgres connection pool test"  # kept from the first load
    assert conv["ended"] == "2026-11-20T09:10:00+00:00" and conv["message_count"] == 7


def test_bad_lines_and_an_unfinished_line_never_lose_data(
    settings: HippoSettings, mem_resources, logs
) -> None:
    session = logs["session"]
    good = session.read_text(encoding="utf-8")
    tail = json.dumps(
        {
            "type": "user",
            "uuid": "u9",
            "sessionId": "s",
            "message": {"role": "user", "content": "finished later"},
        }
    )
    session.write_text(
        good + '{"type": "assistant", "message": {"role": "assis\n'  # truncated line
        + "not json at all\n"
        + json.dumps({"type": "future-event", "x": 1}) + "\n"
        + tail[:30],  # a writer is still writing this line
        encoding="utf-8",
    )  # fmt: skip
    first = load(mem_resources, [LOADERS["claude_code"]])
    meta = metadata(first, "claude_code_log")
    assert meta["new_messages"] == 6
    assert meta["skipped_by_reason"] == {
        "not JSON": 2,
        "unknown event type 'future-event'": 1,
        "incomplete last line": 1,
    }
    with open(session, "a", encoding="utf-8") as fh:
        fh.write(tail[30:] + "\n")
    second = load(mem_resources, [LOADERS["claude_code"]])
    assert metadata(second, "claude_code_log")["new_messages"] == 1
    assert messages(settings)["text"].to_list()[-1] == "finished later"
    assert messages(settings).height == 7


def encrypted_zip(path: Path) -> Path:
    """A ZIP whose member is flagged as encrypted (bit 0 of the general-purpose flags), as `zip -e` writes."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("conversations.json", b"\x8f\x12" * 40)
    raw = bytearray(path.read_bytes())
    for signature, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = raw.find(signature)
        raw[at + flag_at] |= 0x1
    path.write_bytes(bytes(raw))
    assert zipfile.ZipFile(path).getinfo("conversations.json").flag_bits & 0x1
    return path


def test_corrupt_password_protected_and_non_json_exports(
    settings: HippoSettings, mem_resources, logs, tmp_path: Path
) -> None:
    assert load(mem_resources, [LOADERS["chatgpt"]]).success
    corrupt = tmp_path / "corrupt.zip"
    corrupt.write_bytes(logs["chatgpt_zip"].read_bytes()[:200])
    locked = encrypted_zip(tmp_path / "locked.zip")
    not_json = make_zip(tmp_path / "notjson.zip", b"{ this is not json")
    no_member = make_zip(tmp_path / "other.zip", b"[]", member="chat.html")
    paths = [str(p) for p in (corrupt, locked, not_json, no_member, tmp_path / "missing.zip")]
    result = load(
        mem_resources,
        [LOADERS["chatgpt"]],
        run_config={"ops": {"chatgpt_ingest": {"config": {"paths": paths}}}},
    )
    assert result.success
    meta = metadata(result, "chatgpt_export")
    assert meta["new_messages"] == 0
    assert meta["skipped_by_reason"] == {
        "corrupt ZIP": 1,
        "password-protected ZIP": 1,
        "conversations.json is not JSON": 1,
        "no conversations.json in the ZIP": 1,
        "unreadable": 1,
    }
    assert messages(settings).height == 5  # what was loaded before stays


def test_a_newer_export_loads_only_new_messages(
    settings: HippoSettings, mem_resources, logs, tmp_path: Path
) -> None:
    assert load(mem_resources, [LOADERS["chatgpt"]]).success
    data = json.loads((FIXTURES / "chatgpt" / "conversations.json").read_text(encoding="utf-8"))
    mapping = data[0]["mapping"]
    mapping["a2"]["children"] = ["q3"]
    mapping["q3"] = {
        "id": "q3", "parent": "a2", "children": [],
        "message": {"id": "q3", "author": {"role": "user"}, "create_time": 1795000200.0,
                    "content": {"content_type": "text", "parts": ["consumer lag alert threshold?"]}, "metadata": {}},
    }  # fmt: skip
    data[0]["current_node"] = "q3"
    newer = make_zip(tmp_path / "chatgpt-newer.zip", json.dumps(data).encode())
    cfg = {"ops": {"chatgpt_ingest": {"config": {"paths": [str(logs["chatgpt_zip"]), str(newer)]}}}}
    result = load(mem_resources, [LOADERS["chatgpt"]], run_config=cfg)
    meta = metadata(result, "chatgpt_export")
    assert meta["new_messages"] == 1
    assert meta["skipped_by_reason"] == {"duplicate export": 1}
    msgs = messages(settings).filter(pl.col("conversation_id") == CHATGPT_ID)
    assert msgs.height == 6 and msgs["message_id"].n_unique() == 6


def test_a_file_that_changes_while_being_read_is_loaded_exactly_once(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    path.write_text("", encoding="utf-8")
    stop = threading.Event()

    def writer() -> None:
        n = 0
        while not stop.is_set() and n < 3000:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"n": n, "pad": "x" * 200}) + "\n")
            n += 1

    thread = threading.Thread(target=writer)
    thread.start()
    report = RunReport()
    seen: list[int] = []
    offset = line = 0
    deadline = time.monotonic() + 20
    while thread.is_alive() and time.monotonic() < deadline:
        lines, offset, line = read_new_lines(path, offset, line, report)
        seen += [json.loads(text)["n"] for _, text in lines]
    stop.set()
    thread.join()
    lines, offset, line = read_new_lines(path, offset, line, report)
    seen += [json.loads(text)["n"] for _, text in lines]
    total = len(path.read_text(encoding="utf-8").splitlines())
    assert seen == list(range(total))  # no line lost, none twice, none half-read
    assert line == total


def test_appended_codex_history_and_rollout_keep_unique_anchors(
    settings: HippoSettings, mem_resources, logs
) -> None:
    assert load(mem_resources, [LOADERS["codex"]]).success
    rollout = next((logs["codex"] / "sessions").glob("**/*.jsonl"))
    item = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "스트리밍으로 바꿔줘"}],
    }
    with open(rollout, "a", encoding="utf-8") as fh:
        fh.write(
            json.dumps({"timestamp": "2026-11-20T10:05:00.000Z", "type": "response_item", "payload": item})
            + "\n"
        )
    with open(logs["codex"] / "history.jsonl", "a", encoding="utf-8") as fh:
        fh.write(
            json.dumps(
                {
                    "session_id": "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
                    "ts": 1795169100,
                    "text": "스트리밍으로 바꿔줘",
                }
            )
            + "\n"
        )
    again = load(mem_resources, [LOADERS["codex"]])
    assert metadata(again, "codex_log")["new_messages"] == 2
    chunks = pl.read_parquet(settings.home / "chunks" / "conversation_chunks.parquet")
    assert chunks["chunk_id"].n_unique() == chunks.height
    msgs = messages(settings)
    session = msgs.filter(pl.col("conversation_id") == "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b").sort(
        "position"
    )
    assert session["position"].to_list() == list(range(6)) and session["text"][-1] == "스트리밍으로 바꿔줘"
    assert msgs.filter(pl.col("conversation_id").str.starts_with("codex-history-")).height == 3
