"""`python -m eval.report`: every set in one command, with plots and the target checks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from eval.report import check_targets, main

TINY = Path(__file__).parents[1] / "fixtures" / "beir-tiny"


def _metrics(lex: float, sem: float, fused: float) -> dict:
    row = lambda v: {"hit@1": v, "hit@10": v, "mrr@10": v, "ndcg@10": v}  # noqa: E731
    return {"metrics": {"lexical": row(lex), "semantic": row(sem), "fused": row(fused)}}


def test_targets_compare_fused_with_the_better_lane_measured_in_the_same_run() -> None:
    reports = {
        "a": _metrics(0.8, 0.7, 0.85),
        "b": _metrics(0.9, 0.6, 0.88),
        "ko-welfare": _metrics(0.7, 0.8, 0.83),
    }
    checks = {t: ok for t, ok, _ in check_targets(reports)}
    assert checks["a: fused hit@1 ≥ better single lane"] and not checks["b: fused hit@1 ≥ better single lane"]
    assert checks["ko-welfare: fused hit@1 ≥ 0.82"]
    assert not checks["fused strictly better on ≥ 4 sets (Hit@1 and nDCG@10)"]


def test_report_runs_every_set_and_writes_markdown_png_and_json(tmp_path: Path, embed_cache: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(TINY, data / "with-conv")
    plain = data / "no-conv"
    plain.mkdir()
    for name in ("corpus.jsonl", "queries.jsonl"):
        rows = [
            json.loads(line)
            for line in (TINY / name).read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
        for row in rows:
            row.pop("conv", None)
        (plain / name).write_text(
            "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8"
        )
    shutil.copy(TINY / "qrels.tsv", plain / "qrels.tsv")
    out = tmp_path / "out"
    assert main([str(data), "--out", str(out), "--cache", str(embed_cache)]) == 0
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "| with-conv | per-conversation |" in report and "| no-conv | whole corpus |" in report
    assert "## Targets" in report and "fused hit@1 ≥ better single lane" in report
    fusion = report.split("## Fusion")[1].split("## Targets")[0]
    assert fusion.count("| with-conv |") == 1 and fusion.count("| no-conv |") == 1  # RRF measured beside it
    assert (out / "lanes.png").read_bytes()[:4] == b"\x89PNG"
    assert set(json.loads((out / "report.json").read_text())) == {"with-conv", "no-conv"}
    assert main([str(tmp_path / "missing"), "--out", str(out)]) == 2
