"""DOCX → Markdown through python-docx: headings by style or outline level, lists, tables in order.

A Word file has no fixed pages (they depend on the printer), so its own headings are its anchors.
"""

from __future__ import annotations

import io

from hippo_core.extract import markdown as md
from hippo_core.extract.model import Extraction, ExtractionError, ExtractLimits
from hippo_core.extract.zipguard import open_zip

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _outline_level(ppr) -> int:
    """1–6 from a `w:outlineLvl` in paragraph properties (0-based there; 9 means body text)."""
    outline = ppr.find(f"{_W}outlineLvl") if ppr is not None else None
    value = outline.get(f"{_W}val") if outline is not None else None
    return min(int(value) + 1, 6) if value is not None and value.isdigit() and int(value) < 9 else 0


def _style_kind(style) -> tuple[int, bool]:
    """(heading level or 0, is a list style) of a paragraph style: its name, else its outline level."""
    name = (style.name or "").lower() if style is not None else ""
    is_list = name.startswith(("list bullet", "list number"))
    if name == "title":
        return 1, is_list
    digits = name.removeprefix("heading ").strip()
    if name.startswith("heading ") and digits.isdigit():
        return min(int(digits), 6), is_list
    return (_outline_level(style.element.pPr) if style is not None else 0), is_list


class _StyleCache:
    """python-docx looks a paragraph's style up by scanning every style; do it once per style id."""

    def __init__(self) -> None:
        self.kinds: dict[str | None, tuple[int, bool]] = {}

    def kind(self, paragraph) -> tuple[int, bool]:
        key = paragraph._p.style
        if key not in self.kinds:
            self.kinds[key] = _style_kind(paragraph.style)
        level, is_list = self.kinds[key]
        ppr = paragraph._p.pPr
        level = _outline_level(ppr) or level
        return level, is_list or (ppr is not None and ppr.find(f"{_W}numPr") is not None)


def _table_rows(table) -> list[list[str]]:
    """Cell texts by row; a merged cell's text is kept once, in its first grid position."""
    seen: dict[int, object] = {}  # holds each element, so no id is reused while the table is read
    rows: list[list[str]] = []
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            key = id(cell._tc)
            cells.append("" if key in seen else cell.text)
            seen[key] = cell._tc
        rows.append(cells)
    return rows


def read_docx(data: bytes, limits: ExtractLimits) -> Extraction:
    import docx

    open_zip(data, "DOCX", limits, required=("[Content_Types].xml", "word/document.xml")).close()
    document = docx.Document(io.BytesIO(data))
    blocks: list[str] = []
    styles = _StyleCache()
    size = 0
    for item in document.iter_inner_content():
        if isinstance(item, docx.table.Table):
            block = md.table(_table_rows(item))
        else:
            text = item.text
            if not text.strip():
                continue
            level, is_list = styles.kind(item)
            if level:
                block = md.heading(level, text)
            elif is_list:
                block = "- " + md.paragraph(text).replace("\n", " ")
            else:
                block = md.paragraph(text)
        blocks.append(block)
        size += len(block)
        if size > limits.max_chars:
            raise ExtractionError("too_large", f"DOCX text is over {limits.max_chars:,} characters")
    title = (document.core_properties.title or "").strip() or None
    return Extraction(format="docx", markdown=md.join_blocks(blocks), title=title)
