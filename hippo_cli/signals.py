"""Give Dagster a SIGINT handler to copy, so the processes it starts can still be stopped.

A command started in the background by a non-interactive shell (cron, `nohup … &`, CI) inherits
SIGINT *ignored*. Dagster maps SIGTERM to whatever SIGINT does, so SIGTERM becomes ignored too, and
every child started afterwards inherits that: the `tail -F` processes that mirror step logs then
survive Dagster's own clean-up and pile up, holding the caller's output pipes open.
"""

from __future__ import annotations

import signal
import threading


def restore_interrupt_signals() -> None:
    """Make ignored SIGINT/SIGTERM behave as usual again (main thread only; a no-op elsewhere)."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
