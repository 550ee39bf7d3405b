"""DOCX → Markdown through python-docx: headings by style or outline level, lists, tables in order.

A Word file has no fixed pages (they depend on the printer), so its own headings are its anchors.
"""

from __future__ import annotations

import io

from hippo_core.extract import markdown as md
from hippo_core.extract.model import Extraction, ExtractionError, ExtractLimits
from hippo_core.extract.zipguard import open_zip

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _heading_level(paragraph) -> int:
    """1–6 for a heading paragraph, else 0: the style name (`Heading 2`, `Title`) or an outline level."""
    style = paragraph.style
    name = (style.name or "").lower() if style is not None else ""
    if name == "title":
        return 1
    if name.startswith("heading "):
        digits = name.removeprefix("heading ").strip()
        if digits.isdigit():
            return min(int(digits), 6)
    for source in (paragraph._p.pPr, style.element.pPr if style is not None else None):
        outline = source.find(f"{_W}outlineLvl") if source is not None else None
        value = outline.get(f"{_W}val") if outline is not None else None
        if value is not None and value.isdigit() and int(value) < 9:
            return min(int(value) + 1, 6)
    return 0


def _is_list_item(paragraph) -> bool:
    ppr = paragraph._p.pPr
    if ppr is not None and ppr.find(f"{_W}numPr") is not None:
        return True
    style = paragraph.style
    return style is not None and (style.name or "").lower().startswith(("list bullet", "list number"))


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
    size = 0
    for item in document.iter_inner_content():
        if isinstance(item, docx.table.Table):
            block = md.table(_table_rows(item))
        else:
            text = item.text
            if not text.strip():
                continue
            level = _heading_level(item)
            if level:
                block = md.heading(level, text)
            elif _is_list_item(item):
                block = "- " + md.paragraph(text).replace("\n", " ")
            else:
                block = md.paragraph(text)
        blocks.append(block)
        size += len(block)
        if size > limits.max_chars:
            raise ExtractionError("too_large", f"DOCX text is over {limits.max_chars:,} characters")
    title = (document.core_properties.title or "").strip() or None
    return Extraction(format="docx", markdown=md.join_blocks(blocks), title=title)
