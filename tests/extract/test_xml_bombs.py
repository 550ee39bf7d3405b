"""Issue 22 item 2 (attack run 2 N3): a small Office/HWPX file whose XML expands to tens of MiB costs
bounded memory, is refused with the reason, and is not extracted again until its bytes change.

The bomb is made here: a real python-docx document whose `word/document.xml` is replaced by 30 MiB of
`<w:p/>` (about 80 KB zipped). Peak RSS is measured in a subprocess (`resource.getrusage`), before and
after the extraction; before the fix the extraction alone grew it by ~700 MB (1.4 GB at 60 MiB).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
from dagster import materialize

from eval.extraction_fixtures import BUILDERS
from hippo_assets.ingest.assets import sources
from hippo_core.extract import ExtractionError, ExtractLimits, extract
from hippo_resources import build_resources
from hippo_settings import HippoSettings

REPO = Path(__file__).resolve().parents[2]
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def docx_bomb(mib: int) -> bytes:
    """A valid DOCX (python-docx's own template) whose body is `mib` MiB of empty paragraphs."""
    import docx

    buf = io.BytesIO()
    docx.Document().save(buf)
    template = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    head = f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="{W}"><w:body>'
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for info in template.infolist():
            data = template.read(info.filename)
            if info.filename == "word/document.xml":
                body = b"<w:p/>" * (mib * 1024 * 1024 // 6)
                data = head.encode() + body + b"<w:p><w:r><w:t>end</w:t></w:r></w:p></w:body></w:document>"
            package.writestr(info.filename, data)
    return out.getvalue()


MEASURE = textwrap.dedent(
    """
    import json, resource, sys, time
    from tests.extract.test_xml_bombs import docx_bomb
    from hippo_core.extract import ExtractionError, extract
    data = docx_bomb(30)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    try:
        extract(data, "bomb.docx")
        kind = "read"
    except ExtractionError as exc:
        kind = exc.kind
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"kind": kind, "grew_mb": (after - before) / 1024, "zip_kb": len(data) / 1024,
                      "seconds": time.monotonic() - started}))
    """
)


def test_a_docx_xml_bomb_is_refused_with_bounded_memory() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE], cwd=REPO, capture_output=True, text=True, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    assert figures["zip_kb"] < 200  # small on disk
    assert figures["kind"] == "xml_too_large"
    assert figures["grew_mb"] < 150, figures  # the old reader grew ~700 MB here


@pytest.mark.parametrize("fmt", ["docx", "xlsx", "pptx", "hwpx"])
def test_every_office_format_counts_its_xml_before_building_a_tree(fmt: str) -> None:
    fixture = BUILDERS[fmt]("en")
    assert extract(fixture.data, fixture.filename).markdown  # under the default limits it reads
    for limits in (ExtractLimits(max_xml_elements=20), ExtractLimits(max_xml_part_bytes=200)):
        with pytest.raises(ExtractionError) as refused:
            extract(fixture.data, fixture.filename, limits)
        assert refused.value.kind == "xml_too_large", refused.value.reason
        assert "XML" in refused.value.reason


def test_a_refused_document_is_not_read_again_until_it_changes(settings: HippoSettings) -> None:
    inbox = settings.vault / "00-inbox"
    (inbox / "bomb.docx").write_bytes(docx_bomb(8))
    resources = build_resources(settings)

    def run() -> dict:
        result = materialize([sources], resources=resources)
        assert result.success
        meta = result.asset_materializations_for_node("sources")[0].metadata
        return {k: v.value for k, v in meta.items()}

    first = run()
    rejected = {r["file"]: r for r in first["rejected_files"]}
    assert rejected["00-inbox/bomb.docx"]["kind"] == "xml_too_large"
    assert first["rejected_as_before"] == []
    second = run()
    assert second["rejected_as_before"] == ["00-inbox/bomb.docx"]  # the verdict, not a second extraction
    assert {r["file"]: r for r in second["rejected_files"]}["00-inbox/bomb.docx"] == rejected[
        "00-inbox/bomb.docx"
    ]
    (inbox / "bomb.docx").write_bytes(docx_bomb(9))  # new bytes: read afresh
    assert run()["rejected_as_before"] == []
    assert (inbox / "bomb.docx").exists()  # a refused file stays in the inbox
