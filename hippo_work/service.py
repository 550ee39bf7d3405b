"""Work memory calls: resume, sync, checkpoint, worklog, handoff (S0 §7.1 "공유 기억 흐름").

The REST routes, MCP tools and CLI commands are thin wrappers over `WorkMemory`; each returns a
`Compact` result (`.dump(verbose)` for JSON) or raises a `WorkMemoryError` (`code` + reason).
"""

from __future__ import annotations

import datetime as dt
import fcntl
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field

from hippo_core.agents.work_memory import (
    HANDOFF_FILE,
    WORKLOG_FILE,
    Checkpoint,
    CheckpointKind,
    Compact,
    Conflict,
    InvalidCursor,
    Refused,
    Resume,
    Unavailable,
    WorklogItem,
    append_worklog,
    assemble_resume,
    current_handoff,
    format_cursor,
    handoff_block,
    new_handoff,
    new_worklog,
    open_items,
    ops_path,
    parse_cursor,
    replace_handoff,
    require_text,
    screen,
    validate_agent,
    validate_project,
    verbose_only,
    worklog_line,
)
from hippo_core.safety.scrub import scrub
from hippo_core.safety.text_input import BadTextError, decode_utf8
from hippo_core.safety.untrusted import WORK_NOTICE
from hippo_work.config import WorkLimits

if TYPE_CHECKING:
    from hippo_resources.vault import Vault
    from hippo_resources.work_feed import WorkFeed

