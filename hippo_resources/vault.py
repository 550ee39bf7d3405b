"""The vault on disk and its git history: the one resource that writes canonical files, and the typed
readers of what the pipeline keeps there (approval lines, source copies, staged cards, wiki pages, ledgers).

A run's writes make one git commit: assets call `commit_at_run_end`, and the commit is made when Dagster
tears the resource down at the end of the run (the in-process executor builds it once per run).

A run killed before that commit (SIGKILL, power loss) leaves its source copies and moved inbox files
uncommitted. So when a run starts, the vault adds what such a run left in the pipeline's own paths
(the top of `10-sources/`, `00-inbox/.processed/`, inbox files moved away) to this run's commit, and a
stale `.git/index.lock` left by a killed git process is removed before the commit.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from dagster import ConfigurableResource, InitResourceContext
from pydantic import PrivateAttr

from hippo_core.extract import ExtractLimits
from hippo_core.safety.text_input import BadTextError, decode_utf8
from hippo_core.vault import frontmatter, vault_layout
from hippo_core.vault.documents import foreign_value_report, parse_document
from hippo_core.vault.frontmatter import Frontmatter, FrontmatterError
from hippo_core.vault.ignore import APP_FOLDERS, IGNORE_FILE, IgnoreRule, is_ignored, parse_ignore
from hippo_core.vault.sources import SourceFile, read_source_file
from hippo_core.wiki import approvals
from hippo_core.wiki.approvals import ApprovalLine, LineState
from hippo_core.wiki.cards import Card, parse_card
from hippo_resources.files import create_text_atomic, write_atomic, write_text_atomic

GIT_IDENTITY = ("-c", "user.name=Hippocampus", "-c", "user.email=hippocampus@localhost")
# A git process holds index.lock for well under a second on a vault; an older one was left by a kill.
STALE_LOCK_SECONDS = 10.0
RECOVERY_MESSAGE = "recover the writes of an interrupted run"


def pipeline_owned(path: str, deleted: bool) -> bool:
    """Paths only the pipeline writes: source copies at the top of 10-sources/, moved inbox files, and
    inbox files that ingest moved away (deleted from the top of 00-inbox/)."""
    parts = path.split("/")
    if parts[0] == vault_layout.SOURCES:
        return len(parts) == 2
    if path.startswith(vault_layout.INBOX_PROCESSED + "/"):
        return True
    return deleted and parts[0] == vault_layout.INBOX and len(parts) == 2


class VaultError(RuntimeError):
    pass


def link_problem(root: Path, p: Path) -> str | None:
    """Why a path cannot be read through (a symlink loop, a broken link, a link out of the vault), or None."""
    try:
        target = p.resolve(strict=True)
    except RuntimeError:
        return "symlink loop: skipped"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink loop: skipped"
        return "broken symlink: skipped" if p.is_symlink() else f"unreadable: {exc.strerror}"
    if target != root and root not in target.parents:
        return "symlink leads outside the vault: not followed"
    return None


def folder_skip_reason(p: Path, rel: str, rules: list[IgnoreRule]) -> str | None:
    """None to walk into a folder; "" to leave it out quietly; else the reason it is reported."""
    if p.name.startswith(".") or p.name in APP_FOLDERS or is_ignored(rules, rel, is_dir=True):
        return ""
    if p.is_symlink():
        return "symlinked folder: not followed"
    return None


def note_skip_reason(root: Path, p: Path, rel: str, rules: list[IgnoreRule]) -> str | None:
    """None for a note to read; "" to leave a file out quietly (hidden, an attachment, ignored); else the
    reason it is reported."""
    name = p.name
    if name.startswith(".") or not name.lower().endswith((".md", ".markdown")):
        return ""
    if is_ignored(rules, rel, is_dir=False):
        return ""
    if p.is_symlink():
        return link_problem(root, p)
    return None


class Vault(ConfigurableResource):
    """Files under the vault root, addressed by vault-relative POSIX paths."""

    root: str
    # Ingest limits of inbox files (HIPPO_INBOX_MAX_BYTES, HIPPO_INBOX_MAX_CHARS): bigger stays in the inbox.
    inbox_max_bytes: int = 50 * 1024 * 1024
    inbox_max_chars: int = 1_000_000

    # (message, paths) of this run's writes, committed together by `teardown_after_execution`.
    _pending_commit: list[tuple[str, list[str]]] = PrivateAttr(default_factory=list)
    _writable: bool = PrivateAttr(default=False)

    @property
    def path(self) -> Path:
        return Path(self.root).expanduser().resolve()

    def abs(self, rel: str) -> Path:
        try:
            p = (self.path / rel).resolve()
        except (RuntimeError, OSError):  # a symlink loop on the way
            raise VaultError(f"{rel!r} is a symlink loop") from None
        if p != self.path and self.path not in p.parents:
            raise VaultError(f"{rel!r} points outside the vault")
        return p

    def rel(self, p: Path) -> str:
        try:
            return p.resolve().relative_to(self.path).as_posix()
        except ValueError:
            raise VaultError(f"{p} is outside the vault") from None

    def _inside(self, p: Path) -> bool:
        """False for a symlink that leads out of the vault (or in a loop): never read or index through it."""
        return link_problem(self.path, p) is None

    def is_initialised(self) -> bool:
        """`hippo init` ran here: the SCHEMA.md it writes (a person's own SCHEMA.md does not count), or the
        inbox and wiki folders it lays out."""
        if all((self.path / d).is_dir() for d in (vault_layout.INBOX, vault_layout.WIKI)):
            return True
        try:
            with open(self.path / "SCHEMA.md", encoding="utf-8", errors="replace") as fh:
                head = fh.read(4096)
        except OSError:
            return False
        return vault_layout.SCHEMA_SIGNATURE in head

    def check_exists(self) -> None:
        """Stop a run before it writes anything into a folder `hippo init` has not adopted."""
        if not self.path.is_dir():
            raise VaultError(
                f"vault not found at {self.path}: run `hippo init {self.path}` or set HIPPO_VAULT"
            )
        if not self.is_initialised():
            raise VaultError(
                f"{self.path} is not a Hippocampus vault yet: run `hippo init {self.path}` "
                "(it lists what it would add, and changes nothing without --yes)"
            )

    def ensure_layout(self) -> None:
        self.check_writable()
        for folder in vault_layout.FOLDERS:
            self.abs(folder).mkdir(parents=True, exist_ok=True)

    def extract_limits(self) -> ExtractLimits:
        """The size limits ingest applies to inbox notes and documents."""
        return ExtractLimits(max_bytes=self.inbox_max_bytes, max_chars=self.inbox_max_chars)

    def ignore_rules(self) -> list[IgnoreRule]:
        """The `.hippoignore` patterns at the vault root (none when the file is missing or not text)."""
        try:
            return parse_ignore(decode_utf8((self.path / IGNORE_FILE).read_bytes(), IGNORE_FILE))
        except (OSError, BadTextError):
            return []

    def inbox_scan(self) -> tuple[list[str], list[dict[str, str]]]:
        """Files waiting in the inbox (not hidden, not in .processed), sorted, and the entries that are
        not read with the reason: symlinks are never followed in the inbox (copy the file in instead)."""
        inbox = self.abs(vault_layout.INBOX)
        if not inbox.is_dir():
            return [], []
        files, skipped = [], []
        for p in sorted(inbox.iterdir()):
            rel = f"{vault_layout.INBOX}/{p.name}"
            if p.name.startswith("."):
                continue
            if p.is_symlink():
                skipped.append(
                    {"path": rel, "reason": "symlink: not followed in the inbox; copy the file in"}
                )
            elif p.is_file():
                files.append(rel)
        return files, skipped

    def inbox_files(self) -> list[str]:
        """Files waiting in the inbox (`inbox_scan` without the report)."""
        return self.inbox_scan()[0]

    def scan_notes(self) -> tuple[list[str], list[dict[str, str]]]:
        """Every Markdown note of the vault, sorted, and what was skipped with the reason.

        Left out quietly: hidden folders and files (`.obsidian/`, `.trash/`, `.git/`), attachments (any
        file that is not Markdown) and `.hippoignore` matches. Reported: symlinked folders (never
        followed), symlinks in a loop, broken or leading out of the vault.
        """
        rules = self.ignore_rules()
        root = self.path  # resolved once: per file it cost ~0.1 ms, a second per scan at 10,000 notes
        notes: list[str] = []
        skipped: list[dict[str, str]] = []
        for dirpath, dirnames, filenames in os.walk(root):  # never descends into a symlinked folder
            base = Path(dirpath)
            reldir = base.relative_to(root).as_posix()
            prefix = "" if reldir == "." else reldir + "/"
            keep = []
            for d in sorted(dirnames):
                reason = folder_skip_reason(base / d, prefix + d, rules)
                if reason is None:
                    keep.append(d)
                elif reason:
                    skipped.append({"path": prefix + d, "reason": reason})
            dirnames[:] = keep
            for name in filenames:
                reason = note_skip_reason(root, base / name, prefix + name, rules)
                if reason is None:
                    notes.append(prefix + name)
                elif reason:
                    skipped.append({"path": prefix + name, "reason": reason})
        return sorted(notes), sorted(skipped, key=lambda s: s["path"])

    def markdown_files(self) -> Iterator[str]:
        """Every Markdown note of the vault, sorted (`scan_notes` without the report)."""
        yield from self.scan_notes()[0]

    def note_stats(self) -> Callable[[str], os.stat_result]:
        """`stat` for the notes `scan_notes` listed, without resolving each path as `abs` does (3 s per
        scan at 10,000 notes): the scan left out every symlink that loops or leads out of the vault and
        never walks into a symlinked folder, and a stat only reads metadata (reads still go through
        `abs`)."""
        root = self.path
        return lambda rel: os.stat(root / rel)

    def read_bytes(self, rel: str) -> bytes:
        return self.abs(rel).read_bytes()

    def read_text(self, rel: str) -> str:
        """A file as UTF-8 text; BadTextError (with the reason) when it is not."""
        return decode_utf8(self.read_bytes(rel), rel)

    def exists(self, rel: str) -> bool:
        """True when something holds this name; a symlink that loops or leads out of the vault holds it
        too (so a new file never takes its place) but is never read."""
        try:
            return self.abs(rel).exists()
        except VaultError:
            return (self.path / rel).is_symlink()

    def check_writable(self) -> None:
        """Every write goes through here: nothing is written into a folder `hippo init` has not laid out
        or adopted, whichever job or schedule asks (VaultError with the fix otherwise)."""
        if not self._writable:
            self.check_exists()
            self._writable = True

    def write_text(self, rel: str, text: str) -> None:
        """Write atomically (temp file + fsync + rename): Obsidian never sees half a note."""
        self.check_writable()
        write_text_atomic(self.abs(rel), text)

    def create_text(self, rel: str, text: str) -> None:
        """Write a new file atomically, never replacing one (FileExistsError): captures of one name."""
        self.check_writable()
        create_text_atomic(self.abs(rel), text)

    def write_bytes(self, rel: str, data: bytes) -> None:
        """Write bytes atomically: a document's original, kept unchanged beside its Markdown copy."""
        self.check_writable()
        write_atomic(self.abs(rel), lambda tmp: tmp.write_bytes(data))

    def delete(self, rel: str) -> None:
        """Remove a file the pipeline owns (a promoted staging card); the run's commit records it."""
        self.check_writable()
        self.abs(rel).unlink(missing_ok=True)

    def move(self, src: str, dst: str) -> str:
        """Move a file; if the destination exists, a numeric suffix keeps both."""
        self.check_writable()
        target = self.abs(dst)
        target.parent.mkdir(parents=True, exist_ok=True)
        n = 1
        while target.exists():
            target = target.with_name(f"{Path(dst).stem}.{n}{Path(dst).suffix}")
            n += 1
        shutil.move(str(self.abs(src)), str(target))
        return self.rel(target)

    # --- typed readers ---------------------------------------------------------------------
    def texts(self, where: Iterable[str] | None = None) -> dict[str, str]:
        """Every readable Markdown file (path → text), or those under the given folders; files that are not
        UTF-8 are left out."""
        prefixes = tuple(f"{w}/" for w in where) if where is not None else ("",)
        out = {}
        for rel in self.markdown_files():
            if rel.startswith(prefixes):
                try:
                    out[rel] = self.read_text(rel)
                except BadTextError:
                    continue
        return out

    def approval_lines(self, *states: LineState) -> list[ApprovalLine]:
        """The checkbox lines of 30-reviews/approvals/, in file order; only the given states when named
        (`"open"` waiting for a tick, `"ticked"` ticked and not yet acted on, `"answered"`)."""
        lines = []
        for rel, text in self.texts([vault_layout.APPROVALS]).items():
            lines += [ln for ln in approvals.parse(rel, text) if not states or ln.state in states]
        return lines

    def source_copies(self) -> tuple[list[SourceFile], list[dict[str, str]]]:
        """Every source copy (`vault_layout.is_source_copy`) with its declared and body hashes, and the
        files that could not be read."""
        copies, unreadable = [], []
        for rel in self.markdown_files():
            if not vault_layout.is_source_copy(rel):
                continue
            try:
                copies.append(read_source_file(rel, self.read_text(rel)))
            except (BadTextError, FrontmatterError) as exc:
                unreadable.append({"path": rel, "error": str(exc)})
        return copies, unreadable

    def staged_cards(self, status: str | None = "draft") -> tuple[list[Card], list[dict[str, str]]]:
        """Cards in 30-reviews/staging/ (drafts by default; every status with None) and the files that could
        not be read as cards."""
        cards, unreadable = [], []
        for rel in self.markdown_files():
            if not vault_layout.is_staged_card(rel):
                continue
            try:
                card = parse_card(rel, self.read_text(rel))
            except (BadTextError, FrontmatterError) as exc:
                unreadable.append({"card": rel, "error": str(exc)})
                continue
            if status is None or card.status == status:
                cards.append(card)
        return cards, unreadable

    def canonical_pages(self) -> list[tuple[str, Frontmatter, str]]:
        """(path, frontmatter, body) of every readable page under 20-wiki/ (callers filter by status)."""
        out = []
        for rel, text in self.texts([vault_layout.WIKI]).items():
            try:
                fm, body = frontmatter.parse(text, rel)
            except FrontmatterError:
                continue
            out.append((rel, fm, body))
        return out

    def unknown_frontmatter_values(self) -> list[dict[str, Any]]:
        """Frontmatter values outside the contract in the indexed notes, once per (field, value), with how
        many notes hold it and one of them: the `vault_documents` run metadata, for `hippo doctor`."""
        docs = []
        for rel in self.markdown_files():
            if vault_layout.is_indexed(rel):
                try:
                    docs.append(parse_document(rel, self.read_bytes(rel)))
                except (BadTextError, OSError):
                    continue
        return foreign_value_report(docs)

    def read_ledger(self, rel: str) -> list[dict[str, Any]]:
        """Records of a JSONL ledger file, or of every `*.jsonl` in a ledger folder (in file-name order);
        a line that is not JSON is skipped."""
        root = self.abs(rel)
        files = sorted(root.glob("*.jsonl")) if root.is_dir() else ([root] if root.exists() else [])
        out = []
        for f in files:
            for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.strip():
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError:
                        continue
                    if isinstance(record, dict):
                        out.append(record)
        return out

    def append_ledger(self, rel: str, records: list[dict[str, Any]]) -> None:
        """Append records to a JSONL ledger (rewritten atomically: a reader never sees half a line)."""
        if not records:
            return
        old = self.read_text(rel) if self.exists(rel) else ""
        if old and not old.endswith("\n"):
            old += "\n"
        new = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records)
        self.write_text(rel, old + new)

    # --- git -------------------------------------------------------------------------------
    def is_git_repo(self) -> bool:
        return (self.path / ".git").exists()

    def git(self, *args: str) -> str:
        proc = subprocess.run(
            ["git", *GIT_IDENTITY, "-C", str(self.path), *args], capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            raise VaultError(f"git {' '.join(args)} failed: {proc.stderr.strip() or proc.stdout.strip()}")
        return proc.stdout

    def _known_paths(self, paths: list[str]) -> set[str]:
        """The paths git has in its index or in HEAD (an unborn branch has no HEAD)."""
        known = set(self.git("ls-files", "-z", "--cached", "--", *paths).split("\0"))
        with contextlib.suppress(VaultError):  # an unborn branch has no commit yet
            known |= set(self.git("ls-tree", "-r", "-z", "--name-only", "HEAD", "--", *paths).split("\0"))
        return known - {""}

    def init_git(self) -> None:
        if not self.is_git_repo():
            self.git("init", "-q", "-b", "main")

    def is_committed(self, rel: str) -> bool:
        """True when git holds this file exactly as it is on disk (tracked, no change since HEAD)."""
        if not self.is_git_repo():
            return False
        try:
            self.git("ls-files", "--error-unmatch", "--", rel)
            return not self.git("status", "--porcelain", "--", rel).strip()
        except VaultError:
            return False

    def commit_at_run_end(self, message: str, paths: list[str]) -> None:
        """Add these writes to the run's one commit (made when the run ends; see the module docstring)."""
        if paths:
            self._pending_commit.append((message, list(paths)))

    def commit_pending(self) -> str | None:
        """Commit every write a run added with `commit_at_run_end`, as one commit; returns its sha."""
        if not self._pending_commit:
            return None
        message = "; ".join(m for m, _ in self._pending_commit)
        paths = list(dict.fromkeys(p for _, ps in self._pending_commit for p in ps))
        self._pending_commit.clear()
        return self.commit(message, paths)

    def left_over_writes(self) -> list[str]:
        """Pipeline-owned paths that git does not have as they are on disk: what a killed run left."""
        if not self.is_git_repo():
            return []
        out = self.git(
            "status", "--porcelain=v1", "-z", "--untracked-files=all", "--",
            vault_layout.SOURCES, vault_layout.INBOX,
        )  # fmt: skip
        fields = out.split("\0")
        paths, i = [], 0
        while i < len(fields):
            entry = fields[i]
            i += 1
            if len(entry) < 4:
                continue
            status, path = entry[:2], entry[3:]
            if "R" in status or "C" in status:
                i += 1  # the original path follows a rename or copy
            if pipeline_owned(path, deleted="D" in status):
                paths.append(path)
        return paths

    def setup_for_execution(self, context: InitResourceContext) -> None:
        try:
            left = self.left_over_writes()
        except VaultError:
            return  # not a vault yet, or git unusable: the assets report that
        if left:
            self._pending_commit.append((RECOVERY_MESSAGE, left))
            if context.log is not None:
                context.log.info(
                    f"vault: {len(left)} file(s) an interrupted run left are added to this commit"
                )

    def clear_stale_lock(self) -> bool:
        """Remove `.git/index.lock` when it is older than a git process would hold it; True if removed."""
        lock = self.path / ".git" / "index.lock"
        try:
            age = time.time() - lock.stat().st_mtime
        except FileNotFoundError:
            return False
        if age < STALE_LOCK_SECONDS:
            return False
        lock.unlink(missing_ok=True)
        return True

    def teardown_after_execution(self, context: InitResourceContext) -> None:
        sha = self.commit_pending()
        if sha and context.log is not None:
            context.log.info(f"vault: this run's writes are git commit {sha}")

    def commit(self, message: str, paths: list[str] | None = None) -> str | None:
        """One commit for a run's writes: the given paths (created, changed or moved away), or everything.

        Returns the commit sha; None when nothing changed or the vault is not a git repository.
        """
        if not self.is_git_repo():
            return None
        self.clear_stale_lock()
        if paths is None:
            self.git("add", "-A")
            if not self.git("diff", "--cached", "--name-only").strip():
                return None
            self.git("commit", "-q", "-m", message)
            return self.git("rev-parse", "HEAD").strip()
        if not paths:
            return None
        present = [p for p in paths if self.abs(p).exists()]
        gone = [p for p in paths if not self.abs(p).exists()]
        if present:
            self.git("add", "--", *present)
        if gone:
            self.git("rm", "-q", "--cached", "--ignore-unmatch", "--", *gone)
        if not self.git("diff", "--cached", "--name-only", "--", *paths).strip():
            return None
        # `--only` these paths: what a person staged for a commit of their own stays staged, out of ours.
        # A path git never had (a file dropped and moved away before any commit) is no pathspec to give.
        known = self._known_paths(paths)
        self.git(
            "commit", "-q", "--only", "-m", message, "--", *[p for p in dict.fromkeys(paths) if p in known]
        )
        return self.git("rev-parse", "HEAD").strip()
