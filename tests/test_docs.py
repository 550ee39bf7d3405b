"""The docs site builds strictly: a broken link, a missing anchor or a page left out of the nav fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def test_mkdocs_builds_strictly(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        env=ENV,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "site" / "configuration" / "index.html").is_file()


def test_a_broken_anchor_fails_the_strict_build(tmp_path: Path) -> None:
    """The check above can fail: the same build on a copy with one bad anchor does."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n[there](other.md#no-such-heading)\n", encoding="utf-8")
    (docs / "other.md").write_text("# Other\n\n## A heading\n", encoding="utf-8")
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nhooks:")[0]
    validation = (
        (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nvalidation:", 1)[1].split("\nnav:")[0]
    )
    (tmp_path / "mkdocs.yml").write_text(
        config.replace("exclude_docs: |\n  _hooks/\n", "") + "\nvalidation:" + validation + "\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=tmp_path,
        capture_output=True,
        env=ENV,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "no-such-heading" in done.stderr
