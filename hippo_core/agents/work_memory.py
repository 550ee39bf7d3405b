"""Agents' shared work memory, pure: entries, project slugs, cursors, the resume digest, and the
worklog / handoff Markdown in `50-ops/<project>/`.

Seeds S0 §7.1 and §10: `hippo_resume` at session start, `hippo_sync` until `has_more` is false,
`hippo_checkpoint(kind='work'|'conversation')` idempotent on (session_id, event_id), a base cursor on
every write, and `invalid_cursor` after a restore. The cursor carries the store generation
(`<generation>:<seq>`), the fix S0 plans as "세대 ID (M4)". No I/O here: the stores and the vault live
in `hippo_resources`, the calls in `hippo_work`.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, SerializationInfo, SerializerFunctionWrapHandler, model_serializer

from hippo_core.safety.scanners import find_injections, find_secrets
from hippo_core.safety.untrusted import WORK_NOTICE
from hippo_core.vault.fingerprints import sha256_text
from hippo_core.vault.frontmatter import render as render_frontmatter
from hippo_core.vault.vault_layout import OPS

CheckpointKind = Literal["work", "conversation"]
CHECKPOINT_KINDS: tuple[str, ...] = CheckpointKind.__args__  # type: ignore[attr-defined]
RefusalKind = Literal["bad_project", "bad_field", "too_large", "secret", "injection", "exists"]

PROJECT_MAX_CHARS = 64
ID_MAX_CHARS = 128
AGENT_MAX_CHARS = 64
DEFAULT_RESUME_BUDGET = 8 * 1024


# --- errors (REST maps them to 4xx, MCP to tool errors) ---------------------------------------------
class WorkMemoryError(ValueError):
    """A request the work memory cannot serve; `code` is the machine-readable error, the message the why."""

    code = "invalid_request"

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Refused(WorkMemoryError):
    """A write refused before anything was stored: a secret, an injection, too large, a bad slug."""

    code = "refused"

    def __init__(self, reason: str, kind: RefusalKind = "bad_field") -> None:
        super().__init__(reason)
        self.kind = kind


class InvalidCursor(WorkMemoryError):
    """The cursor belongs to another store generation (a restore) or is malformed: re-read from 0."""

    code = "invalid_cursor"


class Conflict(WorkMemoryError):
    """An idempotent resend whose body differs from the first: the event id was reused for other work."""

    code = "conflict"


class NotFound(WorkMemoryError):
    """The thing named (a memory id) does not exist."""

    code = "not_found"


class Unavailable(WorkMemoryError):
    """The backing the call needs (the vault, an embedder) is not configured."""

    code = "unavailable"


# --- compact results --------------------------------------------------------------------------------
class Compact(BaseModel):
    """A result whose JSON leaves out null fields and the verbose-only ones unless asked for.

    Mark a field verbose-only with `Field(json_schema_extra={"verbose": True})`; `dump(verbose=True)`
    gives the long form with every field.
    """

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, Any]:
        data = handler(self)
        if (info.context or {}).get("verbose"):
            return data
        hidden = {
            name
            for name, field in type(self).model_fields.items()
            if isinstance(field.json_schema_extra, dict) and field.json_schema_extra.get("verbose")
        }
        return {k: v for k, v in data.items() if v is not None and k not in hidden}

    def dump(self, verbose: bool = False) -> dict[str, Any]:
        return self.model_dump(mode="json", context={"verbose": verbose})

    def json_bytes(self, verbose: bool = False) -> int:
        return len(json.dumps(self.dump(verbose), ensure_ascii=False, separators=(",", ":")).encode())


def verbose_only(default: Any = None, description: str | None = None) -> Any:
    return Field(default=default, description=description, json_schema_extra={"verbose": True})


# --- validation -------------------------------------------------------------------------------------
_SLUG = re.compile(r"[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+/=-]*")


def validate_project(project: object) -> str:
    """A project is a plain slug (`a-z`, `0-9`, `-`, `_`; starts and ends with a letter or digit)."""
    if not isinstance(project, str) or not project.strip():
        raise Refused("project is empty; give a plain slug such as 'payments-api'", "bad_project")
    if len(project) > PROJECT_MAX_CHARS:
        raise Refused(
            f"project is {len(project)} characters; the limit is {PROJECT_MAX_CHARS}", "bad_project"
        )
    if _SLUG.fullmatch(project):
        refuse_secret(project, "project")
        return project
    hint = suggest_slug(project)
    tip = f" (try {hint!r})" if hint and hint != project else ""
    if project != project.lower():
        raise Refused(f"project {project!r} must be lowercase{tip}", "bad_project")
    bad = sorted({c for c in project if not (c.isascii() and (c.isalnum() or c in "-_"))})
    if bad:
        shown = "".join(bad)[:10]
        raise Refused(
            f"project may only hold a-z, 0-9, '-' and '_'; {shown!r} is not allowed{tip}", "bad_project"
        )
    raise Refused(f"project {project!r} must start and end with a letter or digit{tip}", "bad_project")


def suggest_slug(name: str) -> str | None:
    """The plain slug closest to a folder or repository name (accents folded); None when nothing is left."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    slug = re.sub(r"[^a-z0-9_-]+", "-", folded)
    slug = re.sub(r"-{2,}", "-", slug).strip("-_")[:PROJECT_MAX_CHARS].strip("-_")
    return slug or None


