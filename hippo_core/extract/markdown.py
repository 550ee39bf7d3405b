"""Markdown building blocks shared by the format readers: clean text, safe lines, headings, tables.

Text from a document is data, not markup: a line that would start a heading, quote, fence or table
in Markdown is escaped, so a PDF line reading `## Page 9` can never forge an anchor. No regex here:
every step is a linear scan.
"""

from __future__ import annotations

import unicodedata

# C0 controls except tab and newline, DEL, and the C1 range: never meaningful in extracted text.
_CONTROLS = {c: None for c in (*range(0, 9), 11, 12, *range(14, 32), 127, *range(128, 160))}
_CONTROLS[13] = "\n"  # a lone carriage return is a line break
_CONTROLS[0x2028] = "\n"
_CONTROLS[0x2029] = "\n"
_CONTROLS[0xFFFE] = None
_CONTROLS[0xFFFF] = None
_CONTROLS[0xFEFF] = None

_BLOCK_STARTS = ("#", ">", "|", "```", "~~~", "<!--", "<")


def clean_text(text: str) -> str:
    """NFC (Korean from some tools arrives as decomposed jamo), CRLF as LF, control characters dropped."""
    return unicodedata.normalize("NFC", text.replace("\r\n", "\n").translate(_CONTROLS))


def _is_rule(stripped: str) -> bool:
    """`---`, `===`, `***`, `___` lines: a rule, or a setext heading under the line before."""
    chars = set(stripped.replace(" ", ""))
    return len(stripped) >= 2 and len(chars) == 1 and chars <= {"-", "=", "*", "_"}


def safe_line(line: str) -> str:
    """One line of document text, escaped where Markdown would read it as structure."""
    stripped = line.lstrip()
    if stripped.startswith(_BLOCK_STARTS) or _is_rule(stripped):
        return "\\" + stripped
    return line.rstrip()


def paragraph(text: str) -> str:
    """A block of document text: cleaned, each line made safe, runs of blank lines collapsed."""
    out: list[str] = []
    for raw in clean_text(text).split("\n"):
        line = safe_line(raw)
        if line.strip() or (out and out[-1]):
            out.append(line if line.strip() else "")
    return "\n".join(out).strip()


def heading(level: int, text: str) -> str:
    """An ATX heading; the text on one line, `#` characters that would close it kept as text."""
    one_line = " ".join(clean_text(text).split())
    return f"{'#' * max(1, min(level, 6))} {one_line}"


def _cell(value: str) -> str:
    text = " ".join(clean_text(value).split())
    return text.replace("\\", "\\\\").replace("|", "\\|")


# A long table is cut into blocks of about this many characters, each under a copy of the header row,
# so a chunk (900 characters by default, `ChunkParams`) holds whole rows with their column names.
TABLE_BLOCK_CHARS = 800


def table(rows: list[list[str]], block_chars: int = TABLE_BLOCK_CHARS) -> str:
    """A Markdown table, first row as header; empty rows and columns dropped, short rows padded."""
    cells = [[_cell(c) for c in row] for row in rows]
    cells = [row for row in cells if any(row)]
    if not cells:
        return ""
    width = max(len(row) for row in cells)
    cells = [row + [""] * (width - len(row)) for row in cells]
    keep = [c for c in range(width) if any(row[c] for row in cells)]
    lines = ["| " + " | ".join(row[c] for c in keep) + " |" for row in cells]
    header = [lines[0], "|" + " --- |" * len(keep)]
    blocks: list[list[str]] = [list(header)]
    size = 0
    for line in lines[1:]:
        if size and size + len(line) > block_chars:
            blocks.append(list(header))
            size = 0
        blocks[-1].append(line)
        size += len(line) + 1
    return "\n\n".join("\n".join(block) for block in blocks)


def join_blocks(blocks: list[str]) -> str:
    """Blocks separated by one blank line; empty blocks dropped."""
    return "\n\n".join(b for b in (b.strip("\n") for b in blocks) if b.strip()) + "\n"


def has_text(markdown: str, anchors: list[str]) -> bool:
    """True when the Markdown holds a letter or digit outside the anchor headings the reader added."""
    generated = {heading(2, a) for a in anchors}
    return any(any(ch.isalnum() for ch in line) for line in markdown.split("\n") if line not in generated)
