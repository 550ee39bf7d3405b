"""The extraction benchmark's own measures, and one small run of it."""

from __future__ import annotations

from eval.extraction_bench import fidelity, main


def test_fidelity_counts_characters_in_order() -> None:
    assert fidelity("침실 온도는 18도", "# 침실 온도는\n| 18도 |") == (1.0, 1.0)
    recall, precision = fidelity("abcdefgh", "abcd")
    assert (recall, precision) == (0.5, 1.0)
    recall, precision = fidelity("abcd", "abcdWXYZ")
    assert (recall, precision) == (1.0, 0.5)
    assert fidelity("abc", "") == (0.0, 0.0)


def test_bench_prints_a_row_per_file_for_the_product_reader(capsys) -> None:
    assert main(["--only", "html", "--reps", "1"]) == 0
    out = capsys.readouterr().out
    assert "| html | ko | hippo (lxml) | 100.0 | 100.0 | 100.0 | 100.0 | - |" in out
    assert "| html | en | hippo (lxml) | 100.0 | 100.0 | 100.0 | 100.0 | - |" in out
