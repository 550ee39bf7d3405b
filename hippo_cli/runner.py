"""`hippo run`: a job of the Definitions, executed in-process on the instance at DAGSTER_HOME, with live
progress.

The run executes in a worker thread; the main thread follows the run's event log on the instance (the
same records the Dagster UI shows) and prints a compact progress line per step and a summary. The run
belongs to a real job of the code location, so the UI can re-execute it.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import socket
import sys
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from dagster import AssetKey, DagsterEventType, DagsterInstance, DagsterRunStatus, JobDefinition, RunsFilter
from dagster._core.events import DagsterEvent

DEFAULT_INSTANCE_YAML = Path(__file__).with_name("dagster_default.yaml")
QUIET_LOGGERS = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def get_instance() -> DagsterInstance:
    """The persistent instance at DAGSTER_HOME, else at the config file's Dagster home (created with our
    dagster.yaml defaults if missing)."""
    home = os.environ.get("DAGSTER_HOME")
    if not home:
        from hippo_settings import HippoSettings

        remembered = HippoSettings.from_env().dagster_home
        if remembered is None:
            raise SystemExit(
                "hippo: no Dagster home: runs must be recorded on a persistent instance so they show in the UI.\n"
                "  `hippo init VAULT` remembers one in the config file (or set DAGSTER_HOME to an absolute path)"
            )
        home = str(remembered.expanduser().resolve())
        os.environ["DAGSTER_HOME"] = home  # Dagster reads it, and dagster.yaml names it
    os.makedirs(home, exist_ok=True)
    config = Path(home) / "dagster.yaml"
    if not config.exists():
        shutil.copyfile(DEFAULT_INSTANCE_YAML, config)
    return DagsterInstance.get()


def _process_key(pid: int) -> str | None:
    """A process's identity that survives pid reuse: its start time from /proc (None when it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        if not Path("/proc/self").exists():  # no procfs (macOS): fall back to "a process has this pid"
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return None
            except PermissionError:
                return "alive"
            return "alive"
        return None
    return stat.rsplit(")", 1)[1].split()[19]  # field 22, starttime, counted after the command name


def run_owner_tags() -> dict[str, str]:
    """Who runs this `hippo run`: host, pid and the process's start time (tags of the run)."""
    return {
        "hippo/host": socket.gethostname(),
        "hippo/pid": str(os.getpid()),
        "hippo/pid_start": _process_key(os.getpid()) or "",
    }


def fail_orphaned_runs(instance: DagsterInstance) -> list[str]:
    """Mark failed the runs a `hippo run` on this machine started and never finished because its process
    died (kill -9, power loss): nothing else would, and a STARTED run holds the run queue's only slot."""
    records = instance.get_run_records(
        filters=RunsFilter(
            statuses=[DagsterRunStatus.STARTED, DagsterRunStatus.STARTING], tags={"hippo/trigger": "cli"}
        )
    )
    failed = []
    for record in records:
        run = record.dagster_run
        tags = run.tags
        if tags.get("hippo/host") != socket.gethostname() or not tags.get("hippo/pid", "").isdigit():
            continue
        alive = _process_key(int(tags["hippo/pid"]))
        if alive is not None and alive in (tags.get("hippo/pid_start"), "alive"):
            continue  # its process is still running
        instance.report_run_failed(
            run,
            f"hippo run: the process of this run (pid {tags['hippo/pid']}) ended without finishing it "
            "(killed or the machine stopped); marked failed by the next `hippo run`.",
        )
        failed.append(run.run_id)
    return failed


def _fmt_meta(entries: dict[str, Any], keys: Sequence[str]) -> str:
    out = []
    for key in keys:
        if key in entries:
            value = getattr(entries[key], "value", entries[key])
            out.append(f"{key}={value}")
    return " ".join(out)


