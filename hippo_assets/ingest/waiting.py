"""Ingest's refused and unread inbox files onto the vault page `30-reviews/inbox-waiting.md` (and its
list in 90-system), in the run's one commit (hippo_core/vault/inbox_waiting.py renders them)."""

from __future__ import annotations

from hippo_core.safety.scrub import scrub
from hippo_core.vault.inbox_waiting import PAGE, STATE, Waiting, merge, page_update, parse_state, render_state
from hippo_resources import Vault


def update_waiting(
    vault: Vault, found: list[dict[str, str]], looked_at: set[str], inbox_now: set[str], now: str
) -> tuple[list[str], list[dict[str, str]], str | None]:
    """Write the list and the page; returns (paths written, the rows, why the page was left alone)."""
    previous = parse_state(vault.read_text(STATE) if vault.exists(STATE) else None)
    rows = merge(
        previous,
        looked_at,
        [Waiting(file=f["file"], kind=f["kind"], reason=scrub(f["reason"]).text, since=now) for f in found],
        inbox_now,
    )
    if not rows and not vault.exists(STATE) and not vault.exists(PAGE):
        return [], [], None  # nothing ever waited: no page
    written: list[str] = []
    state = render_state(rows)
    if not vault.exists(STATE) or vault.read_text(STATE) != state:
        vault.write_text(STATE, state)
        written.append(STATE)
    update = page_update(vault.read_text(PAGE) if vault.exists(PAGE) else None, rows)
    if update.outcome == "written" and update.text is not None:
        vault.write_text(PAGE, update.text)
        written.append(PAGE)
    return written, [{**r.model_dump(), "todo": r.todo} for r in rows], update.reason