def validate_id(value: object, what: str) -> str:
    """A session or event id: 1–128 visible ASCII characters, no spaces."""
    if not isinstance(value, str) or not value:
        raise Refused(f"{what} is empty", "bad_field")
    if len(value) > ID_MAX_CHARS:
        raise Refused(f"{what} is {len(value)} characters; the limit is {ID_MAX_CHARS}", "bad_field")
    if not _ID.fullmatch(value):
        raise Refused(f"{what} may only hold letters, digits and . _ : @ + / = -", "bad_field")
    refuse_secret(value, what)
    return value


def refuse_secret(value: str, what: str) -> None:
    """Refuse a field (an id, a slug, a name) holding a credential: it would be stored and shown to every
    later session (attack-run-2 N13)."""
    kinds = sorted({f.kind for f in find_secrets(value)})
    if kinds:
        raise Refused(f"{what} holds a credential-shaped string ({', '.join(kinds)}); use another", "secret")


def validate_agent(value: str | None, default: str = "agent") -> str:
    """Who wrote an entry, as shown in the worklog's `(who)`: one short line, no parentheses."""
    if value is None or not value.strip():
        return default
    agent = " ".join(value.split())
    if len(agent) > AGENT_MAX_CHARS:
        raise Refused(f"agent is {len(agent)} characters; the limit is {AGENT_MAX_CHARS}", "bad_field")
    if any(c in "()[]*\\`<>" or not c.isprintable() for c in agent):
        raise Refused("agent may not hold brackets, parentheses, '*', '`' or control characters", "bad_field")
    refuse_secret(agent, "agent")
    return agent


# A Hippocampus block marker (`<!-- hippo:handoff fp:… -->`, `<!-- /hippo:handoff -->`, any `<!-- hippo…`):
# agent text holding one could turn itself into "a person's edit" or hide the real block (N12).
MARKER = re.compile(r"<!--[\s/]{0,8}+hippo", re.IGNORECASE)


