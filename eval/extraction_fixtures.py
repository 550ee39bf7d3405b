"""Document fixtures written by each format's own writer library, with the text they are known to hold.

Shared by `python -m eval.extraction_bench` and `tests/extract/`: no binary fixture is committed. Each
builder returns a `Fixture`: the bytes, the file name, and what a faithful extraction must contain (the
reference text in reading order, the headings, the table rows, the page/slide/sheet anchors).

Writers: python-docx, openpyxl, python-pptx, python-hwpx, reportlab (PDF; its built-in CID fonts
`HYSMyeongJo-Medium` / `HYGothic-Medium` write Korean with a text layer and need no font file),
and hand-written HTML.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Literal

Lang = Literal["ko", "en"]

_KO = [
    "침실 온도는 18도에서 20도 사이로 맞추는 것이 수면에 가장 좋다.",
    "습도는 40퍼센트에서 60퍼센트 사이를 유지해야 호흡기가 편안하다.",
    "취침 한 시간 전에는 밝은 화면을 멀리하고 조명을 낮춘다.",
    "주말에도 같은 시각에 일어나면 생체 시계가 흔들리지 않는다.",
    "카페인은 오후 두 시 이후로 마시지 않는 편이 좋다.",
    "낮잠은 삼십 분을 넘기지 않아야 밤잠을 방해하지 않는다.",
    "운동은 아침이나 이른 저녁에 하고 잠들기 직전에는 피한다.",
    "잠이 오지 않으면 침대에서 나와 조용한 일을 하다가 돌아간다.",
]
_EN = [
    "Keep the bedroom between 18 and 20 degrees Celsius for the deepest sleep.",
    "Humidity between 40 and 60 percent keeps the airways comfortable overnight.",
    "Dim the lights and put screens away an hour before going to bed.",
    "Waking at the same time on weekends keeps the body clock steady.",
    "Avoid coffee after two in the afternoon; caffeine lingers for hours.",
    "A nap longer than thirty minutes makes it harder to fall asleep at night.",
    "Exercise in the morning or early evening, never right before sleeping.",
    "If sleep does not come, leave the bed and return once you feel drowsy.",
]
_HEADINGS = {
    "ko": ["수면 환경", "생활 습관", "문제 해결", "참고 자료", "요약"],
    "en": ["Sleep environment", "Daily habits", "Troubleshooting", "References", "Summary"],
}
_TABLE = {
    "ko": [
        ["항목", "권장값", "비고"],
        ["온도", "18–20도", "겨울철 난방 주의"],
        ["습도", "40–60%", "가습기 사용"],
    ],
    "en": [
        ["Item", "Target", "Note"],
        ["Temperature", "18–20 °C", "watch the heating"],
        ["Humidity", "40–60%", "use a humidifier"],
    ],
}


def sentences(lang: Lang, n: int, start: int = 0) -> list[str]:
    """`n` distinct sentences: the base sentences, each tagged with its running number."""
    base = _KO if lang == "ko" else _EN
    tag = "항목" if lang == "ko" else "item"
    return [f"{base[(start + i) % len(base)]} ({tag} {start + i + 1})" for i in range(n)]


def table_rows(lang: Lang) -> list[list[str]]:
    return [list(row) for row in _TABLE[lang]]


@dataclass
class Fixture:
    """One document and what a faithful extraction of it holds."""

    fmt: str
    lang: Lang
    filename: str
    data: bytes
    reference: str  # every text run of the document, in reading order
    headings: list[str] = field(default_factory=list)
    tables: list[list[list[str]]] = field(default_factory=list)
    anchors: list[str] = field(default_factory=list)  # heading texts that must exist (Page 2, Slide 3, ...)
    units: int = 1  # pages, slides or sheets (1 for flowing documents)


# ---------------------------------------------------------------- DOCX (python-docx)


def docx_fixture(lang: Lang, sections: int = 4, paras: int = 3) -> Fixture:
    import docx

    doc = docx.Document()
    heads = _HEADINGS[lang]
    ref: list[str] = []
    title = "수면 안내서" if lang == "ko" else "A guide to sleep"
    doc.add_heading(title, level=1)
    ref.append(title)
    headings = [title]
    n = 0
    for s in range(sections):
        head = f"{heads[s % len(heads)]} {s + 1}"
        doc.add_heading(head, level=2)
        ref.append(head)
        headings.append(head)
        for sentence in sentences(lang, paras, start=n):
            doc.add_paragraph(sentence)
            ref.append(sentence)
        n += paras
        if s == 0:
            rows = table_rows(lang)
            table = doc.add_table(rows=len(rows), cols=len(rows[0]))
            for r, row in enumerate(rows):
                for c, cell in enumerate(row):
                    table.cell(r, c).text = cell
            ref.extend(cell for row in rows for cell in row)
    buf = io.BytesIO()
    doc.save(buf)
    return Fixture(
        "docx", lang, f"guide-{lang}.docx", buf.getvalue(), "\n".join(ref), headings, [table_rows(lang)]
    )


# ---------------------------------------------------------------- XLSX (openpyxl)


def xlsx_fixture(lang: Lang, rows: int = 30) -> Fixture:
    import openpyxl

    wb = openpyxl.Workbook()
    first = wb.active
    first.title = "측정값" if lang == "ko" else "Readings"
    header = ["날짜", "온도", "습도", "메모"] if lang == "ko" else ["Date", "Temperature", "Humidity", "Memo"]
    notes = sentences(lang, rows)
    table1 = [header] + [
        [f"2024-01-{d + 1:02d}", str(18 + d % 3), str(40 + d % 20), notes[d]] for d in range(rows)
    ]
    for row in table1:
        first.append([int(v) if v.isdigit() else v for v in row])
    second = wb.create_sheet("권장값" if lang == "ko" else "Targets")
    table2 = table_rows(lang)
    for row in table2:
        second.append(row)
    buf = io.BytesIO()
    wb.save(buf)
    ref = "\n".join(cell for table in (table1, table2) for row in table for cell in row)
    anchors = [f"Sheet {first.title}", f"Sheet {second.title}"]
    return Fixture(
        "xlsx", lang, f"readings-{lang}.xlsx", buf.getvalue(), ref, [], [table1, table2], anchors, 2
    )


# ---------------------------------------------------------------- PPTX (python-pptx)


def pptx_fixture(lang: Lang, slides: int = 6) -> Fixture:
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    heads = _HEADINGS[lang]
    ref: list[str] = []
    notes_label = "발표자 메모" if lang == "ko" else "Speaker note"
    n = 0
    tables = []
    for s in range(slides):
        if s == 1:
            slide = prs.slides.add_slide(prs.slide_layouts[5])  # title only, plus a table
            title = f"{heads[s % len(heads)]} {s + 1}"
            slide.shapes.title.text = title
            rows = table_rows(lang)
            shape = slide.shapes.add_table(
                len(rows), len(rows[0]), Inches(0.5), Inches(1.5), Inches(9), Inches(2)
            )
            for r, row in enumerate(rows):
                for c, cell in enumerate(row):
                    shape.table.cell(r, c).text = cell
            ref.append(title)
            ref.extend(cell for row in rows for cell in row)
            tables.append(rows)
        else:
            slide = prs.slides.add_slide(prs.slide_layouts[1])  # title and content
            title = f"{heads[s % len(heads)]} {s + 1}"
            slide.shapes.title.text = title
            body = slide.placeholders[1].text_frame
            lines = sentences(lang, 3, start=n)
            n += 3
            body.text = lines[0]
            for line in lines[1:]:
                body.add_paragraph().text = line
            ref.append(title)
            ref.extend(lines)
        note = f"{notes_label} {s + 1}: {sentences(lang, 1, start=100 + s)[0]}"
        slide.notes_slide.notes_text_frame.text = note
        ref.append(note)
    buf = io.BytesIO()
    prs.save(buf)
    anchors = [f"Slide {i + 1}" for i in range(slides)]
    return Fixture(
        "pptx", lang, f"deck-{lang}.pptx", buf.getvalue(), "\n".join(ref), [], tables, anchors, slides
    )


# ---------------------------------------------------------------- HWPX (python-hwpx)


def hwpx_fixture(lang: Lang, sections: int = 3, paras: int = 3) -> Fixture:
    from hwpx import HwpxDocument

    doc = HwpxDocument.new()
    heads = _HEADINGS[lang]
    ref: list[str] = []
    headings: list[str] = []
    n = 0
    for s in range(sections):
        head = f"{heads[s % len(heads)]} {s + 1}"
        doc.add_heading(head, level=1)
        ref.append(head)
        headings.append(head)
        for sentence in sentences(lang, paras, start=n):
            doc.add_paragraph(sentence, style="바탕글")  # not the heading's style, which it would inherit
            ref.append(sentence)
        n += paras
        if s == 0:
            rows = table_rows(lang)
            table = doc.add_table(len(rows), len(rows[0]))
            for r, row in enumerate(rows):
                for c, cell in enumerate(row):
                    table.cell(r, c).text = cell
            ref.extend(cell for row in rows for cell in row)
    data = doc.to_bytes()
    doc.close()
    return Fixture("hwpx", lang, f"report-{lang}.hwpx", data, "\n".join(ref), headings, [table_rows(lang)])


# ---------------------------------------------------------------- HTML (hand-written)


def html_fixture(lang: Lang, sections: int = 4, paras: int = 3) -> Fixture:
    from html import escape

    heads = _HEADINGS[lang]
    title = "수면 안내서" if lang == "ko" else "A guide to sleep"
    ref = [title]
    headings = [title]
    parts = [
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8"><title>{escape(title)}</title>',
        "<style>body { font-family: sans-serif }</style><script>var tracking = 1;</script></head><body>",
        "<nav><a href='/'>Home</a></nav>" if lang == "en" else "<nav><a href='/'>홈</a></nav>",
        f"<h1>{escape(title)}</h1>",
    ]
    ref.insert(0, "홈" if lang == "ko" else "Home")
    n = 0
    for s in range(sections):
        head = f"{heads[s % len(heads)]} {s + 1}"
        parts.append(f"<h2>{escape(head)}</h2>")
        ref.append(head)
        headings.append(head)
        for sentence in sentences(lang, paras, start=n):
            parts.append(f"<p>{escape(sentence)}</p>")
            ref.append(sentence)
        n += paras
        if s == 0:
            rows = table_rows(lang)
            cells = ["<tr>" + "".join(f"<th>{escape(c)}</th>" for c in rows[0]) + "</tr>"]
            cells += ["<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows[1:]]
            parts.append("<table>" + "".join(cells) + "</table>")
            ref.extend(cell for row in rows for cell in row)
    parts.append("</body></html>")
    data = "\n".join(parts).encode("utf-8")
    return Fixture("html", lang, f"page-{lang}.html", data, "\n".join(ref), headings, [table_rows(lang)])


# ---------------------------------------------------------------- PDF (reportlab, CID fonts)

_CID_FONTS = ("HYSMyeongJo-Medium", "HYGothic-Medium")


def _pdf_styles():
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont

    for name in _CID_FONTS:
        if name not in pdfmetrics.getRegisteredFontNames():
            pdfmetrics.registerFont(UnicodeCIDFont(name))
    body = ParagraphStyle("body", fontName="HYSMyeongJo-Medium", fontSize=11, leading=16, wordWrap="CJK")
    head = ParagraphStyle("head", fontName="HYGothic-Medium", fontSize=18, leading=24, spaceAfter=12)
    return body, head


def pdf_fixture(lang: Lang, pages: int = 4, paras: int = 4, encrypt: str | None = None) -> Fixture:
    """A multi-page PDF with a text layer; page 2 holds a ruled table. `encrypt` sets a user password."""
    from html import escape

    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Table, TableStyle

    body, head = _pdf_styles()
    heads = _HEADINGS[lang]
    story = []
    ref: list[str] = []
    tables = []
    n = 0
    for p in range(pages):
        title = f"{heads[p % len(heads)]} {p + 1}"
        story.append(Paragraph(escape(title), head))
        ref.append(title)
        for sentence in sentences(lang, paras, start=n):
            story.append(Paragraph(escape(sentence), body))
            ref.append(sentence)
        n += paras
        if p == 1:
            rows = table_rows(lang)
            table = Table(rows)
            table.setStyle(
                TableStyle(
                    [
                        ("FONTNAME", (0, 0), (-1, -1), "HYSMyeongJo-Medium"),
                        ("GRID", (0, 0), (-1, -1), 0.5, colors.black),
                    ]
                )
            )
            story.append(table)
            ref.extend(cell for row in rows for cell in row)
            tables.append(rows)
        if p < pages - 1:
            story.append(PageBreak())
    buf = io.BytesIO()
    title = "수면 안내서" if lang == "ko" else "A guide to sleep"
    SimpleDocTemplate(buf, pagesize=A4, title=title, encrypt=encrypt).build(story)
    anchors = [f"Page {i + 1}" for i in range(pages)]
    return Fixture(
        "pdf", lang, f"paper-{lang}.pdf", buf.getvalue(), "\n".join(ref), [], tables, anchors, pages
    )


def scanned_pdf(pages: int = 2) -> bytes:
    """Pages that hold only a picture of text: no text layer, as a scanner makes them."""
    from PIL import Image, ImageDraw
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    image = Image.new("L", (400, 200), color=255)
    ImageDraw.Draw(image).text((20, 90), "scanned page, no text layer", fill=0)
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4)
    for _ in range(pages):
        c.drawImage(ImageReader(image), 72, 500, width=400, height=200)
        c.showPage()
    c.save()
    return buf.getvalue()


BUILDERS = {
    "pdf": pdf_fixture,
    "docx": docx_fixture,
    "xlsx": xlsx_fixture,
    "pptx": pptx_fixture,
    "hwpx": hwpx_fixture,
    "html": html_fixture,
}


def all_fixtures(scale: int = 1, formats: set[str] | None = None) -> list[Fixture]:
    """One fixture per format and language; `scale` multiplies pages, slides, sections and rows."""
    sizes = {
        "pdf": "pages",
        "docx": "sections",
        "xlsx": "rows",
        "pptx": "slides",
        "hwpx": "sections",
        "html": "sections",
    }
    base = {"pdf": 4, "docx": 4, "xlsx": 30, "pptx": 6, "hwpx": 3, "html": 4}
    return [
        BUILDERS[fmt](lang, **{sizes[fmt]: base[fmt] * scale})
        for lang in ("ko", "en")
        for fmt in BUILDERS
        if formats is None or fmt in formats
    ]
