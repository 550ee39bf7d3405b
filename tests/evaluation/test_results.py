"""eval/results.py: a benchmark's figures with how they were made, in the folder the renderer reads."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from eval.results import ROOT, results_dir, write_result


def test_a_result_records_the_command_commit_date_and_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVAL_RESULTS_DIR", str(tmp_path))
    data = ROOT.parent / "shared" / "eval-data"
    path = write_result("bench", {"sets": {"scifact": {"hit@1": 0.617}}}, [str(data), "--max-queries", "5"])
    assert path == tmp_path / "bench.json" and results_dir() == tmp_path
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["command"] == "python -m eval.bench ../shared/eval-data --max-queries 5"
    assert record["figures"] == {"sets": {"scifact": {"hit@1": 0.617}}}
    assert record["machine"]["cores"] == os.cpu_count() and len(record["machine"]["loadavg"]) == 3
    assert record["date"].endswith("Z") and len(record["commit"]) >= 7
    again = write_result("bench", {"n": 1}, [], module="eval.other")
    assert json.loads(again.read_text(encoding="utf-8"))["command"] == "python -m eval.other"


def test_the_suite_never_writes_the_committed_results() -> None:
    assert results_dir() != ROOT / "eval" / "results"
