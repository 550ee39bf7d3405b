"""Heading-aware chunking: sections by Markdown heading, then paragraphs, then sentences, with overlap.

Every chunk remembers its section, so search can answer at section level with `path#heading`.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

# The heading text runs to the end of the line; clean_heading drops closing #s and spaces (a lazy
# text followed by an optional "[ \t]*#*[ \t]*" tail backtracked cubically on long lines).
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+)$")
_FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？…])[\"'”’)\]]*\s+")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


class ChunkParams(BaseModel, frozen=True):
    """Chunk sizes in characters (Korean packs ~1.5 chars per model token, English ~4)."""

    max_chars: int = Field(default=900, ge=100)
    overlap_chars: int = Field(default=150, ge=0)


class Section(BaseModel):
    heading: str | None
    level: int
    heading_path: list[str]
    text: str


class ChunkDraft(BaseModel):
    """A chunk before governance fields are attached: where it lives and what it says."""

    anchor: str
    heading: str | None
    heading_path: list[str]
    ordinal: int
    text: str


class FenceTracker:
    """CommonMark fences: a fence closes only on the same character, at least as long, alone on its line."""

    def __init__(self) -> None:
        self.open: str | None = None

    def feed(self, line: str) -> bool:
        """Account for one line; True while inside a fenced block (fence lines included)."""
        m = _FENCE.match(line.strip())
        if self.open is None:
            if m:
                self.open = m.group(1)
            return self.open is not None
        if (
            m
            and m.group(1)[0] == self.open[0]
            and len(m.group(1)) >= len(self.open)
            and not m.group(2).strip()
        ):
            self.open = None
        return True


def split_sections(body: str) -> list[Section]:
    """Split a Markdown body at headings, ignoring `#` lines inside fenced code blocks."""
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    heading: str | None = None
    level = 0
    buf: list[str] = []
    fence = FenceTracker()

    def flush() -> None:
        text = "\n".join(buf).strip()
        sections.append(Section(heading=heading, level=level, heading_path=[h for _, h in stack], text=text))

    for line in body.splitlines():
        m = None if fence.feed(line) else _HEADING.match(line)
        if m:
            flush()
            buf = []
            level = len(m.group(1))
            heading = clean_heading(m.group(2))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading))
        else:
            buf.append(line)
    flush()
    return [s for s in sections if s.text]


def clean_heading(raw: str) -> str:
    """Heading text as Obsidian links to it: markup and link brackets removed."""
    text = re.sub(r"\[\[((?:[^\[\]|]|\[(?!\[))++)\|((?:[^\[\]]|\[(?!\[))++)\]\]", r"\2", raw)
    text = re.sub(r"\[\[((?:[^\[\]]|\[(?!\[))++)\]\]", r"\1", text)
    text = re.sub(r"[*_`]", "", text)
    return text.replace("#", "").replace("^", "").strip()


def anchor_for(path: str, heading: str | None) -> str:
    return f"{path}#{heading}" if heading else path


def _paragraphs(text: str) -> list[str]:
    """Blank-line separated blocks; a fenced code block stays one block."""
    blocks: list[str] = []
    buf: list[str] = []
    fence = FenceTracker()
    for line in text.splitlines():
        if not fence.feed(line) and not line.strip():
            if buf:
                blocks.append("\n".join(buf))
                buf = []
        else:
            buf.append(line)
    if buf:
        blocks.append("\n".join(buf))
    return blocks


def split_sentences(paragraph: str) -> list[str]:
    """Sentences of a paragraph; list items count as sentences of their own."""
    units: list[str] = []
    for line in paragraph.splitlines():
        if _LIST_ITEM.match(line) or not units:
            units.append(line.strip())
        else:
            units[-1] = f"{units[-1]} {line.strip()}"
    out: list[str] = []
    for unit in units:
        out.extend(s.strip() for s in _SENTENCE_END.split(unit) if s.strip())
    return out


def _hard_split(text: str, max_chars: int) -> list[str]:
    """Last resort for a sentence longer than a chunk: cut at whitespace near the limit."""
    pieces: list[str] = []
    while len(text) > max_chars:
        cut = text.rfind(" ", max_chars // 2, max_chars)
        cut = cut if cut > 0 else max_chars
        pieces.append(text[:cut].strip())
        text = text[cut:].strip()
    if text:
        pieces.append(text)
    return pieces


def _units(text: str, max_chars: int) -> list[tuple[str, bool]]:
    """Break a section into packable units: (text, starts_paragraph)."""
    units: list[tuple[str, bool]] = []
    for para in _paragraphs(text):
        if len(para) <= max_chars:
            units.append((para, True))
            continue
        first = True
        for sentence in split_sentences(para):
            for piece in _hard_split(sentence, max_chars):
                units.append((piece, first))
                first = False
    return units


def _tail(text: str, overlap_chars: int) -> str:
    """The last whole sentences of a chunk, up to `overlap_chars`, carried into the next chunk."""
    if overlap_chars <= 0:
        return ""
    tail: list[str] = []
    size = 0
    for sentence in reversed(split_sentences(text.replace("\n\n", "\n"))):
        if size + len(sentence) > overlap_chars:
            break
        tail.insert(0, sentence)
        size += len(sentence) + 1
    return " ".join(tail)


def chunk_section(text: str, params: ChunkParams) -> list[str]:
    """Pack paragraphs (or sentences of long paragraphs) into chunks of at most `max_chars`."""
    chunks: list[str] = []
    current = ""
    for unit, new_para in _units(text, params.max_chars):
        sep = "\n\n" if new_para else " "
        if current and len(current) + len(sep) + len(unit) > params.max_chars:
            chunks.append(current)
            overlap = _tail(current, params.overlap_chars)
            fits = overlap and len(overlap) + len(sep) + len(unit) <= params.max_chars
            current = f"{overlap}{sep}{unit}" if fits else unit
        else:
            current = f"{current}{sep}{unit}" if current else unit
    if current.strip():
        chunks.append(current)
    return chunks


def chunk_document(path: str, body: str, params: ChunkParams | None = None) -> list[ChunkDraft]:
    """All chunks of one document, in order, each tied to its section anchor."""
    params = params or ChunkParams()
    drafts: list[ChunkDraft] = []
    seen: dict[str, int] = {}
    for section in split_sections(body):
        anchor = anchor_for(path, section.heading)
        for text in chunk_section(section.text, params):
            ordinal = seen.get(anchor, 0)
            seen[anchor] = ordinal + 1
            drafts.append(
                ChunkDraft(
                    anchor=anchor,
                    heading=section.heading,
                    heading_path=section.heading_path,
                    ordinal=ordinal,
                    text=text,
                )
            )
    return drafts


# As in hippo_core/wiki/cards.py: a part may hold "[" but not "[[", so the scan is linear.
_WIKILINK = re.compile(
    r"!?\[\[((?:[^\[\]|#]|\[(?!\[))*+)(?:#(?:[^\[\]|]|\[(?!\[))*+)?(?:\|((?:[^\[\]]|\[(?!\[))*+))?\]\]"
)


def link_text(text: str) -> str:
    """`[[target#h|label]]` reads as `label` (or `target`): link targets are file slugs, not prose."""
    return _WIKILINK.sub(lambda m: m.group(2) or m.group(1), text)


def index_text(title: str, heading_path: list[str], text: str) -> str:
    """What the search lanes see: title and heading path give a chunk its context; links read as words."""
    head = " > ".join(heading_path)
    return link_text("\n".join(part for part in (title, head, text) if part))
