"""eval/temporal_plain.py: plain BM25 over a question's sessions, by session and by turn, with the metrics of
eval/temporal.py; an `asof` probe leaves the sessions dated after `ku.as_of` out."""

from __future__ import annotations

from pathlib import Path

from eval import temporal_plain
from tests.evaluation.temporal_set import temporal_set


def test_a_turn_is_the_text_under_its_heading_and_a_session_the_whole_body() -> None:
    note = (
        "---\ndate: 2023-01-01\n---\n\n# Chat\n\n## Turn 01 - user\n\nhello\n\n## Turn 02 - assistant\n\nhi\n"
    )
    assert [t.strip() for t in temporal_plain.units(note, "turn")] == ["hello", "hi"]
    (whole,) = temporal_plain.units(note, "session")
    assert "hello" in whole and "hi" in whole and "date:" not in whole


def test_plain_bm25_scores_both_grains_and_masks_newer_sessions_as_of(tmp_path: Path) -> None:
    report = temporal_plain.run(temporal_set(tmp_path))
    assert report["questions"] == 2  # the abstention is not scored
    for grain in temporal_plain.GRAINS:
        ku = report[grain]["knowledge-update"]
        # as of September only the August session can answer, and nothing from November is shown
        assert ku["asof_hit@1"] == 1.0 and ku["leak@10"] == 0.0 and ku["hit@10"] == 1.0
    # by session the evidence holds both words twice and comes first; by turn the one turn holding both
    # (March 5th) beats each of the evidence's turns, which hold one word each, and the evidence is second
    assert report["session"]["temporal-reasoning"]["hit@1"] == 1.0
    assert report["turn"]["temporal-reasoning"]["hit@1"] == 0.0
    assert report["turn"]["temporal-reasoning"]["hit@5"] == 1.0
    table = temporal_plain.render(report)
    assert "| by session |" in table and "| by turn |" in table


def test_a_folder_without_questions_is_refused(tmp_path: Path) -> None:
    assert temporal_plain.main([str(tmp_path)]) == 2
