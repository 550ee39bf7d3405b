"""What the vault scan leaves out: app folders (`.obsidian/`, `.trash/`) and a `.hippoignore` file.

`.hippoignore` takes gitignore patterns: `#` comments, `!` to re-include, a trailing `/` for folders
only, a `/` at the start or in the middle to anchor at the vault root, `*`, `?` and `**`. Matching works
segment by segment with a two-pointer wildcard scan (no regex: at most pattern × name steps per segment),
so a hostile pattern or file name cannot stall a run.
"""

from __future__ import annotations

from pydantic import BaseModel

IGNORE_FILE = ".hippoignore"
# Folders of the apps people keep their vault in, never notes: Obsidian's settings and trash, git.
APP_FOLDERS: tuple[str, ...] = (".obsidian", ".trash", ".git")


class IgnoreRule(BaseModel, frozen=True):
    negate: bool
    dir_only: bool
    anchored: bool  # matched against the whole path from the vault root, not only the last name
    segments: tuple[str, ...]


def parse_ignore(text: str) -> list[IgnoreRule]:
    """The rules of a `.hippoignore` file, in order (a later rule wins, as in git)."""
    rules = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        if line.startswith("\\"):  # `\#name`, `\!name`: a literal first character
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.strip("/") if dir_only else line
        anchored = "/" in line
        line = line.lstrip("/")
        segments = tuple(s for s in line.split("/") if s)
        if segments:
            rules.append(IgnoreRule(negate=negate, dir_only=dir_only, anchored=anchored, segments=segments))
    return rules


def _segment_matches(pattern: str, name: str) -> bool:
    """Glob `*` and `?` within one path segment; the classic greedy scan with one backtrack point."""
    p = n = 0
    star = -1
    mark = 0
    while n < len(name):
        if p < len(pattern) and (pattern[p] == "?" or pattern[p] == name[n]):
            p += 1
            n += 1
        elif p < len(pattern) and pattern[p] == "*":
            star, mark = p, n
            p += 1
        elif star >= 0:
            p = star + 1
            mark += 1
            n = mark
        else:
            return False
    while p < len(pattern) and pattern[p] == "*":
        p += 1
    return p == len(pattern)


def _path_matches(segments: tuple[str, ...], parts: list[str]) -> bool:
    """Segments (with `**` for any number of folders) against path parts, by dynamic programming."""
    # reach[j]: the first i pattern segments can match the first j parts
    reach = [True] + [False] * len(parts)
    for seg in segments:
        nxt = [False] * (len(parts) + 1)
        if seg == "**":
            seen = False
            for j in range(len(parts) + 1):
                seen = seen or reach[j]
                nxt[j] = seen
        else:
            for j in range(1, len(parts) + 1):
                nxt[j] = reach[j - 1] and _segment_matches(seg, parts[j - 1])
        reach = nxt
    return reach[len(parts)]


def is_ignored(rules: list[IgnoreRule], rel: str, is_dir: bool) -> bool:
    """True when the last matching rule ignores this vault-relative path (folders are pruned whole)."""
    parts = [p for p in rel.split("/") if p]
    if not parts:
        return False
    ignored = False
    for rule in rules:
        if rule.dir_only and not is_dir:
            continue
        if rule.anchored:
            hit = _path_matches(rule.segments, parts)
        else:
            hit = len(rule.segments) == 1 and _segment_matches(rule.segments[0], parts[-1])
        if hit:
            ignored = not rule.negate
    return ignored
