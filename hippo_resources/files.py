"""Atomic file writes: a reader (Obsidian, the librarian, another run) never sees half a file.

Write to a hidden temporary sibling, fsync it, rename it over the target, fsync the folder. Every store
that replaces a file goes through `write_atomic`: the vault, the chunk tables and the lexical store.
The temporary name is unique per write, so two writers of one target (two captures in the same second)
never share a half-written file; the last rename wins, whole.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import threading
from collections.abc import Callable
from pathlib import Path

# Serialises `create_text_atomic` where hard links are unsupported (the no-overwrite check is then in-process).
_CREATE_LOCK = threading.Lock()


def fsync_file(path: Path) -> None:
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


def fsync_dir(path: Path) -> None:
    """Persist a folder's entries (a rename); best effort where folders cannot be opened (Windows)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(target: Path, write: Callable[[Path], object]) -> Path:
    """Replace `target` with what `write(temporary_path)` writes, atomically."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_sibling(target)
    try:
        write(tmp)
        fsync_file(tmp)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(target.parent)
    remove_stale_temporaries(target)
    return target


def temporary_sibling(target: Path) -> Path:
    """A hidden name beside `target` that no other writer (thread or process) picks; it carries the
    writer's process id, so a temporary that a killed writer left can be told from one still in use."""
    return target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(6)}.tmp")


def _alive(pid: int) -> bool:
    if pid == os.getpid() or os.name == "nt":  # signal 0 is not a probe on Windows
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process
    return True


def remove_stale_temporaries(target: Path) -> None:
    """Delete the temporaries of `target` whose writer is gone (killed mid-write), and the fixed-name
    `.<name>.tmp` of earlier versions; temporaries of live writers stay."""
    prefix = f".{target.name}."
    try:
        names = [e.name for e in os.scandir(target.parent)]
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        middle = name[len(prefix) : -len(".tmp")]  # "" for the old fixed name, else "<pid>-<random>"
        pid = middle.split("-", 1)[0]
        if not middle or (pid.isdigit() and not _alive(int(pid))):
            with contextlib.suppress(OSError):
                (target.parent / name).unlink()


def write_text_atomic(target: Path, text: str) -> Path:
    """UTF-8 text with `\\n` line endings, written atomically."""

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)

    return write_atomic(target, write)


def create_text_atomic(target: Path, text: str) -> Path:
    """Like `write_text_atomic`, but never replaces a file: FileExistsError when `target` exists.

    The whole file appears at once (a hard link of the finished temporary file), so concurrent creators
    of one name get exactly one winner and the others a FileExistsError to pick another name.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_sibling(target)
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        fsync_file(tmp)
        try:
            os.link(tmp, target)
        except OSError as exc:
            if isinstance(exc, FileExistsError) or exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV):
                raise
            with _CREATE_LOCK:  # no hard links here (some mounted volumes): exclusive within this process
                if target.exists():
                    raise FileExistsError(errno.EEXIST, "file exists", str(target)) from None
                os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(target.parent)
    remove_stale_temporaries(target)
    return target


# --- reading without blocking (no Dagster here: the agent hooks read through this too) ----------------
class VaultError(RuntimeError):
    pass


class NotARegularFile(VaultError):
    """A path that names no regular file (a FIFO, a socket, a device, a folder): never read, 404 on GET."""


class FileTooLarge(VaultError):
    """A file over the size limit it was read under (`size` bytes, or more)."""

    def __init__(self, message: str, size: int) -> None:
        super().__init__(message)
        self.size = size


def read_regular(path: Path, rel: str, max_bytes: int | None = None, head: int | None = None) -> bytes:
    """Read a regular file without ever blocking: opened with O_NONBLOCK (a FIFO without a writer would
    block a plain open forever) and checked with fstat after the open, so what is read is what was
    checked. `head` reads only the first bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a UNIX socket: there is nothing to open
            raise NotARegularFile(f"{shown_path(rel)!r} is not a regular file (a socket)") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotARegularFile(f"{shown_path(rel)!r} is not a regular file ({file_kind(st.st_mode)})")
        if max_bytes is not None and st.st_size > max_bytes:
            raise FileTooLarge(
                f"{shown_path(rel)!r} is {st.st_size:,} bytes; the limit is {max_bytes:,}", st.st_size
            )
        with os.fdopen(fd, "rb", closefd=True) as fh:
            fd = -1
            data = fh.read(head if head is not None else -1 if max_bytes is None else max_bytes + 1)
    finally:
        if fd >= 0:
            os.close(fd)
    if max_bytes is not None and len(data) > max_bytes:
        raise FileTooLarge(f"{shown_path(rel)!r} grew over {max_bytes:,} bytes while it was read", len(data))
    return data


def shown_path(rel: str) -> str:
    """A vault path as text a report can hold: bytes of a name that is not UTF-8 appear as `\\xe9`."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, for a reason a person reads."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"
