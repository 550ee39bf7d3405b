"""The ghost layer: dual-signal promotion from the vault, audited reads, activation ranking."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import psycopg2
import pytest

from hippo_core.agents.ghost import ALLOWLIST
from hippo_core.wiki import approvals
from hippo_resources.embedder import Embedder
from hippo_resources.ghost_store import GhostStore
from hippo_resources.vault import Vault
from hippo_work import GhostLayer
from tests.work.conftest import Clock

SOPS = (
    "sops -d never to stdout",
    "Never print `sops -d` output to the terminal; pipe it into the tool that needs it.",
)
POOL = (
    "pool timeouts under CI load",
    "A 0.5 s connection-pool timeout fails under CI load; use 5 s and retry once.",
)
PRIVATE = ("our staging host quirks", "The staging box reboots on Sundays; deploys wait until Monday.")


def tick_line_for(vault: Vault, path: str, fingerprint: str | None = None) -> None:
    """What a person does in Obsidian: tick the box on the memory's line."""
    text = vault.abs(ALLOWLIST).read_text(encoding="utf-8")
    for line in approvals.parse(ALLOWLIST, text):
        if line.card == path and (fingerprint is None or line.fingerprint == fingerprint) and not line.ticked:
            text = approvals.tick(text, line.line_no)
            break
    else:
        raise AssertionError(f"no open line for {path}")
    vault.write_text(ALLOWLIST, text)


@pytest.fixture
def embedder(embed_cache: Path) -> Embedder:
    return Embedder(cache_path=str(embed_cache), threads=1)


def test_one_signal_promotes_nothing_both_do_and_an_edit_after_approval_is_refused(
    ghost_store: GhostStore, vault: Vault, clock: Clock
) -> None:
    layer = GhostLayer(ghost_store, vault, clock=clock)
    sops = layer.remember(*SOPS, project="infra", scope="shared")
    pool = layer.remember(*POOL, project="payments-api", scope="shared")
    private = layer.remember(*PRIVATE, project="infra", scope="project")

    first = layer.promote()
    assert first.promoted == [] and sorted(first.proposed) == sorted([sops.path, pool.path])
    reasons = {d.path: d.reason for d in first.not_promoted}
    assert "not ticked" in reasons[sops.path] and "scope is 'project'" in reasons[private.path]
    assert first.commit and ghost_store.memories() == []

    # Signal 2 alone: a person lists and ticks the project-scoped memory by hand.
    text = vault.abs(ALLOWLIST).read_text(encoding="utf-8")
    vault.write_text(
        ALLOWLIST, text + approvals.render_line(private.path, "quirks", private.fingerprint) + "\n"
    )
    tick_line_for(vault, private.path)
    # Both signals for sops: scope shared and a ticked line with its fingerprint.
    tick_line_for(vault, sops.path)
    second = layer.promote()
    assert [d.path for d in second.promoted] == [sops.path]
    reasons = {d.path: d.reason for d in second.not_promoted}
    assert "file itself is not shared" in reasons[private.path] and "not ticked" in reasons[pool.path]
    assert [m["memory_id"] for m in ghost_store.memories()] == [sops.memory_id]

    # The agent edits the approved memory: the edit is refused, the approved text stays shared.
    edited = layer.remember(
        SOPS[0], SOPS[1] + " Rotate the key if it leaked.", project="infra", scope="shared"
    )
    third = layer.promote()
    assert [d.path for d in third.promoted] == []
    refused = {d.path: d.reason for d in third.not_promoted}[sops.path]
    assert "edited after approval" in refused and edited.fingerprint in refused
    assert [d.memory_id for d in third.kept] == [sops.memory_id]
    assert ghost_store.memories()[0]["body"] == SOPS[1]
    assert third.proposed == [sops.path]  # a new line to tick for the new text
    tick_line_for(vault, sops.path, edited.fingerprint)
    fourth = layer.promote()
    assert [d.path for d in fourth.promoted] == [sops.path]
    assert ghost_store.memories()[0]["body"].endswith("Rotate the key if it leaked.")

    # Unticking withdraws it from search (the row stays for the audit trail).
    text = vault.abs(ALLOWLIST).read_text(encoding="utf-8").replace("- [x]", "- [ ]")
    vault.write_text(ALLOWLIST, text)
    fifth = layer.promote()
    assert [d.memory_id for d in fifth.withdrawn] == [sops.memory_id]
    assert ghost_store.memories() == [] and len(ghost_store.memories(include_withdrawn=True)) == 1