def screen(fields: Mapping[str, str | None], max_bytes: int) -> None:
    """Refuse a write whose text is too large, holds a secret or a stored prompt injection.

    Runs the project's scanners (`hippo_core.safety.scanners`), the same walls as topics and captures (S0 §4.4).
    """
    for name, value in fields.items():
        if value is None:
            continue
        if "\x00" in value:
            raise Refused(f"{name} contains a NUL character", "bad_field")
        try:
            size = len(value.encode("utf-8"))
        except UnicodeEncodeError:
            raise Refused(f"{name} is not valid UTF-8 (lone surrogate)", "bad_field") from None
        if size > max_bytes:
            raise Refused(f"{name} is {size} bytes; the limit is {max_bytes} bytes", "too_large")
    for name, value in fields.items():
        if not value:
            continue
        if MARKER.search(value):
            raise Refused(
                f"{name} holds a Hippocampus block marker ('<!-- hippo…'); agents may not write markers",
                "injection",
            )
        secrets = sorted({f.kind for f in find_secrets(value)})
        if secrets:
            raise Refused(
                f"{name} holds a credential-shaped string ({', '.join(secrets)}); remove it and send again",
                "secret",
            )
        injections = sorted({f.kind for f in find_injections(value)})
        if injections:
            raise Refused(
                f"{name} looks like a stored prompt injection ({', '.join(injections)}); rephrase it",
                "injection",
            )


