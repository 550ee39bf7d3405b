"""`hippo work …`, `hippo hook …`, `hippo ghost audit` and `hippo mcp`: agents' work memory from a shell.

`hippo work resume|sync|checkpoint|worklog|handoff` take the MCP tools' parameters as flags and `--json`
prints exactly the tool's result. `hippo hook claude-code|codex` is what the agents run (never fails
them); `hippo hook install claude-code|codex [--uninstall]` shows the settings entry, then writes it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo_work.describe import DESCRIBE

if TYPE_CHECKING:
    from hippo_settings import HippoSettings

HOOK_AGENTS = ("claude-code", "codex")
Common = Callable[[argparse.ArgumentParser], None]
SettingsOf = Callable[[argparse.Namespace], "HippoSettings"]


def _print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


def _project(args: argparse.Namespace, settings: HippoSettings) -> str:
    """--project, else HIPPO_PROJECT, else the git repository (or folder) the command runs in."""
    from hippo_cli.hooks.session import project_for

    return project_for(str(Path.cwd()), args.project or settings.project)


def cmd_work(args: argparse.Namespace, settings: HippoSettings) -> int:
    from hippo_core.agents.work_memory import WorkMemoryError, render_resume_text
    from hippo_work.wiring import work_memory

    memory = work_memory(settings)
    action = args.work_command
    try:
        project = _project(args, settings)
        if action == "resume":
            out: Any = memory.resume(project, session_id=args.session_id)
        elif action == "sync":
            out = memory.sync(project, args.since, args.limit)
        elif action == "checkpoint":
            summary = sys.stdin.read() if args.summary == "-" else args.summary
            out = memory.checkpoint(
                project, args.kind, summary, args.session_id, args.event_id, args.base_cursor, args.agent
            )
        elif action == "worklog":
            out = memory.worklog(project, args.entry, args.next, args.agent)
        else:
            text = sys.stdin.read() if args.text == "-" else args.text
            out = memory.handoff(project, text, args.agent)
    except WorkMemoryError as exc:
        if args.json:
            _print_json({"error": {"code": exc.code, "message": exc.reason}})
        print(f"hippo work {action}: {exc.code}: {exc.reason}", file=sys.stderr)
        return 2
    if args.json:
        _print_json(out.dump(args.verbose))
    elif action == "resume":
        print(render_resume_text(out))
    elif action == "sync":
        for e in out.entries:
            print(
                f"{e.seq:>6}  {e.ts}  [{e.kind}] {e.agent or '-'} {e.session_id[:12]}: {' '.join(e.summary.split())}"
            )
        print(f"cursor {out.cursor}{'  (more: sync again from this cursor)' if out.has_more else ''}")
    elif action == "checkpoint":
        print(f"seq {out.seq}{' (already recorded: the first record)' if out.duplicate else ''}")
        for e in out.unseen or []:
            print(f"  unseen {e.seq}: [{e.kind}] {e.session_id[:12]}: {' '.join(e.summary.split())}")
    else:
        print(f"{out.path}{f' (commit {out.commit[:10]})' if out.commit else ''}")
        if getattr(out, "kept_person_edit", None):
            print("  the previous handoff was edited by a person: kept as their text")
    return 0


def cmd_hook(args: argparse.Namespace, settings_of: SettingsOf) -> int:
    if args.hook_command in HOOK_AGENTS:
        from hippo_cli.hooks.session import main as hook_main

        extra = [
            *(["--project", args.project] if args.project else []),
            *([args.notify] if args.notify else []),
        ]
        return hook_main([args.hook_command, *extra])
    if args.hook_command == "log":
        from hippo_cli.hooks.session import recent_log

        print("\n".join(recent_log(os.environ, args.lines)))
        return 0
    return hook_install(args, settings_of(args))


def hook_install(args: argparse.Namespace, settings: HippoSettings) -> int:
    from hippo_cli.hooks import install as hi

    exe = shutil.which("hippo") or str(Path(sys.argv[0]).resolve())
    env = {
        "HIPPO_HOME": str(settings.home.expanduser().resolve()),
        "HIPPO_VAULT": str(settings.vault.expanduser().resolve()),
    }
    if os.environ.get("DAGSTER_HOME"):
        env["DAGSTER_HOME"] = str(Path(os.environ["DAGSTER_HOME"]).resolve())
    home = Path(args.config_home).expanduser() if args.config_home else None
    plans = []
    try:
        if args.agent == "claude-code":
            path = hi.claude_settings_path(home)
            plans.append(
                hi.plan_json_hooks(
                    hi.read_text(path),
                    str(path),
                    hi.hook_command("claude-code", exe, env),
                    uninstall=args.uninstall,
                )
            )
        else:
            path = hi.codex_config_path(home)
            plans.append(
                hi.plan_codex_notify(
                    hi.read_text(path), str(path), hi.notify_argv(exe, env), uninstall=args.uninstall
                )
            )
            hooks = hi.codex_hooks_path(home)
            plans.append(
                hi.plan_json_hooks(hi.read_text(hooks), str(hooks), hi.hook_command("codex", exe, env), hi.CODEX_HOOK_EVENTS, uninstall=args.uninstall)
            )  # fmt: skip
    except hi.InstallConflict as exc:
        print(f"hippo hook install: {exc}", file=sys.stderr)
        return 2
    verb = "remove from" if args.uninstall else "add to"
    for plan in plans:
        state = "" if plan.changed else " (nothing to change)"
        print(f"# {verb} {plan.path}{state}:\n{plan.entry}\n")
    if args.dry_run:
        return 0
    for plan in plans:
        try:
            written = hi.apply(plan)
        except OSError as exc:
            print(f"hippo hook install: cannot write {plan.path}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        if written:
            print(f"{'removed from' if args.uninstall else 'written to'} {plan.path}")
    return 0


def cmd_ghost_audit(args: argparse.Namespace, settings: HippoSettings) -> int:
    from hippo_core.agents.work_memory import WorkMemoryError
    from hippo_work.wiring import ghost_layer

    try:
        out = ghost_layer(settings).audit(args.limit, args.since, args.memory)
    except WorkMemoryError as exc:
        print(f"hippo ghost audit: {exc.code}: {exc.reason}", file=sys.stderr)
        return 2
    if args.json:
        _print_json(out.dump(verbose=True))
        return 0
    for r in out.reads:
        print(
            f"{r.ts}  {r.memory_id}  session={r.session_id or '-'}  project={r.project or '-'}  query={r.query or ''!r}"
        )
    print(f"{len(out.reads)} read(s)", file=sys.stderr)
    return 0


def cmd_mcp(settings: HippoSettings) -> int:
    from hippo_server.mcp.stdio import build_stdio_server

    mcp, caps = build_stdio_server(settings)
    for line in caps.why:
        print(f"hippo mcp: {line}", file=sys.stderr)
    mcp.run("stdio")
    return 0


def cmd_mcp_install(args: argparse.Namespace, settings: HippoSettings) -> int:
    """`hippo mcp install CLIENT`: show the stdio entry, then write it (hippo_cli/mcp_install.py)."""
    from hippo_cli import mcp_install as mi

    if args.client not in mi.CLIENTS:
        print(f"hippo mcp install: name a client: {', '.join(mi.CLIENTS)}", file=sys.stderr)
        return 2
    exe = Path(sys.executable).parent / "hippo"
    command = str(exe) if exe.exists() else shutil.which("hippo") or "hippo"
    env = {
        "HIPPO_VAULT": str(settings.vault.expanduser().resolve()),
        "HIPPO_HOME": str(settings.home.expanduser().resolve()),
    }
    try:
        plan = mi.plan(args.client, command, env, uninstall=args.uninstall, name=args.name)
    except mi.McpInstallError as exc:
        print(f"hippo mcp install: {exc}", file=sys.stderr)
        return 2
    verb = "remove from" if args.uninstall else "add to"
    state = "" if plan.changed else " (already so: nothing to change)"
    print(f"# {verb} {plan.path}{state}:\n{plan.entry}\n")
    if args.dry_run or not plan.changed:
        return 0
    try:
        mi.apply(plan)
    except OSError as exc:
        print(f"hippo mcp install: cannot write {plan.path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if args.uninstall:
        print(f"Removed {args.name!r} from {plan.path}.")
    else:
        print(
            f"Written to {plan.path}. Restart {args.client} (or open a new session) to see the hippo_* tools."
        )
    return 0


def add_commands(sub: argparse._SubParsersAction, common: Common, settings_of: SettingsOf) -> None:
    """`work`, `hook`, `ghost` and `mcp` under the `hippo` parser."""
    p = sub.add_parser("work", help="agents' work memory: resume, sync, checkpoint, worklog, handoff")
    work = p.add_subparsers(dest="work_command", required=True)

    def work_parser(name: str, help_text: str) -> argparse.ArgumentParser:
        q = work.add_parser(name, help=help_text)
        common(q)
        q.add_argument(
            "--project", help=DESCRIBE["project"] + " Default: HIPPO_PROJECT, else this git repository."
        )
        q.add_argument("--json", action="store_true", help="print the MCP tool's result")
        q.add_argument("--verbose", action="store_true", help=DESCRIBE["verbose"])
        q.set_defaults(func=lambda a: cmd_work(a, settings_of(a)))
        return q

    q = work_parser("resume", "what a new session needs: handoff, checkpoints, open items, the cursor")
    q.add_argument("--session-id", help=DESCRIBE["session_id"] + " Its own checkpoints are left out.")
    q = work_parser("sync", "one page of the change feed after --since")
    q.add_argument("--since", default="0", help=DESCRIBE["since"])
    q.add_argument("--limit", type=int, help=DESCRIBE["limit"])
    q = work_parser("checkpoint", "record a work or conversation checkpoint (idempotent)")
    q.add_argument("--kind", choices=["work", "conversation"], default="work", help=DESCRIBE["kind"])
    q.add_argument("--summary", required=True, help=DESCRIBE["summary"] + " '-' reads stdin.")
    q.add_argument("--session-id", required=True, help=DESCRIBE["session_id"])
    q.add_argument("--event-id", required=True, help=DESCRIBE["event_id"])
    q.add_argument("--base-cursor", help=DESCRIBE["base_cursor"])
    q.add_argument("--agent", help=DESCRIBE["agent"])
    q = work_parser("worklog", "append a line to 50-ops/<project>/worklog.md")
    q.add_argument("--entry", required=True, help=DESCRIBE["entry"])
    q.add_argument("--next", help=DESCRIBE["next"])
    q.add_argument("--agent", help=DESCRIBE["agent"])
    q = work_parser("handoff", "rewrite 50-ops/<project>/handoff.md (git keeps the previous one)")
    q.add_argument("--text", required=True, help=DESCRIBE["text"] + " '-' reads stdin.")
    q.add_argument("--agent", help=DESCRIBE["agent"])

    p = sub.add_parser("hook", help="agent hooks: claude-code, codex (what the agent runs), install, log")
    hook = p.add_subparsers(dest="hook_command", required=True)
    for agent in HOOK_AGENTS:
        q = hook.add_parser(agent, help=f"{agent} hook: reads the hook JSON on stdin; always exits 0")
        q.add_argument("--project", help="project slug (default: HIPPO_PROJECT, else the git repository)")
        q.add_argument("notify", nargs="?", help="Codex notify: the JSON argument")
        q.set_defaults(func=lambda a: cmd_hook(a, settings_of))
    q = hook.add_parser("install", help="show, then write the hook entry into the agent's settings")
    common(q)
    q.add_argument("agent", choices=HOOK_AGENTS)
    q.add_argument("--uninstall", action="store_true", help="remove exactly the entry install adds")
    q.add_argument("--dry-run", action="store_true", help="only show the entry")
    q.add_argument("--config-home", help="the home folder holding .claude/ or .codex/ (default: ~)")
    q.set_defaults(func=lambda a: cmd_hook(a, settings_of))
    q = hook.add_parser("log", help="the last lines of $HIPPO_HOME/logs/hooks.log")
    q.add_argument("--lines", type=int, default=20)
    q.set_defaults(func=lambda a: cmd_hook(a, settings_of))

    p = sub.add_parser("ghost", help="the ghost layer: audit (the append-only read log)")
    ghost = p.add_subparsers(dest="ghost_command", required=True)
    q = ghost.add_parser(
        "audit", help="every ghost read: what, when, which session and project (newest first)"
    )
    common(q)
    q.add_argument("--limit", type=int, default=100)
    q.add_argument("--since", help="ISO time: only reads at or after it")
    q.add_argument("--memory", help="only reads of this memory id (<project>/<name>)")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=lambda a: cmd_ghost_audit(a, settings_of(a)))

    p = sub.add_parser(
        "mcp",
        help="serve the MCP tools over stdio (the agent starts it; no token); "
        "`hippo mcp install CLIENT` adds it to an agent's MCP config",
    )
    common(p)
    p.add_argument("action", nargs="?", choices=["install"], help="install: write the agent's MCP entry")
    p.add_argument("client", nargs="?", metavar="CLIENT", help="claude-code, codex, cursor or claude-desktop")
    p.add_argument("--uninstall", action="store_true", help="remove exactly the entry install wrote")
    p.add_argument("--dry-run", action="store_true", help="show the entry and the file; write nothing")
    p.add_argument(
        "--name", default="hippocampus", help="the server's name in the client (default hippocampus)"
    )
    p.set_defaults(func=lambda a: cmd_mcp_install(a, settings_of(a)) if a.action else cmd_mcp(settings_of(a)))
