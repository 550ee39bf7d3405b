"""Document extraction benchmark: text fidelity and speed of each library on Korean and English files.

    OMP_NUM_THREADS=1 python -m eval.extraction_bench [--reps 5] [--scale 1] [--only pdf,docx]

The fixtures are written by each format's own writer library (`eval.extraction_fixtures`), so the
text each file holds is known. Every candidate reads the same bytes in this process; a candidate
whose library is not installed is listed as such (the comparison libraries are the `bench` extra:
`pip install -e '.[bench]'`). Columns:

- recall / precision: characters of the reference text found in the output, in order, and characters
  of the output that belong to the reference (difflib matching blocks over both texts with whitespace
  and Markdown punctuation removed, so line wrapping and table pipes do not count);
- headings: the fixture's headings that come out as Markdown heading lines;
- tables: the fixture's table rows that come out as Markdown table rows, cell for cell;
- anchors: the `Page N` / `Slide N` / `Sheet name` headings Hippocampus cites (only its own reader
  writes them; `-` where the format has none);
- ms/doc: median wall time of `--reps` reads after one warm-up read.

`hippo` is `hippo_core.extract.extract`, the product path.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from eval.extraction_fixtures import Fixture, all_fixtures
from eval.results import write_result

Reader = Callable[[bytes, str], str]
_STRIP = set("#|*_`>\\-:=") | {" ", "\n", "\t", "\r", "\xa0", "\u3000"}


def _norm(text: str) -> str:
    """Text without whitespace or Markdown punctuation: what fidelity is measured on."""
    import unicodedata

    return "".join(ch for ch in unicodedata.normalize("NFC", text) if ch not in _STRIP)


def fidelity(reference: str, output: str) -> tuple[float, float]:
    """(recall, precision) of the output's characters against the reference, in order."""
    ref, out = _norm(reference), _norm(output)
    if not ref or not out:
        return 0.0, 0.0
    matched = sum(b.size for b in SequenceMatcher(None, ref, out, autojunk=False).get_matching_blocks())
    return matched / len(ref), matched / len(out)


def _heading_lines(markdown: str) -> set[str]:
    out = set()
    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            out.add(" ".join(stripped.lstrip("#").split()))
    return out


def _table_rows(markdown: str) -> set[tuple[str, ...]]:
    rows = set()
    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith("|") and stripped.endswith("|"):
            cells = tuple(" ".join(c.split()) for c in stripped.strip("|").split("|"))
            rows.add(cells)
    return rows


def structure(fixture: Fixture, markdown: str) -> tuple[float | None, float | None, float | None]:
    """Share of headings, table rows and anchors found (None where the fixture has none)."""
    heads = _heading_lines(markdown)
    rows = _table_rows(markdown)
    h = (
        sum(" ".join(x.split()) in heads for x in fixture.headings) / len(fixture.headings)
        if fixture.headings
        else None
    )
    want = [tuple(" ".join(c.split()) for c in row) for table in fixture.tables for row in table]
    t = sum(r in rows for r in want) / len(want) if want else None
    a = sum(x in heads for x in fixture.anchors) / len(fixture.anchors) if fixture.anchors else None
    return h, t, a


# ---------------------------------------------------------------- candidates (imported when run)


def _hippo(data: bytes, name: str) -> str:
    from hippo_core.extract import extract

    return extract(data, name).markdown


_MARKITDOWN = None


def _markitdown(data: bytes, name: str) -> str:
    from markitdown import MarkItDown, StreamInfo

    global _MARKITDOWN
    _MARKITDOWN = _MARKITDOWN or MarkItDown(enable_plugins=False)  # built once, as a service would
    suffix = "." + name.rsplit(".", 1)[-1]
    return _MARKITDOWN.convert_stream(io.BytesIO(data), stream_info=StreamInfo(extension=suffix)).markdown


_MIME = {
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "hwpx": "application/haansofthwpx",
    "html": "text/html",
}


def _kreuzberg(data: bytes, name: str) -> str:
    import kreuzberg

    config = kreuzberg.ExtractionConfig(output_format="markdown")
    return kreuzberg.extract_bytes_sync(data, mime_type=_MIME[name.rsplit(".", 1)[-1]], config=config).content


def _pypdfium2(data: bytes, name: str) -> str:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(data)
    try:
        return "\n\f".join(doc[i].get_textpage().get_text_range() for i in range(len(doc)))
    finally:
        doc.close()


def _pypdf(data: bytes, name: str) -> str:
    import pypdf

    return "\n\f".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(data)).pages)


