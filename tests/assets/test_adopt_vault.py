"""Issue 14 points 1 and 2: a plain Obsidian vault adopted as it is, indexed and searched, every file intact.

The vault is made here as a person keeps one: `.obsidian/`, `.trash/`, nested folders, notes without
frontmatter, their own status values, attachments, wikilinks, a `.hippoignore`. `hippo init` lists what it
adds, `--yes` applies it, a real pipeline run indexes it, real search finds the notes.
"""

from __future__ import annotations

import hashlib
import shlex
import subprocess
from pathlib import Path

import pytest
from dagster import DagsterInstance

from hippo_cli.main import main
from hippo_resources import Vault
from hippo_resources.vault import VaultError
from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import open_engine
from hippo_settings import HippoSettings
from tests.conftest import run_graph

NOTES = {
    "Daily/2024-03-01.md": "# 1 March\n\nMet [[People/Minji]] about the ferret adoption paperwork.\n",
    "People/Minji.md": "---\ntags: [person]\nstatus: done\n---\nMinji keeps the greenhouse orchid logbook.\n",
    "Projects/Deep/Nested/Orchid watering.md": (
        "---\ntype: meeting\nconfidence: high\nstatus: in progress\n---\n"
        "# Orchid watering schedule\n\n난초는 일주일에 한 번 물을 준다. See [[People/Minji|Minji]].\n"
    ),
    "no frontmatter at all.md": "Plain words about kayak maintenance and hull wax.\n",
    "Templates/Daily template.md": "# {{date}}\n\nferret template text\n",
    "Inbox-ish/half.md": "---\ntitle: [unclosed\n---\nThe note about zeppelin hangars survives.\n",
}
OTHER_FILES = {
    ".obsidian/app.json": b'{"attachmentFolderPath": "assets"}',
    ".obsidian/workspace.json": b"{}",
    ".trash/old ferret note.md": b"# ferret deleted\n",
    "assets/photo.png": b"\x89PNG\r\n\x1a\n" + bytes(range(256)),
    "assets/scan.pdf": b"%PDF-1.4 not really\n%%EOF\n",
    ".hippoignore": b"# my templates are not notes\nTemplates/\n",
    "binary.md": b"# x\x00\x01 not text\n",
}


def make_obsidian_vault(root: Path) -> Path:
    vault = root / "My Vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    for rel, data in OTHER_FILES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_bytes(data)
    return vault


def fingerprints(vault: Path) -> dict[str, str]:
    """sha256 of every file that was the person's (everything but what init and runs add)."""
    return {rel: hashlib.sha256((vault / rel).read_bytes()).hexdigest() for rel in [*NOTES, *OTHER_FILES]}


def test_run_on_a_folder_never_initialised_stops_and_says_init(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_obsidian_vault(tmp_path)
    before = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*"))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dh"))
    assert main(["run", "--vault", str(vault), "--home", str(tmp_path / "home")]) == 2
    err = capsys.readouterr().err
    assert "not a Hippocampus vault yet" in err and f"hippo init {shlex.quote(str(vault))}" in err
    assert "'" in shlex.quote(str(vault))  # "My Vault": the command shown can be pasted as it is
    assert sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*")) == before  # no folder made
    # nor does a job that writes pages (the nightly index pages), or a write from any code path
    assert (
        main(["run", "--job", "index_pages_job", "--vault", str(vault), "--home", str(tmp_path / "home")])
        == 2
    )
    with pytest.raises(VaultError, match="not a Hippocampus vault yet"):
        Vault(root=str(vault)).write_text("HOME.md", "# Home\n")
    assert sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*")) == before


def test_a_persons_own_schema_page_does_not_make_a_folder_a_vault(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    vault = tmp_path / "notes"
    (vault / "Private").mkdir(parents=True)
    (vault / "SCHEMA.md").write_text("# My database schema\n\nusers(id, name)\n", encoding="utf-8")
    (vault / "Private/diary.md").write_text("# Dear diary\n", encoding="utf-8")
    assert not Vault(root=str(vault)).is_initialised()
    assert main(["init", str(vault)]) == 0  # lists, changes nothing
    assert "Nothing was changed" in capsys.readouterr().out
    assert sorted(p.name for p in vault.iterdir()) == ["Private", "SCHEMA.md"]


def test_a_run_commits_only_its_own_writes_never_what_a_person_staged(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    vault = make_obsidian_vault(tmp_path)
    subprocess.run(["git", "init", "-q", "-b", "main", str(vault)], check=True)
    git = ["git", "-C", str(vault), "-c", "user.name=P", "-c", "user.email=p@example.com"]
    subprocess.run([*git, "add", "People/Minji.md"], check=True)  # staged for the person's own commit
    assert main(["init", "--yes", str(vault)]) == 0
    committed = subprocess.run(
        [*git, "show", "--name-only", "--format=", "HEAD"], capture_output=True, text=True
    )
    assert "People/Minji.md" not in committed.stdout.split() and "SCHEMA.md" in committed.stdout.split()
    status = subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True).stdout
    assert "A  People/Minji.md" in status.splitlines()  # still staged, as the person left it

    v = Vault(root=str(vault))
    v.write_text("00-inbox/x.md", "# x\n")
    assert v.commit("ingest: x", ["00-inbox/x.md"])
    committed = subprocess.run(
        [*git, "show", "--name-only", "--format=", "HEAD"], capture_output=True, text=True
    )
    assert committed.stdout.split() == ["00-inbox/x.md"]
    assert (
        "A  People/Minji.md"
        in subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True).stdout
    )