SUMMARY_KEYS = (
    "ingested",
    "duplicates",
    "promoted",
    "rejected",
    "documents",
    "malformed",
    "chunks",
    "embedded",
    "reused",
    "removed_vectors",
    "generation",
    "cards",
    "compiler",
    "llm_calls",
    "total_tokens",
    "judged",
    "passed",
    "failed",
    "requested",
    "proposals",
    "archived",
    "inbox_released",
    "dry_run",
    "skipped",
    "new_messages",
    "conversations",
    "messages",
)


def merged_config(*configs: Mapping[str, Any] | None) -> dict[str, Any]:
    """Run configs merged key by key (later wins): a job's own config survives a CLI flag's addition."""
    out: dict[str, Any] = {}
    for config in configs:
        for key, value in (config or {}).items():
            if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
                out[key] = merged_config(out[key], value)
            else:
                out[key] = value
    return out


class _Progress:
    """Progress lines to a stream; when the reader goes away (`hippo run 2>&1 | head`) the lines stop
    and the run goes on: a closed pipe must never leave a run half done."""

    def __init__(self, out: TextIO) -> None:
        self.out: TextIO | None = out

    def __call__(self, line: str) -> None:
        if self.out is None:
            return
        try:
            print(line, file=self.out, flush=True)
        except (BrokenPipeError, ValueError):
            self.out = None


def run_job(
    job: JobDefinition,
    instance: DagsterInstance,
    run_config: Mapping[str, Any] | None = None,
    asset_selection: Sequence[AssetKey] | None = None,
    partition_key: str | None = None,
    out: TextIO | None = None,
) -> bool:
    """Execute the job (or the selected part of it; asset checks included) and report progress."""
    say = _Progress(out or sys.stderr)  # looked up at call time: test runners swap sys.stderr
    config = merged_config(job.run_config, QUIET_LOGGERS, run_config)
    tags = {"hippo/trigger": "cli", "hippo/run_token": uuid.uuid4().hex, **run_owner_tags()}
    for run_id in fail_orphaned_runs(instance):
        say(f"marked run {run_id} failed: its `hippo run` process had died mid-run")
    result: dict[str, Any] = {}

    def work() -> None:
        try:
            result["run"] = job.execute_in_process(
                run_config=config,
                instance=instance,
                partition_key=partition_key,
                asset_selection=list(asset_selection) if asset_selection else None,
                raise_on_error=False,
                tags=tags,
            )
        except Exception as exc:  # noqa: BLE001 - reported to the user below
            result["error"] = exc

    thread = threading.Thread(target=work, name="hippo-run", daemon=True)
    started = time.monotonic()
    thread.start()
    run_id = _wait_for_run(instance, tags["hippo/run_token"], thread)
    cursor = None
    summary: list[str] = []
    while True:
        alive = thread.is_alive()
        if run_id:
            conn = instance.get_records_for_run(run_id, cursor=cursor, limit=500)
            cursor = conn.cursor
            for record in conn.records:
                line = _describe(record.event_log_entry, summary)
                if line:
                    say(f"[{time.monotonic() - started:6.1f}s] {line}")
            if conn.has_more:
                continue
        if not alive:
            break
        time.sleep(0.2)
    thread.join()
    if "error" in result:
        say(f"✗ run could not start: {result['error']}")
        return False
    run = result["run"]
    say("\nSummary")
    for line in summary:
        say(f"  {line}")
    verdict = "succeeded" if run.success else "FAILED"
    from hippo_cli.config import ui_command

    say(
        f"Run {run.run_id} of {job.name} {verdict} in {time.monotonic() - started:.1f} s "
        f"(see it in the Dagster UI: {ui_command()})"
    )
    return bool(run.success)


def _wait_for_run(instance: DagsterInstance, token: str, thread: threading.Thread) -> str | None:
    from dagster import RunsFilter

    while True:
        runs = instance.get_run_records(filters=RunsFilter(tags={"hippo/run_token": token}), limit=1)
        if runs:
            return runs[0].dagster_run.run_id
        if not thread.is_alive():
            return None
        time.sleep(0.05)


