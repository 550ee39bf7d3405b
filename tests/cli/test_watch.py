"""`hippo watch` as a user runs it: a real subprocess picks up an edit, the note is found by search,
and SIGTERM or SIGINT stops it cleanly (after the run in progress, never in the middle of one)."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from dagster import DagsterInstance, DagsterRunStatus

from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import open_engine
from hippo_settings import HippoSettings

NOTE = "20-wiki/health/sleep-hygiene.md"
RUN_TIMEOUT_S = 600  # a run on a loaded 2-core machine; a healthy one takes seconds


class Watcher:
    """`hippo watch` in its own process, its stderr read line by line."""

    def __init__(self, settings: HippoSettings, dagster_home: Path, embed_cache: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HIPPO_") and k != "ANTHROPIC_API_KEY"}
        env.update(
            HIPPO_VAULT=str(settings.vault),
            HIPPO_HOME=str(settings.home),
            HIPPO_EMBED_CACHE=str(embed_cache),
            DAGSTER_HOME=str(dagster_home),
            OMP_NUM_THREADS="1",
            HIPPO_EMBED_THREADS="1",
            PYTHONUNBUFFERED="1",
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hippo_cli.main", "watch", "--debounce", "0.3"],
            env=env,
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, text: str, timeout: float = RUN_TIMEOUT_S) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                assert self.proc.poll() is None, "hippo watch exited early:\n" + "\n".join(self.seen)
                continue
            self.seen.append(line)
            if text in line:
                return line
        raise AssertionError(f"{text!r} not seen in {timeout} s:\n" + "\n".join(self.seen))

    def stop(self, signum: int, timeout: float = RUN_TIMEOUT_S) -> int:
        self.proc.send_signal(signum)
        code = self.proc.wait(timeout=timeout)
        time.sleep(0.2)
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def runs_in(dagster_home: Path, monkeypatch: pytest.MonkeyPatch) -> list:
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))  # the instance's dagster.yaml reads it
    return DagsterInstance.from_config(str(dagster_home)).get_runs()


@pytest.fixture
def watcher(settings: HippoSettings, tmp_path: Path, embed_cache: Path) -> Iterator[Watcher]:
    w = Watcher(settings, tmp_path / "dagster", embed_cache)
    try:
        yield w
    finally:
        w.kill()


def test_an_edit_is_indexed_and_found_then_sigterm_stops_it(
    watcher: Watcher, settings: HippoSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher.wait_for("catching up")
    watcher.wait_for("indexed in")  # the first pass brings the index up to date
    path = settings.vault / NOTE
    path.write_text(
        path.read_text(encoding="utf-8") + "\n## Quokka\n\nThe quokka naps in qwzpfx burrows.\n",
        encoding="utf-8",
    )
    edited_at = time.monotonic()
    changed = watcher.wait_for("changed:")
    assert f"1 changed: {NOTE}" in changed
    watcher.wait_for("indexed in")
    seconds = time.monotonic() - edited_at
    hits = open_engine(settings, log=False).search(SearchRequest(query="qwzpfx", mode="lexical")).results
    assert hits and hits[0].path == NOTE, f"not found {seconds:.1f} s after the edit"

    assert watcher.stop(signal.SIGTERM) == 0
    out = "\n".join(watcher.seen)
    assert "SIGTERM" in out and out.rstrip().endswith("stopped") and "Traceback" not in out
    runs = runs_in(tmp_path / "dagster", monkeypatch)
    assert len(runs) == 2 and all(r.job_name == "refresh_job" and r.is_success for r in runs), out


def test_sigint_during_a_run_lets_the_run_finish_then_stops(
    watcher: Watcher, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher.wait_for("catching up")
    assert watcher.stop(signal.SIGINT) == 0
    out = "\n".join(watcher.seen)
    assert "stopping after the current run" in out and "indexed in" in out and "Traceback" not in out
    runs = runs_in(tmp_path / "dagster", monkeypatch)
    assert [r.status for r in runs] == [DagsterRunStatus.SUCCESS]  # never left STARTED


@pytest.mark.parametrize("kind", ["missing", "plain folder"])
def test_watch_without_a_vault_says_so(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "notes"
    if kind == "plain folder":
        target.mkdir()
        (target / "todo.md").write_text("# todo\n", encoding="utf-8")
    env = {**os.environ, "HIPPO_VAULT": str(target), "DAGSTER_HOME": str(tmp_path / "d")}
    out = subprocess.run(
        [sys.executable, "-m", "hippo_cli.main", "watch"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2 and f"hippo init {target}" in out.stderr
    if kind == "plain folder":
        assert sorted(p.name for p in target.iterdir()) == ["todo.md"]  # nothing was laid out


def test_a_pass_waits_until_two_looks_agree(tmp_path: Path) -> None:
    """A note caught between its truncation and its write (the CI failure: a third run for one save) is
    run on once, whole: `_settled` looks again until two looks in a row agree."""
    from hippo_cli.watch import _settled, _Wake

    note = tmp_path / "note.md"
    note.write_text("", encoding="utf-8")  # truncated, not yet written
    looks: list[dict[str, tuple[int, int]]] = []

    def take() -> dict[str, tuple[int, int]]:
        if len(looks) == 1:
            note.write_text("# Note\n\nwhole now\n", encoding="utf-8")  # the writer resumes
        st = note.stat()
        looks.append({"note.md": (st.st_size, st.st_mtime_ns)})
        return looks[-1]

    first = take()
    settled = _settled(first, _Wake(), 0.01, take)
    assert settled["note.md"][0] == note.stat().st_size > 0
    assert len(looks) == 3  # the partial look, the whole one, and the one that agreed with it
