"""`python -m eval.scale_paired`: two librarians serving one kept index at once, each query sent to both."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from eval.scale import MODES
from eval.scale_paired import WARMUP
from hippo_settings import HippoSettings
from tests.conftest import make_vault, run_graph

REPO = Path(__file__).parents[2]
QUERIES = [
    "수면 습관 카페인",
    "caffeine after noon",
    "형태소 분석",
    "How warm should my bedroom be at night?",
]


def test_one_version_against_itself_gives_the_same_results_and_stops_both(
    tmp_path: Path, embed_cache: Path
) -> None:
    # a kept index as `eval.scale --keep` lays it out: vault, hippo-home, dagster-home, queries.json
    settings = HippoSettings(
        vault=make_vault(tmp_path), home=tmp_path / "hippo-home", embed_cache_path=embed_cache
    )
    assert run_graph(settings).success
    (tmp_path / "dagster-home").mkdir()
    queries = [f"{q} {i}" for i in range(WARMUP // len(QUERIES) + 2) for q in QUERIES]
    (tmp_path / "queries.json").write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "paired.json"
    proc = subprocess.run(
        [sys.executable, "-m", "eval.scale_paired", "--reuse", str(tmp_path), "--code-a", str(REPO)]
        + ["--code-b", str(REPO), "--queries", "4", "--clients", "2", "--seconds", "1", "--rounds", "1"]
        + ["--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    for mode in MODES:
        fig = report["paired"][mode]
        assert fig["queries"] == 4 and fig["same_results"] == 4 and fig["degraded"] == 0, mode
        assert fig["before"]["n"] == fig["after"]["n"] == 4 and fig["median_ratio"] > 0
    assert [(r["name"], r["errors"]) for r in report["concurrent"]] == [("before", 0), ("after", 0)]
    assert all(r["requests"] > 0 for r in report["concurrent"])
    assert "| REST hybrid p50 / p95" in proc.stdout and "median paired before / after" in proc.stdout
    assert "processes still alive" not in proc.stderr
    assert proc.stderr.count("stopped hippo serve") == 2
