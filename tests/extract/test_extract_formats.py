"""Each format, Korean and English, written by its own writer library and read back into Markdown."""

from __future__ import annotations

import pytest

from eval.extraction_bench import fidelity
from eval.extraction_fixtures import BUILDERS, Fixture, pdf_fixture, pptx_fixture, sentences
from hippo_core.extract import Extraction, extract
from hippo_core.index.chunking import ChunkParams, chunk_document, split_sections

CASES = [(fmt, lang) for fmt in BUILDERS for lang in ("ko", "en")]


@pytest.fixture(scope="module")
def read() -> dict[tuple[str, str], tuple[Fixture, Extraction]]:
    out = {}
    for fmt, lang in CASES:
        fixture = BUILDERS[fmt](lang)
        out[(fmt, lang)] = (fixture, extract(fixture.data, fixture.filename))
    return out


def _squash(text: str) -> str:
    return "".join(text.split())


@pytest.mark.parametrize(("fmt", "lang"), CASES)
def test_every_text_run_comes_out(read, fmt: str, lang: str) -> None:
    fixture, result = read[(fmt, lang)]
    body = _squash(result.markdown)
    missing = [line for line in fixture.reference.splitlines() if _squash(line) not in body]
    assert missing == []
    recall, precision = fidelity(fixture.reference, result.markdown)
    assert recall == 1.0
    assert precision > 0.9  # what is added: anchor headings, repeated table headers, the notes label
    assert result.format == fmt


@pytest.mark.parametrize(("fmt", "lang"), CASES)
def test_headings_tables_and_anchors_are_markdown(read, fmt: str, lang: str) -> None:
    fixture, result = read[(fmt, lang)]
    headings = {line.lstrip("#").strip() for line in result.markdown.splitlines() if line.startswith("#")}
    assert set(fixture.headings) <= headings
    assert set(fixture.anchors) <= headings
    assert result.anchors == fixture.anchors
    assert result.unit_count == (fixture.units if fixture.anchors else 0)
    lines = {line.strip() for line in result.markdown.splitlines()}
    for table in fixture.tables if fmt != "pdf" else []:  # a PDF table comes out as its rows of text
        assert "| " + " | ".join(table[0]) + " |" in lines
        for row in table[1:]:
            assert "| " + " | ".join(row) + " |" in lines


def test_each_pdf_page_is_its_own_anchored_section() -> None:
    fixture = pdf_fixture("ko", pages=5, paras=2)
    result = extract(fixture.data, fixture.filename)
    assert result.unit == "page" and result.unit_count == 5
    by_heading = {s.heading: _squash(s.text) for s in split_sections(result.markdown)}
    for page in range(5):
        for sentence in sentences("ko", 2, start=page * 2):
            assert _squash(sentence) in by_heading[f"Page {page + 1}"]
    assert "온도18–20도겨울철난방주의" in by_heading["Page 2"]  # the table's row, on its page
    assert result.title == "수면 안내서"


def test_chunks_of_a_deck_cite_their_slide() -> None:
    fixture = pptx_fixture("en", slides=4)
    result = extract(fixture.data, fixture.filename)
    chunks = chunk_document("10-sources/deck-en.pptx.md", result.markdown, ChunkParams())
    for chunk in chunks:
        assert chunk.anchor.startswith("10-sources/deck-en.pptx.md#Slide ")
    notes = [c for c in chunks if "Speaker note 3" in c.text]
    assert notes and all(c.anchor.endswith("#Slide 3") for c in notes)


def test_long_sheet_is_cut_into_tables_that_keep_their_header() -> None:
    fixture = BUILDERS["xlsx"]("ko", rows=60)
    result = extract(fixture.data, fixture.filename)
    sheet = next(s for s in split_sections(result.markdown) if s.heading == "Sheet 측정값")
    blocks = sheet.text.split("\n\n")
    assert len(blocks) > 2
    assert all(b.startswith("| 날짜 | 온도 | 습도 | 메모 |\n| --- |") for b in blocks)
    assert all(len(b) < 1200 for b in blocks)


def test_hidden_sheet_is_read_and_reported() -> None:
    import io

    import openpyxl

    workbook = openpyxl.Workbook()
    workbook.active.append(["보이는 시트", "visible"])
    hidden = workbook.create_sheet("숨김")
    hidden.append(["숨겨진 값", "hidden value"])
    hidden.sheet_state = "hidden"
    buf = io.BytesIO()
    workbook.save(buf)
    result = extract(buf.getvalue(), "book.xlsx")
    assert result.anchors == ["Sheet Sheet", "Sheet 숨김"]
    assert "| 숨겨진 값 | hidden value |" in result.markdown
    assert result.warnings == ["hidden sheet included: 숨김"]


@pytest.mark.parametrize("declared", [True, False])
def test_legacy_korean_html_is_decoded(declared: bool) -> None:
    """EUC-KR/CP949 pages are still common in Korea; with or without a declared charset."""
    meta = '<meta http-equiv="Content-Type" content="text/html; charset=euc-kr">' if declared else ""
    page = f"<html><head>{meta}<title>공지</title></head><body><h1>수면 안내</h1><p>침실 온도는 18도.</p></body></html>"
    result = extract(page.encode("cp949"), "old.htm")
    assert "# 수면 안내" in result.markdown and "침실 온도는 18도." in result.markdown
    assert result.title == "공지"


def test_docx_lists_and_outline_levels() -> None:
    import io

    import docx

    document = docx.Document()
    document.add_paragraph("첫째 항목", style="List Bullet")
    document.add_paragraph("second item", style="List Number")
    outlined = document.add_paragraph("개요 수준 제목")
    outlined._p.get_or_add_pPr().append(
        docx.oxml.parse_xml(f'<w:outlineLvl {docx.oxml.ns.nsdecls("w")} w:val="2"/>')
    )
    buf = io.BytesIO()
    document.save(buf)
    markdown = extract(buf.getvalue(), "lists.docx").markdown
    assert markdown.splitlines()[::2] == ["- 첫째 항목", "- second item", "### 개요 수준 제목"]


def test_a_writers_placeholder_title_is_no_title() -> None:
    import io

    import pypdfium2
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate

    from hippo_core.extract.model import metadata_title

    buf = io.BytesIO()  # no title given: reportlab writes its placeholder
    story = [Paragraph("Capybara field report.", getSampleStyleSheet()["Normal"])]
    SimpleDocTemplate(buf, pagesize=A4).build(story)
    assert pypdfium2.PdfDocument(buf.getvalue()).get_metadata_dict()["Title"] == "(anonymous)"
    assert extract(buf.getvalue(), "capybara report.pdf").title is None  # the source takes its file name
    assert metadata_title("Microsoft Word - Q3 report.docx") == "Q3 report"
    placeholders = ("untitled", "Untitled Document", "(unspecified)", "Document1", "Presentation 2", " ")
    assert [metadata_title(t) for t in placeholders] == [None] * len(placeholders)
    assert metadata_title("해달 보고서") == "해달 보고서"
