"""The other regexes that read a person's text, fixed where the audit found super-linear backtracking.

Before: a heading line "# a" + tabs + "x" took 36 s at 2 KB (`chunking._HEADING`, cubic); "[[" repeated
took 0.5 s at 2 KB in `cards._WIKILINK` and `chunking.link_text` / `clean_heading` (quadratic); 125 KB
of handoff opening markers took 7.9 s in `work_memory._BLOCK` (quadratic).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from hippo_core.agents.work_memory import current_handoff, replace_handoff
from hippo_core.index.chunking import chunk_document, clean_heading, link_text, split_sections
from hippo_core.ranking.time import time_reference
from hippo_core.wiki.cards import parse_card

SIZE = 100_000


def under_a_second(fn: Callable[[], object]) -> None:
    start = time.process_time()
    fn()
    took = time.process_time() - start
    assert took < 1.0, f"took {took:.2f} s"


@pytest.mark.parametrize("unit", ["[[", "[[a#", "[[a|", "[[a|[[", "[", "![["])
def test_wikilink_scans_are_linear(unit: str) -> None:
    text = unit * (SIZE // len(unit)) + "x"
    card = parse_card(
        "20-wiki/x.md", f"---\ntype: concept\nstatus: draft\ntrust: llm_context\n---\n\n{text}\n"
    )
    under_a_second(card.wikilinks)
    under_a_second(lambda: link_text(text))
    under_a_second(lambda: clean_heading(text))


@pytest.mark.parametrize("tail", [" ", "\t", " #", "# ", "#"])
def test_a_long_heading_line_is_linear(tail: str) -> None:
    line = "# a" + tail * (SIZE // len(tail)) + "x"
    under_a_second(lambda: split_sections(line + "\n\nbody"))
    under_a_second(lambda: chunk_document("n.md", line + "\n\nbody"))


@pytest.mark.parametrize(
    ("line", "heading"),
    [("# C#", "C"), ("## Title ##", "Title"), ("# [[note|Label]] #", "Label"), ("### a# #", "a")],
)
def test_headings_read_as_before(line: str, heading: str) -> None:
    (section,) = split_sections(f"{line}\n\nbody")
    assert section.heading == heading


def test_links_read_as_before() -> None:
    assert link_text("see [[a#h|label]], [[b]] and [[note|see [1]]]") == "see label, b and see [1]"
    assert link_text("[[a[b]]") == "a[b"


def test_a_handoff_file_of_opening_markers_is_linear() -> None:
    text = "<!-- hippo:handoff fp:000000000000 -->\n" * (SIZE // 39)
    under_a_second(lambda: current_handoff(text))
    under_a_second(lambda: replace_handoff(text, "new block"))


def test_a_handoff_block_reads_as_before() -> None:
    text = "mine\n<!-- hippo:handoff fp:0123456789ab -->\n## Handoff\nnext: tests\n<!-- /hippo:handoff -->\n"
    assert current_handoff(text) == "next: tests"


@pytest.mark.parametrize(
    "head",
    ["지난", "지난 주", "최근", "3", "3일", "a", "last", "the past", "this past", "past 3", "the day before"],
)
@pytest.mark.parametrize("gap", [" ", "\t", " \u3000"])
def test_a_named_time_scan_is_linear(head: str, gap: str) -> None:
    """Before: "지난" + 100 KB of spaces took 70 s (`지난\\s*주?\\s*…요일`: two gaps in a row, quadratic)."""
    text = head + gap * (SIZE // len(gap)) + "x"
    under_a_second(lambda: time_reference(text, "2024-05-01"))
    under_a_second(lambda: time_reference((head + gap) * (SIZE // (len(head) + len(gap))), "2024-05-01"))


def test_named_times_read_as_before() -> None:
    saturday = ("2024-04-26T00:00:00", "2024-04-29T00:00:00")  # the Saturday before 2024-05-01, ± a day
    for text in ("지난 토요일에 뭐 했지?", "지난주 토요일", "지난 주 토요일", "지난주토요일"):
        assert time_reference(text, "2024-05-01") == saturday, text
    assert time_reference("지난  주  금요일", "2024-05-01") == ("2024-04-25T00:00:00", "2024-04-28T00:00:00")
