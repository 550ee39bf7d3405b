"""Generated blocks between hippo markers: written inside, never around; an edited block is left alone."""

from __future__ import annotations

from hippo_core.wiki import generated
from hippo_core.wiki.generated import BEGIN, END

PAGE = generated.new_page({"title": "Home"}, "Home", "- inbox: 1")


def test_a_new_page_has_a_heading_and_a_fingerprinted_block() -> None:
    assert PAGE.endswith(f"# Home\n\n{BEGIN} {generated.fingerprint('- inbox: 1')} -->\n- inbox: 1\n{END}\n")
    start, end, stored, inner = generated.find_block(PAGE)
    assert (stored, inner) == (generated.fingerprint("- inbox: 1"), "- inbox: 1")


def test_text_around_the_block_is_kept_byte_for_byte() -> None:
    mine = PAGE.replace("# Home\n", "# My home\n\nMy own line above.\n") + "\nMy line below, no newline"
    up = generated.update(mine, "- inbox: 2")
    assert up.outcome == "written" and up.text is not None
    assert up.text.startswith(mine.split(BEGIN)[0])  # everything before the block, unchanged
    assert up.text.endswith(f"{END}\n\nMy line below, no newline")
    assert "- inbox: 2" in up.text and "- inbox: 1" not in up.text
    assert generated.update(up.text, "- inbox: 2").outcome == "unchanged"


def test_an_edited_block_is_left_alone_with_the_reason() -> None:
    edited = PAGE.replace("- inbox: 1", "- inbox: 1\n- my note inside the block")
    up = generated.update(edited, "- inbox: 5")
    assert up.outcome == "edited" and up.text is None and "empty the lines" in (up.reason or "")
    emptied = PAGE.replace("- inbox: 1\n", "")  # the person asks for a fresh block
    assert generated.update(emptied, "- inbox: 5").outcome == "written"


def test_a_page_without_markers_is_never_written() -> None:
    up = generated.update("# My own HOME\n\nhand-written\n", "- inbox: 1")
    assert up.outcome == "no_markers" and up.text is None and "hippo:begin" in (up.reason or "")
    assert generated.update(f"x\n{BEGIN} abc -->\nno end\n", "y").outcome == "no_markers"


def test_append_keeps_the_log_inside_its_block() -> None:
    seed = "---\ntitle: Log\n---\n\n# Log\n\nMy diary line.\n"
    once = generated.append(seed, "## [2024-01-01] promote | A")
    assert once.startswith(seed) and once.endswith(f"## [2024-01-01] promote | A\n{END}\n")
    twice = generated.append(once + "after the block\n", "## [2024-01-02] promote | B")
    assert twice.startswith(seed) and twice.endswith(f"| B\n{END}\nafter the block\n")
    assert twice.count(BEGIN) == 1 and "| A\n\n## [2024-01-02]" in twice
