"""Parsers of each tool's files, on fixtures written with the real structure of those files."""

from __future__ import annotations

import json
from pathlib import Path

from hippo_core.conversations import (
    Conversation,
    Message,
    parse_chatgpt,
    parse_claude_ai,
    parse_claude_code,
    parse_codex_history,
    parse_codex_session,
)
from hippo_core.index.segments import SegmentParams, conversation_chunk_rows, exchange_text, segment_messages
from tests.memory.conftest import CHATGPT_ID, CLAUDE_SESSION, FIXTURES


def numbered(path: Path) -> list[tuple[int, str]]:
    return list(enumerate(path.read_text(encoding="utf-8").splitlines(), start=1))


def test_claude_code_session() -> None:
    path = FIXTURES / "claude_code" / "-home-dev-payments-api" / f"{CLAUDE_SESSION}.jsonl"
    out = parse_claude_code(numbered(path), path.stem, "payments-api", str(path))
    conv = out.conversations[0]
    assert conv.conversation_id == CLAUDE_SESSION
    assert conv.title == "Fix flaky Postgres connection pool test"
    assert conv.project == "payments-api"
    assert conv.model == "claude-sonnet-4-5"
    assert (conv.started, conv.ended) == ("2026-11-20T09:00:00+00:00", "2026-11-20T09:02:10+00:00")
    roles = [(m.position, m.role, m.is_tool) for m in out.messages]
    assert roles == [
        (0, "user", False),
        (1, "assistant", False),  # text + tool_use: kept as assistant, the call is in the text
        (2, "tool", True),  # a user turn that only carries a tool_result
        (3, "assistant", False),
        (4, "user", False),
        (5, "assistant", False),
    ]
    assert "[tool call Read]" in out.messages[1].text and "pool.py" in out.messages[1].text
    assert "Let me look" not in out.messages[1].text  # thinking blocks are not kept
    assert out.messages[2].text.startswith("[tool output] POOL_SIZE = 5")
    assert out.messages[4].text.startswith("커넥션 풀 누수는")
    assert out.problems == []  # file-history-snapshot and summary are known events


def test_claude_code_unknown_event_and_bad_line_are_reported() -> None:
    lines = [
        (
            1,
            json.dumps(
                {"type": "user", "uuid": "a", "sessionId": "s", "message": {"role": "user", "content": "hi"}}
            ),
        ),
        (2, '{"type": "assistant", "message": {"role": "assis'),  # truncated
        (3, json.dumps({"type": "telemetry-v9", "payload": {}})),
        (4, "[1, 2]"),
        (
            5,
            json.dumps(
                {
                    "type": "user",
                    "uuid": "b",
                    "sessionId": "s",
                    "message": {"role": "user", "content": "again"},
                }
            ),
        ),
    ]
    out = parse_claude_code(lines, "s", None, "f.jsonl")
    assert [m.text for m in out.messages] == ["hi", "again"]
    assert [(p.where, p.reason.split(" (")[0]) for p in out.problems] == [
        ("f.jsonl:2", "not JSON"),
        ("f.jsonl:3", "unknown event type 'telemetry-v9'"),
        ("f.jsonl:4", "not a JSON object"),
    ]


def test_codex_session_and_history() -> None:
    path = next((FIXTURES / "codex" / "sessions").glob("**/*.jsonl"))
    out = parse_codex_session(numbered(path), "hint", str(path))
    conv = out.conversations[0]
    assert conv.conversation_id == "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    assert (conv.project, conv.model, conv.source) == ("search-service", "gpt-5-codex", "codex")
    kinds = [(m.role, m.is_tool) for m in out.messages]
    assert kinds == [("user", False), ("user", False), ("tool", True), ("tool", True), ("assistant", False)]
    assert "rg" in out.messages[2].text and "batch_size = 50000" in out.messages[3].text
    assert out.messages[-1].model == "gpt-5-codex"
    assert out.problems == []  # event_msg and reasoning are known and skipped quietly

    hist = parse_codex_history(numbered(FIXTURES / "codex" / "history.jsonl"), "history.jsonl")
    assert [m.text for m in hist.messages][1] == "색인 작업 배치 크기를 2000으로 줄여줘"
    assert hist.conversations[0].source == "codex_history"


