"""Agent hooks: resume at session start, checkpoint at session end. They never fail the agent.

`hippo hook claude-code` reads Claude Code's hook JSON on stdin (`hook_event_name`, `session_id`,
`transcript_path`, `cwd`, `source`). On `SessionStart` it prints
`{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": <resume>}}`; on
`SessionEnd` it records a conversation checkpoint with an extractive summary of the transcript (the
first request and the last reply, scrubbed and bounded; no LLM). Codex: its `notify` program gets one
JSON argument per finished turn (`type: agent-turn-complete`, `thread-id`, `turn-id`, `cwd`,
`input-messages`, `last-assistant-message`; openai/codex docs/config.md, "notify"), which becomes a
conversation checkpoint; Codex's own SessionStart hook (stdin JSON, the same shape as Claude Code's)
gets the resume. On any error: exit code 0, nothing on stdout, the reason in
`$HIPPO_HOME/logs/hooks.log`.

Run as `python -m hippo_cli.hooks.session claude-code|codex [--project SLUG] [NOTIFY_JSON]`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from pydantic import BaseModel, ConfigDict

from hippo_core.recall.context import truncate_utf8
from hippo_core.safety.scanners import find_injections
from hippo_core.safety.scrub import scrub

if TYPE_CHECKING:
    from hippo_core.conversations import Message
    from hippo_settings import HippoSettings
    from hippo_work.service import WorkMemory

AGENTS = ("claude-code", "codex")
MAX_STDIN_BYTES = 1024 * 1024
TRANSCRIPT_HEAD_LINES = 400
HEAD_LINE_MAX_BYTES = 256 * 1024  # a longer transcript line is skipped (N17: memory bounded per line)
HEAD_MAX_BYTES = 8 * 1024 * 1024
TRANSCRIPT_TAIL_BYTES = 512 * 1024
ASKED_MAX_BYTES = 1200
REPLY_MAX_BYTES = 2400
LOG_FILE = "logs/hooks.log"


class HookInput(BaseModel):
    """The fields of a hook payload this module reads; others are allowed and ignored."""

    model_config = ConfigDict(extra="allow")

    hook_event_name: str
    session_id: str | None = None
    transcript_path: str | None = None
    cwd: str | None = None
    source: str | None = None
    reason: str | None = None
    prompt: str | None = None


def parse_hook_input(text: str) -> HookInput:
    """The payload; a bad one raises ValueError naming the fields only (the prompt is never echoed)."""
    from pydantic import ValidationError

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"hook input is not JSON (JSONDecodeError: {exc.msg} at position {exc.pos})"
        ) from None
    except RecursionError:
        raise ValueError("hook input is nested too deep") from None
    if not isinstance(data, dict):
        raise ValueError("hook input is not a JSON object")
    try:
        return HookInput.model_validate(data)
    except ValidationError as exc:
        where = ", ".join(".".join(str(p) for p in e["loc"]) + f": {e['type']}" for e in exc.errors())
        raise ValueError(f"hook input has bad fields ({where})") from None


# --- project --------------------------------------------------------------------------------------
def git_top(start: Path) -> Path | None:
    """The top folder of the git repository holding `start` (a `.git` folder or file), else None."""
    here = start.resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def project_for(cwd: str | None, override: str | None = None) -> str:
    """The override when given; else the git repository's top folder name when `cwd` is inside one,
    else the last part of `cwd` — made a plain slug."""
    from hippo_core.agents.work_memory import Refused, suggest_slug, validate_project

    if override:
        return validate_project(override)
    if not cwd:
        raise Refused("the hook payload has no cwd and no project was given (HIPPO_PROJECT)", "bad_project")
    folder = Path(cwd)
    top = git_top(folder) if folder.is_dir() else None
    name = (top or folder).name
    slug = suggest_slug(name)
    if not slug:
        raise Refused(f"no plain project slug can be made from {name!r}; set HIPPO_PROJECT", "bad_project")
    return validate_project(slug)


# --- transcripts ----------------------------------------------------------------------------------
def _head_lines(path: Path, n: int) -> list[tuple[int, str]]:
    """The first `n` lines, in bounded memory whatever the longest line: a line longer than
    HEAD_LINE_MAX_BYTES is skipped (read through in blocks, never held), and at most HEAD_MAX_BYTES of
    lines are kept."""
    out: list[tuple[int, str]] = []
    kept = 0
    with open(path, "rb") as fh:
        for i in range(n):
            line = fh.readline(HEAD_LINE_MAX_BYTES + 1)
            if not line:
                break
            if len(line) > HEAD_LINE_MAX_BYTES and not line.endswith(b"\n"):
                while (block := fh.readline(HEAD_LINE_MAX_BYTES)) and not block.endswith(b"\n"):
                    pass
                continue
            kept += len(line)
            if kept > HEAD_MAX_BYTES:
                break
            out.append((i, line.decode("utf-8", errors="replace")))
    return out


def _tail_lines(path: Path, max_bytes: int) -> list[tuple[int, str]]:
    size = path.stat().st_size
    with open(path, "rb") as fh:
        fh.seek(max(0, size - max_bytes))
        data = fh.read()
    lines = data.decode("utf-8", errors="replace").split("\n")
    if size > max_bytes:
        lines = lines[1:]  # the first line is cut in the middle
    return list(enumerate(lines))


def _is_request(m: Message) -> bool:
    text = m.text.lstrip()
    # Claude Code writes slash commands and local command output as user turns in markup.
    return m.role == "user" and not m.is_tool and bool(text) and not text.startswith("<")


def transcript_summary(path: Path, fmt: str = "claude_code") -> str | None:
    """First request and last reply of a transcript (JSONL), read from its head and tail only."""
    from hippo_core.conversations import parse_claude_code, parse_codex_session  # SessionEnd only

    parse = (
        (lambda lines: parse_claude_code(lines, "hook", None, str(path)))
        if fmt == "claude_code"
        else (lambda lines: parse_codex_session(lines, "hook", str(path)))
    )
    first = next(
        (m for m in parse(_head_lines(path, TRANSCRIPT_HEAD_LINES)).messages if _is_request(m)), None
    )
    tail = [m for m in parse(_tail_lines(path, TRANSCRIPT_TAIL_BYTES)).messages]
    last = next(
        (m for m in reversed(tail) if m.role == "assistant" and not m.is_tool and m.text.strip()), None
    )
    if first is None and last is None:
        return None
    return summary_text(first.text if first else None, last.text if last else None)


EXCERPT_MAX_BYTES = 16 * 1024
LLM_SUMMARY_EVENT = "session-end-llm"


def transcript_excerpt(path: Path, fmt: str = "claude_code") -> str:
    """The conversation (no tool traffic) from the transcript's head and tail, at most 16 KB, for the LLM."""
    from hippo_core.conversations import parse_claude_code, parse_codex_session

    parse = (
        (lambda lines: parse_claude_code(lines, "hook", None, str(path)))
        if fmt == "claude_code"
        else (lambda lines: parse_codex_session(lines, "hook", str(path)))
    )
    seen: set[tuple[str, str]] = set()
    turns = []
    for part in (_head_lines(path, TRANSCRIPT_HEAD_LINES), _tail_lines(path, TRANSCRIPT_TAIL_BYTES)):
        for m in parse(part).messages:
            key = (m.role, m.text)
            if m.is_tool or not m.text.strip() or key in seen:
                continue
            seen.add(key)
            turns.append(f"{m.role}: {' '.join(m.text.split())[:2000]}")
    text = "\n".join(turns)
    if len(text.encode()) > EXCERPT_MAX_BYTES:  # keep the start and the end, where the decisions are
        half = EXCERPT_MAX_BYTES // 2
        text = truncate_utf8(text, half) + "\n[…]\n" + text.encode()[-half:].decode("utf-8", "ignore")
    return clean_summary(text)


