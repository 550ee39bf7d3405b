"""`python -m hippo_work.background claude-code|codex`: the SessionEnd hook's incremental ingest.

Runs `hippo ingest <agent>` (dlt keeps every log's byte offset, so only new messages load) under a lock
file, so two sessions ending together queue instead of running two pipelines over the same state."""

from __future__ import annotations

import datetime as dt
import fcntl
import sys

AGENTS = ("claude-code", "codex")


def main(argv: list[str] | None = None) -> int:
    from hippo_cli.ingest import ingest_conversations
    from hippo_core.settings import HippoSettings

    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1 or args[0] not in AGENTS:
        print(f"usage: python -m hippo_work.background {{{'|'.join(AGENTS)}}}", file=sys.stderr)
        return 2
    settings = HippoSettings.from_env()
    lock = settings.home.expanduser() / "locks" / f"ingest-{args[0]}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        stamp = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        print(f"{stamp} hook ingest {args[0]}", file=sys.stderr, flush=True)
        return ingest_conversations(settings, args[0], None)


if __name__ == "__main__":
    sys.exit(main())
