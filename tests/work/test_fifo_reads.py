"""A FIFO named like a work-memory file never blocks an agent: the SessionStart hook's resume (the fast
path without Dagster) and the ghost scan read regular files only (attack run 2, N4's class in 50-ops)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from hippo_core.agents.work_memory import Refused
from hippo_resources import Vault
from hippo_settings import HippoSettings
from hippo_work.wiring import ghost_layer, hook_work_memory


def finishes(call, seconds: float = 20.0) -> dict:  # noqa: ANN001
    """Run `call` in a thread; a FIFO without a writer would block it forever (the test then fails)."""
    out: dict = {}

    def target() -> None:
        try:
            out["value"] = call()
        except Exception as exc:  # noqa: BLE001 - the refusal is an answer too
            out["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "the read blocked on a FIFO"
    return out


def settings_for(vault: Vault, tmp_path: Path) -> HippoSettings:
    return HippoSettings(vault=Path(vault.root), home=tmp_path / "home")


def test_resume_with_a_fifo_handoff_answers(vault: Vault, tmp_path: Path) -> None:
    settings = settings_for(vault, tmp_path)
    ops = Path(settings.vault) / "50-ops" / "payments"
    ops.mkdir(parents=True, exist_ok=True)
    os.mkfifo(ops / "handoff.md")
    out = finishes(lambda: hook_work_memory(settings).resume("payments"))
    assert "value" in out or (isinstance(out["error"], Refused) and "not a regular file" in str(out["error"]))


def test_the_ghost_scan_skips_a_fifo_memory(vault: Vault, tmp_path: Path) -> None:
    settings = settings_for(vault, tmp_path)
    memory = Path(settings.vault) / "50-ops" / "payments" / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    os.mkfifo(memory / "lesson.md")
    out = finishes(lambda: ghost_layer(settings).scan_memories())
    found, bad = out["value"]
    assert found == [] and [b.path for b in bad] == ["50-ops/payments/memory/lesson.md"]
    assert "not a regular file" in bad[0].reason