def llm_summary(path: Path, llm: object, fmt: str = "claude_code") -> str:
    """The model's summary of a transcript (`LLM.structured`), scrubbed like the extractive one."""
    from hippo_core.agents.work_memory import (
        SESSION_SUMMARY_SYSTEM,
        SessionSummary,
        session_summary_prompt,
        session_summary_text,
    )

    result, _ = llm.structured(  # type: ignore[attr-defined]
        SessionSummary, SESSION_SUMMARY_SYSTEM, session_summary_prompt(transcript_excerpt(path, fmt))
    )
    return truncate_utf8(clean_summary(session_summary_text(result)), 6 * 1024)


def summary_text(asked: str | None, reply: str | None) -> str:
    parts = []
    if asked:
        parts.append("Asked: " + truncate_utf8(" ".join(asked.split()), ASKED_MAX_BYTES))
    if reply:
        parts.append("Last reply: " + truncate_utf8(" ".join(reply.split()), REPLY_MAX_BYTES))
    return clean_summary("\n".join(parts))


def clean_summary(text: str) -> str:
    """Credentials become `[REDACTED:kind]`; injection-shaped spans become a marker, so the store's
    scanners accept the summary instead of losing the whole checkpoint."""
    text = scrub(text).text
    for f in sorted(find_injections(text), key=lambda f: f.start, reverse=True):
        text = text[: f.start] + "[removed: instruction-like text]" + text[f.end :]
    return text


