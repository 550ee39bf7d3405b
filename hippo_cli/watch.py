"""`hippo watch`: an edited note is searchable within seconds, not at the nightly refresh.

One long-lived process: the Definitions are built once, file system events (watchdog; polling with
`--poll` or where watchdog cannot watch) wake it, and after `--debounce` seconds of quiet it compares a
look at the vault (size and mtime per note, `Vault.look`) with the last one. When a note
or an inbox file changed, it runs `refresh_job` in-process on the DAGSTER_HOME instance, as `hippo run`
does: the pipeline is content-addressed, so only the changed chunks are embedded.

The run's own writes (source copies, moved inbox files) are not edits; an edit made during a run is
seen by the next look. SIGINT or SIGTERM stops the watcher after the run in progress (a second one
stops it at once; the next `hippo run` marks that run failed).
"""

from __future__ import annotations

import contextlib
import io
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

from hippo_core.vault.vault_changes import Stat, changed_paths
from hippo_resources import build_vault
from hippo_resources.vault import Vault, pipeline_owned
from hippo_settings import HippoSettings

# Without events (a network file system, an overflowing inotify queue), look anyway this often.
RESCAN_SECONDS = 60.0
# Two looks this far apart must agree before a pass runs (see `_settled`).
SETTLE_SECONDS = 0.25


class _Wake:
    """Set by file system events (or the poll clock) and by a stop signal; the loop waits on it."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.stop = False
        self.last = 0.0  # monotonic time of the last file event

    def touch(self) -> None:
        self.last = time.monotonic()
        self.event.set()


def _start_observer(root: str, wake: _Wake) -> Any | None:
    """A watchdog observer over the vault that wakes the loop on any change outside `.git`; None when
    watchdog cannot watch here."""
    try:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer
    except ImportError:
        return None

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: Any) -> None:
            paths = (str(event.src_path), str(getattr(event, "dest_path", "") or ""))
            if event.event_type in ("opened", "closed_no_write"):
                return
            if all("/.git" in p or not p for p in paths):
                return
            wake.touch()

    observer = Observer()
    try:
        observer.schedule(Handler(), root, recursive=True)
        observer.start()
    except OSError:
        return None
    return observer


def _install_stop(wake: _Wake, say: Callable[[str], None]) -> None:
    def on_signal(signum: int, _frame: object) -> None:
        if wake.stop:  # the second signal: do not wait for the run in progress
            say("stopping now")
            raise SystemExit(128 + signum)
        wake.stop = True
        wake.event.set()
        say(f"{signal.Signals(signum).name}: stopping after the current run (again to stop now)")

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)


def watch(
    settings: HippoSettings,
    debounce: float = 1.0,
    poll: float | None = None,
    out: TextIO | None = None,
) -> int:
    """Watch the vault until a stop signal; 0 on a clean stop, 2 when there is no vault to watch."""
    stream = out or sys.stderr

    def say(line: str) -> None:
        with contextlib.suppress(BrokenPipeError, ValueError):
            print(f"[{time.strftime('%H:%M:%S')}] {line}", file=stream, flush=True)

    from hippo_cli.vault_init import looks_like_vault

    vault = build_vault(settings)
    if not vault.path.is_dir() or not looks_like_vault(vault.path):
        what = "not initialised" if vault.path.is_dir() else "not found"
        print(
            f"hippo watch: vault {what} at {vault.path}: run `hippo init {shlex.quote(str(vault.path))}`",
            file=stream,
        )
        return 2
    wake = _Wake()
    _install_stop(wake, say)

    from hippo_assets.definitions import build_definitions
    from hippo_cli.runner import get_instance

    def vault_look() -> dict[str, Stat]:
        return vault.look(indexed_only=True, inbox=True).stats()

    instance = get_instance()
    job = build_definitions(settings).resolve_job_def("refresh_job")
    observer = None if poll else _start_observer(str(vault.path), wake)
    interval = poll or (RESCAN_SECONDS if observer else 2.0)
    how = "file system events" if observer else f"a look every {interval:g} s"
    say(f"watching {vault.path} ({how}, {debounce:g} s debounce); Ctrl-C stops")

    # The first pass brings the index up to date with edits made while nobody watched.
    seen: dict[str, Stat] | None = None
    warm: threading.Thread | None = None
    try:
        while not wake.stop:
            look = vault_look()
            changed = changed_paths(seen, look) if seen is not None else ["(start)"]
            if changed and seen is not None:
                look = _settled(look, wake, min(debounce, SETTLE_SECONDS), vault_look)
                changed = changed_paths(seen, look)
            if changed:
                seen = _refresh(job, instance, vault, look, changed, say, vault_look)
                if warm is None and not wake.stop:  # after the first pass, which must not wait for it
                    warm = threading.Thread(target=_warm_up, args=(say,), name="hippo-warm-up", daemon=True)
                    warm.start()
                if wake.stop:
                    break
                continue  # an edit made during the run: look again at once
            wake.event.wait(interval)
            wake.event.clear()
            while not wake.stop and time.monotonic() - wake.last < debounce:  # wait for quiet
                time.sleep(max(0.05, debounce - (time.monotonic() - wake.last)))
    finally:
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)
    say("stopped")
    return 0


def _settled(
    look: dict[str, Stat], wake: _Wake, pause: float, take: Callable[[], dict[str, Stat]]
) -> dict[str, Stat]:
    """The look once two in a row, `pause` apart, agree: a file caught between its truncation and its
    write (an editor saving, a writer preempted) is seen whole, so one save makes one run, not two."""
    while not wake.stop:
        time.sleep(pause)
        again = take()
        if again == look:
            break
        look = again
    return look


def _warm_up(say: Callable[[str], None] | None = None) -> None:
    """Load what an edit's run needs and a no-op run does not, while the watcher is idle: Kiwi's model
    (seconds; one instance then serves every run of this process) and Great Expectations (the checks of
    changed tables). The first edit is then searchable without waiting for either."""
    from expectations.runner import warm_up
    from hippo_core.index.tokenize import get_kiwi

    started = time.monotonic()
    get_kiwi()
    warm_up()
    if say is not None:
        say(f"warm: Kiwi and the checks loaded in {time.monotonic() - started:.1f} s")


def _refresh(
    job: Any,
    instance: Any,
    vault: Vault,
    look: dict[str, Stat],
    changed: list[str],
    say: Callable[[str], None],
    vault_look: Callable[[], dict[str, Stat]],
) -> dict[str, Stat]:
    """Run refresh_job for `changed`; return the look the next pass compares with: the vault after the
    run, except that an edit made during the run keeps its old stat, so it counts as changed."""
    from hippo_cli.runner import run_job

    shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
    say(f"{'catching up' if changed == ['(start)'] else f'{len(changed)} changed: {shown}'} → {job.name}")
    started = time.monotonic()
    log = io.StringIO()
    ok = run_job(job, instance, out=log)
    summary = [ln.strip() for ln in log.getvalue().splitlines() if ln.strip().startswith(("✔", "✗"))]
    details = [ln for ln in summary if not ln.startswith("✔ check")]
    for line in details if not ok else [ln for ln in details if ln.startswith(("✔ chunks", "✔ embeddings"))]:
        say(f"  {line}")
    say(f"{'indexed' if ok else 'run FAILED'} in {time.monotonic() - started:.1f} s")
    after = vault_look()
    during = [rel for rel in changed_paths(look, after) if not pipeline_owned(rel, deleted=rel not in after)]
    for rel in during:  # a person's edit while the run ran: keep the old stat so the next pass runs again
        if rel in look:
            after[rel] = look[rel]
        else:
            after.pop(rel, None)
    return after
