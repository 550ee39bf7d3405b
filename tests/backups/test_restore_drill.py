"""The restore drill (S0 §7.1): data written through the librarian and work memory, `hippo backup`, more
writes, `hippo restore --into` a new home, the integrity check, the restored data read back, old cursors
refused with `invalid_cursor`, and the derived stores rebuilt from the vault by the next `hippo run`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from hippo_assets.backups.snapshots import sha256_file
from hippo_cli.main import main
from hippo_core.backups import MANIFEST, BackupManifest
from hippo_core.facts.dates import parse_date
from hippo_core.facts.model import Fact, FactObject, Provenance
from hippo_resources import build_resources
from hippo_resources.stores import NON_REBUILDABLE, integrity_check
from hippo_server.app import create_app
from hippo_settings import HippoSettings
from hippo_work import InvalidCursor, WorkMemory

PROJECT = "payments-api"
ZERO_HIT = "qwzx vorblunk plimtrax"


def cli(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, list[str], str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out.strip().splitlines(), out.err


@pytest.fixture
def env(indexed: HippoSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HippoSettings:
    """The `hippo` command sees the indexed vault and home, and a Dagster instance of its own."""
    monkeypatch.setenv("HIPPO_VAULT", str(indexed.vault))
    monkeypatch.setenv("HIPPO_HOME", str(indexed.home))
    monkeypatch.setenv("HIPPO_EMBED_CACHE", str(indexed.embed_cache))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    return indexed


def test_backup_restore_drill(env: HippoSettings, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    live = build_resources(env)
    memory = WorkMemory(live.work_store)
    with TestClient(create_app(env)) as api:
        anchor = api.post("/api/v1/search", json={"query": "낮잠 전에 커피"}).json()["results"][0]["anchor"]
        assert api.post(
            "/api/v1/feedback", json={"query": "낮잠 전에 커피", "anchor": anchor, "useful": True}
        ).is_success
        miss = api.post("/api/v1/search", json={"query": ZERO_HIT}).json()
        assert miss["gap"] == "zero-hit"
        chunks_live = api.get("/api/v1/status").json()["chunks"]
    memory.checkpoint(PROJECT, "work", "before the backup", "sess-a", "evt-1")
    live.ghost_store.log_reads([("infra/sops", 1, 0.9)], "sess-a", PROJECT, "sops")
    for value, day in (("6 hours before bed", "2025-01-01"), ("15:00", "2026-03-10")):
        live.fact_store.add(
            Fact(
                subject="caffeine cutoff",
                predicate="caffeine_cutoff",
                cardinality="single",
                object=FactObject(text=value),
                statement=f"The caffeine cutoff is {value}.",
                valid_at=parse_date(day),
                provenance=[
                    Provenance(anchor=f"notes/{day}.md#Rule", content_hash=day, extractor="reader:inline")
                ],
            )
        )
    (proposal,) = live.fact_store.proposals()

    code, out, err = cli(capsys, "backup")
    assert code == 0, err
    snapshot = Path(out[-1])  # the snapshot's folder is the last line
    manifest = BackupManifest.model_validate_json((snapshot / MANIFEST).read_text())
    assert [s.store for s in manifest.stores] == list(NON_REBUILDABLE)
    taken = [s for s in manifest.stores if s.file]  # a store with nothing in it yet has no snapshot
    assert {"ledger", "work_store", "ghost_store", "fact_store"} <= {s.store for s in taken}
    for entry in taken:
        assert entry.file and entry.integrity_ok and entry.integrity == "ok"
        assert entry.sha256 == sha256_file(snapshot / entry.file)
        assert entry.size == (snapshot / entry.file).stat().st_size
    assert sorted(p.name for p in snapshot.iterdir()) == sorted(
        [MANIFEST, *(s.file for s in taken)]
    )  # derived stores are not in a backup
    exported = {e.table: e for e in manifest.exports}
    assert exported["ledger.feedback"].rows == 1 and exported["ghost_store.read_log"].rows == 1
    gaps = (snapshot.parent / "exports" / exported["ledger.gaps"].file).read_text().splitlines()
    assert [json.loads(line)["query"] for line in gaps] == [ZERO_HIT]

    # life goes on after the backup
    live.ledger.record_feedback("after the backup", "HOME.md", False)
    memory.checkpoint(PROJECT, "work", "after the backup", "sess-a", "evt-2")
    old_cursor = memory.sync(PROJECT).cursor
    live.fact_store.decide(proposal.proposal_id, "supersede")  # decided after the backup

    # restoring over the live home needs --yes; a refused restore changes nothing
    for args in (["restore", str(snapshot)], ["restore", str(snapshot), "--into", str(env.home)]):
        code, _, err = cli(capsys, *args)
        assert code == 2 and "--yes" in err
    assert len(live.ledger.feedback()) == 2

    new_home = tmp_path / "restored-home"
    code, out, err = cli(capsys, "restore", str(snapshot), "--into", str(new_home))
    assert code == 0, err
    assert Path(out[-1]) == new_home.resolve()
    assert "integrity check in place: ok" in err
    restored_settings = env.model_copy(update={"home": new_home})
    restored = build_resources(restored_settings)
    for name in ("ledger.sqlite", "work.sqlite", "ghost.sqlite", "facts.sqlite"):
        report = integrity_check(new_home / name)
        assert report.ok and report.detail == "ok", name
    # a second restore into the same folder is refused: it now holds stores
    code, _, err = cli(capsys, "restore", str(snapshot), "--into", str(new_home))
    assert code == 2 and "already holds" in err

    # the restored data, as it was at the backup
    assert [f["query"] for f in restored.ledger.feedback()] == ["낮잠 전에 커피"]
    assert [g["query"] for g in restored.ledger.gaps()] == [ZERO_HIT]
    assert [r["session_id"] for r in restored.ghost_store.read_log()] == ["sess-a"]
    # the facts and their ledger as they were: the proposal still pending, both values held
    assert [p.proposal_id for p in restored.fact_store.proposals()] == [proposal.proposal_id]
    assert [(f.object.text, f.status) for f in restored.fact_store.timeline("caffeine cutoff")] == [
        ("6 hours before bed", "pending_supersede"),
        ("15:00", "active"),
    ]
    assert [r["verdict"] for r in restored.fact_store.ledger()] == ["ADD", "SUPERSEDE_PENDING"]
    restored_memory = WorkMemory(restored.work_store)
    with pytest.raises(InvalidCursor) as refused:
        restored_memory.sync(PROJECT, since=old_cursor)
    assert refused.value.code == "invalid_cursor"
    assert [e.summary for e in restored_memory.sync(PROJECT, since="0").entries] == ["before the backup"]

    # the derived stores are not restored: the librarian has nothing indexed until the next run
    with TestClient(create_app(restored_settings)) as api:
        assert api.get("/api/v1/status").json()["indexed"] is False
    code, _, err = cli(capsys, "run", "--home", str(new_home))
    assert code == 0, err
    with TestClient(create_app(restored_settings)) as api:
        status = api.get("/api/v1/status").json()
        assert status["indexed"] and status["chunks"] == chunks_live == status["vectors"]
        hits = api.post("/api/v1/search", json={"query": "낮잠 커피"}).json()["results"]
        assert hits
        # the librarian writes to the restored ledger
        assert api.post(
            "/api/v1/feedback", json={"query": "restored", "anchor": hits[0]["anchor"], "useful": True}
        ).is_success
    assert [f["query"] for f in restored.ledger.feedback()] == ["낮잠 전에 커피", "restored"]


def test_a_tampered_snapshot_is_refused(
    env: HippoSettings, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    build_resources(env).ledger.record_feedback("q", "HOME.md", True)
    code, out, _ = cli(capsys, "backup")
    assert code == 0
    snapshot = Path(out[-1])
    with (snapshot / "ledger.sqlite").open("r+b") as f:
        f.seek(200)
        f.write(b"\x00\x01\x02")
    code, _, err = cli(capsys, "restore", str(snapshot), "--into", str(tmp_path / "elsewhere"))
    assert code == 2 and "does not match the manifest" in err
    assert not (tmp_path / "elsewhere").exists()
