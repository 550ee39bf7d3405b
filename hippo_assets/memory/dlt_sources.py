"""The dlt source of a conversation format (`hippo_core.conversations.formats`), incremental through dlt
resource state.

JSONL logs (Claude Code, Codex) remember a byte offset per file, so an appended session loads only
its new lines. Exports (ChatGPT, claude.ai ZIPs) remember the bytes of every export and the messages
already loaded, so a newer export loads only what is new and the same export twice loads nothing.
Every string a parser returns (text, titles, ids, model names, origins, the reasons of skipped input) is
scrubbed of credentials at one boundary, `scrubbed`, right after parsing: nothing unscrubbed reaches the
destination, the dlt state, the run metadata or the log.
"""

from __future__ import annotations

import hashlib
import json
import time
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import dlt

from hippo_core.conversations.formats import Format
from hippo_core.conversations.models import TOO_DEEP, Parsed, Problem
from hippo_core.safety.scrub import ScrubTally, scrub_value
from hippo_settings import env_names

READ_RETRIES = 3


class RunReport:
    """What one extraction did: counts, skipped input with reasons, scrubbed secrets per kind."""

    def __init__(self, progress: Callable[[str], None] | None = None) -> None:
        self.problems: list[Problem] = []
        self.scrub = ScrubTally()
        self.files = 0
        self.messages = 0
        self.conversations = 0
        self._progress = progress or (lambda _msg: None)

    def progress(self, message: str) -> None:
        self._progress(self.scrub.text(message) or "")

    def problem(self, where: str, reason: str) -> None:
        self.problems.append(
            Problem.model_validate(scrub_value({"where": where, "reason": reason}, self.scrub))
        )

    def metadata(self) -> dict[str, Any]:
        reasons = Counter(p.reason.split(" (")[0] for p in self.problems)
        return {
            "files_read": self.files,
            "new_messages": self.messages,
            "conversations_touched": self.conversations,
            "skipped": len(self.problems),
            "skipped_by_reason": dict(reasons),
            "skipped_items": [p.model_dump() for p in self.problems[:200]],
            "secrets_redacted": self.scrub.as_dict(),
        }


def read_new_lines(
    path: Path, offset: int, first_line: int, report: RunReport
) -> tuple[list[tuple[int, str]], int, int]:
    """Complete lines after `offset`: (numbered lines, new offset, next line number).

    A file that changes while being read is re-read (up to READ_RETRIES); an incomplete last line is
    left for the next run, never half-loaded.
    """
    where = str(path)
    data = b""
    for attempt in range(READ_RETRIES + 1):
        before = path.stat()
        if before.st_size < offset:
            report.problem(where, "file shrank since the last run; re-read from the start")
            offset, first_line = 0, 0
        with open(path, "rb") as fh:
            fh.seek(offset)
            data = fh.read()
        after = path.stat()
        if (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns):
            break
        if attempt == READ_RETRIES:
            report.problem(where, "file kept changing while being read; loaded its complete lines")
        else:
            report.problem(where, f"file changed while being read; retry {attempt + 1}")
            time.sleep(0.05 * (attempt + 1))
    end = data.rfind(b"\n")
    complete, rest = (data[: end + 1], data[end + 1 :]) if end >= 0 else (b"", data)
    if rest.strip():
        report.problem(where, "incomplete last line (still being written?); left for the next run")
    lines: list[tuple[int, str]] = []
    number = first_line
    for raw in complete.split(b"\n")[:-1]:
        number += 1
        try:
            lines.append((number, raw.decode("utf-8")))
        except UnicodeDecodeError:
            report.problem(f"{where}:{number}", "not UTF-8 (line skipped)")
    return lines, offset + len(complete), number


def read_export(path: Path, report: RunReport) -> Any | None:
    """`conversations.json` from an export ZIP (or a bare JSON file); None, with a reason, when unreadable."""
    where = str(path)
    try:
        if path.suffix.lower() != ".zip":
            return json.loads(path.read_bytes().decode("utf-8"))
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if n.rsplit("/", 1)[-1] == "conversations.json"]
            if not names:
                report.problem(where, "no conversations.json in the ZIP")
                return None
            info = zf.getinfo(names[0])
            if info.flag_bits & 0x1:
                report.problem(where, "password-protected ZIP (export it again without a password)")
                return None
            return json.loads(zf.read(info).decode("utf-8"))
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        report.problem(where, f"corrupt ZIP ({exc})")
    except RuntimeError as exc:  # zipfile raises RuntimeError for encrypted members
        report.problem(where, f"password-protected ZIP ({exc})")
    except UnicodeDecodeError:
        report.problem(where, "conversations.json is not UTF-8")
    except json.JSONDecodeError as exc:
        report.problem(where, f"conversations.json is not JSON ({exc.msg} at {exc.pos})")
    except RecursionError:
        report.problem(where, f"conversations.json is {TOO_DEEP}")
    except OSError as exc:
        report.problem(where, f"unreadable ({exc.strerror or exc})")
    return None


