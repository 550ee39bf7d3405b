"""Checks on text that comes from outside (files, queries): it must be clean UTF-8 without NULs."""

from __future__ import annotations


class BadTextError(ValueError):
    """Input text is unusable; the message names the problem for a human."""


def decode_utf8(data: bytes, what: str = "input") -> str:
    """Decode bytes strictly. Invalid UTF-8 or NUL bytes are refused, never replaced."""
    if b"\x00" in data:
        raise BadTextError(f"{what} contains NUL bytes (binary data?)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadTextError(
            f"{what} is not valid UTF-8 (byte {exc.start}: {data[exc.start : exc.start + 1]!r})"
        ) from None
    return text.removeprefix("\ufeff")


MAX_QUERY_BYTES = 1024


def validate_query(query: str, max_bytes: int = MAX_QUERY_BYTES) -> str:
    """A search query: non-empty, no NUL, no lone surrogates, at most `max_bytes` of UTF-8."""
    if "\x00" in query:
        raise BadTextError("query contains a NUL character")
    try:
        size = len(query.encode("utf-8"))
    except UnicodeEncodeError:
        raise BadTextError("query is not valid UTF-8 (lone surrogate)") from None
    if size > max_bytes:
        raise BadTextError(f"query is {size} bytes; the limit is {max_bytes} bytes")
    stripped = query.strip()
    if not stripped:
        raise BadTextError("query is empty")
    return stripped


def validate_path_prefix(prefix: str) -> str:
    """A vault-relative folder prefix: no `..`, not absolute, no NUL."""
    if "\x00" in prefix:
        raise BadTextError("path_prefix contains a NUL character")
    p = prefix.strip().replace("\\", "/")
    if p.startswith("/"):
        raise BadTextError("path_prefix must be relative to the vault (no leading '/')")
    if any(part == ".." for part in p.split("/")):
        raise BadTextError("path_prefix must not contain '..'")
    return p.removeprefix("./")
