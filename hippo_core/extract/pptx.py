"""PPTX → Markdown through python-pptx: one `## Slide N` section per slide, title first, then the
text, tables and speaker notes of the slide in reading order (top to bottom, left to right)."""

from __future__ import annotations

import io

from hippo_core.extract import markdown as md
from hippo_core.extract.model import Extraction, ExtractionError, ExtractLimits
from hippo_core.extract.zipguard import open_zip

_MAX_GROUP_DEPTH = 20


def _shape_blocks(shape, depth: int = 0) -> list[str]:
    """Markdown blocks of one shape: its text frame, its table, or the shapes of its group."""
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    if shape.shape_type == MSO_SHAPE_TYPE.GROUP and depth < _MAX_GROUP_DEPTH:
        return [b for child in _reading_order(shape.shapes) for b in _shape_blocks(child, depth + 1)]
    if getattr(shape, "has_table", False) and shape.has_table:
        return [md.table([[cell.text for cell in row.cells] for row in shape.table.rows])]
    if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        lines = []
        for para in shape.text_frame.paragraphs:
            text = " ".join(md.clean_text(para.text).split())
            if text:
                lines.append(("  " * (para.level - 1) + "- " + text) if para.level else md.safe_line(text))
        return ["\n".join(lines)] if lines else []
    return []


def _reading_order(shapes) -> list:
    return sorted(shapes, key=lambda s: (s.top or 0, s.left or 0))


def read_pptx(data: bytes, limits: ExtractLimits) -> Extraction:
    from pptx import Presentation

    open_zip(data, "PPTX", limits, required=("[Content_Types].xml", "ppt/presentation.xml")).close()
    presentation = Presentation(io.BytesIO(data))
    slides = list(presentation.slides)
    if len(slides) > limits.max_pages:
        raise ExtractionError("too_large", f"PPTX has {len(slides)} slides; the limit is {limits.max_pages}")
    blocks: list[str] = []
    anchors: list[str] = []
    size = 0
    for number, slide in enumerate(slides, start=1):
        anchor = f"Slide {number}"
        anchors.append(anchor)
        section = [md.heading(2, anchor)]
        title_shape = slide.shapes.title
        title = " ".join(md.clean_text(title_shape.text).split()) if title_shape is not None else ""
        if title:
            section.append(f"**{title.replace('*', chr(92) + '*')}**")
        title_id = title_shape.shape_id if title_shape is not None else None
        for shape in _reading_order(s for s in slide.shapes if s.shape_id != title_id):
            section += _shape_blocks(shape)
        frame = slide.notes_slide.notes_text_frame if slide.has_notes_slide else None
        if frame is not None:
            notes = md.paragraph(frame.text)
            if notes:
                section += ["**Notes:**", notes]
        blocks += section
        size += sum(len(b) for b in section)
        if size > limits.max_chars:
            raise ExtractionError("too_large", f"PPTX text is over {limits.max_chars:,} characters")
    title = (presentation.core_properties.title or "").strip() or None
    return Extraction(
        format="pptx",
        markdown=md.join_blocks(blocks),
        title=title,
        unit="slide",
        unit_count=len(slides),
        anchors=anchors,
    )
