"""The `hippo` command line: init, run, search, serve, status."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from hippo_cli.signals import restore_interrupt_signals
from hippo_core.safety.text_input import BadTextError
from hippo_settings import HippoSettings


class FormatNames(Sequence[str]):
    """`hippo ingest`'s choices, read from the formats registry only when used: the registry imports every
    parser, which would cost every other command (a `hippo search` through the librarian) a second."""

    def _names(self) -> list[str]:
        from hippo_core.conversations.formats import FORMATS

        return [fmt.cli_name for fmt in FORMATS]

    def __getitem__(self, i):  # noqa: ANN001, ANN204
        return self._names()[i]

    def __len__(self) -> int:
        return len(self._names())


def _settings(args: argparse.Namespace) -> HippoSettings:
    return HippoSettings.from_env(
        vault=getattr(args, "vault", None),
        home=getattr(args, "home", None),
        host=getattr(args, "host", None),
        port=getattr(args, "port", None),
    )


def cmd_init(args: argparse.Namespace) -> int:
    from hippo_cli.vault_init import VaultInitError, apply_plan, plan_init

    path = Path(args.vault_dir)
    try:
        plan = plan_init(path)
    except VaultInitError as exc:
        print(f"hippo init: {exc}", file=sys.stderr)
        return 2
    from hippo_cli.config import hippo_command

    hippo = hippo_command()
    if plan.adopting and not args.yes:
        print(plan.describe())
        print(f"Nothing was changed. To apply: {hippo} init --yes {shlex.quote(str(path.resolve()))}")
        return 0
    if plan.adopting:
        print(plan.describe().replace("would add", "adds", 1))
    try:
        apply_plan(plan)
    except VaultInitError as exc:
        print(f"hippo init: {exc}", file=sys.stderr)
        return 2
    done = "Adopted" if plan.adopting else ("Created" if not plan.empty else "Checked")
    print(f"{done} vault at {path.resolve()}")
    return _remember_vault(path.resolve(), hippo)


def _remember_vault(vault: Path, hippo: str) -> int:
    """`hippo init` names the vault and its stores in the config file, so every later command finds them."""
    from hippo_cli.config import stores_for, write_config
    from hippo_settings import ConfigFileError

    try:
        current = HippoSettings.from_env()
    except ConfigFileError:
        current = None
    same_vault = current is not None and current.vault.expanduser().resolve() == vault
    values: dict[str, Path] = {"vault": vault}
    for field, default in stores_for(vault).items():
        value = getattr(current, field, None) if current is not None else None
        source = current.source_of(field) if current is not None else "default"
        keep = value is not None and (source == "environment" or (source == "config file" and same_vault))
        values[field] = Path(value).expanduser().resolve() if keep else default
    path = write_config(values)
    print(
        f"Remembered in {path}: vault {vault}, home {values['home']}, Dagster home {values['dagster_home']}"
    )
    try:
        effective = HippoSettings.from_env()
    except ConfigFileError:
        effective = None
    if effective is not None and effective.vault.expanduser().resolve() == vault:
        print(f"Next: {hippo} run")
    else:  # HIPPO_VAULT in the environment names another vault, and it wins over the config file
        print(
            f"Next: {hippo} run --vault {shlex.quote(str(vault))} --home {shlex.quote(str(values['home']))}"
        )
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from hippo_cli.runner import get_instance

    settings = _settings(args)
    if not settings.vault.is_dir():
        print(
            f"hippo run: vault not found at {settings.vault.resolve()} "
            "(`hippo init VAULT` remembers one; or --vault, or HIPPO_VAULT)",
            file=sys.stderr,
        )
        return 2
    run_config = None
    if args.config:
        import yaml

        try:
            run_config = yaml.safe_load(Path(args.config).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            print(f"hippo run: cannot read the run config {args.config}: {exc}", file=sys.stderr)
            return 2
        if not isinstance(run_config, dict):
            print(f"hippo run: the run config {args.config} is not a mapping", file=sys.stderr)
            return 2
    from hippo_resources.vault import Vault

    if not Vault(root=str(settings.vault)).is_initialised():  # every job: the nightly ones write pages
        where = shlex.quote(str(settings.vault.resolve()))
        print(
            f"hippo run: {where} is not a Hippocampus vault yet: run `hippo init {where}` first "
            "(it lists what it would add and changes nothing without --yes)",
            file=sys.stderr,
        )
        return 2
    if getattr(args, "job", None):
        from hippo_cli.loop import run_named_job
        from hippo_cli.runner import merged_config

        if args.force and args.job in ("dream_job", "nightly_dream"):  # the dream's gate lets it through
            run_config = merged_config(run_config, {"ops": {"dream_gate": {"config": {"force": True}}}})
        return run_named_job(settings, args.job, get_instance(), run_config=run_config)
    return run_refresh(settings, args.select, args.force, get_instance(), run_config)


def run_refresh(
    settings: HippoSettings, select: str | None, force: bool, instance: object, run_config: dict | None = None
) -> int:
    """`hippo run`: the Definitions' refresh_job (or the selected part of it), as the nightly schedule runs it."""
    from hippo_assets.definitions import build_definitions
    from hippo_cli.runner import merged_config, run_job

    defs = build_definitions(settings)
    job = defs.resolve_job_def("refresh_job")
    keys = None
    if select:
        from hippo_cli.runner import resolve_selection

        keys, problem = resolve_selection(select, defs.resolve_asset_graph(), job)
        if problem:
            print(f"hippo run: {problem}", file=sys.stderr)
            return 2
    forced = {"ops": {"embeddings": {"config": {"force": True}}}} if force else None
    config = merged_config(run_config, forced)
    return 0 if run_job(job, instance, config, asset_selection=keys) else 1  # type: ignore[arg-type]


