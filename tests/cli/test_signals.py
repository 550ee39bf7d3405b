"""Started with SIGINT ignored (cron, `nohup … &`, CI), a run's children must still stop on SIGTERM."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import signal, subprocess, sys
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # what a background shell hands us
    if sys.argv[1] == "restore":
        from hippo_cli.signals import restore_interrupt_signals
        restore_interrupt_signals()
    from dagster._utils.interrupts import setup_interrupt_handlers
    setup_interrupt_handlers()  # Dagster: SIGTERM does what SIGINT does
    child = subprocess.Popen(["sleep", "30"])  # stands in for the `tail -F` that mirrors step logs
    child.terminate()
    try:
        print(child.wait(timeout=3))
    except subprocess.TimeoutExpired:
        child.kill()
        print("survived SIGTERM")
    """
)


def _run(mode: str) -> str:
    out = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, timeout=30)
    return out.stdout.strip()


def test_children_stop_on_sigterm_once_the_signals_are_restored() -> None:
    assert _run("restore") == "-15"


def test_without_the_restore_dagster_leaves_sigterm_ignored_in_children() -> None:
    assert _run("plain") == "survived SIGTERM"  # the failure mode the restore exists for
