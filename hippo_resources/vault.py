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
import stat
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
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
from hippo_core.vault.vault_changes import Stat
from hippo_core.wiki import approvals
from hippo_core.wiki.approvals import ApprovalLine, LineState
from hippo_core.wiki.cards import Card, parse_card
from hippo_resources.files import (  # noqa: F401 - the vault's errors and reader live with the file helpers
    FileTooLarge,
    NotARegularFile,
    VaultError,
    create_text_atomic,
    file_kind,
    read_regular,
    shown_path,
    write_atomic,
    write_text_atomic,
)

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


def link_problem(root: Path, p: Path) -> str | None:
    """Why a path cannot be read through (a symlink loop, a broken link, a link out of the vault), or None.

    `os.path.realpath(strict=True)` reports a loop as OSError(ELOOP) on every Python this runs on, where
    `Path.resolve` raised RuntimeError on some: no loop ever escapes as an exception."""
    try:
        target = Path(os.path.realpath(p, strict=True))
    except (OSError, RuntimeError, ValueError) as exc:
        if isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == errno.ELOOP:
            return "symlink loop: skipped"
        return "broken symlink: skipped" if os.path.islink(p) else f"unreadable: {exc}"
    if target != root and root not in target.parents:
        return "symlink leads outside the vault: not followed"
    return None


NOTE_SUFFIXES = (".md", ".markdown")
MAX_FOLDER_DEPTH = 64
"""Folders deeper than this are not walked (reported): no vault is that deep, and a walk never recurses."""
MiB = 1024 * 1024


