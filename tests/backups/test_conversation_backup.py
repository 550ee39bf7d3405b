"""The conversation store is backed up with the other non-rebuildable stores (issue 25 item 4): a tar of
dlt's destination (loads and incremental state) in the snapshot; after `hippo restore --into` a new home
and `hippo ingest`, the messages are searchable again and nothing is loaded twice."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import polars as pl
import pytest

from hippo_cli.main import main
from hippo_core.backups import MANIFEST, BackupManifest
from hippo_resources.stores import integrity_check
from hippo_settings import HippoSettings

FIXTURES = Path(__file__).parents[1] / "fixtures" / "conversations"


def loaded_messages(home: Path) -> int:
    files = (home / "conversations" / "dlt" / "hippo_conversations_claude_code" / "messages").glob(
        "*.parquet"
    )
    return sum(pl.read_parquet(f).height for f in files)


@pytest.fixture
def env(settings: HippoSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HippoSettings:
    projects = tmp_path / "claude-projects"
    shutil.copytree(FIXTURES / "claude_code", projects)
    for name, value in {
        "HIPPO_VAULT": settings.vault,
        "HIPPO_HOME": settings.home,
        "HIPPO_EMBED_CACHE": settings.embed_cache,
        "HIPPO_CLAUDE_PROJECTS": projects,
        "DAGSTER_HOME": tmp_path / "dagster",
        "HIPPO_BACKUP_DIR": tmp_path / "backups",
    }.items():
        monkeypatch.setenv(name, str(value))
    return settings


def test_conversations_are_backed_up_and_restored_without_loading_twice(
    env: HippoSettings, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(["ingest", "claude-code"]) == 0
    before = loaded_messages(env.home)
    assert before == 6

    assert main(["backup"]) == 0
    snapshot = Path(capsys.readouterr().out.strip().splitlines()[-1])
    manifest = BackupManifest.model_validate_json((snapshot / MANIFEST).read_text())
    entry = next(s for s in manifest.stores if s.store == "conversation_store")
    assert entry.file == "conversation_store.tar" and entry.backend == "files" and entry.integrity_ok
    with tarfile.open(snapshot / entry.file) as tar:
        names = tar.getnames()
    assert any(n.startswith("hippo_conversations_claude_code/messages/") for n in names)

    # a damaged archive is refused by the integrity check
    broken = tmp_path / "broken.tar"
    broken.write_bytes((snapshot / entry.file).read_bytes()[:1024])
    assert not integrity_check(broken).ok

    new_home = tmp_path / "restored"
    assert main(["restore", str(snapshot), "--into", str(new_home)]) == 0
    capsys.readouterr()
    assert loaded_messages(new_home) == before
    assert not (new_home / "conversations" / "pipelines").exists()  # dlt takes its state from the store

    # the same logs again, into the restored home: dlt's restored state knows them
    assert main(["ingest", "claude-code", "--home", str(new_home)]) == 0
    assert loaded_messages(new_home) == before
    capsys.readouterr()
    assert (
        main(
            [
                "search",
                "--local",
                "--home",
                str(new_home),
                "flaky connection pool",
                "--lane",
                "conversations",
                "--json",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    hits = json.loads(out[out.index("{") :])["results"]
    assert hits and all(h["anchor"].startswith("conversations/") or h.get("conversation_id") for h in hits)
