"""Issue 9 points 9 and 13: frontmatter is written with a YAML library and read without alias bombs.

Point 9: capture titles with `\\` or control characters went raw into a double-quoted scalar; the
note was invalid YAML or its title silently changed. Point 13: a 417-byte alias bomb became a
312-million-character field.
"""

from __future__ import annotations

import time

import pytest

from hippo_core.vault import frontmatter
from hippo_core.vault.frontmatter import FrontmatterError
from hippo_core.vault.sources import make_source_copy

TITLES = [
    "C:\\Users\\me\\notes",  # backslashes: `"C:\Users"` is an invalid escape in a double-quoted scalar
    'a "quoted" \\" title',
    "bell\x07 and escape\x1b[31m red",
    "tab\tand\rreturn",
    "line one\nline two",
    "a line\n---\nthat closes frontmatter",
    "next line\x85, line sep\u2028, para sep\u2029",
    "lone surrogate \udc00x",
    "deleted \x7f and C1 \x9b",
    "yes",
    "null",
    "- looks like a list",
    "key: value",
    "# heading?",
    "&anchor *alias",
    "수면 위생 \\ 백슬래시",
]


@pytest.mark.parametrize("title", TITLES)
def test_every_title_round_trips_through_the_writer(title: str) -> None:
    text = frontmatter.render({"type": "conversation", "status": "draft", "title": title}, "# x\n")
    raw, body = frontmatter.split(text)
    assert frontmatter.parse_mapping(raw)["title"] == title
    assert body == "\n# x\n"
    fm, _ = frontmatter.parse(text)
    assert fm.title == title


def test_a_rendered_capture_is_ingested_with_its_title() -> None:
    title = "C:\\temp\\x\x01 report"
    note = frontmatter.render({"type": "conversation", "status": "draft", "title": title}, "# t\n\nbody\n")
    copy = make_source_copy(note.encode(), "capture.md", "2024-01-01T00:00:00+00:00")
    assert copy.title == title


def _billion_laughs(levels: int = 9) -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    names = "abcdefghijklmnop"
    for prev, name in zip(names, names[1 : levels + 1], strict=False):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused_with_the_reason_quickly() -> None:
    bomb = _billion_laughs(9)
    assert len(bomb) < 450  # the size of the attack's input (417 bytes)
    start = time.process_time()
    with pytest.raises(FrontmatterError, match="aliases expand"):
        frontmatter.parse_mapping(bomb)
    assert time.process_time() - start < 1.0
    note = f"---\n{bomb}---\n\n# Bomb\n"
    with pytest.raises(FrontmatterError, match="aliases"):
        make_source_copy(note.encode(), "bomb.md", "2024-01-01T00:00:00+00:00")


def test_self_referencing_alias_is_refused() -> None:
    with pytest.raises(FrontmatterError, match="refer to themselves"):
        frontmatter.parse_mapping("a: &a [1, *a]\n")


def test_small_aliases_are_still_read() -> None:
    data = frontmatter.parse_mapping("base: &b {sector: health, tags: [x, y]}\ncopy: *b\n")
    assert data["copy"] == {"sector": "health", "tags": ["x", "y"]}


def test_deeply_nested_yaml_is_a_reason_not_a_crash() -> None:
    with pytest.raises(FrontmatterError):
        frontmatter.parse_mapping("a: " + "[" * 50_000 + "]" * 50_000 + "\n")


def test_a_note_in_the_vault_with_an_alias_bomb_is_indexed_without_its_frontmatter() -> None:
    note = frontmatter.parse_note(f"---\n{_billion_laughs(9)}---\n# Still here\n\nbody\n", "notes/bomb.md")
    assert note.problem and "aliases expand" in note.problem
    assert note.body == "# Still here\n\nbody\n" and note.fm.status == "reference"