def is_utf8_name(rel: str) -> bool:
    """False for a name that is not UTF-8 on disk (os gives it back with surrogate escapes)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass
class VaultLook:
    """One walk of the vault (`Vault.look`): what is there with its (size, mtime_ns), and what is not
    read with the reason."""

    notes: dict[str, Stat] = field(default_factory=dict)  # Markdown notes the pipeline may read
    inbox: dict[str, Stat] = field(default_factory=dict)  # regular files at the top of the inbox
    skipped: list[dict[str, str]] = field(default_factory=list)  # {"path", "reason"}, paths shown as text

    def skip(self, rel: str, reason: str) -> None:
        self.skipped.append({"path": shown_path(rel), "reason": reason})

    def stats(self) -> dict[str, Stat]:
        """Notes and inbox files in one mapping: what `hippo watch` and the vault sensor compare."""
        return {**self.notes, **self.inbox}


class Vault(ConfigurableResource):
    """Files under the vault root, addressed by vault-relative POSIX paths."""

    root: str
    # Ingest limits of inbox files (HIPPO_INBOX_MAX_BYTES, HIPPO_INBOX_MAX_CHARS): bigger stays in the inbox.
    inbox_max_bytes: int = 50 * 1024 * 1024
    inbox_max_chars: int = 1_000_000
    # Largest note read anywhere in the vault (HIPPO_NOTE_MAX_BYTES); the inbox has its own limits above.
    note_max_bytes: int = 4 * MiB

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
            head = read_regular(self.path / "SCHEMA.md", "SCHEMA.md", head=4096)
        except (OSError, VaultError):
            return False
        return vault_layout.SCHEMA_SIGNATURE in head.decode("utf-8", "replace")

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
            data = read_regular(self.path / IGNORE_FILE, IGNORE_FILE, max_bytes=1024 * 1024)
            return parse_ignore(decode_utf8(data, IGNORE_FILE))
        except (OSError, BadTextError, VaultError):
            return []

    def look(self, indexed_only: bool = False, inbox: bool = False) -> VaultLook:
        """The one walk of the vault: every Markdown note with its (size, mtime_ns), and what is not read
        with the reason. The sensor, `hippo watch`, the scan of every asset and the benches call it.

        Left out quietly: hidden folders and files (`.obsidian/`, `.trash/`, `.git/`), attachments (any
        file that is not Markdown), `.hippoignore` matches and, with `indexed_only`, the folders and files
        search never reads. Reported: symlinked folders (never followed), symlinks in a loop, broken or
        leading out of the vault, names that are not UTF-8, anything that is not a regular file (a FIFO
        or a socket named `x.md` is never opened), notes over `note_max_bytes`, folders nested deeper
        than `MAX_FOLDER_DEPTH`. With `inbox`, the regular files at the top of the inbox too.

        Iterative (a stack, never recursion) with one `scandir` per folder whose entries carry their
        stat; no path is resolved but a symlink's, and that one through `link_problem`.
        """
        root = self.path  # resolved once: per file it cost ~0.1 ms, a second per scan at 10,000 notes
        rules = self.ignore_rules()
        found = VaultLook()
        stack: list[tuple[str, str, int]] = [(str(root), "", 0)]
        while stack:
            folder, prefix, depth = stack.pop()
            try:
                with os.scandir(folder) as it:
                    entries = list(it)
            except OSError as exc:
                if prefix:  # removed meanwhile, or unreadable: the rest of the vault goes on
                    found.skip(prefix.rstrip("/"), f"folder unreadable: {exc.strerror or exc}")
                continue
            for entry in entries:
                folder_below = self._look_at(entry, prefix, depth, rules, indexed_only, found)
                if folder_below is not None:
                    stack.append(folder_below)
        if inbox:
            files, skipped = self.inbox_scan()
            for rel in files:
                with contextlib.suppress(OSError):
                    st = os.stat(root / rel, follow_symlinks=False)
                    found.inbox[rel] = (st.st_size, st.st_mtime_ns)
            seen = {s["path"] for s in found.skipped}
            found.skipped += [s for s in skipped if s["path"] not in seen]
        found.notes = dict(sorted(found.notes.items()))
        found.skipped.sort(key=lambda s: s["path"])
        return found

    def _look_at(
        self,
        entry: os.DirEntry[str],
        prefix: str,
        depth: int,
        rules: list[IgnoreRule],
        indexed_only: bool,
        found: VaultLook,
    ) -> tuple[str, str, int] | None:
        """One entry of a folder: listed, reported or left out; a folder to walk is returned for the
        caller's stack."""
        name = entry.name
        rel = prefix + name
        if name.startswith("."):
            return None
        try:
            if entry.is_dir(follow_symlinks=False):
                if name in APP_FOLDERS or is_ignored(rules, rel, is_dir=True):
                    return None
                if indexed_only and rel in vault_layout.NOT_INDEXED:
                    return None
                if not is_utf8_name(rel):
                    found.skip(rel, "folder name is not UTF-8: not walked; rename it")
                elif depth + 1 > MAX_FOLDER_DEPTH:
                    found.skip(rel, f"folders nested deeper than {MAX_FOLDER_DEPTH} levels: not walked")
                else:
                    return (entry.path, rel + "/", depth + 1)
                return None
            is_note = name.lower().endswith(NOTE_SUFFIXES)
            if entry.is_symlink():
                self._look_at_link(entry, rel, is_note, rules, indexed_only, found)
                return None
            if not is_note or is_ignored(rules, rel, is_dir=False):
                return None
            if indexed_only and rel in vault_layout.NOT_INDEXED_FILES:  # folders were pruned above
                return None
            st = entry.stat(follow_symlinks=False)
        except OSError as exc:  # removed between the listing and the stat: the next look sees it gone
            if exc.errno != errno.ENOENT:
                found.skip(rel, f"unreadable: {exc.strerror or exc}")
            return None
        self._list_note(rel, st, found)
        return None

    def _look_at_link(
        self,
        entry: os.DirEntry[str],
        rel: str,
        is_note: bool,
        rules: list[IgnoreRule],
        indexed_only: bool,
        found: VaultLook,
    ) -> None:
        """A symlink: a folder one is never followed; a note one is read only when it stays inside."""
        try:
            st = os.stat(entry.path)  # follows: ELOOP for a loop, ENOENT for a broken link
        except OSError:
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode):
            quiet = entry.name in APP_FOLDERS or is_ignored(rules, rel, is_dir=True)
            if not quiet and not (indexed_only and rel in vault_layout.NOT_INDEXED):
                found.skip(rel, "symlinked folder: not followed")
            return
        if not is_note or is_ignored(rules, rel, is_dir=False):
            return
        if indexed_only and not vault_layout.is_indexed(rel):  # a link: rare, checked in full
            return
        problem = link_problem(self.path, Path(entry.path))
        if problem:
            found.skip(rel, problem)
        elif st is not None:
            self._list_note(rel, st, found)

    def _list_note(self, rel: str, st: os.stat_result, found: VaultLook) -> None:
        """A note to read, or the reason it is not read (its name, its kind, its size)."""
        if not is_utf8_name(rel):
            found.skip(rel, "file name is not UTF-8: not read; rename it")
        elif not stat.S_ISREG(st.st_mode):
            found.skip(rel, f"not a regular file ({file_kind(st.st_mode)}): not read")
        elif st.st_size > self.note_max_bytes and not rel.startswith(vault_layout.INBOX + "/"):
            found.skip(
                rel,
                f"note is {st.st_size:,} bytes; the limit is {self.note_max_bytes:,} (HIPPO_NOTE_MAX_BYTES)",
            )
        else:
            found.notes[rel] = (st.st_size, st.st_mtime_ns)

    def inbox_scan(self) -> tuple[list[str], list[dict[str, str]]]:
        """Files waiting in the inbox (not hidden, not in .processed), sorted, and the entries that are
        not read with the reason: symlinks are never followed in the inbox (copy the file in instead),
        names that are not UTF-8 and anything that is not a regular file are never opened."""
        inbox = self.path / vault_layout.INBOX
        try:
            with os.scandir(inbox) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:  # no inbox (yet), or the inbox is a file or a link that cannot be read
            return [], []
        files, skipped = [], []
        for entry in entries:
            rel = f"{vault_layout.INBOX}/{entry.name}"
            if entry.name.startswith("."):
                continue
            try:
                if entry.is_symlink():
                    reason = "symlink: not followed in the inbox; copy the file in"
                elif entry.is_dir(follow_symlinks=False):
                    continue  # a folder in the inbox is not read (as before)
                else:
                    mode = entry.stat(follow_symlinks=False).st_mode
                    if not stat.S_ISREG(mode):
                        reason = f"not a regular file ({file_kind(mode)}): not read"
                    elif not is_utf8_name(rel):
                        reason = "file name is not UTF-8: not read; rename it (copy it in under a new name)"
                    else:
                        files.append(rel)
                        continue
            except OSError:
                continue  # removed meanwhile
            skipped.append({"path": shown_path(rel), "reason": reason})
        return files, skipped

    def inbox_files(self) -> list[str]:
        """Files waiting in the inbox (`inbox_scan` without the report)."""
        return self.inbox_scan()[0]

    def markdown_files(self) -> Iterator[str]:
        """Every Markdown note of the vault, sorted (`look` without the stats and the report)."""
        yield from self.look().notes

    def note_stats(self) -> Callable[[str], os.stat_result]:
        """`stat` for the notes `look` listed, without resolving each path as `abs` does (3 s per
        scan at 10,000 notes): the scan left out every symlink that loops or leads out of the vault and
        never walks into a symlinked folder, and a stat only reads metadata (reads still go through
        `abs`)."""
        root = self.path
        return lambda rel: os.stat(root / rel)

    def read_bytes(self, rel: str, max_bytes: int | None = None) -> bytes:
        """A regular file's bytes (NotARegularFile for a FIFO, a socket, a device or a folder, which are
        never read; `max_bytes` refuses a bigger file as too large, checked before reading)."""
        return read_regular(self.abs(rel), rel, max_bytes)

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
                except (BadTextError, OSError, VaultError):  # not text, or gone or swapped since the walk
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
            except (BadTextError, FrontmatterError, OSError, VaultError) as exc:
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
            except (BadTextError, FrontmatterError, OSError, VaultError) as exc:
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
                except (BadTextError, OSError, VaultError):
                    continue
        return foreign_value_report(docs)

    def read_ledger(self, rel: str) -> list[dict[str, Any]]:
        """Records of a JSONL ledger file, or of every `*.jsonl` in a ledger folder (in file-name order);
        a line that is not JSON is skipped."""
        root = self.abs(rel)
        files = sorted(root.glob("*.jsonl")) if root.is_dir() else ([root] if root.exists() else [])
        out = []
        for f in files:
            try:
                text = read_regular(f, f.name).decode("utf-8", "replace")
            except (OSError, VaultError):
                continue  # a FIFO or a folder named *.jsonl holds no records
            for line in text.splitlines():
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
        """Run git in the vault. Its output is bytes (file names need not be UTF-8): they are decoded as
        the file system does (`os.fsdecode`), so a name that is not UTF-8 round-trips into the next git
        call and never raises."""
        proc = subprocess.run(
            ["git", *GIT_IDENTITY, "-C", str(self.path), *args], capture_output=True, check=False
        )
        out = os.fsdecode(proc.stdout)
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip()
            raise VaultError(
                f"git {' '.join(map(shown_path, args))} failed: {err or shown_path(out.strip())}"
            )
        return out

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
            if pipeline_owned(path, deleted="D" in status) and ("D" in status or self._regular(path)):
                paths.append(path)
        return paths

    def _regular(self, rel: str) -> bool:
        """A regular file (not a link, FIFO or socket a person left among the pipeline's paths)."""
        try:
            return stat.S_ISREG(os.lstat(self.path / rel).st_mode)
        except OSError:
            return False

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
        # lexists, not abs(): a symlink loop among the paths must not lose the run's commit
        present = [p for p in paths if os.path.lexists(self.path / p)]
        gone = [p for p in paths if not os.path.lexists(self.path / p)]
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
