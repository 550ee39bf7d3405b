"""Heading-aware chunking: sections, paragraphs, sentences, overlap, code fences, anchors, stable ids."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from hippo_core.index.chunking import (
    ChunkParams,
    anchor_for,
    chunk_document,
    chunk_section,
    clean_heading,
    index_text,
    split_sections,
    split_sentences,
)
from hippo_core.vault.fingerprints import chunk_id

DOC = """Preamble before any heading.

# 수면 위생

잠들기 전 한 시간은 화면을 멀리한다.

## 침실 환경

침실은 어둡고 서늘하게 유지한다.

### Temperature

Keep it around 18 degrees.

## Caffeine

No coffee after 2 pm.

# Appendix

The end.
"""


def sentences_of(n: int, word: str = "Sentence") -> list[str]:
    return [f"{word} number {i} is here." for i in range(n)]


# --- sections ------------------------------------------------------------------------------------


def test_sections_follow_headings_and_keep_the_heading_path() -> None:
    sections = split_sections(DOC)
    assert [(s.heading, s.level, s.heading_path) for s in sections] == [
        (None, 0, []),
        ("수면 위생", 1, ["수면 위생"]),
        ("침실 환경", 2, ["수면 위생", "침실 환경"]),
        ("Temperature", 3, ["수면 위생", "침실 환경", "Temperature"]),
        ("Caffeine", 2, ["수면 위생", "Caffeine"]),  # a sibling pops the deeper levels
        ("Appendix", 1, ["Appendix"]),  # a new top level resets the path
    ]
    assert sections[0].text == "Preamble before any heading."
    assert sections[2].text == "침실은 어둡고 서늘하게 유지한다."


def test_heading_without_text_makes_no_section_and_no_chunk() -> None:
    drafts = chunk_document("a.md", "# Empty\n\n## Filled\n\ntext\n")
    assert [(d.heading, d.heading_path) for d in drafts] == [("Filled", ["Empty", "Filled"])]


def test_hash_needs_a_space_to_be_a_heading() -> None:
    sections = split_sections("#hashtag is an Obsidian tag, not a heading\n\n####### seven is too deep\n")
    assert len(sections) == 1 and sections[0].heading is None


def test_heading_text_is_cleaned_as_obsidian_links_to_it() -> None:
    assert clean_heading("[[Sleep hygiene|수면 습관]] and `code` **bold**") == "수면 습관 and code bold"
    assert clean_heading("[[Kiwi]] notes") == "Kiwi notes"
    assert split_sections("## Closing hashes ##\n\nx\n")[0].heading == "Closing hashes"


def test_anchor_is_path_hash_heading_or_the_bare_path() -> None:
    assert anchor_for("20-wiki/health/sleep.md", "침실 환경") == "20-wiki/health/sleep.md#침실 환경"
    assert anchor_for("20-wiki/health/sleep.md", None) == "20-wiki/health/sleep.md"
    anchors = [d.anchor for d in chunk_document("n.md", DOC)]
    assert anchors == [
        "n.md",
        "n.md#수면 위생",
        "n.md#침실 환경",
        "n.md#Temperature",
        "n.md#Caffeine",
        "n.md#Appendix",
    ]


# --- code fences ---------------------------------------------------------------------------------


def test_hash_lines_inside_a_code_fence_are_not_headings() -> None:
    body = "# Setup\n\n```bash\n# install the tools\npip install x\n```\n\n~~~\n## not this either\n~~~\n"
    sections = split_sections(body)
    assert [s.heading for s in sections] == ["Setup"]
    assert "# install the tools" in sections[0].text and "## not this either" in sections[0].text


def test_a_code_fence_with_blank_lines_stays_one_block() -> None:
    code = "```python\ndef first():\n\n    return 1\n\n\ndef second():\n\n    return 2\n\nprint(first(), second())\n```"
    assert 85 < len(code) < 100
    text = f"Intro paragraph.\n\n{code}\n\nOutro paragraph."
    chunks = chunk_section(text, ChunkParams(max_chars=100, overlap_chars=0))
    assert chunks == ["Intro paragraph.", code, "Outro paragraph."]  # blank lines inside did not split it


def test_a_shorter_or_other_fence_inside_a_fence_does_not_close_it() -> None:
    body = "# Doc\n\nHow to write code in a note:\n\n````markdown\n```python\n# a comment\nx = 1\n```\n````\n"
    assert [s.heading for s in split_sections(body)] == ["Doc"]


# --- paragraphs, sentences, overlap --------------------------------------------------------------


def test_short_paragraphs_are_packed_together_with_blank_lines_between() -> None:
    text = "First paragraph.\n\nSecond paragraph.\n\nThird paragraph."
    assert chunk_section(text, ChunkParams(max_chars=900)) == [text]
    two = chunk_section(text, ChunkParams(max_chars=100, overlap_chars=0))
    assert two == [text]  # 53 characters fit in one chunk of 100
    many = chunk_section("\n\n".join(["x" * 60] * 3), ChunkParams(max_chars=100, overlap_chars=0))
    assert many == ["x" * 60] * 3  # a paragraph that fits alone is never cut


def test_split_sentences_handles_english_korean_and_list_items() -> None:
    para = "First one. Second one? 세 번째 문장이다. 네 번째!\n- item one\n- item two\ncontinued"
    assert split_sentences(para) == [
        "First one.",
        "Second one?",
        "세 번째 문장이다.",
        "네 번째!",
        "- item one",
        "- item two continued",  # a wrapped list line continues its item
    ]


def test_long_paragraph_splits_at_sentences_with_overlap() -> None:
    sentences = sentences_of(12)
    params = ChunkParams(max_chars=120, overlap_chars=40)
    chunks = chunk_section(" ".join(sentences), params)
    assert len(chunks) > 1
    assert all(len(c) <= params.max_chars for c in chunks)
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        last = split_sentences(prev)[-1]
        assert len(last) <= params.overlap_chars
        assert nxt.startswith(last + " ")  # the last whole sentence is carried over
    covered = {s for c in chunks for s in split_sentences(c)}
    assert covered == set(sentences)  # nothing lost, every chunk ends at a sentence boundary


def test_no_overlap_when_overlap_is_zero() -> None:
    sentences = sentences_of(12)
    chunks = chunk_section(" ".join(sentences), ChunkParams(max_chars=120, overlap_chars=0))
    flat = [s for c in chunks for s in split_sentences(c)]
    assert flat == sentences  # each sentence exactly once, in order


def test_sentence_longer_than_a_chunk_is_cut_at_whitespace() -> None:
    words = [f"w{i:03d}" for i in range(100)]  # 499 characters, no sentence end
    chunks = chunk_section(" ".join(words), ChunkParams(max_chars=100, overlap_chars=0))
    assert all(len(c) <= 100 for c in chunks)
    assert " ".join(chunks).split() == words  # no word was broken


def test_a_chunk_with_overlap_never_exceeds_max_chars() -> None:
    params = ChunkParams(max_chars=100, overlap_chars=50)
    first = "A" * 19 + ". " + "B" * 39 + "."  # 61 chars; its last sentence (40 chars) is the overlap
    second = "C" * 59  # 40 + 59 = 99 < 100, but 40 + "\n\n" + 59 = 101
    chunks = chunk_section(f"{first}\n\n{second}", params)
    assert max(len(c) for c in chunks) <= params.max_chars


def test_chunk_params_are_validated() -> None:
    with pytest.raises(ValidationError):
        ChunkParams(max_chars=50)
    with pytest.raises(ValidationError):
        ChunkParams(overlap_chars=-1)


# --- ordinals and stable ids ---------------------------------------------------------------------


def test_ordinals_count_per_anchor_and_repeated_headings_do_not_collide() -> None:
    long = " ".join(sentences_of(12))
    body = f"## Notes\n\n{long}\n\n## Other\n\nshort\n\n## Notes\n\nagain\n"
    drafts = chunk_document("n.md", body, ChunkParams(max_chars=120, overlap_chars=0))
    notes = [d.ordinal for d in drafts if d.anchor == "n.md#Notes"]
    assert notes == list(range(len(notes))) and len(notes) >= 3  # continues into the second "Notes"
    assert [d.ordinal for d in drafts if d.anchor == "n.md#Other"] == [0]
    ids = [chunk_id("n.md", d.anchor, d.ordinal) for d in drafts]
    assert len(set(ids)) == len(ids)


def test_chunk_ids_survive_edits_of_the_text_and_of_other_sections() -> None:
    before = chunk_document("n.md", DOC)
    edited = DOC.replace("No coffee after 2 pm.", "No coffee after noon.").replace(
        "Preamble before any heading.", "A longer preamble before any heading at all."
    )
    after = chunk_document("n.md", edited)
    key = [(d.anchor, d.ordinal) for d in before]
    assert key == [(d.anchor, d.ordinal) for d in after]
    assert [chunk_id("n.md", d.anchor, d.ordinal) for d in before] == [
        chunk_id("n.md", d.anchor, d.ordinal) for d in after
    ]
    changed = [b.anchor for b, a in zip(before, after, strict=True) if b.text != a.text]
    assert changed == ["n.md", "n.md#Caffeine"]
    assert chunk_id("n.md", "n.md#Caffeine", 0) != chunk_id("m.md", "m.md#Caffeine", 0)


def test_index_text_gives_a_chunk_its_title_and_heading_path() -> None:
    assert (
        index_text("수면 위생", ["수면 위생", "침실 환경"], "어둡게.")
        == "수면 위생\n수면 위생 > 침실 환경\n어둡게."
    )
    assert index_text("Title", [], "body") == "Title\nbody"
