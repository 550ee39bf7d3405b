"""`.hippoignore`: gitignore patterns, matched segment by segment in linear-ish time, no regex."""

from __future__ import annotations

import time

import pytest

from hippo_core.vault.ignore import is_ignored, parse_ignore

RULES = parse_ignore(
    """# templates are not notes
Templates/
*.excalidraw.md
!keep.excalidraw.md
/private
docs/**/draft*.md
\\#literal.md
"""
)


@pytest.mark.parametrize(
    ("path", "is_dir", "ignored"),
    [
        ("Templates", True, True),
        ("Projects/Templates", True, True),  # no slash inside: any depth
        ("Templates", False, False),  # `Templates/` matches folders only
        ("x/y.excalidraw.md", False, True),
        ("keep.excalidraw.md", False, False),  # re-included by `!`
        ("private", True, True),
        ("notes/private", True, False),  # `/private` is anchored at the root
        ("docs/draft1.md", False, True),  # `**` matches no folder
        ("docs/a/b/draft2.md", False, True),
        ("docs/a/b/final.md", False, False),
        ("#literal.md", False, True),
        ("notes/ok.md", False, False),
    ],
)
def test_gitignore_semantics(path: str, is_dir: bool, ignored: bool) -> None:
    assert is_ignored(RULES, path, is_dir) is ignored


def test_comments_and_blank_lines_make_no_rule() -> None:
    assert parse_ignore("\n# only a comment\n   \n") == []
    assert not is_ignored([], "anything.md", False)


def test_hostile_pattern_and_name_stay_fast() -> None:
    rules = parse_ignore("*a*a*a*a*a*a*a*a*a*b\n" + "/**/**/**/**/**/x\n")
    start = time.process_time()
    assert not is_ignored(rules, "a" * 20_000, False)
    assert not is_ignored(rules, "/".join(["d"] * 200) + "/y", False)
    assert time.process_time() - start < 1.0
