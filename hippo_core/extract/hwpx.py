"""HWPX (Hancom Office, OWPML: a zip of XML parts) → Markdown, read with the standard library.

Sections are `Contents/section<N>.xml`; a paragraph (`hp:p`) is a heading when its paragraph shape
in `Contents/header.xml` has `<hh:heading type="OUTLINE" level="L">` (the `개요 1..10` styles).
Tables (`hp:tbl`) become Markdown tables; text boxes and cells are read through their `subList`.
Elements are matched by local name, so the 2011 and 2016 namespace families both read. A part with a
DOCTYPE is refused: OWPML never has one, and entities are how XML bombs and file reads get in.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
import zipfile

from hippo_core.extract import markdown as md
from hippo_core.extract.model import Extraction, ExtractionError, ExtractLimits
from hippo_core.extract.zipguard import open_zip

_MAX_DEPTH = 64  # nested tables and text boxes; deeper content is skipped with a warning


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _parse(archive: zipfile.ZipFile, name: str) -> ET.Element:
    data = archive.read(name)
    if b"<!DOCTYPE" in data[:4096].upper():
        raise ExtractionError("corrupt", f"HWPX part {name} has a DOCTYPE (not allowed in OWPML)")
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise ExtractionError("corrupt", f"HWPX part {name} is not well-formed XML ({exc})") from None


def _section_names(names: list[str]) -> list[str]:
    """`Contents/section0.xml`, `section1.xml`, ... in number order."""
    found = []
    for name in names:
        stem = name.removeprefix("Contents/section").removesuffix(".xml")
        if name.startswith("Contents/section") and name.endswith(".xml") and stem.isdigit():
            found.append((int(stem), name))
    return [name for _, name in sorted(found)]


def _outline_levels(header: ET.Element | None) -> dict[str, int]:
    """paraPr id → heading level (1-based) for paragraph shapes that are outline headings."""
    levels: dict[str, int] = {}
    if header is None:
        return levels
    for para_pr in header.iter():
        if _local(para_pr.tag) != "paraPr":
            continue
        for child in para_pr:
            if _local(child.tag) == "heading" and child.get("type") == "OUTLINE":
                level = child.get("level", "0")
                if level.isdigit():
                    levels[para_pr.get("id", "")] = int(level) + 1
    return levels


class _Reader:
    def __init__(self, levels: dict[str, int], limits: ExtractLimits) -> None:
        self.levels = levels
        self.limits = limits
        self.blocks: list[str] = []
        self.size = 0
        self.too_deep = False

    def add(self, block: str) -> None:
        if block.strip():
            self.blocks.append(block)
            self.size += len(block)
            if self.size > self.limits.max_chars:
                raise ExtractionError("too_large", f"HWPX text is over {self.limits.max_chars:,} characters")

    def paragraph(self, p: ET.Element, depth: int) -> None:
        """One `hp:p`: its text as a paragraph or heading; tables and text boxes as blocks of their own."""
        parts: list[str] = []
        for run in p:
            if _local(run.tag) != "run":
                continue
            for child in run:
                name = _local(child.tag)
                if name == "t":
                    parts.append(self.text(child))
                elif name == "tbl":
                    self.flush(p, parts)
                    parts = []
                    self.table(child, depth + 1)
                elif name not in ("secPr", "ctrl"):
                    self.flush(p, parts)
                    parts = []
                    for sub in self.sublist_paragraphs(child):
                        if depth < _MAX_DEPTH:
                            self.paragraph(sub, depth + 1)
                        else:
                            self.too_deep = True
        self.flush(p, parts)

    def flush(self, p: ET.Element, parts: list[str]) -> None:
        text = "".join(parts)
        if not text.strip():
            return
        level = self.levels.get(p.get("paraPrIDRef", ""), 0)
        self.add(md.heading(level, text) if 0 < level <= 6 else md.paragraph(text))

    @staticmethod
    def text(t: ET.Element) -> str:
        """`hp:t` text with its inline controls: a tab or line break becomes whitespace."""
        out = [t.text or ""]
        for child in t:
            name = _local(child.tag)
            out.append("\t" if name == "tab" else "\n" if name == "lineBreak" else "")
            out.append(child.tail or "")
        return "".join(out)

    @staticmethod
    def sublist_paragraphs(element: ET.Element) -> list[ET.Element]:
        """Paragraphs of the text boxes inside a drawing object, not of tables nested in them."""
        found: list[ET.Element] = []
        stack = [element]
        while stack:
            node = stack.pop()
            for child in node:
                name = _local(child.tag)
                if name == "subList":
                    found.extend(c for c in child if _local(c.tag) == "p")
                elif name not in ("tbl", "p"):
                    stack.append(child)
        return found

    def cell_text(self, tc: ET.Element) -> str:
        lines: list[str] = []
        for child in tc:
            if _local(child.tag) == "subList":
                for p in child:
                    if _local(p.tag) == "p":
                        lines.append("".join(self.text(t) for t in p.iter() if _local(t.tag) == "t"))
        return " ".join(" ".join(lines).split())

    def table(self, tbl: ET.Element, depth: int) -> None:
        """Rows placed by each cell's `cellAddr`, so merged cells keep the columns aligned."""
        if depth > _MAX_DEPTH:
            self.too_deep = True
            return
        grid: dict[int, dict[int, str]] = {}
        for index, tr in enumerate(c for c in tbl if _local(c.tag) == "tr"):
            for col, tc in enumerate(c for c in tr if _local(c.tag) == "tc"):
                addr = next((c for c in tc if _local(c.tag) == "cellAddr"), None)
                row_at = int(addr.get("rowAddr", index)) if addr is not None else index
                col_at = int(addr.get("colAddr", col)) if addr is not None else col
                grid.setdefault(row_at, {})[col_at] = self.cell_text(tc)
        if not grid:
            return
        width = max(max(cols) for cols in grid.values()) + 1
        if width * len(grid) > self.limits.max_cells:
            raise ExtractionError("too_large", f"HWPX table has more than {self.limits.max_cells:,} cells")
        rows = [[grid[r].get(c, "") for c in range(width)] for r in sorted(grid)]
        self.add(md.table(rows))


def read_hwpx(data: bytes, limits: ExtractLimits) -> Extraction:
    archive = open_zip(data, "HWPX", limits, required=("mimetype", "Contents/header.xml"))
    with archive:
        if archive.read("mimetype").strip() != b"application/hwp+zip":
            raise ExtractionError("corrupt", "not an HWPX file (its mimetype is not application/hwp+zip)")
        sections = _section_names(archive.namelist())
        if not sections:
            raise ExtractionError("corrupt", "HWPX package has no Contents/section0.xml")
        reader = _Reader(_outline_levels(_parse(archive, "Contents/header.xml")), limits)
        for name in sections:
            for p in _parse(archive, name):
                if _local(p.tag) == "p":
                    reader.paragraph(p, 0)
    warnings = ["content nested deeper than 64 levels was skipped"] if reader.too_deep else []
    return Extraction(format="hwpx", markdown=md.join_blocks(reader.blocks), warnings=warnings)
