"""Issue 22 item 1 (attack run 2: N1, N2, N4, N10 and first-round #16): one file never stops a run, the
watcher's look or the librarian.

Real files of every hostile kind in a real vault: names that are not UTF-8 (bytes paths), a FIFO and a
UNIX socket named like notes and documents, symlink loops (a file and a folder), folders nested 1,100
deep, a note over the size limit. A real `hippo run` subprocess (with a timeout: the FIFO hung it) must
succeed and list each with its reason; `hippo doctor` lists them; GET answers 404 without blocking.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance

from hippo_cli.doctor import check_skipped_files
from hippo_resources.vault import NotARegularFile, Vault
from hippo_settings import HippoSettings

HIPPO = str(Path(sys.executable).parent / "hippo")
DEEP = 1_100  # os.walk recursed once per level: RecursionError near 1,000


def plant(vault: Path) -> None:
    """Every hostile kind of file the attack run tried, in the folders a run reads."""
    raw = os.fsencode(vault)
    for rel in (b"/00-inbox/latin1-\xe9.md", b"/20-wiki/caf\xe9.md", b"/10-sources/\xff\xfe.md"):
        with open(raw + rel, "wb") as fh:
            fh.write(b"# not a UTF-8 name\n\nbody\n")
    os.mkdir(raw + b"/20-wiki/d\xe9")
    with open(raw + b"/20-wiki/d\xe9/inside.md", "wb") as fh:
        fh.write(b"# inside a folder whose name is not UTF-8\n")
    os.mkfifo(vault / "20-wiki/pipe.md")
    os.mkfifo(vault / "10-sources/pipe.md")
    os.mkfifo(vault / "00-inbox/pipe.docx")
    os.symlink("loop.md", vault / "10-sources/loop.md")  # read by the blocking source_hashes_match check
    os.symlink("../20-wiki", vault / "20-wiki/folder-loop")
    deep = vault / "20-wiki"
    os.chdir(deep)  # short relative names: the full path of the bottom is far over a socket's 108 bytes
    for _ in range(DEEP):
        os.mkdir("d")
        os.chdir("d")
    Path("bottom.md").write_text("# at the bottom\n", encoding="utf-8")
    os.chdir(vault / "20-wiki")
    (vault / "20-wiki/huge.md").write_text("# Huge\n\n" + "a long sentence of a huge note. " * 2_000, "utf-8")


def bind_socket(folder: Path, name: str) -> socket.socket:
    """A live UNIX socket named like a note (bound through a relative name: the path is too long)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    here = os.getcwd()
    os.chdir(folder)
    try:
        sock.bind(name)
    finally:
        os.chdir(here)
    return sock


def cli_env(settings: HippoSettings, tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HIPPO_VAULT": str(settings.vault),
        "HIPPO_HOME": str(settings.home),
        "HIPPO_EMBED_CACHE_PATH": str(settings.embed_cache_path),
        "HIPPO_NOTE_MAX_BYTES": "20000",
        "DAGSTER_HOME": str(tmp_path / "dagster"),
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }


def metadata(dagster_home: Path, asset: str) -> dict:
    with DagsterInstance.from_config(str(dagster_home)) as instance:
        event = instance.get_latest_materialization_event(AssetKey(asset))
        assert event is not None and event.asset_materialization is not None
        return {k: v.value for k, v in event.asset_materialization.metadata.items()}