def require_text(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Refused(f"{what} is empty", "bad_field")
    return value.strip()


def truncate_utf8(text: str, max_bytes: int, mark: str = " …") -> str:
    """Cut `text` to at most `max_bytes` of UTF-8 on a character boundary, marking the cut."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    room = max(0, max_bytes - len(mark.encode()))
    return data[:room].decode("utf-8", "ignore").rstrip() + mark


# --- cursors ----------------------------------------------------------------------------------------
def format_cursor(generation: str, seq: int) -> str:
    return f"{generation}:{seq}"


def parse_cursor(cursor: str | None, generation: str) -> int:
    """The seq a cursor points at. Empty or "0" means the start; another generation is `invalid_cursor`."""
    if cursor is None or cursor.strip() in ("", "0"):
        return 0
    gen, sep, seq = cursor.strip().rpartition(":")
    if not sep or not gen or not (seq.isascii() and seq.isdigit()) or len(seq) > 18:
        raise InvalidCursor(f"cursor {cursor[:40]!r} is not '<generation>:<seq>'; sync again from 0")
    if gen != generation:
        raise InvalidCursor(
            f"cursor is from store generation {gen[:16]!r}, the store is now {generation!r}"
            " (it was restored); sync again from 0"
        )
    return int(seq)


# --- entries ----------------------------------------------------------------------------------------
class Checkpoint(Compact):
    """One entry of a project's change feed."""

    seq: int = Field(description="Position in the project's feed (1, 2, 3 …); never reused in a generation.")
    kind: CheckpointKind
    summary: str
    session_id: str
    event_id: str
    agent: str | None = None
    ts: str = Field(description="When it was written, ISO 8601 UTC.")
    project: str | None = verbose_only()
    base_seq: int | None = verbose_only(description="The writer's last-read seq when it wrote this.")


class WorklogItem(Compact):
    date: str
    who: str
    what: str
    next: str | None = None
    line: int | None = verbose_only(description="0-based line in worklog.md.")


class Omitted(Compact):
    checkpoints: int = 0
    open_items: int = 0
    handoff_chars: int = 0


class Resume(Compact):
    """What a new session needs to continue a project, newest first, within a byte budget."""

    project: str
    untrusted: bool = True
    notice: str = WORK_NOTICE
    cursor: str = Field(description="Pass to hippo_sync(since=…) to read what is written after this.")
    handoff: str | None = None
    checkpoints: list[Checkpoint] = Field(default_factory=list)
    open_items: list[WorklogItem] = Field(default_factory=list)
    omitted: Omitted | None = None
    note: str | None = None
    budget: int | None = verbose_only()


def assemble_resume(
    project: str,
    cursor: str,
    handoff: str | None,
    checkpoints: Iterable[Checkpoint],
    open_items: Iterable[WorklogItem],
    budget: int = DEFAULT_RESUME_BUDGET,
    session_id: str | None = None,
) -> Resume:
    """The resume digest: the handoff, then checkpoints of *other* sessions and open worklog items merged
    newest first, until the compact JSON would pass `budget` bytes; what was cut is counted in `omitted`.

    The handoff takes at most half the budget, so one long handoff never hides every checkpoint.
    """
    cps = sorted((c for c in checkpoints if c.session_id != session_id), key=lambda c: c.seq, reverse=True)
    items = sorted(open_items, key=lambda i: (i.date, i.line or 0), reverse=True)
    omitted = Omitted()
    reserve = 360  # room for `omitted` and `note`
    if handoff is not None:
        cap = max(0, budget // 2)
        cut = truncate_utf8(handoff, cap)
        omitted.handoff_chars = len(handoff) - len(cut.removesuffix(" …"))
        handoff = cut
    out = Resume(project=project, cursor=cursor, handoff=handoff, budget=budget)
    used = out.json_bytes() + reserve
    # Merge by recency: checkpoints carry a full timestamp, worklog items a date; both sort as text.
    queue: list[Checkpoint | WorklogItem] = sorted(
        [*cps, *items], key=lambda e: e.ts if isinstance(e, Checkpoint) else e.date, reverse=True
    )
    smallest = 40  # no entry's JSON is shorter: once less room is left, the rest is only counted
    for entry in queue:
        is_cp = isinstance(entry, Checkpoint)
        size = entry.json_bytes() + 1 if budget - used >= smallest else budget
        if used + size <= budget:
            (out.checkpoints if is_cp else out.open_items).append(entry)  # type: ignore[arg-type]
            used += size
        elif is_cp:
            omitted.checkpoints += 1
        else:
            omitted.open_items += 1
    if omitted.checkpoints or omitted.open_items or omitted.handoff_chars:
        out.omitted = omitted
        parts = []
        if omitted.checkpoints:
            parts.append(f"{omitted.checkpoints} older checkpoint(s)")
        if omitted.open_items:
            parts.append(f"{omitted.open_items} older open item(s)")
        if omitted.handoff_chars:
            parts.append(f"the last {omitted.handoff_chars} characters of the handoff")
        out.note = (
            f"Left out to stay within {budget} bytes: {', '.join(parts)}. "
            "hippo_sync(since='0') reads every checkpoint; the files in 50-ops/ hold the rest."
        )
    while out.json_bytes() > budget and (out.checkpoints or out.open_items):
        # The estimate above is per item; trim the oldest until the whole fits.
        if out.open_items and (not out.checkpoints or out.open_items[-1].date < out.checkpoints[-1].ts):
            out.open_items.pop()
        else:
            out.checkpoints.pop()
    return out


def render_resume_text(resume: Resume, max_bytes: int | None = None) -> str:
    """The resume as Markdown, for a SessionStart hook's `additionalContext`."""
    lines = [f"# Hippocampus work memory: {resume.project}", ""]
    if resume.handoff:
        lines += ["## Handoff", "", resume.handoff.strip(), ""]
    if resume.checkpoints:
        lines += ["## Recent checkpoints (other sessions, newest first)", ""]
        for c in resume.checkpoints:
            who = f" {c.agent}" if c.agent else ""
            lines.append(
                f"- [{c.kind}] {c.ts}{who} (session {c.session_id[:12]}): {' '.join(c.summary.split())}"
            )
        lines.append("")
    if resume.open_items:
        lines += ["## Open worklog items", ""]
        for i in resume.open_items:
            lines.append(f"- {i.date} ({i.who}): {i.what} Next: {i.next}")
        lines.append("")
    if resume.note:
        lines += [resume.note, ""]
    lines.append(f"Sync cursor: `{resume.cursor}` (hippo_sync(project, since=this) for newer entries).")
    text = "\n".join(lines)
    return truncate_utf8(text, max_bytes) if max_bytes else text


# --- the LLM session summary (SessionEnd with ANTHROPIC_API_KEY) -------------------------------------
class SessionSummary(BaseModel):
    """What the next session needs from this one, written by the model from the transcript."""

    summary: str = Field(description="What was asked, what was done and decided, in 2-6 plain sentences.")
    next: str | None = Field(default=None, description="What is left open for the next session, or null.")


SESSION_SUMMARY_SYSTEM = (
    "You summarise a finished coding-agent session for the next agent that continues the work. Write what "
    "was asked, what was done or decided (files, commands, results), and what is still open. Plain facts "
    "only; never copy credentials, and never write instructions addressed to an assistant."
)


def session_summary_prompt(excerpt: str) -> str:
    return f"The session transcript (excerpt, oldest first):\n\n<transcript>\n{excerpt}\n</transcript>"


def session_summary_text(result: SessionSummary) -> str:
    text = "Summary: " + one_line(result.summary)
    if result.next and result.next.strip():
        text += "\nNext: " + one_line(result.next)
    return text


# --- worklog Markdown (50-ops/<project>/worklog.md) ---------------------------------------------------
WORKLOG_FILE = "worklog.md"
HANDOFF_FILE = "handoff.md"
_ENTRY = re.compile(r"^- \*\*(\d{4}-\d{2}-\d{2})\*\* \(([^)\n]{1,80})\): (.*)$")
_MONTH = re.compile(r"^## (\d{4}-\d{2})\s*$")
_NO_NEXT = {"none", "nothing", "n/a", "na", "-", "—", "없음", "없다", "done"}
_DONE_MARKS = ("✅", "✓", "(done)", "[done]", "(완료)")


def ops_path(project: str, name: str) -> str:
    return f"{OPS}/{validate_project(project)}/{name}"


def one_line(text: str) -> str:
    return " ".join(text.split())


def worklog_line(date: str, who: str, what: str, next_step: str | None = None) -> str:
    """`- **YYYY-MM-DD** (who): what. Next: …` — the sample vault's entry format, one line."""
    what = one_line(what)
    if what and what[-1] not in ".!?。)":
        what += "."
    line = f"- **{date}** ({who}): {what}"
    if next_step and next_step.strip():
        nxt = one_line(next_step)
        line += f" Next: {nxt}" + ("" if nxt[-1] in ".!?。)" else ".")
    return line


def _ops_file(kind: str, project: str, date: str, trust: str, intro: str) -> str:
    """A new 50-ops file: a map page with the vault's frontmatter, a heading and one paragraph."""
    fields = {
        "type": "map",
        "status": "reference",
        "trust": trust,
        "title": f"{kind}: {project}",
        "created": date,
        "tags": ["ops", kind.lower()],
    }
    return render_frontmatter(fields, f"\n# {kind}: {project}\n\n{intro}\n")


def new_worklog(project: str, date: str) -> str:
    return _ops_file(
        "Worklog",
        project,
        date,
        "human_edit",
        "Shared work memory for people and agents on this project. One entry per line: date, who, what, "
        "and what comes next. Newest entries at the bottom. Close an item by ending its line with ✅.",
    )


def append_worklog(text: str, line: str, month: str) -> str:
    """Insert `line` at the end of the `## month` section (a new section at the end when absent).

    Only inserts lines: every existing line, a person's included, stays byte for byte.
    """
    lines = text.split("\n")
    heading = None
    for i, raw in enumerate(lines):
        m = _MONTH.match(raw)
        if m and m.group(1) == month:
            heading = i
    if heading is None:
        while lines and lines[-1] == "":
            lines.pop()
        return "\n".join([*lines, "", f"## {month}", "", line, ""])
    end = len(lines)
    for j in range(heading + 1, len(lines)):
        if lines[j].startswith("## ") or lines[j].startswith("# "):
            end = j
            break
    last = end - 1
    while last > heading and lines[last].strip() == "":
        last -= 1
    insert_at = last + 1
    if last == heading:  # an empty section: keep one blank line under the heading
        lines.insert(insert_at, "")
        insert_at += 1
    lines.insert(insert_at, line)
    out = "\n".join(lines)
    return out if out.endswith("\n") else out + "\n"


def _entries(text: str) -> list[tuple[int, str, str, str, str]]:
    """(line, date, who, what, next) of every entry line in the sample vault's format."""
    out = []
    for i, raw in enumerate(text.split("\n")):
        m = _ENTRY.match(raw.rstrip())
        if not m:
            continue
        rest = m.group(3)
        what, sep, nxt = rest.rpartition(" Next: ")
        if not sep:
            what, nxt = rest, ""
        out.append((i, m.group(1), m.group(2), what.strip(), nxt.strip()))
    return out


def _item(line: int, date: str, who: str, what: str, nxt: str) -> WorklogItem:
    # Built without validation: every field is a string the regex just matched.
    return WorklogItem.model_construct(date=date, who=who, what=what, next=nxt or None, line=line)


def parse_worklog(text: str) -> list[WorklogItem]:
    """Every entry line in the sample vault's format; other lines (a person's notes) are ignored."""
    return [_item(*e) for e in _entries(text)]


def is_open(next_step: str | None, raw_line: str = "") -> bool:
    """An entry with a `Next:` step that is not 'none' and not closed (✅, ✓, (done) or struck through)."""
    if not next_step or next_step.rstrip(" .").lower() in _NO_NEXT:
        return False
    line = raw_line or next_step
    return not ("~~" in line or line.rstrip().endswith(_DONE_MARKS))


def open_items(text: str) -> list[WorklogItem]:
    lines = text.split("\n")
    return [_item(*e) for e in _entries(text) if is_open(e[4], lines[e[0]])]


# --- handoff Markdown (50-ops/<project>/handoff.md) --------------------------------------------------
# The body stops at the next handoff marker, so a search is linear (a lazy `.*?` to the closing marker
# rescanned the rest of the file from every opening marker: 7.9 s on 125 KB of opening markers).
_BLOCK = re.compile(
    r"<!-- hippo:handoff fp:([0-9a-f]{12}) -->\n((?:(?!\n?<!-- /?hippo:handoff)[\s\S])*+)\n<!-- /hippo:handoff -->"
)


def _block_fp(body: str) -> str:
    return sha256_text(body)[:12]


def handoff_block(text: str, who: str, date: str) -> str:
    body = f"## Handoff — {date} ({who})\n\n{text.strip()}"
    return f"<!-- hippo:handoff fp:{_block_fp(body)} -->\n{body}\n<!-- /hippo:handoff -->"


def new_handoff(project: str, date: str) -> str:
    return _ops_file(
        "Handoff",
        project,
        date,
        "llm_context",
        "The latest handoff between sessions. Agents rewrite the block between the markers; git keeps "
        "every earlier one. Text outside the markers (or an edited block) is yours and is kept.\n",
    )


def current_handoff(text: str) -> str | None:
    """The text of the generated handoff block (its heading line dropped), or None."""
    m = _BLOCK.search(text)
    if not m:
        return None
    _, _, rest = m.group(2).partition("\n")
    return rest.strip() or None


def replace_handoff(text: str, block: str) -> tuple[str, bool]:
    """Put `block` in place of the generated block; returns (new text, a person's edit was kept).

    A block a person edited (its fingerprint no longer matches) becomes their text: its markers go, its
    words stay where they are, and the new block follows it."""
    m = _BLOCK.search(text)
    if m is None:
        base = text if text.endswith("\n") else text + "\n"
        return base + ("" if base.endswith("\n\n") else "\n") + block + "\n", False
    recorded, body = m.group(1), m.group(2)
    if _block_fp(body) == recorded:
        return text[: m.start()] + block + text[m.end() :], False
    return text[: m.start()] + body + "\n\n" + block + text[m.end() :], True