def cmd_search(args: argparse.Namespace) -> int:
    """Through the running librarian when it serves these stores (light imports), else in process."""
    from pydantic import ValidationError

    from hippo_search.client import LibrarianError, librarian_url, remote_search
    from hippo_search.envelope import SearchRequest

    settings = _settings(args)
    try:
        request = SearchRequest(
            query=args.query,
            limit=args.k,
            lanes=args.lane or None,
            path_prefix=args.path_prefix,
            mode=args.mode,
            include_navigation=args.navigation,
            as_of=args.as_of,
            include_history=args.history,
        )
    except ValidationError as exc:
        print(
            f"hippo search: {exc.errors(include_url=False)[0]['msg'].removeprefix('Value error, ')}",
            file=sys.stderr,
        )
        return 2
    envelope = None
    if not args.local:
        url = librarian_url(settings.host, settings.port)
        try:
            envelope = remote_search(url, settings.home, request.model_dump(mode="json"), settings.mcp_token)
        except LibrarianError as exc:
            print(f"hippo search: {exc.message} (librarian at {url})", file=sys.stderr)
            return 3 if exc.code == "not_indexed" else 2
    if envelope is None:
        from hippo_search.pipeline import NotIndexedError, open_engine

        try:
            envelope = open_engine(settings).search(request).model_dump(mode="json")
        except NotIndexedError as exc:
            print(f"hippo search: {exc}", file=sys.stderr)
            return 3
    if args.json:
        print(json.dumps(envelope, ensure_ascii=False, indent=2))
        return 0
    results = envelope["results"]
    print(f"{args.query!r}: {len(results)} result(s) [{envelope['status']}]")
    if envelope.get("degraded_reason"):
        print(f"  ({envelope['degraded_reason']})")
    for i, hit in enumerate(results, 1):
        print(
            f"{i:2d}. {hit['anchor']}  score={hit['score']:.4f}  via={'+'.join(hit['matched_by'])}  "
            f"[{hit['status']}/{hit['trust']}]" + (f"  {hit['date']}" if hit.get("date") else "")
        )
        print(f"    {hit['snippet']}")
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    from hippo_cli.ingest import ingest_conversations

    return ingest_conversations(_settings(args), args.kind, args.file, args.no_segments)


def cmd_review(args: argparse.Namespace) -> int:
    from hippo_cli.loop import review

    return review(_settings(args), args.json)


def cmd_approve(args: argparse.Namespace) -> int:
    from hippo_cli.loop import approve

    return approve(_settings(args), args.card)


def cmd_serve(args: argparse.Namespace) -> int:
    from hippo_server.serve import serve

    settings = _settings(args)
    loopback = settings.host in ("127.0.0.1", "localhost", "::1")
    if not loopback and not settings.mcp_token:
        print("hippo serve: refusing to listen beyond loopback without HIPPO_MCP_TOKEN", file=sys.stderr)
        return 2
    if not settings.mcp_token:
        print("hippo serve: no HIPPO_MCP_TOKEN set; serving without auth on loopback only", file=sys.stderr)
    print(
        f"Librarian on http://{settings.host}:{settings.port}  (REST /api/v1, MCP /mcp, docs /docs)",
        file=sys.stderr,
    )
    serve(settings)
    return 0


def cmd_backup(args: argparse.Namespace) -> int:
    from hippo_cli.backup import backup
    from hippo_cli.runner import get_instance

    return backup(_settings(args), get_instance())


def cmd_restore(args: argparse.Namespace) -> int:
    from hippo_cli.backup import restore

    return restore(_settings(args), Path(args.snapshot), args.into, args.yes)


def cmd_gc(args: argparse.Namespace) -> int:
    from hippo_cli.gc import gc

    return gc(_settings(args), args.older_than)


