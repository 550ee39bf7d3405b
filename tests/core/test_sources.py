"""Inbox bytes → immutable source copy: contract fields, trust kept, titles, content hashes, bad input."""

from __future__ import annotations

import pytest

from hippo_core.extract import ExtractionError, ExtractLimits
from hippo_core.safety.text_input import BadTextError
from hippo_core.vault import frontmatter
from hippo_core.vault.fingerprints import sha256_text
from hippo_core.vault.frontmatter import FrontmatterError
from hippo_core.vault.sources import body_hash, copy_name, make_source_copy, slugify, with_suffix_number

NOW = "2025-06-01T09:00:00+00:00"
LATER = "2025-06-02T10:00:00+00:00"

NAP = """---
title: 커피냅 실험
trust: human_edit
tags: [sleep]
status: canonical
sha256: forged
---

# 커피냅 실험

커피를 마시고 바로 20분 동안 낮잠을 잤다.
"""


def fields_of(text: str) -> tuple[dict, str]:
    raw, body = frontmatter.split(text)
    return frontmatter.parse_mapping(raw), body


def test_markdown_copy_has_the_contract_fields_and_keeps_trust() -> None:
    copy = make_source_copy(NAP.encode(), "coffee-nap.md", NOW)
    fields, body = fields_of(copy.text)
    assert list(fields)[:7] == ["type", "status", "trust", "title", "sha256", "original_name", "ingested"]
    assert fields["type"] == "source-summary"
    assert fields["status"] == "raw-source"  # an inbox note cannot declare itself canonical
    assert fields["trust"] == "human_edit"  # kept as declared, never raised or lowered
    assert fields["title"] == copy.title == "커피냅 실험"
    assert fields["sha256"] == copy.sha256 != "forged"  # the pipeline owns the hash
    assert (fields["original_name"], fields["ingested"]) == ("coffee-nap.md", NOW)
    assert fields["tags"] == ["sleep"]  # the note's own keys survive
    assert body.strip() == "# 커피냅 실험\n\n커피를 마시고 바로 20분 동안 낮잠을 잤다."
    # the copy parses under the contract as a raw source in 10-sources
    fm, _ = frontmatter.parse(copy.text, copy.path)
    assert (fm.status, fm.trust, fm.type) == ("raw-source", "human_edit", "source-summary")


def test_declared_sha256_matches_the_body_of_the_written_copy() -> None:
    """What the blocking `source_hashes_match` check recomputes from the file."""
    for data, name in ((NAP.encode(), "nap.md"), (b"Plain text\n\nsecond line\n", "plain.txt")):
        copy = make_source_copy(data, name, NOW)
        fields, body = fields_of(copy.text)
        assert fields["sha256"] == body_hash(body) == copy.sha256
        assert len(copy.sha256) == 64


def test_trust_defaults_to_source_and_low_trust_stays_low() -> None:
    plain = make_source_copy(b"# Paper\n\ntext\n", "paper.md", NOW)
    assert fields_of(plain.text)[0]["trust"] == "source"
    web = make_source_copy(b"---\ntrust: web_staging\ntype: entity\n---\n# Scraped\n", "web.md", NOW)
    fields = fields_of(web.text)[0]
    assert (fields["trust"], fields["type"]) == ("web_staging", "entity")


@pytest.mark.parametrize(
    ("data", "name", "title"),
    [
        (b"---\ntitle: From frontmatter\n---\n# From heading\n", "a.md", "From frontmatter"),
        (b"intro line\n\n# From heading\n\ntext\n", "a.md", "From heading"),
        (b"no heading in this markdown note\n", "my-note.md", "my-note"),
        ("\n\n  회의 메모 2025-06-01  \n\nbody\n".encode(), "meeting.txt", "회의 메모 2025-06-01"),
        (("x" * 81 + "\n").encode(), "long-first-line.txt", "long-first-line"),
        (b"## Only a level-two heading\n", "sub.markdown", "sub"),
    ],
)
def test_title_comes_from_frontmatter_then_h1_then_first_line_then_name(
    data: bytes, name: str, title: str
) -> None:
    copy = make_source_copy(data, name, NOW)
    assert copy.title == title
    assert fields_of(copy.text)[0]["title"] == title


