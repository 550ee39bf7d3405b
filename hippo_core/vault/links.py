"""Links between notes as Obsidian reads them: `[[target#heading|label]]`, `![[embed]]` and relative
Markdown links `[label](path.md#heading)`, and how a link target resolves to a note of the vault.

Every pattern is linear: a wikilink part may hold a single "[" but never "[[", and a Markdown target is
read from its "](" at most 1,000 characters on, one line at a time.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import PurePosixPath
from urllib.parse import unquote

from pydantic import BaseModel

WIKILINK = re.compile(
    r"(!?)\[\[((?:[^\[\]|#]|\[(?!\[))*+)(?:#((?:[^\[\]|]|\[(?!\[))*+))?(?:\|((?:[^\[\]]|\[(?!\[))*+))?\]\]"
)
_MD_TARGET = re.compile(r"\]\(<?([^()<>\s]{1,1000})>?(?:\s+\"[^\"\n]{0,300}\")?\)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]{0,30}:")


class Link(BaseModel):
    """One link written in a note: its target as written (no `.md` needed), the heading part, its line."""

    target: str
    heading: str | None = None
    line: int
    embed: bool = False
    markdown: bool = False


def wikilinks_in_line(line: str, line_no: int) -> list[Link]:
    out = []
    for m in WIKILINK.finditer(line):
        target = m.group(2).strip()
        heading = (m.group(3) or "").strip() or None
        if not target and heading is None:
            continue
        out.append(Link(target=target, heading=heading, line=line_no, embed=bool(m.group(1))))
    return out


def markdown_links_in_line(line: str, line_no: int, note_path: str) -> list[Link]:
    """Relative links to files of the vault; web links, mail links and bare `#anchors` elsewhere are not."""
    out = []
    for m in _MD_TARGET.finditer(line):
        raw = m.group(1)
        if _SCHEME.match(raw) or raw.startswith("//"):
            continue
        path, _, heading = raw.partition("#")
        path = unquote(path)
        heading = unquote(heading).strip() or None
        if path:
            base = PurePosixPath(note_path).parent
            joined = PurePosixPath(path.lstrip("/")) if path.startswith("/") else base / path
            parts: list[str] = []
            for part in joined.parts:
                if part == "..":
                    if parts:
                        parts.pop()
                elif part not in (".", ""):
                    parts.append(part)
            path = "/".join(parts)
        out.append(Link(target=path, heading=heading, line=line_no, markdown=True))
    return out


def _key(name: str) -> str:
    name = name.strip().replace("\\", "/").lower()
    return name[:-3] if name.endswith(".md") else name


class LinkResolver:
    """Resolves link targets the way Obsidian does: a full path from the vault root, else a unique or
    shortest path whose tail matches; attachments (non-Markdown files) resolve by name with extension."""

    def __init__(self, notes: Iterable[str], attachments: Iterable[str] = ()) -> None:
        self._by_path: dict[str, str] = {}
        self._by_tail: dict[str, list[str]] = defaultdict(list)
        for path in notes:
            key = _key(path)
            self._by_path[key] = path
            parts = key.split("/")
            for i in range(len(parts)):
                self._by_tail["/".join(parts[i:])].append(path)
        self._files = {a.lower() for a in attachments}
        self._file_names = {PurePosixPath(a).name.lower() for a in attachments}

    def note(self, target: str, from_path: str = "") -> str | None:
        """The note a target names, or None (self links `[[#heading]]` resolve to `from_path`)."""
        if not target:
            return from_path or None
        key = _key(target)
        if key in self._by_path:
            return self._by_path[key]
        found = self._by_tail.get(key)
        if found:
            return min(found, key=lambda p: (p.count("/"), p))
        return None

    def attachment(self, target: str) -> bool:
        t = target.strip().lower()
        return t in self._files or PurePosixPath(t).name in self._file_names