Clock = Callable[[], dt.datetime]


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@contextmanager
def vault_lock(vault: Vault) -> Iterator[None]:
    """One writer at a time for a read-modify-write of a vault file plus its git commit (two agents at
    once would lose a line or collide on git's index lock)."""
    lock_dir = vault.path / ".git" if vault.is_git_repo() else vault.path
    with open(Path(lock_dir) / ".hippo-ops.lock", "a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def redact_item(item: WorklogItem) -> WorklogItem:
    """A worklog item with credential shapes redacted (`hippo_core.safety.scrub`)."""
    nxt = scrub(item.next).text if item.next else item.next
    return item.model_copy(update={"what": scrub(item.what).text, "next": nxt, "who": scrub(item.who).text})


def writable_vault(vault: Vault | None, why: str) -> Vault:
    """`vault` when writes may go there; Unavailable with the reason (and the fix) otherwise."""
    from hippo_resources.vault import VaultError

    if vault is None or not vault.path.is_dir():
        raise Unavailable(f"no vault is configured (HIPPO_VAULT): {why}")
    try:
        vault.check_writable()
    except VaultError as exc:
        raise Unavailable(str(exc)) from None
    return vault


class SyncResult(Compact):
    project: str
    untrusted: bool = True
    notice: str = WORK_NOTICE
    entries: list[Checkpoint] = Field(default_factory=list)
    cursor: str = Field(description="Pass as `since` next time; it only moves past what was returned.")
    has_more: bool = Field(description="True: call hippo_sync again with the new cursor.")
    head: int | None = verbose_only(description="The project's newest seq.")


class CheckpointResult(Compact):
    project: str
    seq: int = Field(description="This write's own position. Do not use it as your read cursor.")
    kind: CheckpointKind
    ts: str
    duplicate: bool = Field(
        description="True when this (session_id, event_id) was already stored: the first record."
    )
    notice: str | None = Field(default=None, description="Set with `unseen`: it is quoted material.")
    unseen: list[Checkpoint] | None = Field(
        default=None,
        description="Entries written after your base_cursor by other sessions: reconcile with them.",
    )
    unseen_more: bool | None = Field(default=None, description="More unseen entries than listed: hippo_sync.")
    base_cursor: str | None = verbose_only()


class FileWriteResult(Compact):
    project: str
    path: str
    commit: str | None = Field(
        default=None, description="The git commit of this write (None: vault not in git)."
    )
    line: str | None = None
    kept_person_edit: bool | None = Field(
        default=None,
        description="True: a person had edited the previous handoff block; it was kept as their text.",
    )


class WorkMemory:
    """The work-memory calls over a `WorkStore` and (for worklog/handoff/resume files) the `Vault`."""

    def __init__(
        self,
        store: WorkFeed,
        vault: Vault | None = None,
        limits: WorkLimits | None = None,
        clock: Clock = utc_now,
    ) -> None:
        self.store = store
        self.vault = vault
        self.limits = limits or WorkLimits()
        self.clock = clock

    # --- reads --------------------------------------------------------------------------------
    def resume(self, project: str, session_id: str | None = None, budget: int | None = None) -> Resume:
        """The latest handoff, the latest work and conversation checkpoints of other sessions, open worklog
        items and the cursor to sync from; most recent first, within `budget` bytes of JSON."""
        validate_project(project)
        generation, head, recent = self.store.resume_state(project, self.limits.resume_sessions + 1)
        handoff = items = None
        if self._vault_ready():
            handoff_text = self._read(ops_path(project, HANDOFF_FILE))
            handoff = current_handoff(handoff_text) if handoff_text else None
            worklog_text = self._read(ops_path(project, WORKLOG_FILE))
            items = open_items(worklog_text) if worklog_text else None
            # the files are a person's too: a secret written there by hand stays on disk, not in the resume
            handoff = scrub(handoff).text if handoff else handoff
            items = [redact_item(i) for i in items or []]
        return assemble_resume(
            project,
            format_cursor(generation, head),
            handoff,
            recent,
            items or [],
            budget=budget or self.limits.resume_budget,
            session_id=session_id,
        )

    def sync(self, project: str, since: str | None = None, limit: int | None = None) -> SyncResult:
        """A page of the change feed after `since`; repeat with the returned cursor until has_more is false."""
        validate_project(project)
        page = limit or self.limits.sync_page
        if not 1 <= page <= self.limits.sync_page_max:
            raise Refused(f"limit must be between 1 and {self.limits.sync_page_max}", "bad_field")
        generation, head = self.store.state(project)
        start = parse_cursor(since, generation)
        if start > head:
            raise InvalidCursor(f"cursor seq {start} is past the project's head {head}; sync again from 0")
        rows = self.store.after(project, start, page + 1)
        entries, has_more = rows[:page], len(rows) > page
        end = entries[-1].seq if entries else start
        return SyncResult(
            project=project,
            entries=entries,
            cursor=format_cursor(generation, end),
            has_more=has_more,
            head=head,
        )

    # --- writes -------------------------------------------------------------------------------
    def checkpoint(
        self,
        project: str,
        kind: CheckpointKind,
        summary: str,
        session_id: str,
        event_id: str,
        base_cursor: str | None = None,
        agent: str | None = None,
    ) -> CheckpointResult:
        """Record a work or conversation summary. Idempotent on (project, session_id, event_id).

        When `base_cursor` is behind the head the write is kept and `unseen` lists what other sessions
        wrote after it. A cursor of another generation (a restore) is refused: sync again from 0."""
        validate_project(project)
        base_seq = parse_cursor(base_cursor, self.store.generation()) if base_cursor else None
        record, created = self.store.append(
            project, kind, summary, session_id, event_id, agent=agent, base_seq=base_seq, ts=self._stamp()
        )
        if not created and (record.kind, record.summary.strip()) != (kind, summary.strip()):
            raise Conflict(
                f"event_id {event_id!r} of session {session_id!r} was already used for another {record.kind} "
                "checkpoint; a resend must carry the same body (use a new event_id for new work)"
            )
        unseen = unseen_more = None
        if base_seq is not None and base_seq < record.seq - 1:
            rows = self.store.between(project, base_seq, record.seq, session_id, self.limits.unseen_max + 1)
            unseen = rows[: self.limits.unseen_max] or None
            unseen_more = (len(rows) > self.limits.unseen_max) or None
        return CheckpointResult(
            project=project,
            seq=record.seq,
            kind=record.kind,
            ts=record.ts,
            duplicate=not created,
            notice=WORK_NOTICE if unseen else None,
            unseen=unseen,
            unseen_more=unseen_more,
            base_cursor=base_cursor,
        )

    def worklog(
        self, project: str, entry: str, next_step: str | None = None, agent: str | None = None
    ) -> FileWriteResult:
        """Append `- **date** (agent): entry. Next: …` under this month's heading of
        `50-ops/<project>/worklog.md`, as one git commit. Lines a person wrote are never changed."""
        validate_project(project)
        entry = require_text(entry, "entry")
        who = validate_agent(agent)
        screen({"entry": entry, "next": next_step}, self.limits.worklog_max_bytes)
        vault = self._vault()
        now = self.clock()
        path = ops_path(project, WORKLOG_FILE)
        line = worklog_line(now.date().isoformat(), who, entry, next_step)
        with vault_lock(vault):
            text = self._read(path) or new_worklog(project, now.date().isoformat())
            vault.write_text(path, append_worklog(text, line, now.strftime("%Y-%m")))
            sha = vault.commit(f"worklog({project}): {who}", [path])
        return FileWriteResult(project=project, path=path, commit=sha, line=line)

    def handoff(self, project: str, text: str, agent: str | None = None) -> FileWriteResult:
        """Rewrite the handoff block of `50-ops/<project>/handoff.md` (one git commit; the previous
        handoff stays in git history, and a block a person edited is kept as their text)."""
        validate_project(project)
        text = require_text(text, "text")
        who = validate_agent(agent)
        screen({"text": text}, self.limits.handoff_max_bytes)
        vault = self._vault()
        now = self.clock()
        path = ops_path(project, HANDOFF_FILE)
        with vault_lock(vault):
            before = self._read(path) or new_handoff(project, now.date().isoformat())
            after, kept = replace_handoff(before, handoff_block(text, who, now.date().isoformat()))
            vault.write_text(path, after)
            sha = vault.commit(f"handoff({project}): {who}", [path])
        return FileWriteResult(project=project, path=path, commit=sha, kept_person_edit=kept or None)

    # --- helpers ------------------------------------------------------------------------------
    def _stamp(self) -> str:
        return self.clock().astimezone(dt.UTC).isoformat(timespec="seconds")

    def _vault_ready(self) -> bool:
        return self.vault is not None and self.vault.path.is_dir()

    def _vault(self) -> Vault:
        """The vault to write into: configured, and a folder `hippo init` adopted (checked before any file,
        the lock included, is created there)."""
        return writable_vault(self.vault, "worklog and handoff write Markdown into the vault")

    def _read(self, rel: str) -> str | None:
        assert self.vault is not None
        try:
            if not self.vault.exists(rel):
                return None
            return decode_utf8(self.vault.read_bytes(rel), rel)
        except (BadTextError, RuntimeError, OSError) as exc:  # VaultError is a RuntimeError
            raise Refused(f"{rel} cannot be read: {exc}", "bad_field") from None
