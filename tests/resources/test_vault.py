"""The vault resource on a real folder and a real git repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hippo_cli.vault_init import init_vault
from hippo_resources import Vault, VaultError


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    root = tmp_path / "vault"
    init_vault(root)
    return Vault(root=str(root))


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


# --- writes --------------------------------------------------------------------------------------


def test_write_text_creates_folders_and_writes_utf8_with_lf(vault: Vault) -> None:
    vault.write_text("20-wiki/health/수면.md", "# 수면\r\n\n본문\n")
    target = vault.path / "20-wiki/health/수면.md"
    assert target.read_bytes() == "# 수면\r\n\n본문\n".encode()  # written as given, no newline translation
    assert vault.exists("20-wiki/health/수면.md")
    assert vault.read_bytes("20-wiki/health/수면.md") == target.read_bytes()


def test_write_text_replaces_atomically(vault: Vault) -> None:
    vault.write_text("50-ops/worklog.md", "old contents\n" * 1000)
    target = vault.path / "50-ops/worklog.md"
    before = target.stat().st_ino
    with open(target, encoding="utf-8") as reader:  # a reader (Obsidian) has the old note open
        vault.write_text("50-ops/worklog.md", "new contents\n")
        assert reader.read() == "old contents\n" * 1000  # it still reads the whole old version
    assert target.read_text(encoding="utf-8") == "new contents\n"
    assert target.stat().st_ino != before  # replaced by rename, not rewritten in place
    assert [p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")] == []


# --- moves ---------------------------------------------------------------------------------------


def test_move_keeps_both_files_on_a_name_clash(vault: Vault) -> None:
    inbox = vault.path / "00-inbox"
    moved = []
    for i in range(3):
        (inbox / "note.md").write_text(f"version {i}\n", encoding="utf-8")
        moved.append(vault.move("00-inbox/note.md", "00-inbox/.processed/note.md"))
    assert moved == [f"00-inbox/.processed/{n}" for n in ("note.md", "note.1.md", "note.2.md")]
    processed = vault.path / "00-inbox/.processed"
    assert [(processed / n).read_text(encoding="utf-8") for n in ("note.md", "note.1.md", "note.2.md")] == [
        "version 0\n",
        "version 1\n",
        "version 2\n",
    ]
    assert not (inbox / "note.md").exists()


def test_move_creates_the_destination_folder(vault: Vault) -> None:
    vault.write_text("00-inbox/a.txt", "a\n")
    assert vault.move("00-inbox/a.txt", "new/deep/folder/a.txt") == "new/deep/folder/a.txt"
    assert (vault.path / "new/deep/folder/a.txt").read_text(encoding="utf-8") == "a\n"


# --- the vault boundary --------------------------------------------------------------------------


@pytest.mark.parametrize("rel", ["../outside.md", "20-wiki/../../outside.md", "/tmp/outside.md", ".."])
def test_paths_outside_the_vault_are_refused(vault: Vault, rel: str, tmp_path: Path) -> None:
    with pytest.raises(VaultError, match="outside the vault"):
        vault.write_text(rel, "escaped\n")
    with pytest.raises(VaultError, match="outside the vault"):
        vault.read_bytes(rel)
    assert not (tmp_path / "outside.md").exists()


def test_moves_across_the_boundary_are_refused(vault: Vault, tmp_path: Path) -> None:
    (tmp_path / "outside.md").write_text("secret\n", encoding="utf-8")
    vault.write_text("00-inbox/in.md", "in\n")
    with pytest.raises(VaultError):
        vault.move("../outside.md", "00-inbox/stolen.md")
    with pytest.raises(VaultError):
        vault.move("00-inbox/in.md", "../exfiltrated.md")
    assert (vault.path / "00-inbox/in.md").exists() and not (tmp_path / "exfiltrated.md").exists()


def test_a_symlink_pointing_outside_is_refused(vault: Vault, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.md").write_text("secret\n", encoding="utf-8")
    os.symlink(outside, vault.path / "20-wiki/link")
    with pytest.raises(VaultError, match="outside the vault"):
        vault.read_bytes("20-wiki/link/secret.md")
    with pytest.raises(VaultError, match="outside the vault"):
        vault.write_text("20-wiki/link/planted.md", "x\n")
    assert not (outside / "planted.md").exists()


def test_the_root_itself_and_inner_paths_are_fine(vault: Vault) -> None:
    assert vault.abs(".") == vault.path
    assert vault.abs("20-wiki/../10-sources") == vault.path / "10-sources"
    assert vault.rel(vault.path / "10-sources" / "x.md") == "10-sources/x.md"


# --- listing -------------------------------------------------------------------------------------


def test_inbox_and_markdown_listings_skip_hidden_and_processed_files(vault: Vault) -> None:
    vault.write_text("00-inbox/b.md", "b\n")
    vault.write_text("00-inbox/a.txt", "a\n")
    vault.write_text("00-inbox/.hidden.md", "h\n")
    vault.write_text("00-inbox/.processed/done.md", "d\n")
    vault.write_text(".obsidian/workspace.md", "w\n")
    assert vault.inbox_files() == ["00-inbox/a.txt", "00-inbox/b.md"]
    md = list(vault.markdown_files())
    assert md == sorted(md)
    assert "00-inbox/b.md" in md and "SCHEMA.md" in md
    assert not [p for p in md if "/." in p or p.startswith(".")]


def test_listings_skip_a_symlinked_file_that_points_outside(vault: Vault, tmp_path: Path) -> None:
    (tmp_path / "outside.md").write_text("# Outside\n", encoding="utf-8")
    os.symlink(tmp_path / "outside.md", vault.path / "20-wiki/linked.md")
    os.symlink(tmp_path / "outside.md", vault.path / "00-inbox/linked.md")
    vault.write_text("00-inbox/real.md", "real\n")
    assert vault.inbox_files() == ["00-inbox/real.md"]
    assert not [p for p in vault.markdown_files() if "linked" in p or "outside" in p]


def test_missing_vault_is_reported(tmp_path: Path) -> None:
    missing = Vault(root=str(tmp_path / "nope"))
    with pytest.raises(VaultError, match="hippo init"):
        missing.check_exists()
    assert missing.inbox_files() == []


# --- git -----------------------------------------------------------------------------------------


def test_commit_returns_none_when_nothing_changed_and_a_sha_when_it_did(vault: Vault) -> None:
    root = vault.path
    head = git(root, "rev-parse", "HEAD").strip()
    assert vault.commit("nothing to say") is None
    assert git(root, "rev-parse", "HEAD").strip() == head

    vault.write_text("20-wiki/data/new.md", "# New\n")
    vault.move("00-inbox/.gitkeep", "00-inbox/.processed/.gitkeep")  # a move and a new file
    sha = vault.commit("ingest: 1 new source(s)")
    assert sha is not None and len(sha) == 40
    assert sha == git(root, "rev-parse", "HEAD").strip() != head
    assert (
        git(root, "log", "-1", "--format=%s|%an|%ae")
        == "ingest: 1 new source(s)|Hippocampus|hippocampus@localhost\n"
    )
    assert git(root, "status", "--porcelain") == ""  # everything went into that one commit
    assert vault.commit("again") is None


def test_commit_includes_deletions(vault: Vault) -> None:
    (vault.path / "log.md").unlink()
    sha = vault.commit("remove log")
    assert sha is not None
    assert git(vault.path, "show", "--name-status", "--format=", sha).strip() == "D\tlog.md"


def test_commit_of_given_paths_leaves_other_changes_alone(vault: Vault) -> None:
    root = vault.path
    vault.write_text("00-inbox/drop.md", "dropped\n")
    vault.commit("drop")
    vault.write_text("20-wiki/data/human.md", "a human is editing this\n")  # not the run's business
    vault.write_text("10-sources/copy.md", "copy\n")
    moved = vault.move("00-inbox/drop.md", "00-inbox/.processed/drop.md")
    sha = vault.commit("ingest: 1 new source(s)", ["10-sources/copy.md", "00-inbox/drop.md", moved])
    assert sha is not None
    changed = git(root, "show", "--name-status", "--format=", sha).split("\n")
    assert sorted(line for line in changed if line) == [
        "A\t10-sources/copy.md",
        "R100\t00-inbox/drop.md\t00-inbox/.processed/drop.md",
    ]
    assert git(root, "status", "--porcelain", "-uall") == "?? 20-wiki/data/human.md\n"
    assert vault.commit("nothing of ours", ["10-sources/copy.md"]) is None
    assert vault.commit("never tracked", ["00-inbox/never-existed.md"]) is None


def test_commit_outside_a_repository_returns_none(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    for folder in ("00-inbox", "20-wiki"):  # laid out, but no git repository
        (plain / folder).mkdir(parents=True)
    vault = Vault(root=str(plain))
    vault.write_text("note.md", "x\n")
    assert not vault.is_git_repo()
    assert vault.commit("no repo") is None
    vault.init_git()
    assert vault.is_git_repo() and vault.commit("first") is not None


def test_git_errors_become_vault_errors(vault: Vault) -> None:
    with pytest.raises(VaultError, match="git rev-parse no-such-ref failed"):
        vault.git("rev-parse", "no-such-ref")


def test_a_run_makes_one_commit_of_every_write_it_added(vault: Vault) -> None:
    from dagster import asset, materialize

    @asset(required_resource_keys={"vault"})
    def first(context) -> None:  # noqa: ANN001
        context.resources.vault.write_text("20-wiki/data/one.md", "# One\n")
        context.resources.vault.commit_at_run_end("first: 1 page", ["20-wiki/data/one.md"])

    @asset(deps=[first], required_resource_keys={"vault"})
    def second(context) -> None:  # noqa: ANN001
        run_vault = context.resources.vault
        run_vault.write_text("20-wiki/data/two.md", "# Two\n")
        run_vault.delete("log.md")
        run_vault.commit_at_run_end("second: 1 page", ["20-wiki/data/two.md", "log.md"])
        assert git(run_vault.path, "status", "--porcelain", "-uall")  # nothing committed mid-run

    head = git(vault.path, "rev-parse", "HEAD").strip()
    assert materialize([first, second], resources={"vault": vault}).success
    assert git(vault.path, "log", "--format=%s", f"{head}..HEAD") == "first: 1 page; second: 1 page\n"
    assert git(vault.path, "status", "--porcelain") == ""
    assert materialize([first], resources={"vault": vault}).success  # unchanged bytes: no empty commit
    assert len(git(vault.path, "log", "--format=%s", f"{head}..HEAD").splitlines()) == 1


# --- typed readers -------------------------------------------------------------------------------


APPROVALS = """# Approvals

