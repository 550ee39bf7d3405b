"""The leave-one-conversation-out chooser of the conversation-context weights."""

from __future__ import annotations

from pathlib import Path

from eval.locomo_context import NEIGHBOUR_GRID, REPLY_GRID, SPEAKER_GRID, choose, loco, render, run
from tests.memory.test_bench_locomo import write_set

A, B = (0.0, 0.0, 0.0), (0.5, 0.2, 0.1)


def test_each_conversation_is_measured_with_a_point_chosen_without_it() -> None:
    conv_of = {"x1": "x", "x2": "x", "y1": "y", "z1": "z"}
    ranks = {
        A: {"x1": 1, "x2": 1, "y1": None, "z1": None},  # best on x only
        B: {"x1": None, "x2": None, "y1": 1, "z1": 1},  # best on y and z
    }
    chosen, left_out = loco(ranks, conv_of)
    # x is left out: chosen on y and z → B, which misses both x questions
    assert chosen == {"x": B, "y": A, "z": A} and left_out == {"x1": None, "x2": None, "y1": None, "z1": None}
    # y left out: on x and z, A finds 2 of 3 and B 1 → A, which misses y1 (z likewise)
    # in-sample, on all four, A and B find 2 each: the tie goes to the smaller weights
    assert choose(ranks, list(conv_of)) == A


def test_a_tie_goes_to_the_smaller_weights() -> None:
    ranks = {A: {"q": 2}, B: {"q": 2}}
    assert choose(ranks, ["q"]) == A


def test_the_grid_runs_through_the_product_search(tmp_path: Path, embed_cache: Path) -> None:
    report = run(write_set(tmp_path / "set"), tmp_path / "work", embed_cache)
    rows = report["rows"]
    assert set(rows) == {"conv-a", "conv-b", "all questions"}
    assert rows["all questions"]["questions"] == 3 and rows["conv-a"]["questions"] == 2
    assert rows["all questions"]["lexical"]["hit@10"] == 1.0  # the tiny set is easy for BM25
    assert len(report["grid"]["conversation_neighbour_weight"]) == len(NEIGHBOUR_GRID)
    assert len(NEIGHBOUR_GRID) * len(REPLY_GRID) * len(SPEAKER_GRID) == 80
    assert "| conv-b | 1 |" in render(report)
