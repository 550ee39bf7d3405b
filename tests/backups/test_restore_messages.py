"""`hippo restore` refuses a bad snapshot or target with a message and exit 2, never a traceback
(attack-run-2 N15): a manifest that is not JSON, not UTF-8 or nested 100,000 deep; `--into` a regular file
or a folder under /proc."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hippo_cli.main import main
from hippo_cli.vault_init import init_vault
from hippo_core.backups import MANIFEST


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    init_vault(tmp_path / "vault")
    monkeypatch.setenv("HIPPO_VAULT", str(tmp_path / "vault"))
    monkeypatch.setenv("HIPPO_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    return tmp_path


def snapshot(root: Path, name: str, manifest: bytes) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / MANIFEST).write_bytes(manifest)
    return folder


EMPTY = json.dumps({"created": "2026-12-07T00:00:00Z", "snapshot": "s", "stores": []}).encode()


@pytest.mark.parametrize(
    ("manifest", "says"),
    [
        (b"{not json", "does not read as one"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "not a backup"),
        (json.dumps({"created": 1}).encode(), "does not read as one"),
    ],
)
def test_a_bad_manifest_is_a_message(
    env: Path, capsys: pytest.CaptureFixture, manifest: bytes, says: str
) -> None:
    folder = snapshot(env, "snap", manifest)
    code = main(["restore", str(folder), "--into", str(env / "new-home")])
    err = capsys.readouterr().err
    assert code == 2 and says in err and "Traceback" not in err, err


@pytest.mark.parametrize("into", ["file", "/proc/self/restore-here"])
def test_a_target_that_cannot_hold_a_home_is_a_message(
    env: Path, capsys: pytest.CaptureFixture, into: str
) -> None:
    folder = snapshot(env, "snap", EMPTY)
    target = env / "a-file" if into == "file" else Path(into)
    if into == "file":
        target.write_text("x", encoding="utf-8")
    code = main(["restore", str(folder), "--into", str(target)])
    err = capsys.readouterr().err
    assert code == 2 and "cannot restore" in err and "Traceback" not in err, err
