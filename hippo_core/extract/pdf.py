"""PDF → Markdown with one `## Page N` section per page, through PDFium (pypdfium2).

PDFium was the fastest reader measured and kept Korean CID text (reportlab's HYSMyeongJo / HYGothic)
exactly, dashes included (`python -m eval.extraction_bench`). A PDF has no reliable headings or table
structure, so each page is its text lines under its page heading; a table comes out as its rows.
"""

from __future__ import annotations

from hippo_core.extract import markdown as md
from hippo_core.extract.model import Extraction, ExtractionError, ExtractLimits


def _has_eof_marker(data: bytes) -> bool:
    """A complete PDF ends with `%%EOF` (readers allow it within the last 1024 bytes)."""
    return b"%%EOF" in data[-1024:]


def read_pdf(data: bytes, limits: ExtractLimits) -> Extraction:
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    if not data[:1024].lstrip().startswith(b"%PDF-"):
        raise ExtractionError("corrupt", "not a PDF file (no %PDF header)")
    if not _has_eof_marker(data):
        raise ExtractionError("corrupt", "PDF file is truncated (no %%EOF marker at its end)")
    try:
        doc = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if exc.err_code in (pdfium_c.FPDF_ERR_PASSWORD, pdfium_c.FPDF_ERR_SECURITY):
            raise ExtractionError("encrypted", "PDF is encrypted and needs a password") from None
        raise ExtractionError("corrupt", f"PDF file is damaged ({exc})") from None
    try:
        count = len(doc)
        if count > limits.max_pages:
            raise ExtractionError("too_large", f"PDF has {count} pages; the limit is {limits.max_pages}")
        blocks: list[str] = []
        anchors: list[str] = []
        warnings: list[str] = []
        pictures_only: list[int] = []
        size = 0
        for index in range(count):
            page = doc[index]
            textpage = page.get_textpage()
            text = md.paragraph(textpage.get_text_range())
            anchor = f"Page {index + 1}"
            anchors.append(anchor)
            blocks += [md.heading(2, anchor), text]
            if not text and any(
                True for _ in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=2)
            ):
                pictures_only.append(index + 1)
            textpage.close()
            page.close()
            size += len(text)
            if size > limits.max_chars:
                raise ExtractionError("too_large", f"PDF text is over {limits.max_chars:,} characters")
        title = (doc.get_metadata_dict(skip_empty=True).get("Title") or "").strip() or None
    finally:
        doc.close()
    markdown = md.join_blocks(blocks)
    if pictures_only and not md.has_text(markdown, anchors):
        raise ExtractionError(
            "no_text_layer", "PDF has no text layer (a scanned document?); OCR is not available"
        )
    if pictures_only:
        pages = ", ".join(map(str, pictures_only[:20]))
        warnings.append(f"pages with pictures but no text layer (scanned?): {pages}")
    return Extraction(
        format="pdf",
        markdown=markdown,
        title=title,
        unit="page",
        unit_count=count,
        anchors=anchors,
        warnings=warnings,
    )
