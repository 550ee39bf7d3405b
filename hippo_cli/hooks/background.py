"""`python -m hippo_cli.hooks.background AGENT [--summarize PROJECT SESSION TRANSCRIPT] [--ingest]`: the slow
part of a SessionEnd hook, detached from the agent.

`--summarize` asks the LLM (`LLM` resource, ANTHROPIC_API_KEY) for a summary of the transcript and records
it as a second conversation checkpoint of the session (event `session-end-llm`, so a resend is one record;
resume shows the newest checkpoint per session, this one). `--ingest` runs `hippo ingest AGENT` (dlt keeps
every log's byte offset, so only new messages load) under a lock file, so two sessions ending together
queue instead of running two pipelines over the same state."""

from __future__ import annotations

import argparse
import datetime as dt
import fcntl
import sys
from pathlib import Path

AGENTS = ("claude-code", "codex")


def summarize(agent: str, project: str, session_id: str, transcript: str) -> str:
    from hippo_resources.llm import LLM
    from hippo_settings import HippoSettings
    from hippo_work.wiring import work_memory

    settings = HippoSettings.from_env()
    key = settings.anthropic_api_key.get_secret_value() if settings.anthropic_api_key else None
    llm = LLM(api_key=key, model=settings.llm_model, max_tokens=1024, max_retries=settings.llm_retries)
    return record_llm_summary(work_memory(settings), llm, agent, project, session_id, Path(transcript))


def record_llm_summary(memory, llm, agent: str, project: str, session_id: str, transcript: Path) -> str:  # noqa: ANN001
    """Summarise with the LLM and record it; returns what happened, for the log."""
    from hippo_cli.hooks.session import LLM_SUMMARY_EVENT, llm_summary

    fmt = "claude_code" if agent == "claude-code" else "codex"
    text = llm_summary(transcript, llm, fmt)
    result = memory.checkpoint(
        project, "conversation", text, session_id, LLM_SUMMARY_EVENT, agent=f"{agent}-llm"
    )
    return f"LLM summary checkpoint {project} seq {result.seq}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hippo_cli.hooks.background")
    ap.add_argument("agent", choices=AGENTS)
    ap.add_argument("--summarize", nargs=3, metavar=("PROJECT", "SESSION", "TRANSCRIPT"))
    ap.add_argument("--ingest", action="store_true")
    args = ap.parse_args(argv)
    stamp = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    status = 0
    if args.summarize:
        try:
            print(f"{stamp} {summarize(args.agent, *args.summarize)}", file=sys.stderr, flush=True)
        except Exception as exc:  # noqa: BLE001 - the extractive checkpoint is already stored
            from hippo_core.safety.scrub import scrub

            print(f"{stamp} LLM summary failed: {scrub(str(exc)).text[:500]}", file=sys.stderr, flush=True)
            status = 1
    if args.ingest:
        from hippo_cli.ingest import ingest_conversations
        from hippo_settings import HippoSettings

        settings = HippoSettings.from_env()
        lock = settings.home.expanduser() / "locks" / f"ingest-{args.agent}.lock"
        lock.parent.mkdir(parents=True, exist_ok=True)
        with open(lock, "a+b") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            print(f"{stamp} hook ingest {args.agent}", file=sys.stderr, flush=True)
            status = ingest_conversations(settings, args.agent, None) or status
    return status


if __name__ == "__main__":
    sys.exit(main())