def test_chatgpt_follows_the_current_branch() -> None:
    data = json.loads((FIXTURES / "chatgpt" / "conversations.json").read_text(encoding="utf-8"))
    out = parse_chatgpt(data, "conversations.json")
    conv = out.conversations[0]
    assert (conv.conversation_id, conv.title, conv.model) == (CHATGPT_ID, "Kafka offset reset", "gpt-4o")
    texts = [m.text for m in out.messages]
    assert not any("OLD BRANCH" in t for t in texts)  # the regenerated answer is off the current branch
    assert texts[1].startswith("Stop the consumer group")
    assert [m.role for m in out.messages] == ["user", "assistant", "user", "tool", "assistant"]
    assert out.messages[3].is_tool  # a code cell
    assert (
        out.messages[0].timestamp == "2026-11-18T11:06:50+00:00"
    )  # fractional epoch seconds kept to the second
    assert out.messages[1].model == "gpt-4o"
    # Without a current_node pointer, the last child at each fork is followed.
    data[0]["current_node"] = None
    assert [m.message_id for m in parse_chatgpt(data, "x").messages] == [m.message_id for m in out.messages]


def test_chatgpt_and_claude_ai_reject_bad_shapes_with_reasons() -> None:
    assert parse_chatgpt({"not": "a list"}, "c.json").problems[0].reason == "conversations.json is not a list"
    out = parse_chatgpt([{"title": "no tree"}, "junk"], "c.json")
    assert [(p.where, p.reason) for p in out.problems] == [
        ("c.json[0]", "conversation without a message tree"),
        ("c.json[1]", "conversation is not an object"),
    ]
    out = parse_claude_ai([{"uuid": "x", "chat_messages": [{"sender": "robot", "text": "hi"}]}], "c.json")
    assert out.problems[0].reason == "unknown sender 'robot'"


def test_claude_ai_export() -> None:
    data = json.loads((FIXTURES / "claude_ai" / "conversations.json").read_text(encoding="utf-8"))
    out = parse_claude_ai(data, "conversations.json")
    assert out.conversations[0].title == "Terraform state lock"
    assert [(m.role, m.is_tool) for m in out.messages] == [
        ("user", False),
        ("tool", True),
        ("assistant", False),
        ("user", False),
    ]
    assert "force-unlock" in out.messages[1].text
    assert (
        out.messages[3].text == "테라폼 잠금 해제 후 상태 파일 백업도 해야 하나요?"
    )  # text when content is empty


def msg(pos: int, text: str, minute: int, role: str = "user") -> Message:
    return Message(
        message_id=f"m{pos}", conversation_id="c", position=pos, role=role, text=text,
        timestamp=f"2026-11-20T10:{minute:02d}:00+00:00",
    )  # fmt: skip


def test_segments_split_on_topic_shift_silence_and_size() -> None:
    messages = [
        msg(0, "The kafka consumer lags behind after the deploy", 0),
        msg(1, "Check the kafka consumer group offsets and the lag metric", 1, "assistant"),
        msg(2, "Consumer lag on kafka is back to zero now", 2),
        msg(3, "Different subject: the terraform state lock is stuck", 3),
        msg(4, "Run terraform force-unlock with the lock id", 4, "assistant"),
        msg(5, "Back from lunch. 테라폼 상태 파일 백업은?", 50),
    ]
    segs = segment_messages(messages, SegmentParams(min_messages=3))
    assert [(s.first_position, s.last_position) for s in segs] == [(0, 2), (3, 4), (5, 5)]
    assert segs[0].text.startswith("user: The kafka consumer")
    long = [msg(i, "kafka consumer lag " * 6, i) for i in range(4)]  # 114 chars each, one topic
    assert [s.message_count for s in segment_messages(long, SegmentParams(max_chars=250))] == [2, 2]


def test_a_reply_is_also_indexed_with_the_end_of_the_message_it_answers() -> None:
    data = json.loads((FIXTURES / "claude_ai" / "conversations.json").read_text(encoding="utf-8"))
    out = parse_claude_ai(data, "conversations.json")
    conv, messages = out.conversations[0], out.messages
    rows = conversation_chunk_rows(conv, messages, "model-x")
    cid = conv.conversation_id
    exchanges = [r for r in rows if r["granularity"] == "exchange"]
    # m0 answers nothing, m1 is tool traffic; m2's context skips the tool output and comes from m0
    assert [r["anchor"] for r in exchanges] == [f"conversations/{cid}#m2", f"conversations/{cid}#m3"]
    by_pos = {m.position: m for m in messages}
    first = exchanges[0]
    assert (
        by_pos[0].text.strip()[-30:] in first["index_text"]
        and by_pos[1].text.strip()[:30] not in first["index_text"]
    )
    assert (
        first["text"].startswith(f"{by_pos[2].role}: ") and by_pos[0].text.strip()[-30:] not in first["text"]
    )
    plain = {r["anchor"]: r for r in rows if r["granularity"] == "message"}
    assert first["chunk_id"] != plain[first["anchor"]]["chunk_id"]
    assert first["embed_hash"] != plain[first["anchor"]]["embed_hash"]
    without = conversation_chunk_rows(conv, messages, "model-x", with_exchanges=False)
    assert len(without) == len(rows) - 2 and not any(r["granularity"] == "exchange" for r in without)


