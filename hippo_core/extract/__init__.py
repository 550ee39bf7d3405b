"""Documents (PDF, DOCX, XLSX, PPTX, HWPX, HTML) read into Markdown with page, slide and sheet anchors.

Pure: bytes and a file name in, an `Extraction` out, no file I/O. Every failure is one
`ExtractionError` with a `kind` and a sentence for a person. Format libraries are imported when a
file of that format arrives, so importing this package costs nothing.

    extract(data, "보고서.pdf", ExtractLimits()) -> Extraction(markdown="## Page 1\\n\\n...", ...)

Anchors are headings: `## Page 3` (PDF), `## Slide 12` (PPTX), `## Sheet 매출` (XLSX), so a chunk's
anchor is `<path>#Page 3` (`hippo_core.index.chunking.anchor_for`), which Obsidian opens as `[[path#Page 3]]`.
"""

from __future__ import annotations

from collections.abc import Callable

from hippo_core.extract import markdown as md
from hippo_core.extract.model import Extraction, ExtractionError, ExtractLimits, Format

__all__ = ["SUFFIXES", "ExtractLimits", "Extraction", "ExtractionError", "extract", "format_for"]

SUFFIXES: dict[str, Format] = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".pptx": "pptx",
    ".hwpx": "hwpx",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
}
_OLE_MAGIC = (
    b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # a compound file: an encrypted Office file, or .doc/.xls/.hwp
)


def format_for(filename: str) -> Format | None:
    """The format this package reads a file name as, or None."""
    dot = filename.rfind(".")
    return SUFFIXES.get(filename[dot:].lower()) if dot >= 0 else None


def _reader(fmt: Format) -> Callable[[bytes, ExtractLimits], Extraction]:
    if fmt == "pdf":
        from hippo_core.extract.pdf import read_pdf

        return read_pdf
    if fmt == "docx":
        from hippo_core.extract.docx import read_docx

        return read_docx
    if fmt == "xlsx":
        from hippo_core.extract.xlsx import read_xlsx

        return read_xlsx
    if fmt == "pptx":
        from hippo_core.extract.pptx import read_pptx

        return read_pptx
    if fmt == "hwpx":
        from hippo_core.extract.hwpx import read_hwpx

        return read_hwpx
    from hippo_core.extract.html import read_html

    return read_html


def extract(data: bytes, filename: str, limits: ExtractLimits | None = None) -> Extraction:
    """Read one document into Markdown. Raises ExtractionError (never anything else) on bad input."""
    limits = limits or ExtractLimits()
    fmt = format_for(filename)
    if fmt is None:
        raise ExtractionError("unsupported", f"{filename!r} is not a document type Hippocampus reads")
    if len(data) > limits.max_bytes:
        raise ExtractionError("too_large", f"file is {len(data):,} bytes; the limit is {limits.max_bytes:,}")
    if not data:
        raise ExtractionError("empty", "file is empty (0 bytes)")
    if fmt in ("docx", "xlsx", "pptx", "hwpx") and data.startswith(_OLE_MAGIC):
        raise ExtractionError(
            "encrypted",
            f"{fmt.upper()} is a compound (OLE) file: password-protected, or an old binary format "
            "saved under a new name; save it unprotected as ." + fmt,
        )
    try:
        result = _reader(fmt)(data, limits)
    except ExtractionError:
        raise
    except Exception as exc:  # a library's own error on a damaged file: a reason, never a crash
        detail = " ".join(str(exc).split())[:200]
        raise ExtractionError(
            "corrupt", f"{fmt.upper()} file could not be read: {type(exc).__name__}: {detail}"
        ) from exc
    if not md.has_text(result.markdown, result.anchors):
        raise ExtractionError("empty", f"{fmt.upper()} file holds no text to index")
    return result
