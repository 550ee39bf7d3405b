"""docs/benchmarks/ is what `python -m eval.render_docs` makes of eval/results/, and never goes stale."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.render_docs import GENERATED, OUT, main, render
from eval.results import RESULTS, write_result


def test_the_committed_pages_are_rendered_from_the_committed_results() -> None:
    pages = render(RESULTS)
    committed = {p.name: p.read_text(encoding="utf-8") for p in OUT.glob("*.md")}
    assert committed == pages, "run `python -m eval.render_docs` and commit docs/benchmarks/"


def test_a_new_result_becomes_a_page_and_a_row_of_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results, out = tmp_path / "results", tmp_path / "pages"
    monkeypatch.setenv("EVAL_RESULTS_DIR", str(results))
    figures = {
        "Hit@1": {"scifact": {"queries": 300, "lexical": 0.577, "fused": 0.62}},
        "readers": [
            {"format": "pdf", "reader": "hippo", "ms/doc": 12.5},
            {"format": "pdf", "reader": "pypdf"},
        ],
        "docs": 464,
    }
    write_result("bench", figures, ["../shared/eval-data/scifact", "--max-queries", "300"])
    (out / "gone.md").parent.mkdir(parents=True)
    (out / "gone.md").write_text(GENERATED + "\n\n# gone\n", encoding="utf-8")
    assert main(["--results", str(results), "--out", str(out)]) == 0
    page = (out / "bench.md").read_text(encoding="utf-8")
    assert "python -m eval.bench ../shared/eval-data/scifact --max-queries 300" in page
    assert "| scifact | 300 | 0.577 | 0.620 |" in page
    assert "| pdf | hippo | 12.5 |" in page and "| pdf | pypdf | – |" in page and "- docs: 464" in page
    assert "[bench](bench.md)" in (out / "index.md").read_text(encoding="utf-8")
    assert not (out / "gone.md").exists()  # a page whose result is gone is removed