def _promote_all(layer: GhostLayer, vault: Vault, memories: list[tuple[str, str, str]]) -> None:
    paths = [
        layer.remember(name, body, project=project, scope="shared").path for name, body, project in memories
    ]
    layer.promote()
    for path in paths:
        tick_line_for(vault, path)
    assert len(layer.promote().promoted) == len(memories)


def test_ghost_search_ranks_by_meaning_and_logs_every_read(
    ghost_store: GhostStore, vault: Vault, clock: Clock, embedder: Embedder
) -> None:
    layer = GhostLayer(ghost_store, vault, embed=embedder, clock=clock)
    _promote_all(layer, vault, [(*SOPS, "infra"), (*POOL, "payments-api")])
    found = layer.search("connection pool timeout in CI", current_project="billing", session_id="sess-z")
    assert found.status == "ok" and found.untrusted
    assert [h.name for h in found.results][0] == POOL[0]
    assert found.results[0].anchor == "ghost/payments-api/pool-timeouts-under-ci-load"
    log = layer.audit().reads
    assert len(log) == len(found.results) == 2
    assert {r.memory_id for r in log} == {h.memory_id for h in found.results}
    assert all(r.session_id == "sess-z" and r.project == "billing" for r in log)
    assert log[0].query == "connection pool timeout in CI"

    # Reads stretch the half-life; useful feedback raises activation.
    clock.advance(days=1)
    again = layer.search("connection pool timeout in CI", current_project="billing")
    top = again.dump(verbose=True)["results"][0]
    assert top["read_multiplier"] > 1.0
    before = again.results[1].score
    fb = layer.feedback(again.results[1].anchor, useful=True, session_id="sess-z", project="billing")
    assert fb.activation > 1.0
    after = layer.search("connection pool timeout in CI", current_project="billing")
    assert {h.memory_id: h.score for h in after.results}[again.results[1].memory_id] > before
    assert len(layer.audit(limit=100).reads) == 6  # every read of every search


def test_without_an_embedder_search_degrades_to_shared_words(
    ghost_store: GhostStore, vault: Vault, clock: Clock
) -> None:
    layer = GhostLayer(ghost_store, vault, clock=clock)
    _promote_all(layer, vault, [(*SOPS, "infra"), (*POOL, "payments-api")])
    found = layer.search("sops stdout", current_project="billing")
    assert found.status == "degraded" and [h.name for h in found.results] == [SOPS[0]]
    assert "similarity" not in found.dump()["results"][0]
    assert "similarity" in found.dump(verbose=True)["results"][0]


def test_the_read_log_refuses_update_and_delete(ghost_store: GhostStore, vault: Vault, clock: Clock) -> None:
    layer = GhostLayer(ghost_store, vault, clock=clock)
    _promote_all(layer, vault, [(*SOPS, "infra")])
    found = layer.search("", current_project="billing", session_id="sess-q")
    layer.feedback(found.results[0].anchor, useful=True)
    assert len(layer.audit().reads) == 1
    statements = ["UPDATE read_log SET project = 'x'", "DELETE FROM read_log", "DELETE FROM feedback"]
    if ghost_store.backend == "sqlite":
        conn = sqlite3.connect(ghost_store.path)
        for sql in statements:
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                conn.execute(sql)
        conn.close()
    else:
        for sql in [*statements, "TRUNCATE read_log"]:
            conn = psycopg2.connect(ghost_store.pg_dsn, options=f"-c search_path={ghost_store.pg_schema}")
            with pytest.raises(psycopg2.Error, match="append-only"), conn.cursor() as cur:
                cur.execute(sql)
            conn.close()
    assert [r.session_id for r in layer.audit().reads] == ["sess-q"]


def test_the_store_refuses_a_secret_even_when_both_signals_pass(
    ghost_store: GhostStore, vault: Vault, clock: Clock
) -> None:
    layer = GhostLayer(ghost_store, vault, clock=clock)
    # A person writes a memory by hand (agents' writes are scanned earlier) with a key in it, and ticks it.
    path = "50-ops/infra/memory/deploy-key.md"
    vault.write_text(
        path,
        "---\nname: deploy key\nscope: shared\nproject: infra\n---\n\nUse AKIAIOSFODNN7EXAMPLE for deploys.\n",
    )
    subprocess.run(["git", "-C", str(vault.path), "add", "-A"], check=True)
    layer.promote()
    tick_line_for(vault, path)
    report = layer.promote()
    assert report.promoted == []
    assert "content scanner" in {d.path: d.reason for d in report.not_promoted}[path]
    assert ghost_store.memories() == []
