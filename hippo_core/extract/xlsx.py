"""XLSX → Markdown through openpyxl (read-only, cached values): one `## Sheet <name>` table per sheet."""

from __future__ import annotations

import datetime as dt
import io

from hippo_core.extract import markdown as md
from hippo_core.extract.model import Extraction, ExtractionError, ExtractLimits
from hippo_core.extract.zipguard import open_zip


def _value(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


def _trim(rows: list[list[str]]) -> list[list[str]]:
    """Drop trailing empty rows and columns (a sheet's used range often runs past its data)."""
    while rows and not any(rows[-1]):
        rows.pop()
    width = max((i + 1 for row in rows for i, cell in enumerate(row) if cell), default=0)
    return [row[:width] for row in rows]


def read_xlsx(data: bytes, limits: ExtractLimits) -> Extraction:
    import openpyxl

    # Sheets are streamed by openpyxl's read-only mode (bounded by max_cells); the rest is built as trees.
    open_zip(
        data,
        "XLSX",
        limits,
        required=("[Content_Types].xml", "xl/workbook.xml"),
        streamed=("xl/worksheets/",),
    ).close()
    workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    blocks: list[str] = []
    anchors: list[str] = []
    warnings: list[str] = []
    cells = 0
    try:
        for sheet in workbook.worksheets:
            anchor = f"Sheet {' '.join(md.clean_text(sheet.title).split())}"
            anchors.append(anchor)
            if getattr(sheet, "sheet_state", "visible") != "visible":
                warnings.append(f"hidden sheet included: {sheet.title}")
            rows: list[list[str]] = []
            for row in sheet.iter_rows(values_only=True):
                cells += max(len(row), 1)  # an empty row costs a list too: 10M `<row/>` are not free
                if cells > limits.max_cells:
                    raise ExtractionError("too_large", f"XLSX has more than {limits.max_cells:,} cells")
                rows.append([_value(v) for v in row])
            blocks += [md.heading(2, anchor), md.table(_trim(rows))]
    finally:
        workbook.close()
    title = (workbook.properties.title or "").strip() or None
    return Extraction(
        format="xlsx",
        markdown=md.join_blocks(blocks),
        title=title,
        unit="sheet",
        unit_count=len(anchors),
        anchors=anchors,
        warnings=warnings,
    )