# --- output ---------------------------------------------------------------------------------------
RESUME_TITLE = "Work memory of this project from earlier sessions (handoff, checkpoints, open items):"


def session_start_output(context: str, max_bytes: int | None = None) -> str:
    """The resume as quoted, untrusted reference material (credentials redacted, instruction-shaped
    spans replaced, block markers defused), never as bare instructions."""
    from hippo_core.recall.context import quoted

    block = quoted(context, RESUME_TITLE, max_bytes)
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": block}},
        ensure_ascii=False,
    )


# --- wiring ----------------------------------------------------------------------------------------
def settings_for(env: Mapping[str, str]) -> HippoSettings:
    from hippo_settings import HippoSettings

    return HippoSettings.from_env(env)


def hippo_home(env: Mapping[str, str]) -> Path:
    """Where the hook log goes: HIPPO_HOME from the settings (the default home when they do not parse)."""
    from hippo_settings import HippoSettings

    try:
        return settings_for(env).home.expanduser()
    except Exception:  # noqa: BLE001 - a bad setting must still leave a log line
        return HippoSettings().home


def service_from_env(env: Mapping[str, str]) -> WorkMemory:
    from hippo_work.wiring import hook_work_memory

    return hook_work_memory(settings_for(env))


def start_background(agent: str, env: Mapping[str, str], summarize: list[str]) -> str:
    """Start the slow part of SessionEnd detached, so the agent does not wait: the LLM summary when an
    ANTHROPIC_API_KEY is set (`summarize` = project, session id, transcript) and `hippo ingest <agent>`
    (incremental: dlt keeps each log's byte offset) unless HIPPO_HOOK_INGEST is off. Output goes to
    logs/hook-ingest.log."""
    settings = settings_for(env)
    args = [
        *(["--ingest"] if settings.hook_ingest else []),
        *(["--summarize", *summarize] if settings.anthropic_api_key else []),
    ]
    if not args:
        return "no background work (ingest off, no LLM key)"
    log_path = settings.home.expanduser() / "logs" / "hook-ingest.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as out:
        proc = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            [sys.executable, "-m", "hippo_cli.hooks.background", agent, *args],
            stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=dict(env), start_new_session=True,
        )  # fmt: skip
    what = " and ".join(
        w for w, on in (("ingest", "--ingest" in args), ("LLM summary", "--summarize" in args)) if on
    )
    return f"{what} started (pid {proc.pid})"


ServiceFactory = Callable[[Mapping[str, str]], "WorkMemory"]


def handle(
    agent: str,
    payload: HookInput,
    env: Mapping[str, str],
    make: ServiceFactory = service_from_env,
    project: str | None = None,
) -> tuple[str, str]:
    """Run one hook event; returns (stdout, what happened for the log). Raises on any problem."""
    override = project or settings_for(env).project or None
    event = payload.hook_event_name
    if event == "SessionStart":
        slug = project_for(payload.cwd, override)
        memory = make(env)
        budget = memory.limits.resume_budget
        resume = memory.resume(slug, session_id=payload.session_id, budget=budget)
        if not (resume.handoff or resume.checkpoints or resume.open_items):
            return "", f"nothing to resume for {slug}"
        from hippo_core.agents.work_memory import render_resume_text

        return session_start_output(render_resume_text(resume), max_bytes=budget), f"resume {slug}"
    if event == "UserPromptSubmit":
        from hippo_cli.hooks.prompt import handle_prompt

        return handle_prompt(payload, env)
    if event == "SessionEnd":
        slug = project_for(payload.cwd, override)
        if not payload.session_id:
            raise ValueError("SessionEnd without session_id")
        if not payload.transcript_path:
            raise ValueError("SessionEnd without transcript_path")
        path = Path(payload.transcript_path).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"transcript not found: {path}")
        summary = transcript_summary(path, "claude_code" if agent == "claude-code" else "codex")
        if not summary:
            return "", f"no messages in the transcript of {payload.session_id[:12]}"
        memory = make(env)
        result = memory.checkpoint(
            slug, "conversation", summary, payload.session_id, "session-end", agent=agent
        )
        what = f"checkpoint {slug} seq {result.seq}{' (resend)' if result.duplicate else ''}"
        try:
            what += "; " + start_background(agent, env, [slug, payload.session_id, str(path)])
        except Exception as exc:  # noqa: BLE001 - the checkpoint is kept; the next session ingests
            what += f"; background work not started: {exc}"
        return "", what
    return "", f"ignored event {event!r}"