def test_exchange_context_is_the_end_of_the_previous_message_cut_at_a_word() -> None:
    long = " ".join(f"word{i}" for i in range(200)) + " how long do you hold that pose?"
    text = exchange_text(long, "B: 30 to 60 seconds.", max_context_chars=60)
    context, reply = text.split("\n")
    assert reply == "B: 30 to 60 seconds." and context.endswith("how long do you hold that pose?")
    assert len(context) <= 60 and context.split(" ")[0].startswith("word")  # no half word at the cut
    assert exchange_text("", "B: hi") == "B: hi"


def test_chunk_rows_have_stable_anchors_and_conversation_fields() -> None:
    data = json.loads((FIXTURES / "claude_ai" / "conversations.json").read_text(encoding="utf-8"))
    out = parse_claude_ai(data, "conversations.json")
    rows = conversation_chunk_rows(out.conversations[0], out.messages, "model-x")
    again = conversation_chunk_rows(out.conversations[0], out.messages, "model-x")
    assert [r["chunk_id"] for r in rows] == [r["chunk_id"] for r in again]
    cid = out.conversations[0].conversation_id
    anchors = [r["anchor"] for r in rows]
    assert anchors[:4] == [f"conversations/{cid}#m{i}" for i in range(4)]
    assert all(r["lane"] == "conversations" and r["conversation_id"] == cid for r in rows)
    assert [r["is_tool"] for r in rows if r["granularity"] == "message"] == [False, True, False, False]
    assert rows[0]["updated"] == "2026-11-18T08:00:00+00:00"
    assert len(set(r["chunk_id"] for r in rows)) == len(rows)


def test_an_exchange_carries_the_messages_before_it_and_every_row_its_day(monkeypatch) -> None:  # noqa: ANN001
    from hippo_core.index import segments

    conv = Conversation(conversation_id="c", source="claude_ai", title="Yoga")
    messages = [
        msg(0, "I started a yoga class on Tuesday", 0),
        msg(1, "Nice, which style?", 1, "assistant"),
        msg(2, "Hatha. How long do you hold a pose?", 2),
        msg(3, "30 to 60 seconds.", 3, "assistant"),
    ]

    def exchange_of_m3() -> str:
        rows = conversation_chunk_rows(conv, messages, "model-x", with_segments=False)
        return next(r for r in rows if r["granularity"] == "exchange" and r["anchor"].endswith("#m3"))[
            "index_text"
        ]

    monkeypatch.setattr(segments, "EXCHANGE_CONTEXT_MESSAGES", 1)
    assert exchange_of_m3() == (
        "Yoga\n20 November 2026\nuser: Hatha. How long do you hold a pose?\nassistant: 30 to 60 seconds."
    )
    monkeypatch.setattr(segments, "EXCHANGE_CONTEXT_MESSAGES", 2)  # m1 and m2, not m0
    assert exchange_of_m3() == (
        "Yoga\n20 November 2026\nassistant: Nice, which style?\nuser: Hatha. How long do you hold a pose?\n"
        "assistant: 30 to 60 seconds."
    )
    rows = conversation_chunk_rows(conv, messages, "model-x", with_segments=False)
    plain = next(r for r in rows if r["granularity"] == "message" and r["anchor"].endswith("#m0"))
    assert plain["index_text"] == "Yoga\n20 November 2026\nuser: I started a yoga class on Tuesday"
    assert plain["text"] == "user: I started a yoga class on Tuesday"  # the day is searched, not shown
    undated = conversation_chunk_rows(conv, [msg(0, "hi", 0).model_copy(update={"timestamp": None})], "m")
    assert undated[0]["index_text"] == "Yoga\nuser: hi"
