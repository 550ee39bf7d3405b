"""Two agents sharing a project's work memory, on SQLite and on PostgreSQL."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import psycopg2
import pytest

from hippo_core.agents.work_memory import InvalidCursor, Refused
from hippo_resources.stores import registered_stores, restore, snapshot
from hippo_resources.work_store import WorkStore
from hippo_work import WorkLimits, WorkMemory
from tests.work.conftest import Clock


def test_two_sessions_checkpoint_resume_sync_and_stale_base_cursor(
    work_store: WorkStore, clock: Clock
) -> None:
    memory = WorkMemory(work_store, limits=WorkLimits(sync_page=3), clock=clock)
    a = memory.checkpoint(
        "payments-api", "work", "Raised POOL_TIMEOUT to 5 s.", "sess-a", "evt-1", agent="claude-code"
    )
    again = memory.checkpoint("payments-api", "work", "Raised POOL_TIMEOUT to 5 s.", "sess-a", "evt-1")
    assert (a.seq, a.duplicate) == (1, False)
    assert (again.seq, again.duplicate, again.ts) == (1, True, a.ts)
    assert memory.sync("payments-api").entries == [memory.sync("payments-api").entries[0]]  # one record

    # B starts: it sees A's checkpoint in its resume, and the cursor to sync from.
    resume = memory.resume("payments-api", session_id="sess-b")
    assert [c.summary for c in resume.checkpoints] == ["Raised POOL_TIMEOUT to 5 s."]
    b_cursor = resume.cursor

    # A keeps working: 7 more entries (work + conversation).
    for i in range(2, 9):
        clock.advance(minutes=1)
        memory.checkpoint(
            "payments-api", "conversation" if i % 2 else "work", f"step {i}", "sess-a", f"evt-{i}"
        )

    # B syncs with paging until has_more is false; the cursor only moves past what was returned.
    seen: list[int] = []
    cursor = b_cursor
    pages = 0
    while True:
        page = memory.sync("payments-api", since=cursor)
        seen += [e.seq for e in page.entries]
        cursor, pages = page.cursor, pages + 1
        if not page.has_more:
            break
    assert seen == list(range(2, 9)) and pages == 3
    assert memory.sync("payments-api", since=cursor).entries == []

    # B writes with its stale base cursor (from resume): the write is kept, unseen lists A's entries.
    b = memory.checkpoint(
        "payments-api", "work", "Added a regression test.", "sess-b", "evt-b1", base_cursor=b_cursor
    )
    assert b.seq == 9 and not b.duplicate
    assert [u.seq for u in b.unseen or []] == list(range(2, 9))
    fresh = memory.checkpoint("payments-api", "work", "Docs.", "sess-b", "evt-b2", base_cursor=cursor)
    assert fresh.unseen is None  # B's own write in between is not "unseen"
    assert "unseen" not in fresh.dump() and "base_cursor" not in fresh.dump()


def test_a_secret_in_a_checkpoint_is_refused_and_nothing_is_stored(work_store: WorkStore) -> None:
    memory = WorkMemory(work_store)
    with pytest.raises(Refused) as info:
        memory.checkpoint("payments-api", "work", "use AKIAIOSFODNN7EXAMPLE for s3", "sess-a", "evt-1")
    assert info.value.kind == "secret" and "AKIAIOSFODNN7EXAMPLE" not in str(info.value)
    with pytest.raises(Refused):
        memory.checkpoint("Payments API", "work", "fine text", "sess-a", "evt-1")
    with pytest.raises(Refused):
        memory.checkpoint("payments-api", "work", "x" * 9000, "sess-a", "evt-1")
    assert memory.sync("payments-api").entries == []
    assert work_store.head("payments-api") == 0
    ok = memory.checkpoint("payments-api", "work", "the clean retry", "sess-a", "evt-1")
    assert ok.seq == 1  # nothing was consumed by the refused writes


def test_concurrent_resends_make_one_record(work_store: WorkStore) -> None:
    memory = WorkMemory(work_store)
    memory.resume("payments-api")  # the schema exists before the threads start
    results: list[int] = []
    errors: list[BaseException] = []

    def send(event: str) -> None:
        try:
            results.append(memory.checkpoint("payments-api", "work", f"summary {event}", "sess-a", event).seq)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=send, args=(f"evt-{i % 3}",)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    entries = memory.sync("payments-api", limit=50).entries
    assert sorted(e.event_id for e in entries) == ["evt-0", "evt-1", "evt-2"]
    assert [e.seq for e in entries] == [1, 2, 3]  # no gaps either
    assert sorted(set(results)) == [1, 2, 3] and len(results) == 12


def test_checkpoints_are_append_only_in_the_schema(work_store: WorkStore) -> None:
    WorkMemory(work_store).checkpoint("payments-api", "work", "kept forever", "sess-a", "evt-1")
    if work_store.backend == "sqlite":
        conn = sqlite3.connect(work_store.path)
        for sql in ("UPDATE checkpoints SET summary = 'x'", "DELETE FROM checkpoints"):
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                conn.execute(sql)
        conn.close()
    else:
        for sql in (
            "UPDATE checkpoints SET summary = 'x'",
            "DELETE FROM checkpoints",
            "TRUNCATE checkpoints",
        ):
            conn = psycopg2.connect(work_store.pg_dsn, options=f"-c search_path={work_store.pg_schema}")
            with pytest.raises(psycopg2.Error, match="append-only"), conn.cursor() as cur:
                cur.execute(sql)
            conn.close()
    assert [e.summary for e in WorkMemory(work_store).sync("payments-api").entries] == ["kept forever"]


def test_a_restored_store_answers_an_old_cursor_with_invalid_cursor(
    work_store: WorkStore, tmp_path: Path
) -> None:
    memory = WorkMemory(work_store)
    memory.checkpoint("payments-api", "work", "before the snapshot", "sess-a", "evt-1")
    (registered,) = registered_stores({"work_store": work_store})
    snap = snapshot(registered, tmp_path / "backups")
    assert snap is not None
    memory.checkpoint("payments-api", "work", "after the snapshot", "sess-a", "evt-2")
    old_cursor = memory.sync("payments-api").cursor
    restore(registered, snap)
    with pytest.raises(InvalidCursor) as info:
        memory.sync("payments-api", since=old_cursor)
    assert info.value.code == "invalid_cursor"
    with pytest.raises(InvalidCursor):
        memory.checkpoint("payments-api", "work", "x", "sess-a", "evt-3", base_cursor=old_cursor)
    fresh = memory.sync("payments-api", since="0")  # clients re-read from 0
    assert [e.summary for e in fresh.entries] == ["before the snapshot"]
    assert not fresh.cursor.startswith(old_cursor.split(":")[0])
