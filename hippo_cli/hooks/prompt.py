"""The UserPromptSubmit hook: the person's memory for this prompt, when it has something, within a budget.

Claude Code (and Codex's hooks.json) run `hippo hook claude-code|codex` with `{"hook_event_name":
"UserPromptSubmit", "prompt": …}` on stdin before the model sees the prompt; what the hook prints as
`hookSpecificOutput.additionalContext` is added to the model's context. This asks the running librarian
(`POST /api/v1/recall`, found as `hippo search` finds it) or, when none runs, searches in process with
the lexical lane alone (`hippo_search.pipeline.lexical_engine`: no Dagster, Chroma, embedder or Kiwi
model to load); the deterministic router decides whether anything fits (`hippo_work.route.recall`).
The answer is at most HIPPO_RECALL_MAX_BYTES of quoted, untrusted reference material (anchor, date,
snippet), or nothing.

Budget: HIPPO_RECALL_BUDGET_MS from the process's start (imports included). The work runs in a worker
thread; when the budget is gone the hook prints nothing and the process ends at once (a slow librarian
or a cold in-process index never holds the agent). The prompt is scrubbed before it is used or logged.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hippo_cli.hooks.session import HookInput
    from hippo_settings import HippoSettings

_IMPORTED_AT = time.monotonic()
ABANDONED = threading.Event()  # set when a worker thread is left running: the process must end hard
MARGIN_S = 0.05  # kept for rendering and writing the answer


def process_age_s() -> float:
    """Seconds since this process started (Linux /proc; elsewhere since this module was imported)."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        start_ticks = int(fields[19])  # field 22 of stat(5), counted after the command name
        with open("/proc/uptime", "rb") as fh:
            uptime = float(fh.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return time.monotonic() - _IMPORTED_AT


def _remote(settings: HippoSettings, prompt: str, timeout: float) -> dict[str, Any] | None:
    from hippo_search.client import ask_librarian, librarian_url

    body = {
        "prompt": prompt,
        "skills": settings.recall_skills,
        "budget_ms": min(600_000, max(50, int(timeout * 1000))),
    }
    return ask_librarian(
        librarian_url(settings.host, settings.port), settings.home, "/api/v1/recall", body,
        settings.mcp_token, timeout,
    )  # fmt: skip


def _local(settings: HippoSettings, prompt: str, budget_ms: int) -> dict[str, Any]:
    """In process, when no librarian runs: the search pipeline over the lexical index alone
    (`lexical_engine`: no Dagster, Chroma or embedding model to load, and Hangul read by its bigrams
    rather than by Kiwi, whose model takes seconds to load), judged by the same router."""
    from hippo_search.pipeline import lexical_engine
    from hippo_work.route import recall, route_params
    from hippo_work.suggest import SkillLane

    engine = lexical_engine(settings, morphology=False)
    lane = SkillLane(skill_folders_for(settings)) if settings.recall_skills else None
    return recall(engine, prompt, route_params(settings), lane=lane, budget_ms=budget_ms).model_dump()


def skill_folders_for(settings: HippoSettings, project_dir: Path | None = None) -> list[Path]:
    from hippo_work.suggest import skill_folders

    extra = [Path(p).expanduser() for p in (settings.skill_dirs or "").split(os.pathsep) if p]
    return skill_folders(Path.home(), settings.vault.expanduser(), project_dir, extra)


def _project_skills(
    settings: HippoSettings, prompt: str, cwd: str | None, budget_ms: int
) -> list[dict[str, Any]]:
    """The project's own `.claude/skills/` (string search: the librarian does not read agents' folders)."""
    if not settings.recall_skills or not cwd:
        return []
    from hippo_work.suggest import SkillLane

    folder = Path(cwd)
    lane = SkillLane([folder / ".claude" / "skills"])
    return [s.model_dump() for s in lane.suggest(prompt, budget_ms).candidates]


def _work(
    settings: HippoSettings, prompt: str, cwd: str | None, deadline: float, out: dict[str, Any]
) -> None:
    try:
        left = deadline - time.monotonic()
        answer = _remote(settings, prompt, left)
        out["source"] = "librarian"
        if answer is None:
            if not settings.recall_local:
                out["reason"] = "no librarian, local search off"
                return
            out["source"] = "local"
            answer = _local(settings, prompt, max(50, int(1000 * (deadline - time.monotonic()))))
        skills = list(answer.get("skills") or [])
        if len(skills) < 3:
            left_ms = int(1000 * (deadline - time.monotonic()))
            if left_ms > 50:
                names = {s.get("name") for s in skills}
                skills += [
                    s for s in _project_skills(settings, prompt, cwd, left_ms) if s["name"] not in names
                ]
        out["answer"] = {**answer, "skills": skills[:3]}
    except BaseException as exc:  # noqa: BLE001 - reported by the caller, never raised into the agent
        out["error"] = f"{type(exc).__name__}: {exc}"


def prompt_output(context: str) -> str:
    import json

    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}},
        ensure_ascii=False,
    )


def handle_prompt(payload: HookInput, env: Mapping[str, str]) -> tuple[str, str]:
    """(stdout, what happened for the log): the context, or "" with the reason."""
    from hippo_cli.hooks.session import settings_for

    settings = settings_for(env)
    budget_s = settings.recall_budget_ms / 1000
    prompt = payload.prompt
    if not isinstance(prompt, str) or not prompt.strip():
        return "", "prompt: empty"
    if prompt.lstrip().startswith("/") and len(prompt.split()) <= 3:
        return "", "prompt: a slash command"
    remaining = budget_s - process_age_s() - MARGIN_S
    if remaining <= 0:
        return "", f"prompt: over budget before starting ({settings.recall_budget_ms} ms)"
    deadline = time.monotonic() + remaining
    out: dict[str, Any] = {}
    worker = threading.Thread(target=_work, args=(settings, prompt, payload.cwd, deadline, out), daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    if worker.is_alive():
        ABANDONED.set()
        return (
            "",
            f"prompt: over budget ({settings.recall_budget_ms} ms, {out.get('source', 'librarian')}); nothing added",
        )
    if "error" in out:
        return "", f"prompt: {out['error']}"
    answer = out.get("answer")
    if not answer:
        return "", f"prompt: {out.get('reason', 'no answer')}"
    from hippo_core.recall.context import RecallItem, SkillItem, render_recall

    items = [RecallItem.model_validate(i) for i in answer.get("items") or []]
    skills = [SkillItem.model_validate(s) for s in answer.get("skills") or []]
    context = render_recall(items, skills, settings.recall_max_bytes)
    if process_age_s() > budget_s:
        return "", f"prompt: over budget after the answer ({settings.recall_budget_ms} ms); nothing added"
    if context is None:
        why = "no context needed" if not answer.get("needs_context") else "nothing fits the byte budget"
        return "", f"prompt: {why} ({out['source']})"
    return prompt_output(context), (
        f"prompt: {len(items)} result(s), {len(skills)} skill(s), {len(context.encode())} bytes ({out['source']})"
    )