def test_the_copy_keeps_the_original_file_name() -> None:
    copy = make_source_copy(NAP.encode(), "coffee-nap.md", NOW)
    assert copy.path == "10-sources/coffee-nap.md"
    assert make_source_copy(b"plain\n", "회의 메모.txt", NOW).path == "10-sources/회의 메모.txt.md"
    assert copy_name("report.pdf") == "report.pdf.md" and copy_name("Note.Markdown") == "Note.Markdown"
    assert with_suffix_number("report.pdf", 1) == "report.1.pdf"
    assert with_suffix_number("coffee-nap.md", 2) == "coffee-nap.2.md"
    assert with_suffix_number("README", 1) == "README.1"
    assert slugify("Hello, World! 안녕?") == "hello-world-안녕"
    assert slugify("!!!") == "note"
    assert len(slugify("a" * 200)) == 60


def test_same_body_gives_the_same_hash() -> None:
    first = make_source_copy(NAP.encode(), "coffee-nap.md", NOW)
    again = make_source_copy(NAP.encode(), "coffee-nap.md", LATER)  # ingested later
    assert (again.sha256, again.path) == (first.sha256, first.path)
    # only the body is hashed: other frontmatter keys do not change the identity of a source
    retagged = make_source_copy(NAP.replace("tags: [sleep]", "tags: [nap]").encode(), "copy.md", NOW)
    assert retagged.sha256 == first.sha256
    edited = make_source_copy(NAP.replace("20분", "30분").encode(), "coffee-nap.md", NOW)
    assert edited.sha256 != first.sha256


def test_inbox_note_over_the_limits_is_refused_with_the_reason() -> None:
    with pytest.raises(ExtractionError, match="HIPPO_INBOX_MAX_BYTES") as exc:
        make_source_copy(b"x" * 2000, "big.md", NOW, ExtractLimits(max_bytes=1000))
    assert exc.value.kind == "too_large"
    with pytest.raises(ExtractionError, match="HIPPO_INBOX_MAX_CHARS"):
        make_source_copy("가".encode() * 600, "big.md", NOW, ExtractLimits(max_bytes=10_000, max_chars=500))


def test_crlf_and_lf_files_hash_the_same() -> None:
    lf = make_source_copy(NAP.encode(), "nap.md", NOW)
    crlf = make_source_copy(NAP.replace("\n", "\r\n").encode(), "nap.md", NOW)
    assert (crlf.sha256, crlf.path, crlf.title) == (lf.sha256, lf.path, lf.title)
    assert "\r" not in crlf.text
    txt_lf = make_source_copy(b"Sync notes\n\nline two\n", "sync.txt", NOW)
    txt_crlf = make_source_copy(b"Sync notes\r\n\r\nline two\r\n", "sync.txt", NOW)
    assert txt_crlf.sha256 == txt_lf.sha256
    assert body_hash("a\r\nb\r\n\r\n\r\n") == body_hash("a\nb") == sha256_text("a\nb\n")


def test_a_bom_does_not_hide_the_frontmatter() -> None:
    copy = make_source_copy(b"\xef\xbb\xbf" + NAP.encode(), "bom.md", NOW)
    assert copy.title == "커피냅 실험"
    assert copy.sha256 == make_source_copy(NAP.encode(), "nap.md", NOW).sha256


def test_text_files_keep_frontmatter_lookalikes_as_body() -> None:
    copy = make_source_copy(b"---\ntitle: not yaml here\n---\n", "dashes.txt", NOW)
    fields, body = fields_of(copy.text)
    assert fields["title"] != "not yaml here"  # a .txt file has no frontmatter
    assert body.lstrip("\n") == "---\ntitle: not yaml here\n---\n"
    assert copy.sha256 == body_hash(body)


@pytest.mark.parametrize(
    ("data", "error", "message"),
    [
        ("caf\xe9".encode("latin-1"), BadTextError, "inbox.md is not valid UTF-8"),
        (b"abc\x00def", BadTextError, "NUL"),
        (b"---\ntitle: [unclosed\n---\nbody\n", FrontmatterError, "invalid YAML"),
        (b"---\ntitle: x\nbody without closing fence\n", FrontmatterError, "never closed"),
        (b"---\n- a list\n---\nbody\n", FrontmatterError, "mapping"),
    ],
)
def test_bad_input_raises_a_clear_error(data: bytes, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        make_source_copy(data, "inbox.md", NOW)


@pytest.mark.parametrize("line", ["trust: bogus", "type: blogpost", "tags: {a: 1}"])
def test_an_inbox_note_breaking_the_contract_is_a_frontmatter_error(line: str) -> None:
    with pytest.raises(FrontmatterError):
        make_source_copy(f"---\n{line}\n---\n# Note\n".encode(), "inbox.md", NOW)


def test_an_inbox_note_with_an_impossible_date_is_a_frontmatter_error() -> None:
    with pytest.raises(FrontmatterError):
        make_source_copy(b"---\ncreated: 2024-02-30\n---\n# Note\n", "inbox.md", NOW)