def test_hostile_files_are_skipped_with_reasons_and_never_fail_a_run(
    settings: HippoSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    vault = settings.vault
    plant(vault)
    sockets = [bind_socket(vault / "20-wiki", "sock.md"), bind_socket(vault / "00-inbox", "sock.pdf")]
    env = cli_env(settings, tmp_path)
    monkeypatch.setenv("DAGSTER_HOME", env["DAGSTER_HOME"])  # the instance the run recorded into
    try:
        # +vault_documents: sources (with its blocking source_hashes_match check) and vault_documents
        run = subprocess.run(
            [HIPPO, "run", "--select", "+vault_documents"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        skipped = {
            s["path"]: s["reason"] for s in metadata(tmp_path / "dagster", "vault_documents")["skipped_paths"]
        }
        assert skipped["20-wiki/caf\\xe9.md"].startswith("file name is not UTF-8")
        assert skipped["10-sources/\\xff\\xfe.md"].startswith("file name is not UTF-8")
        assert skipped["20-wiki/d\\xe9"].startswith("folder name is not UTF-8")
        assert skipped["20-wiki/pipe.md"] == "not a regular file (a FIFO): not read"
        assert skipped["10-sources/pipe.md"] == "not a regular file (a FIFO): not read"
        assert skipped["20-wiki/sock.md"] == "not a regular file (a socket): not read"
        assert skipped["10-sources/loop.md"] == "symlink loop: skipped"
        assert skipped["20-wiki/folder-loop"] == "symlinked folder: not followed"
        assert any(p.startswith("20-wiki/d/d/") and "nested deeper" in r for p, r in skipped.items())
        assert "HIPPO_NOTE_MAX_BYTES" in skipped["20-wiki/huge.md"]
        sources = metadata(tmp_path / "dagster", "sources")
        inbox = {s["path"]: s["reason"] for s in sources["inbox_skipped"]}
        assert inbox["00-inbox/latin1-\\xe9.md"].startswith("file name is not UTF-8")
        assert inbox["00-inbox/pipe.docx"] == "not a regular file (a FIFO): not read"
        assert inbox["00-inbox/sock.pdf"] == "not a regular file (a socket): not read"
        assert sources["ingested"] == 2  # the fixture inbox went through beside them
        log = subprocess.run(
            ["git", "-C", str(vault), "log", "-1", "--format=%s"], capture_output=True, check=True
        )
        assert b"ingest: 2 new source(s)" in log.stdout  # the run's one commit was made
        assert "Teardown of resources" not in run.stdout + run.stderr
        # `hippo doctor` lists the same files with their reasons (its check, on the same settings)
        listed = check_skipped_files(settings.model_copy(update={"note_max_bytes": 20_000}))
        assert listed.status == "WARN"
        for shown in ("20-wiki/pipe.md", "20-wiki/sock.md", "10-sources/loop.md", "20-wiki/caf\\xe9.md"):
            assert shown in listed.detail
    finally:
        for sock in sockets:
            sock.close()


def _answers_within(call, fifo: Path, seconds: float = 20.0):  # noqa: ANN001, ANN202
    """Run `call` in a thread; if it blocks on the FIFO, give the FIFO a writer (so the test ends) and fail."""
    out: dict[str, object] = {}

    def target() -> None:
        try:
            out["value"] = call()
        except Exception as exc:  # noqa: BLE001 - what it raised is the answer under test
            out["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        thread.join(10)
        pytest.fail(f"blocked for {seconds} s reading the FIFO {fifo.name}")
    return out


def test_a_fifo_is_never_opened_blocking_and_get_answers_404(api, fresh: HippoSettings) -> None:  # noqa: ANN001
    from tests.security.conftest import AUTH

    fifo = fresh.vault / "20-wiki/pipe.md"
    os.mkfifo(fifo)
    out = _answers_within(lambda: Vault(root=str(fresh.vault)).read_bytes("20-wiki/pipe.md"), fifo)
    assert isinstance(out.get("error"), NotARegularFile)
    out = _answers_within(
        lambda: api.get("/api/v1/documents", params={"ref": "20-wiki/pipe.md"}, headers=AUTH), fifo
    )
    assert out["value"].status_code == 404  # type: ignore[attr-defined]
    sock = bind_socket(fresh.vault / "20-wiki", "sock.md")
    try:
        assert (
            api.get("/api/v1/documents", params={"ref": "20-wiki/sock.md"}, headers=AUTH).status_code == 404
        )
    finally:
        sock.close()


def test_the_watchers_look_survives_every_hostile_file(vault: Path, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """`hippo watch` and the vault sensor take this look every pass: it raised on a loop (N2)."""
    monkeypatch.chdir(tmp_path)
    plant(vault)
    sock = bind_socket(vault / "20-wiki", "sock.md")
    try:
        found = Vault(root=str(vault), note_max_bytes=20_000).look(indexed_only=True, inbox=True)
    finally:
        sock.close()
    assert "20-wiki/pipe.md" not in found.notes and "10-sources/loop.md" not in found.notes
    assert "20-wiki/health/sleep-hygiene.md" in found.notes
    assert all(rel.encode("utf-8") for rel in found.stats())  # every listed name is text
    assert "00-inbox/pipe.docx" not in found.inbox
    assert {s["path"] for s in found.skipped} >= {"20-wiki/sock.md", "10-sources/loop.md", "20-wiki/huge.md"}


def _remove_tree_without_recursion(path: Path) -> None:
    """Remove a folder chain deeper than `shutil.rmtree` can (it recurses per level; pytest's clean-up of
    old temporary folders would fail with RecursionError and fail a later session), one level at a time
    through directory file descriptors."""
    fds = [os.open(path, os.O_RDONLY | os.O_DIRECTORY)]
    names: list[str] = []
    while fds:
        below = None
        for entry in os.scandir(fds[-1]):
            if entry.is_dir(follow_symlinks=False):
                below = entry.name
                break
            os.unlink(entry.name, dir_fd=fds[-1])
        if below is not None:
            fds.append(os.open(below, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
            names.append(below)
            continue
        os.close(fds.pop())
        if names:
            os.rmdir(names.pop(), dir_fd=fds[-1])
    os.rmdir(path)


@pytest.fixture(autouse=True)
def _no_deep_folder_left(tmp_path: Path):  # noqa: ANN202
    yield
    deep = tmp_path / "vault" / "20-wiki" / "d"
    if deep.is_dir() and not deep.is_symlink():
        _remove_tree_without_recursion(deep)
