"""`python -m eval.fusion_sweep` on the tiny fixture: lanes once, every fusion setting on the same lists."""

from __future__ import annotations

from pathlib import Path

from eval.fusion_sweep import main, sweep_set

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "beir-tiny"


def test_every_share_and_rrf_are_scored_on_the_same_lanes(embed_cache: Path, capsys) -> None:  # noqa: ANN001
    name, table = sweep_set(TINY, [0.0, 1.0], None, embed_cache)
    assert name == "beir-tiny"
    assert set(table) == {"lexical", "semantic", "convex 0.0", "convex 1.0", "rrf (k 10, 0.7/1.0)"}
    # a share of 1.0 orders lexical hits by BM25 alone; semantic-only hits only come after them, so they can
    # only fill in where BM25 found nothing (the fixture's cross-lingual question)
    assert table["convex 1.0"]["hit@1"] >= table["lexical"]["hit@1"]
    assert (
        table["convex 1.0"]["hit@1"] != table["convex 0.0"]["hit@1"]
        or table["convex 1.0"] != table["convex 0.0"]
    )
    assert all(0.0 <= m["ndcg@10"] <= 1.0 for m in table.values())
    assert (
        main([str(TINY.parent), "--sets", "beir-tiny", "--shares", "0.6", "--cache", str(embed_cache)]) == 0
    )
    assert "| beir-tiny | convex 0.6 |" in capsys.readouterr().out
    assert main([str(TINY.parent), "--shares", "1.5"]) == 2
