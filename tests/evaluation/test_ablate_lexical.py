"""`python -m eval.ablate_lexical` on the tiny bilingual fixture: every variant measured, default first."""

from __future__ import annotations

from pathlib import Path

from eval.ablate_lexical import main, run_set, variants
from hippo_core.ranking.ranking import RankingParams

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "beir-tiny"


def test_every_variant_is_measured_against_the_shipped_analyzer() -> None:
    rows = run_set(TINY, None, 0, RankingParams().lexical_pool)
    by_name = {r["variant"]: r for r in rows}
    assert [r["variant"] for r in rows] == [v.name for v in variants()] and rows[0]["variant"] == "default"
    for r in rows:
        assert all(0.0 <= float(r[m]) <= 1.0 for m in ("hit@1", "mrr@10", "ndcg@10")), r
    # the analyzer really changes: fewer terms without bigrams or compounds, none of the morphemes alone
    assert by_name["no bigrams"]["terms"] < by_name["default"]["terms"]
    assert by_name["no compounds"]["terms"] < by_name["default"]["terms"]
    assert by_name["bigrams only"]["terms"] != by_name["default"]["terms"]
    # query-side weights share the default's index
    assert by_name["bigram ×0.5"]["terms"] == by_name["default"]["terms"]


def test_cli_writes_one_table_per_set(tmp_path: Path) -> None:
    out = tmp_path / "ablation.md"
    assert main([str(TINY.parent), "--sets", TINY.name, "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert f"## {TINY.name}" in text and text.count("| default |") == 1
    assert main([str(TINY.parent), "--sets", "no-such-set"]) == 2
