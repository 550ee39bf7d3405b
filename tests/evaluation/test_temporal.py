"""eval/temporal.py end to end in lexical mode: each question's folder indexed by the product's assets and
asked at its `now` (and a KU question as of `ku.as_of`); `--qids` asks a sample; `--reuse-hits` re-ranks a
run's hits without indexing or searching again."""

from __future__ import annotations

import json
from pathlib import Path

from eval import temporal
from tests.evaluation.temporal_set import temporal_set


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_benchmark_asks_each_question_now_and_as_of_and_a_sample_with_qids(tmp_path: Path) -> None:
    folder = temporal_set(tmp_path / "set")
    work, cache = tmp_path / "work", tmp_path / "embed.sqlite"
    sample = tmp_path / "sample.txt"
    sample.write_text("# the TR question alone\ntr1  # tomatoes\n", encoding="utf-8")
    out = tmp_path / "sample.jsonl"
    args = ["--mode", "lexical", "--work", str(work), "--cache", str(cache)]
    assert temporal.main([str(folder), *args, "--out", str(out), "--qids", str(sample)]) == 0
    assert [(row["qid"], row["probe"]) for row in _lines(out)] == [("tr1", "now")]
    report = json.loads(out.with_suffix(".report.json").read_text(encoding="utf-8"))
    assert report["questions"] == 1 and report["sample"].startswith("1 question")

    full = tmp_path / "full.jsonl"
    assert temporal.main([str(folder), *args, "--out", str(full)]) == 0
    rows = {(row["qid"], row["probe"]): row["ranked"] for row in _lines(full)}
    assert set(rows) == {("ku1", "now"), ("ku1", "asof"), ("tr1", "now")}
    # now: November's 25 postcards above August's 17; as of September 30th November is masked
    assert rows[("ku1", "now")][0].startswith("vault/ku1/2023-11-20-s03.md#")
    assert rows[("ku1", "asof")][0].startswith("vault/ku1/2023-08-10-s01.md#")
    assert not any("2023-11-20" in anchor for anchor in rows[("ku1", "asof")])
    product = json.loads(full.with_suffix(".report.json").read_text(encoding="utf-8"))["product"]
    assert product["knowledge-update"]["current_first"] == 1.0
    assert product["knowledge-update"]["asof_hit@1"] == 1.0 and product["knowledge-update"]["leak@10"] == 0.0
    assert product["temporal-reasoning"]["hit@5"] == 1.0

    again = tmp_path / "again.jsonl"
    hits = full.with_suffix(".hits.jsonl")
    assert temporal.main([str(folder), *args, "--out", str(again), "--reuse-hits", str(hits)]) == 0
    assert _lines(again) == _lines(full)