def cmd_status(args: argparse.Namespace) -> int:
    from hippo_search.pipeline import open_engine

    settings = _settings(args)
    info = {"vault": str(settings.vault.resolve()), "home": str(settings.home.resolve())}
    info.update(open_engine(settings).status())
    info.pop("ranking", None)
    waiting = _waiting_in_inbox(settings.vault)
    info["waiting_in_inbox"] = [w.model_dump() | {"todo": w.todo} for w in waiting]
    if args.json:
        print(json.dumps(info, ensure_ascii=False, indent=2, default=str))
        return 0
    for key, value in info.items():
        if key != "waiting_in_inbox":
            print(f"{key:15s} {value}")
    if waiting:
        from hippo_core.vault.inbox_waiting import PAGE

        print(f"\n{len(waiting)} inbox file(s) waiting (also on {PAGE}):")
        for w in waiting:
            print(f"  {w.file}: {w.reason}\n    → {w.todo}")
    return 0


def _waiting_in_inbox(vault: Path) -> list:
    """The inbox files ingest left waiting, as the last run recorded them (still in the inbox)."""
    from hippo_core.vault.inbox_waiting import STATE, parse_state

    try:
        rows = parse_state((vault / STATE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return []
    return [w for w in rows if (vault / w.file).exists() or (vault / w.file).is_symlink()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hippo",
        description="Hippocampus: a personal knowledge store for people who work with AI agents.",
        epilog="Settings: flag > HIPPO_* environment variable > the config file `hippo init` writes "
        "(~/.config/hippocampus/config.toml; `hippo config` shows it) > default. `hippo doctor` says "
        "where each value came from.",
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--vault", type=Path, help="vault folder (default: $HIPPO_VAULT, else the config file's)"
        )
        p.add_argument(
            "--home", type=Path, help="derived stores folder (default: $HIPPO_HOME, else the config file's)"
        )

    p = sub.add_parser(
        "init", help="create a vault, or adopt a folder of notes (lists what it adds; --yes applies)"
    )
    p.add_argument("vault_dir", metavar="VAULT", help="folder to create, complete or adopt")
    p.add_argument(
        "--yes", action="store_true", help="adopt a folder that already holds notes (after the listing)"
    )
    p.set_defaults(func=cmd_init)

    p = sub.add_parser(
        "run", help="run refresh_job (or --job NAME) in-process on the instance at $DAGSTER_HOME"
    )
    common(p)
    p.add_argument(
        "--select", help="part of refresh_job, in Dagster selection syntax: 'chunks+', 'lexical_index'"
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="allow a scan that removes over half the indexed documents; with --job dream_job, dream even "
        "when the gate would skip",
    )
    p.add_argument(
        "--job",
        help="run any job of the Definitions, or a schedule's job, now: compile_job, promote_job, nightly_refresh, ...",
    )
    p.add_argument(
        "--config",
        metavar="FILE",
        help="run config (YAML or JSON, as in the UI's launchpad), merged over the job's",
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("search", help="hybrid search of the vault")
    common(p)
    p.add_argument("query", metavar="QUERY")
    p.add_argument("--k", type=int, default=5, help="number of sections (default 5)")
    p.add_argument(
        "--lane", action="append", help="content lane: wiki, sources, notes, conversations (repeatable)"
    )
    p.add_argument("--path-prefix", help="only documents under this vault folder")
    p.add_argument(
        "--navigation",
        action="store_true",
        help="also return the generated navigation pages (HOME.md, index.md, log.md, sector hubs)",
    )
    p.add_argument("--mode", choices=["hybrid", "lexical", "semantic"], default="hybrid")
    p.add_argument("--as-of", metavar="DATE", help="search as of this ISO date: newer sources left out")
    p.add_argument(
        "--history", action="store_true", help="keep older versions in relevance order (include_history)"
    )
    p.add_argument("--json", action="store_true", help="print the JSON envelope agents receive")
    p.add_argument(
        "--local", action="store_true", help="search in this process even when a librarian is running"
    )
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("ingest", help="load agent conversations (dlt) and index them (lane conversations)")
    common(p)
    p.add_argument("kind", metavar="KIND", choices=FormatNames(), help="one of: %(choices)s")
    p.add_argument("file", nargs="?", help="export ZIP (chatgpt, claude-ai); logs are found automatically")
    p.add_argument("--no-segments", action="store_true", help="index messages only, no topic segments")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("serve", help="run the librarian (REST + MCP)")
    common(p)
    p.add_argument("--host", help="address to listen on (default: $HIPPO_HOST or 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default: $HIPPO_PORT or 8787)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("review", help="approvals waiting for a tick and gate failures of staging cards")
    common(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_review)

    p = sub.add_parser("approve", help="tick a card's approval box, as a person would in Obsidian")
    common(p)
    p.add_argument("card", metavar="CARD", help="staging card path, file name or title")
    p.set_defaults(func=cmd_approve)

    p = sub.add_parser(
        "backup", help="snapshot the ledger, work store and ghost store now (backup_job); prints the folder"
    )
    common(p)
    p.set_defaults(func=cmd_backup)

    p = sub.add_parser(
        "restore", help="restore a backup into a new home (--into DIR) or over the live one (--yes)"
    )
    common(p)
    p.add_argument("snapshot", metavar="SNAPSHOT", help="a backup folder (what `hippo backup` printed)")
    p.add_argument("--into", type=Path, help="the home to restore into (default: the live HIPPO_HOME)")
    p.add_argument("--yes", action="store_true", help="allow replacing existing stores (the live home)")
    p.set_defaults(func=cmd_restore)

    p = sub.add_parser(
        "gc", help="purge the chunks and vectors of deleted notes now (else kept HIPPO_DELETE_RETENTION_DAYS)"
    )
    common(p)
    p.add_argument("--older-than", type=float, metavar="DAYS", help="only those deleted over DAYS ago")
    p.set_defaults(func=cmd_gc)

    p = sub.add_parser("status", help="what is indexed")
    common(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser(
        "doctor", help="check the setup (vault, stores, embedder, librarian, settings) and say the fix"
    )
    common(p)
    p.add_argument("--json", action="store_true", help="the checks as JSON")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser("watch", help="re-index notes within seconds of an edit (refresh_job per change)")
    common(p)
    p.add_argument("--debounce", type=float, default=1.0, help="seconds of quiet before a run (default 1)")
    p.add_argument(
        "--poll", type=float, default=None, help="poll every N seconds instead of file system events"
    )
    p.set_defaults(func=cmd_watch)

    p = sub.add_parser(
        "eval",
        help="golden-set harness: validate, run, calibrate, sweep, candidates, probe",
    )
    p.add_argument("eval_args", nargs=argparse.REMAINDER, metavar="ARGS", help="arguments for hippo eval")
    p.set_defaults(func=cmd_eval)

    from hippo_cli.config import add_config_command
    from hippo_cli.work import add_commands

    add_config_command(sub)
    add_commands(sub, common, _settings)  # work, hook, ghost, mcp (hippo_cli/work.py)
    return parser


def cmd_doctor(args: argparse.Namespace) -> int:
    from hippo_cli.doctor import doctor

    return doctor(as_json=args.json, vault=args.vault, home=args.home)


def cmd_watch(args: argparse.Namespace) -> int:
    from hippo_cli.watch import watch

    return watch(_settings(args), debounce=args.debounce, poll=args.poll)


def cmd_eval(args: argparse.Namespace) -> int:
    from hippo_cli.eval import main as eval_main

    return eval_main(args.eval_args or ["--help"])


def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    if given[:1] == ["hook"] and len(given) > 1 and given[1] not in ("install", "log", "-h", "--help"):
        return _agent_hook(given[1:])  # an agent runs this: claude-code, codex (an unknown name logs usage)
    restore_interrupt_signals()  # nightly runs start from cron with SIGINT ignored
    try:
        try:
            return _dispatch(argv)
        finally:
            sys.stdout.flush()  # a reader that went away shows here, not as a traceback at exit
    except BrokenPipeError:
        return _reader_gone()


def _dispatch(argv: list[str] | None) -> int:
    from hippo_settings import ConfigFileError

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (BadTextError, ConfigFileError) as exc:
        print(f"hippo: {exc}", file=sys.stderr)
        return 2


def _reader_gone() -> int:
    """`hippo search --json | head -1`: the reader left. Say nothing more, as `cat` would: point stdout and
    stderr at /dev/null so the interpreter's last flush is silent, and exit 141 (128 + SIGPIPE), what a
    shell reports for a command ended by a closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            os.dup2(devnull, stream.fileno())
    return 128 + 13


class _VersionAction(argparse.Action):
    """`hippo --version`, looked up only when asked (every other command starts without it)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)  # type: ignore[arg-type]

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from hippo_cli.doctor import version_line

        print(version_line())
        parser.exit()


def _agent_hook(argv: list[str]) -> int:
    """`hippo hook claude-code|codex` runs at every agent session start and end: no parser, no imports
    beyond the hook's own, and never a failure for the agent (exit 0 whatever happens)."""
    try:
        from hippo_cli.hooks.session import main as hook_main
    except BaseException as exc:  # noqa: BLE001 - never fail the agent
        print(f"hippo hook: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 0
    return hook_main(argv)


if __name__ == "__main__":
    sys.exit(main())