def _pdfplumber(data: bytes, name: str) -> str:
    import pdfplumber

    with pdfplumber.open(io.BytesIO(data)) as pdf:
        return "\n\f".join(page.extract_text() or "" for page in pdf.pages)


def _pdfminer(data: bytes, name: str) -> str:
    from pdfminer.high_level import extract_text

    return extract_text(io.BytesIO(data))


def _python_docx_text(data: bytes, name: str) -> str:
    import docx

    document = docx.Document(io.BytesIO(data))
    parts = [p.text for p in document.paragraphs]
    parts += [cell.text for table in document.tables for row in table.rows for cell in row.cells]
    return "\n".join(parts)


def _mammoth(data: bytes, name: str) -> str:
    import mammoth
    import markdownify

    return markdownify.markdownify(mammoth.convert_to_html(io.BytesIO(data)).value, heading_style="ATX")


def _calamine(data: bytes, name: str) -> str:
    from python_calamine import CalamineWorkbook

    book = CalamineWorkbook.from_filelike(io.BytesIO(data))
    lines = []
    for sheet in book.sheet_names:
        lines += ["\t".join(str(v) for v in row) for row in book.get_sheet_by_name(sheet).to_python()]
    return "\n".join(lines)


def _python_pptx_text(data: bytes, name: str) -> str:
    from pptx import Presentation

    parts = []
    for slide in Presentation(io.BytesIO(data)).slides:
        for shape in slide.shapes:
            if shape.has_text_frame:
                parts.append(shape.text_frame.text)
            if getattr(shape, "has_table", False) and shape.has_table:
                parts += [c.text for row in shape.table.rows for c in row.cells]
        if slide.has_notes_slide:
            parts.append(slide.notes_slide.notes_text_frame.text)
    return "\n".join(parts)


def _python_hwpx_markdown(data: bytes, name: str) -> str:
    from hwpx.tools.markdown_export import export_markdown

    return export_markdown(data)


def _python_hwpx_text(data: bytes, name: str) -> str:
    import tempfile

    from hwpx.tools.text_extractor import TextExtractor

    with tempfile.NamedTemporaryFile(suffix=".hwpx") as tmp:  # its extractor reads a path
        tmp.write(data)
        tmp.flush()
        with TextExtractor(tmp.name) as extractor:
            return extractor.extract_text()


def _markdownify(data: bytes, name: str) -> str:
    import markdownify

    return markdownify.markdownify(data.decode("utf-8"), heading_style="ATX", strip=["script", "style"])


def _html2text(data: bytes, name: str) -> str:
    import html2text

    return html2text.html2text(data.decode("utf-8"))


def _docling(data: bytes, name: str) -> str:
    """Docling's converter. Its PDF pipeline loads layout models from a model hub at run time."""
    from docling.datamodel.base_models import DocumentStream
    from docling.document_converter import DocumentConverter

    global _DOCLING
    _DOCLING = _DOCLING or DocumentConverter()
    return _DOCLING.convert(DocumentStream(name=name, stream=io.BytesIO(data))).document.export_to_markdown()


_DOCLING = None

CANDIDATES: dict[str, list[tuple[str, Reader]]] = {
    "pdf": [
        ("hippo (pypdfium2)", _hippo),
        ("pypdfium2", _pypdfium2),
        ("pypdf", _pypdf),
        ("pdfplumber", _pdfplumber),
        ("pdfminer.six", _pdfminer),
        ("markitdown", _markitdown),
        ("kreuzberg", _kreuzberg),
        ("docling", _docling),
    ],
    "docx": [
        ("hippo (python-docx)", _hippo),
        ("python-docx text", _python_docx_text),
        ("mammoth+markdownify", _mammoth),
        ("markitdown", _markitdown),
        ("kreuzberg", _kreuzberg),
        ("docling", _docling),
    ],
    "xlsx": [
        ("hippo (openpyxl)", _hippo),
        ("python-calamine", _calamine),
        ("markitdown", _markitdown),
        ("kreuzberg", _kreuzberg),
        ("docling", _docling),
    ],
    "pptx": [
        ("hippo (python-pptx)", _hippo),
        ("python-pptx text", _python_pptx_text),
        ("markitdown", _markitdown),
        ("kreuzberg", _kreuzberg),
        ("docling", _docling),
    ],
    "hwpx": [
        ("hippo (stdlib XML)", _hippo),
        ("python-hwpx markdown", _python_hwpx_markdown),
        ("python-hwpx text", _python_hwpx_text),
        ("kreuzberg", _kreuzberg),
    ],
    "html": [
        ("hippo (lxml)", _hippo),
        ("markdownify", _markdownify),
        ("markitdown", _markitdown),
        ("kreuzberg", _kreuzberg),
        ("docling", _docling),
    ],
}