- [ ] [[30-reviews/staging/a|A]] · fp:aaaaaaaaaaaa
- [x] [[30-reviews/staging/b|B]] · fp:bbbbbbbbbbbb
- [x] [[30-reviews/staging/c|C]] · fp:cccccccccccc — ✓ promoted → [[20-wiki/data/c]] (2026-01-01)
"""


def test_approval_lines_by_state(vault: Vault) -> None:
    vault.write_text("30-reviews/approvals/2026-01-01.md", APPROVALS)
    (vault.path / "30-reviews/approvals/broken.md").write_bytes(b"- [x] \xff\xfe not utf-8\n")
    assert [ln.card for ln in vault.approval_lines()] == [f"30-reviews/staging/{c}.md" for c in "abc"]
    assert [ln.card for ln in vault.approval_lines("open")] == ["30-reviews/staging/a.md"]
    assert [ln.card for ln in vault.approval_lines("ticked")] == ["30-reviews/staging/b.md"]
    assert [ln.state for ln in vault.approval_lines("open", "ticked", "answered")] == [
        "open",
        "ticked",
        "answered",
    ]


def test_source_copies_carry_both_hashes_and_their_lineage(vault: Vault) -> None:
    from hippo_core.vault.sources import body_hash, make_source_copy

    copy = make_source_copy(b"# Kiwi\n\nMorphemes.\n", "kiwi.md", "2026-01-01T00:00:00+00:00")
    vault.write_text(copy.path, copy.text)
    vault.write_text("10-sources/gwanbeop/term.md", "---\ntitle: Term\n---\n\n# Term\n\nBody.\n")
    vault.write_text("10-sources/edited.md", "---\nsha256: stale\nlineage: sangni\n---\n\nNew body.\n")
    (vault.path / "10-sources/bad.md").write_bytes(b"\xff\xfe")
    copies, unreadable = vault.source_copies()
    by_path = {c.path: c for c in copies}
    ingested = by_path[copy.path]
    assert ingested.declared_sha256 == ingested.body_sha256 == copy.sha256 == ingested.content_hash
    assert ingested.is_ingest_copy and ingested.lineage is None
    by_hand = by_path["10-sources/gwanbeop/term.md"]
    assert by_hand.declared_sha256 is None and by_hand.content_hash == body_hash(by_hand.body)
    assert by_hand.lineage == "gwanbeop" and not by_hand.is_ingest_copy  # the folder names the lineage
    edited = by_path["10-sources/edited.md"]
    assert edited.declared_sha256 == "stale" != edited.body_sha256 and edited.lineage == "sangni"
    assert [u["path"] for u in unreadable] == ["10-sources/bad.md"]


def test_staged_cards_ledgers_and_delete(vault: Vault) -> None:
    card = "---\ntype: concept\nstatus: {status}\ntrust: llm_summary\ntitle: {title}\n---\n\n# {title}\n"
    vault.write_text("30-reviews/staging/draft.md", card.format(status="draft", title="Draft"))
    vault.write_text("30-reviews/staging/proposal.md", card.format(status="needs-review", title="Proposal"))
    vault.write_text("30-reviews/staging/broken.md", "---\nstatus: [unclosed\n---\n")
    drafts, unreadable = vault.staged_cards()
    assert [c.path for c in drafts] == ["30-reviews/staging/draft.md"]
    assert [u["card"] for u in unreadable] == ["30-reviews/staging/broken.md"]
    assert len(vault.staged_cards(status=None)[0]) == 2

    vault.append_ledger("90-system/gates/2026-01-01.jsonl", [{"card": "a", "n": 1}])
    vault.append_ledger("90-system/gates/2026-01-02.jsonl", [{"card": "a", "n": 2}, {"card": "b", "n": 3}])
    with open(vault.abs("90-system/gates/2026-01-02.jsonl"), "a", encoding="utf-8") as fh:
        fh.write("{half a line")
    assert [r["n"] for r in vault.read_ledger("90-system/gates")] == [1, 2, 3]
    assert vault.read_ledger("90-system/none.jsonl") == []

    vault.delete("30-reviews/staging/draft.md")
    assert not vault.exists("30-reviews/staging/draft.md")
