"""Disk full during a run: HIPPO_HOME on a small tmpfs, filled up; `hippo run` fails with a clear error,
the previous generation is still served (from the lexical lane, with the reason, when Chroma cannot even
open), and once space is freed the next run converges."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import open_engine
from hippo_settings import HippoSettings
from tests.conftest import run_graph


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "small-disk"
    mount.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {proc.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path, leave: int) -> Path:
    """Write a filler file until only about `leave` bytes are free."""
    filler = disk / "filler.bin"
    stat = os.statvfs(disk)
    size = max(stat.f_bavail * stat.f_frsize - leave, 0)
    with filler.open("wb") as f:
        block = b"\0" * (1 << 20)
        try:
            while size > 0:
                size -= f.write(block[: min(len(block), size)])
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def hippo_run(settings: HippoSettings, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HIPPO_VAULT": str(settings.vault),
        "HIPPO_HOME": str(settings.home),
        "HIPPO_EMBED_CACHE": str(settings.embed_cache),
        "DAGSTER_HOME": str(tmp_path / "dagster"),
        "HIPPO_EMBED_THREADS": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "hippo_cli.main", "run"], env=env, capture_output=True, text=True, timeout=600
    )


def search_hits(settings: HippoSettings, query: str, mode: str = "hybrid") -> list[str]:
    return [h.anchor for h in open_engine(settings).search(SearchRequest(query=query, mode=mode)).results]


def test_a_full_disk_fails_the_run_clearly_and_the_old_generation_is_served(
    small_disk: Path, settings: HippoSettings, tmp_path: Path
) -> None:
    settings = settings.model_copy(update={"home": small_disk / "home"})
    assert run_graph(settings).success
    lexical = settings.lexical_dir
    before = json.loads((lexical / "CURRENT.json").read_text())
    hits_before = search_hits(settings, "낮잠 커피")
    lexical_before = search_hits(settings, "낮잠 커피", mode="lexical")
    assert hits_before and lexical_before

    # new notes to index, then no room left to write them
    for i in range(2):
        (settings.vault / "00-inbox" / f"disk-full-{i}.md").write_text(
            f"# Disk full {i}\n\n" + "새 노트 본문 문단입니다. 디스크가 가득 찼을 때의 기록. " * 12,
            encoding="utf-8",
        )
    filler = fill(small_disk, leave=16 * 1024)
    proc = hippo_run(settings, tmp_path)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output[-3000:]
    assert "No space left on device" in output, output[-3000:]  # the reason, in the run's own words

    # the generation that was live is still live, whole, and served
    assert json.loads((lexical / "CURRENT.json").read_text()) == before
    assert (lexical / before["generation"]).is_dir()
    from hippo_resources import LexicalStore

    view = LexicalStore(root=str(lexical)).view(before["generation"])
    assert view.live_table().height == view.index.n_docs == before["chunks"]  # the lexical lane can read it
    # search still answers: from the lexical lane, saying why, when the vector store cannot be opened
    response = open_engine(settings).search(SearchRequest(query="낮잠 커피"))
    served = [h.anchor for h in response.results]
    if response.status == "degraded":
        assert "vector store" in (response.degraded_reason or ""), response.degraded_reason
        assert served == lexical_before
    else:
        assert served == hits_before

    # with room again, the next run converges on the new notes
    filler.unlink()
    proc = hippo_run(settings, tmp_path)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    after = json.loads((lexical / "CURRENT.json").read_text())
    assert after["generation"] != before["generation"] and after["chunks"] > before["chunks"]
    assert not list(lexical.glob(".*.partial"))
    assert any(a.startswith("10-sources/") for a in search_hits(settings, "디스크가 가득 찼을 때"))