def handle_codex_notify(
    raw: str, env: Mapping[str, str], make: ServiceFactory = service_from_env, project: str | None = None
) -> str:
    """One Codex `notify` call: a finished turn becomes a conversation checkpoint of its thread."""
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("notify payload is not a JSON object")
    if data.get("type") != "agent-turn-complete":
        return f"ignored notify type {data.get('type')!r}"
    thread, turn = data.get("thread-id"), data.get("turn-id")
    if not isinstance(thread, str) or not thread or turn in (None, ""):
        raise ValueError("agent-turn-complete without thread-id or turn-id")
    inputs = [m for m in data.get("input-messages") or [] if isinstance(m, str)]
    reply = data.get("last-assistant-message")
    summary = summary_text(" ".join(inputs) or None, reply if isinstance(reply, str) else None)
    if not summary:
        return "empty turn"
    slug = project_for(
        data.get("cwd") if isinstance(data.get("cwd"), str) else None, project or settings_for(env).project
    )
    result = make(env).checkpoint(slug, "conversation", summary, thread, f"turn-{turn}", agent="codex")
    return f"checkpoint {slug} seq {result.seq}{' (resend)' if result.duplicate else ''}"


# --- entry point ----------------------------------------------------------------------------------
def log(env: Mapping[str, str], agent: str, message: str) -> None:
    """One scrubbed line in $HIPPO_HOME/logs/hooks.log; a failing log never fails the hook."""
    try:
        path = hippo_home(env) / LOG_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        stamp = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        line = " ".join(scrub(message).text.split())[:2000]
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{stamp} {agent} {line}\n")
    except Exception:  # noqa: BLE001 - the hook must not fail the agent
        pass


def _parse_args(argv: list[str]) -> tuple[str, str | None, str | None]:
    agent = argv[0] if argv else ""
    if agent not in AGENTS:
        raise ValueError(f"usage: hook {{{'|'.join(AGENTS)}}} [--project SLUG] [NOTIFY_JSON]")
    project = notify = None
    rest = argv[1:]
    while rest:
        arg = rest.pop(0)
        if arg == "--project" and rest:
            project = rest.pop(0)
        elif arg.startswith("--project="):
            project = arg.split("=", 1)[1]
        else:
            notify = arg
    return agent, project, notify


def run(
    argv: list[str],
    stdin: TextIO,
    env: Mapping[str, str],
    make: ServiceFactory = service_from_env,
) -> str:
    """The hook's work: returns what to print (possibly ""). Raises on any problem."""
    agent, project, notify = _parse_args(argv)
    if agent == "codex" and notify is not None:
        log(env, agent, f"notify: {handle_codex_notify(notify, env, make, project)}")
        return ""
    raw = stdin.read(MAX_STDIN_BYTES + 1)
    if len(raw.encode("utf-8", "replace")) > MAX_STDIN_BYTES:
        raise ValueError("hook input is larger than 1 MiB")
    payload = parse_hook_input(raw)
    out, what = handle(agent, payload, env, make, project)
    log(env, agent, f"{payload.hook_event_name}: {what}")
    return out


def main(
    argv: list[str] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    env: Mapping[str, str] | None = None,
    make: ServiceFactory = service_from_env,
) -> int:
    """Always 0. Prints valid hook JSON or nothing; every problem goes to the log file."""
    args = list(sys.argv[1:] if argv is None else argv)
    environ: Mapping[str, str] = os.environ if env is None else env
    agent = args[0] if args else "?"
    try:
        out = run(args, stdin or sys.stdin, environ, make)
    except BaseException as exc:  # noqa: BLE001 - never fail the agent, whatever happened
        log(environ, agent, f"error: {type(exc).__name__}: {exc}")
        return 0
    if out:
        try:
            (stdout or sys.stdout).write(out + "\n")
            (stdout or sys.stdout).flush()
        except BaseException as exc:  # noqa: BLE001 - a closed pipe must not fail the agent either
            log(environ, agent, f"error writing output: {exc}")
    prompt_hook = sys.modules.get("hippo_cli.hooks.prompt")
    if prompt_hook is not None and prompt_hook.ABANDONED.is_set() and stdout is None:
        os._exit(0)  # a worker is still waiting on a slow librarian or a cold index: do not wait for it
    return 0


def _tail(path: Path, n: int = 20) -> list[str]:
    """The last lines of the hook log (for `hippo hook log`)."""
    if not path.exists():
        return []
    with open(path, encoding="utf-8", errors="replace") as fh:
        return list(deque(fh, maxlen=n))


def recent_log(env: Mapping[str, str], n: int = 20) -> list[str]:
    return [line.rstrip("\n") for line in _tail(hippo_home(env) / LOG_FILE, n)]


if __name__ == "__main__":
    sys.exit(main())