def listing_files(listed: list[str]) -> list[str]:
    return [x for x in listed if not x.endswith("/")]


def test_adopt_index_and_search_an_obsidian_vault_leaving_every_file_as_it_was(
    tmp_path: Path, embed_cache: Path, capsys: pytest.CaptureFixture
) -> None:
    vault = make_obsidian_vault(tmp_path)
    original = fingerprints(vault)

    assert main(["init", str(vault)]) == 0
    listing = capsys.readouterr().out
    listed = [line.split()[-1] for line in listing.splitlines() if line.startswith(("  folder", "  file"))]
    assert "SCHEMA.md" in listed and "00-inbox/" in listed and "20-wiki/" in listed
    assert not [x for x in listed if x.rstrip("/") in {*NOTES, *OTHER_FILES}]
    assert not (vault / "SCHEMA.md").exists() and not (vault / ".git").exists()  # nothing applied yet

    assert main(["init", "--yes", str(vault)]) == 0
    added = {p.relative_to(vault).as_posix() for p in vault.rglob("*") if ".git" not in p.parts}
    expected_new = {x.rstrip("/") for x in listed}
    assert added - {*NOTES, *OTHER_FILES} - {"Daily", "People", "Projects", "Projects/Deep"} == (
        expected_new
        | {"Projects/Deep/Nested", "Templates", "Inbox-ish", "assets", ".obsidian", ".trash", "30-reviews"}
    )
    assert not (vault / "HOME.md").exists()  # adoption adds system folders and SCHEMA.md, nothing else
    committed = subprocess.run(
        ["git", "-C", str(vault), "show", "--name-only", "--format=%s", "HEAD"],
        capture_output=True, text=True, check=True,
    ).stdout.split("\n")  # fmt: skip
    assert committed[0] == "hippo init: adopt an existing vault"
    assert {c for c in committed[1:] if c} == {x for x in listing_files(listed)}
    # The history starts with the person's notes as they were (listed first), the init commit on top.
    assert f"a first commit of your {len(original)} file(s) as they are" in listing
    log = subprocess.run(
        ["git", "-C", str(vault), "log", "--format=%s"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert log == [
        "hippo init: adopt an existing vault",
        "Your notes as they were when hippo init adopted this folder",
    ]
    first = subprocess.run(
        ["git", "-C", str(vault), "ls-tree", "-r", "--name-only", "HEAD~1"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert set(first) == set(original)

    settings = HippoSettings(vault=vault, home=tmp_path / "home", embed_cache_path=embed_cache)
    result = run_graph(settings, DagsterInstance.ephemeral())
    assert result.success
    docs = {
        k: v.value for k, v in result.asset_materializations_for_node("vault_documents")[0].metadata.items()
    }
    assert docs["malformed_files"] == [
        {"path": "binary.md", "error": "binary.md contains NUL bytes (binary data?)"}
    ]
    unknown = {(u["field"], u["value"]) for u in docs["unknown_frontmatter_values"]}
    assert unknown == {
        ("status", "done"),
        ("status", "in progress"),
        ("type", "meeting"),
        ("confidence", "high"),
    }
    assert [i["path"] for i in docs["frontmatter_ignored"]] == ["Inbox-ish/half.md"]
    assert Vault(root=str(vault)).unknown_frontmatter_values() == docs["unknown_frontmatter_values"]

    engine = open_engine(settings)

    def top(query: str) -> dict:
        return engine.search(SearchRequest(query=query, limit=3), log=False).model_dump()["results"]

    assert top("ferret adoption paperwork")[0]["path"] == "Daily/2024-03-01.md"
    assert top("greenhouse orchid logbook")[0]["path"] == "People/Minji.md"
    assert top("난초 물 주기")[0]["path"] == "Projects/Deep/Nested/Orchid watering.md"
    hit = top("kayak hull wax")[0]
    assert (hit["path"], hit["title"]) == ("no frontmatter at all.md", "no frontmatter at all")
    assert top("zeppelin hangars")[0]["path"] == "Inbox-ish/half.md"
    paths = {r["path"] for q in ("ferret template text", "ferret deleted") for r in top(q)}
    assert not [p for p in paths if p.startswith(("Templates/", ".trash/"))]  # .hippoignore and .trash

    assert fingerprints(vault) == original  # every file of the person's, byte for byte