def scrubbed(parsed: Parsed, report: RunReport) -> Parsed:
    """The parse with every string scrubbed, whatever field it is in; counts go to the run's tally."""
    return Parsed.model_validate(scrub_value(parsed.model_dump(), report.scrub))


def _rows(parsed: Parsed, report: RunReport, source: str) -> Iterator[Any]:
    """Rows for the `conversations` and `messages` tables, from a `scrubbed` parse."""
    report.problems.extend(parsed.problems)
    loaded_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    touched = {m.conversation_id for m in parsed.messages}
    for conv in parsed.conversations:
        if conv.conversation_id not in touched:
            continue
        row = conv.model_dump()
        row["loaded_at"] = loaded_at
        report.conversations += 1
        yield dlt.mark.with_table_name(row, "conversations")
    for msg in parsed.messages:
        row = msg.model_dump()
        row["source"] = source
        report.messages += 1
        yield dlt.mark.with_table_name(row, "messages")


def _jsonl_files(
    files: list[Path],
    base: Path,
    report: RunReport,
    fmt: Format,
) -> Iterator[Any]:
    state = dlt.current.resource_state()
    seen: dict[str, dict[str, Any]] = state.setdefault("files", {})
    for path in files:
        key = str(path.resolve())
        entry = seen.setdefault(key, {"offset": 0, "line": 0, "position": 0})
        try:
            lines, offset, line = read_new_lines(path, entry["offset"], entry["line"], report)
        except OSError as exc:
            report.problem(str(path), f"unreadable ({exc.strerror or exc})")
            continue
        if offset < entry["offset"]:
            entry["position"] = 0
        if not lines:
            entry.update(offset=offset, line=line)
            continue
        report.files += 1
        report.progress(f"{path.name}: {len(lines)} new lines")
        parsed = scrubbed(
            fmt.parse(PurePosixPath(path.relative_to(base).as_posix()), str(path), lines, entry), report
        )
        yield from _rows(parsed, report, fmt.name)
        if parsed.conversations:
            entry["conversation_id"] = parsed.conversations[-1].conversation_id
        entry.update(offset=offset, line=line, position=entry["position"] + len(parsed.messages))


def _log_files(base: Path, fmt: Format) -> list[Path]:
    """The format's log files under its folder, in a stable order (each pattern's matches sorted)."""
    out: list[Path] = []
    for pattern in fmt.files:
        out += sorted(p for p in base.glob(pattern) if p.is_file())
    return list(dict.fromkeys(out))


def _export_records(fmt: Format, paths: list[str], report: RunReport) -> Iterator[Any]:
    state = dlt.current.resource_state()
    exports: dict[str, str] = state.setdefault("exports", {})
    seen: dict[str, list[str]] = state.setdefault("seen", {})
    for raw in paths:
        path = Path(raw).expanduser()
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            report.problem(str(path), f"unreadable ({exc.strerror or exc})")
            continue
        if digest in exports:
            report.problem(str(path), f"duplicate export (same bytes as {exports[digest]}); nothing new")
            continue
        data = read_export(path, report)
        if data is None:
            continue
        report.files += 1
        report.progress(f"{path.name}: reading")
        parsed = scrubbed(fmt.parse(data, str(path)), report)
        fresh = Parsed(conversations=parsed.conversations, problems=parsed.problems)
        for msg in parsed.messages:
            known = seen.setdefault(msg.conversation_id, [])
            tag = hashlib.sha1(msg.message_id.encode()).hexdigest()[:16]
            if tag in known:
                continue
            known.append(tag)
            fresh.messages.append(msg)
        yield from _rows(fresh, report, fmt.name)
        exports[digest] = path.name


def format_source(fmt: Format, root: str = "", paths: list[str] | None = None, report: Any = None) -> Any:
    """The dlt source of one format: log files under `root` (jsonl formats) or the export `paths`."""
    report = report or RunReport()

    def logs() -> Iterator[Any]:
        base = Path(root).expanduser()
        if not base.is_dir():
            report.problem(str(base), f"{fmt.label} folder not found (set {env_names()[fmt.setting]})")
            return
        yield from _jsonl_files(_log_files(base, fmt), base, report, fmt)

    def exports() -> Iterator[Any]:
        yield from _export_records(fmt, list(paths or []), report)

    @dlt.source(name=fmt.name)
    def source() -> Any:
        return dlt.resource(
            logs if fmt.reader == "jsonl" else exports, name=fmt.asset_name, write_disposition="append"
        )

    return source()
