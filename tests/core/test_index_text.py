from __future__ import annotations

from hippo_core.index.chunking import index_text, link_text


def test_wikilinks_read_as_their_label_not_their_file_slug() -> None:
    assert link_text("[[caffeine-and-sleep|카페인과 수면]]을 보라") == "카페인과 수면을 보라"
    assert (
        link_text("[[Dagster]] and [[note#Head|label]] and [[a#b]] ![[img.png]]")
        == "Dagster and label and a img.png"
    )


def test_index_text_carries_title_and_heading_path() -> None:
    text = index_text("수면 위생", ["수면 위생", "침실 환경"], "see [[x-y|링크]]")
    assert text == "수면 위생\n수면 위생 > 침실 환경\nsee 링크"
