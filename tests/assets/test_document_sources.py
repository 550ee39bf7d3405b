"""Issue 14 point 4: documents dropped in the inbox become sources, found by search with their anchors.

One document per format, Korean and English in each, written here by the format's own writer library
(reportlab, python-docx, openpyxl, python-pptx, python-hwpx; HTML by hand). A real pipeline run ingests
them; the original bytes stay unchanged beside the Markdown copy; real search finds each by the page,
slide, sheet or heading it is on. Bad documents stay in the inbox with their reason.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest
from dagster import DagsterInstance

from eval.extraction_fixtures import _pdf_styles, pdf_fixture, scanned_pdf
from hippo_core.vault import frontmatter
from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import open_engine
from hippo_settings import HippoSettings
from tests.conftest import run_graph

# file name → (query, the anchor after `#` search must point at)
FOUND_BY = {
    "field-notes.pdf": ("등대지기 새벽 무적 소리 lighthouse fog horn", "Page 3"),
    "빙하 조사.docx": ("glacier stakes 빙하 후퇴 말뚝", "Glacier survey 빙하 조사"),
    "apiary.xlsx": ("hive honey harvest 벌통 꿀 수확", "Sheet Beekeeping 양봉"),
    "volcano-talk.pptx": ("volcanic ash forecast 화산재 예보", "Slide 2"),
    "shipyard.hwpx": ("조선소 용접공 shipyard welders", "조선소 견학 Shipyard tour"),
    "tidepools.html": ("tide pool anemones 조수 웅덩이 말미잘", "Tide pools 조수 웅덩이"),
}
UNITS = {"field-notes.pdf": ("page", 3), "apiary.xlsx": ("sheet", 2), "volcano-talk.pptx": ("slide", 3)}


def _pdf() -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate

    body, head = _pdf_styles()
    pages = [
        ("Harbour log 항구 일지", "Boats returned before the storm. 폭풍 전에 배들이 돌아왔다."),
        ("Nets 그물", "Nets were mended on the pier. 부두에서 그물을 수선했다."),
        (
            "Lighthouse 등대",
            "The lighthouse keeper logs every fog horn at dawn. 등대지기는 새벽마다 무적 소리를 기록한다.",
        ),
    ]
    story: list = []
    for i, (title, text) in enumerate(pages):
        story += [Paragraph(title, head), Paragraph(text, body)]
        if i < len(pages) - 1:
            story.append(PageBreak())
    buf = io.BytesIO()
    SimpleDocTemplate(buf, pagesize=A4, title="Field notes").build(story)
    return buf.getvalue()


def _docx() -> bytes:
    import docx

    d = docx.Document()
    d.add_heading("Glacier survey 빙하 조사", level=1)
    d.add_paragraph("Glacier retreat was measured with bamboo stakes. 빙하 후퇴를 대나무 말뚝으로 측정했다.")
    d.add_heading("Camp 야영지", level=1)
    d.add_paragraph("The camp stood on the moraine. 야영지는 빙퇴석 위에 있었다.")
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def _xlsx() -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Beekeeping 양봉"
    for row in (
        ["Hive 벌통", "Note 메모"],
        ["7", "Hive seven gave the first honey harvest. 7번 벌통에서 첫 꿀 수확."],
    ):
        ws.append(row)
    other = wb.create_sheet("Costs 비용")
    other.append(["Item 항목", "Won 원"])
    other.append(["Smoker 훈연기", "30000"])
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _pptx() -> bytes:
    from pptx import Presentation

    prs = Presentation()
    texts = [
        ("Eruption history 분화 역사", "The last eruption was in 1903. 마지막 분화는 1903년이었다."),
        ("Ash forecast 화산재 예보", "Volcanic ash forecast for the airport. 공항을 위한 화산재 예보."),
        ("Evacuation 대피", "Roads north stay open. 북쪽 도로는 열려 있다."),
    ]
    for title, text in texts:
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text_frame.text = text
    buf = io.BytesIO()
    prs.save(buf)
    return buf.getvalue()


def _hwpx() -> bytes:
    from hwpx import HwpxDocument

    doc = HwpxDocument.new()
    doc.add_heading("조선소 견학 Shipyard tour", level=1)
    doc.add_paragraph(
        "조선소 용접공은 선체를 이어 붙인다. Shipyard welders join the hull plates.", style="바탕글"
    )
    data = doc.to_bytes()
    doc.close()
    return data


def _html() -> bytes:
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Coast 해안</title></head><body>"
        "<h1>Coast 해안</h1><h2>Tide pools 조수 웅덩이</h2>"
        "<p>Tide pool anemones close at low tide. 조수 웅덩이의 말미잘은 썰물에 닫힌다.</p>"
        "<h2>Dunes 사구</h2><p>The dunes move each winter. 사구는 겨울마다 움직인다.</p></body></html>"
    ).encode()


def _blank_docx() -> bytes:
    import docx

    buf = io.BytesIO()
    docx.Document().save(buf)
    return buf.getvalue()


GOOD = {
    "field-notes.pdf": _pdf,
    "빙하 조사.docx": _docx,
    "apiary.xlsx": _xlsx,
    "volcano-talk.pptx": _pptx,
    "shipyard.hwpx": _hwpx,
    "tidepools.html": _html,
}
# file name → (bytes, the kind of reason it stays in the inbox with)
BAD = {
    "scan.pdf": (lambda: scanned_pdf(2), "no_text_layer"),
    "locked.pdf": (lambda: pdf_fixture("en", pages=1, paras=1, encrypt="secret").data, "encrypted"),
    "broken.docx": (lambda: b"PK\x03\x04 this is not a real zip archive", "corrupt"),
    "blank.docx": (_blank_docx, "empty"),
    "huge.html": (lambda: b"<p>" + b"big text " * 40_000 + b"</p>", "too_large"),
}


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory, embed_cache: Path) -> tuple[HippoSettings, dict, dict]:
    from tests.conftest import make_vault

    root = tmp_path_factory.mktemp("documents")
    vault = make_vault(root, with_inbox=False)
    originals = {name: build() for name, build in GOOD.items()}
    for name, data in originals.items():
        (vault / "00-inbox" / name).write_bytes(data)
    for name, (build, _) in BAD.items():
        (vault / "00-inbox" / name).write_bytes(build())
    settings = HippoSettings(
        vault=vault, home=root / "home", embed_cache_path=embed_cache, inbox_max_bytes=300_000
    )
    result = run_graph(settings, DagsterInstance.ephemeral())
    assert result.success
    meta = {k: v.value for k, v in result.asset_materializations_for_node("sources")[0].metadata.items()}
    return settings, originals, meta


def test_each_document_is_kept_unchanged_beside_its_markdown_copy(ingested) -> None:
    settings, originals, meta = ingested
    vault = settings.vault
    assert sorted(meta["new_sources"]) == sorted(f"10-sources/{n}.md" for n in GOOD)
    for name, data in originals.items():
        assert (vault / "10-sources" / name).read_bytes() == data  # the original bytes, unchanged
        assert (vault / "00-inbox/.processed" / name).read_bytes() == data
        assert not (vault / "00-inbox" / name).exists()
        fm, body = frontmatter.parse((vault / "10-sources" / f"{name}.md").read_text(encoding="utf-8"))
        extra = fm.model_extra or {}
        assert extra["original"] == f"10-sources/{name}" and extra["original_name"] == name
        assert extra["original_sha256"] == hashlib.sha256(data).hexdigest()
        assert extra["format"] == name.rsplit(".", 1)[1]
        assert (fm.status, fm.trust) == ("raw-source", "source")
        if name in UNITS:
            assert (extra["unit"], extra["units"]) == UNITS[name]
        assert body.strip()


def test_each_document_is_found_by_search_at_its_anchor(ingested) -> None:
    settings, _, _ = ingested
    engine = open_engine(settings)
    for name, (query, anchor) in FOUND_BY.items():
        hits = engine.search(SearchRequest(query=query, limit=3), log=False).results
        assert hits, name
        assert hits[0].anchor == f"10-sources/{name}.md#{anchor}", (name, [h.anchor for h in hits])


def test_bad_documents_stay_in_the_inbox_with_their_reason(ingested) -> None:
    settings, _, meta = ingested
    rejected = {r["file"].removeprefix("00-inbox/"): r for r in meta["rejected_files"]}
    assert {name: r["kind"] for name, r in rejected.items()} == {n: kind for n, (_, kind) in BAD.items()}
    assert "HIPPO_INBOX_MAX_BYTES" in rejected["huge.html"]["reason"]
    assert "password" in rejected["locked.pdf"]["reason"]
    for name in BAD:
        assert (settings.vault / "00-inbox" / name).exists()
        assert not (settings.vault / "10-sources" / f"{name}.md").exists()  # never an empty source
        assert not (settings.vault / "10-sources" / name).exists()


def test_the_same_document_again_is_a_duplicate_and_a_new_one_with_the_same_name_gets_a_suffix(
    ingested,
) -> None:
    from dagster import materialize

    from hippo_assets.ingest.assets import sources
    from hippo_resources import build_resources

    settings, originals, _ = ingested
    inbox = settings.vault / "00-inbox"
    (inbox / "field-notes.pdf").write_bytes(originals["field-notes.pdf"])
    result = materialize([sources], resources=build_resources(settings), run_config={
        "ops": {"sources": {"config": {"files": ["00-inbox/field-notes.pdf"]}}}
    })  # fmt: skip
    meta = {k: v.value for k, v in result.asset_materializations_for_node("sources")[0].metadata.items()}
    assert meta["ingested"] == 0 and meta["duplicate_files"] == [
        "00-inbox/field-notes.pdf = 10-sources/field-notes.pdf.md"
    ]
    other = _other_xlsx()
    (inbox / "apiary.xlsx").write_bytes(other)
    result = materialize([sources], resources=build_resources(settings), run_config={
        "ops": {"sources": {"config": {"files": ["00-inbox/apiary.xlsx"]}}}
    })  # fmt: skip
    meta = {k: v.value for k, v in result.asset_materializations_for_node("sources")[0].metadata.items()}
    assert meta["new_sources"] == ["10-sources/apiary.1.xlsx.md"]
    assert (settings.vault / "10-sources/apiary.1.xlsx").read_bytes() == other
    assert (settings.vault / "10-sources/apiary.xlsx").read_bytes() == originals["apiary.xlsx"]


def _other_xlsx() -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    wb.active.append(["Queen bee 여왕벌", "marked blue 파란 표시"])
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()
