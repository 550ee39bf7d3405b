"""Outside text (files, queries, path filters) must be clean: strict UTF-8, no NUL, bounded size."""

from __future__ import annotations

import pytest

from hippo_core.safety.text_input import (
    MAX_QUERY_BYTES,
    BadTextError,
    decode_utf8,
    validate_path_prefix,
    validate_query,
)

# --- decode_utf8 ---------------------------------------------------------------------------------


def test_valid_utf8_is_decoded_as_is() -> None:
    text = "커피냅 실험\r\nCoffee nap — 20분 ☕\n"
    assert decode_utf8(text.encode("utf-8")) == text


def test_a_leading_bom_is_stripped_and_only_that_one() -> None:
    assert decode_utf8(b"\xef\xbb\xbf---\ntitle: x\n---\n") == "---\ntitle: x\n---\n"
    assert decode_utf8(b"a\xef\xbb\xbfb") == "a\ufeffb"  # a BOM in the middle is content, not a marker
    assert decode_utf8(b"\xef\xbb\xbf") == ""


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ("caf\xe9".encode("latin-1"), "byte 3"),
        (b"\xed\xa0\x80 surrogate", "byte 0"),  # UTF-8-encoded surrogate (CESU/WTF-8)
        (b"\xc0\xaf overlong", "byte 0"),
        ("한".encode()[:2], "byte 0"),  # truncated multi-byte sequence
    ],
)
def test_invalid_utf8_is_refused_with_the_position(data: bytes, where: str) -> None:
    with pytest.raises(BadTextError, match=f"notes/x.md is not valid UTF-8 \\({where}"):
        decode_utf8(data, what="notes/x.md")


def test_nul_bytes_are_refused() -> None:
    with pytest.raises(BadTextError, match="NUL"):
        decode_utf8(b"abc\x00def")
    with pytest.raises(BadTextError, match="NUL"):
        decode_utf8("text".encode("utf-16"))  # UTF-16 text is full of NULs: refused, not mangled


def test_bad_text_error_is_a_value_error() -> None:
    assert issubclass(BadTextError, ValueError)


# --- validate_query ------------------------------------------------------------------------------


def test_query_is_stripped() -> None:
    assert validate_query("  커피 낮잠 \n") == "커피 낮잠"


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query_is_refused(query: str) -> None:
    with pytest.raises(BadTextError, match="empty"):
        validate_query(query)


def test_nul_and_lone_surrogates_are_refused() -> None:
    with pytest.raises(BadTextError, match="NUL"):
        validate_query("coffee\x00nap")
    with pytest.raises(BadTextError, match="surrogate"):
        validate_query("coffee \ud800")


def test_ascii_query_limit_is_1024_bytes() -> None:
    assert MAX_QUERY_BYTES == 1024
    assert validate_query("a" * 1024) == "a" * 1024
    with pytest.raises(BadTextError, match="1025 bytes; the limit is 1024"):
        validate_query("a" * 1025)


def test_korean_query_limit_counts_utf8_bytes_not_characters() -> None:
    assert len("가".encode()) == 3
    at_limit = "가" * 341 + "a"  # 1023 + 1 = 1024 bytes, only 342 characters
    assert validate_query(at_limit) == at_limit
    with pytest.raises(BadTextError, match="1026 bytes"):
        validate_query("가" * 342)  # 342 characters, 1026 bytes
    with pytest.raises(BadTextError, match="1025 bytes"):
        validate_query("가" * 341 + "ab")
    with pytest.raises(BadTextError, match="limit is 10 bytes"):
        validate_query("가나다라", max_bytes=10)  # 12 bytes


# --- validate_path_prefix ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ("20-wiki/health", "20-wiki/health"),
        ("./20-wiki", "20-wiki"),
        ("20-wiki\\health", "20-wiki/health"),
        ("  10-sources/ ", "10-sources/"),
        ("notes/..hidden", "notes/..hidden"),  # a name that starts with dots is not a parent reference
        ("", ""),
    ],
)
def test_relative_prefixes_are_accepted_and_normalized(prefix: str, expected: str) -> None:
    assert validate_path_prefix(prefix) == expected


@pytest.mark.parametrize("prefix", ["..", "../secrets", "20-wiki/../../etc", "20-wiki/..", "..\\windows"])
def test_parent_references_are_refused(prefix: str) -> None:
    with pytest.raises(BadTextError, match=r"must not contain '\.\.'"):
        validate_path_prefix(prefix)


@pytest.mark.parametrize("prefix", ["/etc", "/", " /home/user", "\\\\server\\share"])
def test_absolute_prefixes_are_refused(prefix: str) -> None:
    with pytest.raises(BadTextError, match="relative to the vault"):
        validate_path_prefix(prefix)


def test_nul_in_prefix_is_refused() -> None:
    with pytest.raises(BadTextError, match="NUL"):
        validate_path_prefix("20-wiki\x00")