def _describe(entry: Any, summary: list[str]) -> str | None:
    event: DagsterEvent | None = entry.dagster_event
    if event is None:
        msg = entry.user_message or ""
        return f"  {entry.step_key or 'run'}: {msg}" if entry.level >= 20 and msg else None
    kind = event.event_type
    if kind == DagsterEventType.STEP_START:
        return f"▶ {event.step_key}"
    if kind == DagsterEventType.ASSET_MATERIALIZATION:
        mat = event.step_materialization_data.materialization
        name = mat.asset_key.to_user_string() + (f"[{mat.partition}]" if mat.partition else "")
        details = _fmt_meta(mat.metadata, SUMMARY_KEYS)
        summary.append(f"✔ {name:16s} {details}")
        return f"✔ {name} {details}"
    if kind == DagsterEventType.ASSET_CHECK_EVALUATION:
        data = event.event_specific_data
        ok = data.passed
        name = data.check_name
        failed = _fmt_meta(data.metadata, ("failed", "orphan_vectors", "chunks_without_vector"))
        summary.append(f"{'✔' if ok else '✗'} check {name} {'passed' if ok else 'FAILED ' + failed}")
        return f"{'✔' if ok else '✗'} check {name}"
    if kind == DagsterEventType.STEP_FAILURE:
        err = event.step_failure_data.error
        msg = err.message.strip().splitlines()[-1] if err else "unknown error"
        summary.append(f"✗ {event.step_key}: {msg}")
        return f"✗ {event.step_key} failed: {msg}"
    if kind == DagsterEventType.STEP_SKIPPED:
        summary.append(f"- {event.step_key} skipped (an upstream step or blocking check failed)")
        return f"- {event.step_key} skipped"
    return None


SELECTION_WORDS = frozenset({"and", "or", "not", "sinks", "roots"})
SELECTION_TOKEN = re.compile(r'(?:\b(key|group|tag|owner|kind|code_location):)?("[^"]*"|[A-Za-z_][\w/.*-]*)')


def unknown_selection_names(select: str, keys: Sequence[str], groups: Sequence[str]) -> list[str]:
    """Explanations for the names in a selection string that no asset or group carries, each with the
    close matches (`chunk+` → "no asset 'chunk' (did you mean: chunks?)")."""
    problems = []
    for attr, raw in SELECTION_TOKEN.findall(select):
        name = raw.strip('"')
        if "*" in name or (not attr and name in SELECTION_WORDS) or attr not in ("", "key", "group"):
            continue
        known, what = (groups, "group") if attr == "group" else (keys, "asset")
        if name in known:
            continue
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f" (did you mean: {', '.join(close)}?)" if close else ""
        problems.append(f"no {what} named {name!r}{hint}")
    return problems


def resolve_selection(select: str, graph: Any, job: JobDefinition) -> tuple[set[AssetKey] | None, str | None]:
    """The asset keys of `job` a `--select` string picks, or None and a message that names the bad part
    and lists the job's assets to choose from."""
    from dagster import AssetSelection, DagsterError

    in_job = job.asset_layer.selected_asset_keys
    choices = ", ".join(sorted(k.to_user_string() for k in in_job))
    all_keys = sorted(k.to_user_string() for k in graph.get_all_asset_keys())
    groups = sorted({graph.get(k).group_name for k in graph.get_all_asset_keys()} - {None})
    problems = unknown_selection_names(select, all_keys, groups)
    try:
        keys = set(AssetSelection.from_string(select).resolve(graph)) if not problems else set()
    except DagsterError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        problems = problems or [first]
        keys = set()
    if problems:
        return None, f"--select {select!r}: {'; '.join(problems)}.\n  assets of {job.name}: {choices}"
    keys &= set(in_job)
    if not keys:
        return None, (
            f"--select {select!r} names no asset of {job.name}; other assets run with --job.\n"
            f"  assets of {job.name}: {choices}"
        )
    return keys, None
