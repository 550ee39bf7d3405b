"""Refused inbox files are visible in the vault (issue 25 item 3): `30-reviews/inbox-waiting.md` lists each
with its reason and what to do, in the run's one commit; `hippo status` lists them; a file that later
succeeds leaves the list."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from dagster import DagsterInstance, materialize

from hippo_assets.ingest.assets import sources
from hippo_cli.main import main
from hippo_core.vault.inbox_waiting import PAGE, STATE
from hippo_core.wiki.generated import BEGIN, END
from hippo_resources import build_resources
from hippo_settings import HippoSettings


def ingest(settings: HippoSettings) -> dict:
    result = materialize([sources], resources=build_resources(settings), instance=DagsterInstance.ephemeral())
    assert result.success
    return result.asset_materializations_for_node("sources")[0].metadata


def git(vault: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(vault), *args], capture_output=True, text=True, check=True).stdout


def test_waiting_files_are_listed_with_the_reason_and_leave_when_fixed(
    settings: HippoSettings, capsys: pytest.CaptureFixture
) -> None:
    vault = settings.vault
    inbox = vault / "00-inbox"
    (inbox / "broken.pdf").write_bytes(b"not a pdf at all")
    (inbox / "latin1.md").write_bytes(b"# caf\xe9\n")
    (inbox / "drawing.xcf").write_bytes(b"gimp")
    commits = int(git(vault, "rev-list", "--count", "HEAD"))
    ingest(settings)
    assert int(git(vault, "rev-list", "--count", "HEAD")) == commits + 1  # one commit for the run
    assert {PAGE, STATE} <= set(git(vault, "show", "--name-only", "--format=", "HEAD").split())
    page = (vault / PAGE).read_text(encoding="utf-8")
    block = page[page.index(BEGIN) : page.index(END)]
    for name, why, todo in [
        ("broken.pdf", "not a PDF file", "save it again"),
        ("latin1.md", "UTF-8", "save it as UTF-8"),
        ("drawing.xcf", "not a type ingest reads", "convert it"),
    ]:
        row = next(line for line in block.splitlines() if f"00-inbox/{name}" in line)
        assert why in row and todo in row, row

    assert main(["status", "--json", "--vault", str(vault), "--home", str(settings.home)]) == 0
    listed = {w["file"]: w for w in json.loads(capsys.readouterr().out)["waiting_in_inbox"]}
    assert set(listed) == {f"00-inbox/{n}" for n in ("broken.pdf", "latin1.md", "drawing.xcf")}
    assert listed["00-inbox/latin1.md"]["todo"].startswith("save it as UTF-8")

    # The person fixes one file and deletes another; the next run lists only what still waits.
    (inbox / "latin1.md").write_text("# café\n", encoding="utf-8")
    (inbox / "drawing.xcf").unlink()
    ingest(settings)
    rows = json.loads((vault / STATE).read_text(encoding="utf-8"))
    assert [r["file"] for r in rows] == ["00-inbox/broken.pdf"]
    page = (vault / PAGE).read_text(encoding="utf-8")
    assert "latin1.md" not in page and "broken.pdf" in page
    assert main(["status", "--vault", str(vault), "--home", str(settings.home)]) == 0
    out = capsys.readouterr().out
    assert "1 inbox file(s) waiting" in out and "00-inbox/broken.pdf" in out


def test_a_person_s_words_around_the_list_are_kept(settings: HippoSettings) -> None:
    vault = settings.vault
    (vault / "00-inbox" / "scan.pdf").write_bytes(b"%PDF-1.4 truncated")
    ingest(settings)
    page = vault / PAGE
    page.write_text(
        "My note on top.\n\n" + page.read_text(encoding="utf-8") + "\nAnd below.\n", encoding="utf-8"
    )
    (vault / "00-inbox" / "scan.pdf").unlink()
    ingest(settings)
    text = page.read_text(encoding="utf-8")
    assert text.startswith("My note on top.") and text.endswith("And below.\n")
    assert "Nothing is waiting" in text