@dataclass
class Row:
    fmt: str
    lang: str
    candidate: str
    recall: float | None = None
    precision: float | None = None
    headings: float | None = None
    tables: float | None = None
    anchors: float | None = None
    ms: float | None = None
    note: str = ""


def measure(fixture: Fixture, name: str, reader: Reader, reps: int) -> Row:
    row = Row(fixture.fmt, fixture.lang, name)
    try:
        output = reader(fixture.data, fixture.filename)  # warm-up; also imports the library
    except ImportError as exc:
        row.note = f"not installed ({exc.name})"
        return row
    except Exception as exc:  # a library that fails on a valid file: that is the finding
        row.note = f"failed: {type(exc).__name__}: {' '.join(str(exc).split())[:80]}"
        return row
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        reader(fixture.data, fixture.filename)
        times.append((time.perf_counter() - start) * 1000)
    row.ms = statistics.median(times)
    row.recall, row.precision = fidelity(fixture.reference, output)
    row.headings, row.tables, row.anchors = structure(fixture, output)
    return row


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}"


def result_rows(rows: list[Row]) -> list[dict[str, Any]]:
    """The figures `eval/results` keeps: one row per format, language and reader, times over the product's."""
    hippo_ms = {(r.fmt, r.lang): r.ms for r in rows if r.candidate.startswith("hippo")}
    out = []
    for r in rows:
        base = hippo_ms.get((r.fmt, r.lang))
        out.append(
            {"format": r.fmt, "lang": r.lang, "reader": r.candidate}
            | {k: _pct(getattr(r, k)) for k in ("recall", "precision", "headings", "tables", "anchors")}
            | {
                "ms/doc": None if r.ms is None else round(r.ms, 2),
                "× hippo": None if r.ms is None or not base else round(r.ms / base, 2),
                "note": r.note,
            }
        )
    return out


def render(rows: list[Row], fixtures: list[Fixture]) -> str:
    """The table; `× hippo` is each time over the product reader's time on the same file in this run."""
    units = {(f.fmt, f.lang): f for f in fixtures}
    hippo_ms = {(r.fmt, r.lang): r.ms for r in rows if r.candidate.startswith("hippo")}
    lines = [
        "| format | lang | library | recall % | precision % | headings % | table rows % | anchors % "
        "| ms/doc | × hippo | note |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    missing = sorted({r.candidate for r in rows if r.note.startswith("not installed")})
    for r in rows:
        if r.note.startswith("not installed"):
            continue
        f = units[(r.fmt, r.lang)]
        kind = {"pdf": "pages", "pptx": "slides", "xlsx": "sheets"}.get(f.fmt, "")
        base = hippo_ms.get((r.fmt, r.lang))
        ms = "-" if r.ms is None else f"{r.ms:.1f}"
        ratio = "-" if r.ms is None or not base else f"{r.ms / base:.2f}"
        note = r.note or (f"{f.units} {kind}" if f.units > 1 else "")
        lines.append(
            f"| {r.fmt} | {r.lang} | {r.candidate} | {_pct(r.recall)} | {_pct(r.precision)} | {_pct(r.headings)} "
            f"| {_pct(r.tables)} | {_pct(r.anchors)} | {ms} | {ratio} | {note} |"
        )
    if missing:
        lines.append(f"\nNot installed here, so not measured: {', '.join(missing)}.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m eval.extraction_bench", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--reps", type=int, default=5, help="timed reads per candidate and file (median)")
    parser.add_argument("--scale", type=int, default=1, help="multiply pages, slides, sections and rows")
    parser.add_argument("--only", default="", help="comma-separated formats, e.g. pdf,hwpx")
    args = parser.parse_args(argv)
    only = {x.strip() for x in args.only.split(",") if x.strip()}
    fixtures = all_fixtures(args.scale, only or None)
    fixtures.sort(key=lambda f: (list(CANDIDATES).index(f.fmt), f.lang))
    rows = [measure(f, name, reader, args.reps) for f in fixtures for name, reader in CANDIDATES[f.fmt]]
    print(
        f"Extraction benchmark: {len(fixtures)} files, {args.reps} timed reads each (median), scale {args.scale}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, Python {platform.python_version()}, "
        f"{platform.machine()}.\n"
    )
    print(render(rows, fixtures))
    missing = sorted({r.candidate for r in rows if r.note.startswith("not installed")})
    figures = {"readers": result_rows([r for r in rows if not r.note.startswith("not installed")])}
    write_result(
        "extraction_bench", figures | {"not installed here, so not measured": ", ".join(missing)}, argv
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
