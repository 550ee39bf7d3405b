"""The BEIR benchmark on a tiny bilingual fixture, with the real tokenizer, embedder and Chroma.

The fixture (`tests/fixtures/beir-tiny`) has three conversations; several queries have a decoy in
another conversation, so per-conversation filtering is visible in the rankings.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from eval import beir as beir_mod
from eval import bench
from eval.beir import BeirError, load_beir, passage_text
from hippo_assets.quality.metrics import METRICS, evaluate, hit_at_k, ndcg_at_k, reciprocal_rank, score_query
from hippo_core.ranking.ranking import RankingParams

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "beir-tiny"
LANES = ("lexical", "semantic", "fused", *bench.DIAGNOSTICS)


# --- metrics, by hand ---------------------------------------------------------------------------
def test_metrics_single_relevant_at_rank_two() -> None:
    ranked = ["a", "b", "c"]
    assert hit_at_k(ranked, {"b"}, 1) == 0.0
    assert hit_at_k(ranked, {"b"}, 10) == 1.0
    assert reciprocal_rank(ranked, {"b"}) == 0.5
    assert ndcg_at_k(ranked, {"b"}) == pytest.approx(1 / math.log2(3))  # 0.6309


def test_metrics_two_relevant() -> None:
    # DCG = 1/log2(2) + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3) = 1.6309
    assert ndcg_at_k(["a", "b", "c"], {"a", "c"}) == pytest.approx(1.5 / (1 + 1 / math.log2(3)))
    assert score_query(["a", "b", "c"], {"a", "c"})["mrr@10"] == 1.0
    # the ideal list counts every relevant doc, even one that was never retrieved
    assert ndcg_at_k(["a"], {"a", "z"}) == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_metrics_cut_at_k_and_empty() -> None:
    ranked = [f"d{i}" for i in range(20)]
    assert hit_at_k(ranked, {"d10"}, 10) == 0.0  # rank 11
    assert reciprocal_rank(ranked, {"d10"}, 10) == 0.0
    assert ndcg_at_k(ranked, {"d9"}, 10) == pytest.approx(1 / math.log2(11))
    assert score_query([], {"a"}) == dict.fromkeys(METRICS, 0.0)
    assert ndcg_at_k(["a"], set()) == 0.0


def test_evaluate_means_and_missing_runs() -> None:
    runs = {"q1": ["a", "b"], "q2": ["x", "y"]}
    qrels = {"q1": {"a"}, "q2": {"y"}, "q3": {"z"}}
    got = evaluate(runs, qrels, ["q1", "q2", "q3"])  # q3 has no run: it scores 0
    assert got["hit@1"] == pytest.approx(1 / 3)
    assert got["hit@10"] == pytest.approx(2 / 3)
    assert got["mrr@10"] == pytest.approx((1 + 0.5) / 3)
    assert got["ndcg@10"] == pytest.approx((1 + 1 / math.log2(3)) / 3)


# --- loader -------------------------------------------------------------------------------------
def test_loader_reads_fixture() -> None:
    beir = load_beir(TINY)
    assert len(beir.docs) == 12
    assert {d.extra["conv"] for d in beir.docs} == {"conv-a", "conv-b", "conv-c"}
    assert len(beir.queries) == 10
    assert len(beir.evaluable_queries()) == 9  # `qx` has no qrels
    assert beir.qrels["qc3"] == {"c1", "c3"}  # the score-0 pair is not relevant
    a3 = next(d for d in beir.docs if d.id == "a3")
    assert passage_text(a3).startswith("검색 엔진 프로젝트\n")
    assert not passage_text(beir.docs[0]).startswith("\n")


def _copy_tiny(tmp_path: Path) -> Path:
    folder = tmp_path / "set"
    shutil.copytree(TINY, folder)
    return folder


def test_loader_names_bad_json_line(tmp_path: Path) -> None:
    folder = _copy_tiny(tmp_path)
    lines = (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    lines[2] = '{"_id": "a3", "text": '
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(BeirError, match=r"corpus\.jsonl:3: not valid JSON"):
        load_beir(folder)


# --- the benchmark, end to end ------------------------------------------------------------------
@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bench-cache") / "embed.sqlite"


@pytest.fixture(scope="module")
def results(cache: Path) -> dict[str, bench.BenchResult]:
    """Whole corpus first (embeds the 12 docs), then per conversation (adds 9 exchange rows), then again."""
    options = bench.BenchOptions(
        cache=cache,
        by="category",
        variants={"same": RankingParams(), "rrf60": RankingParams(fusion="rrf", rrf_k=60)},
    )
    whole = bench.run_benchmark(TINY, options)
    per_conv = bench.run_benchmark(TINY, bench.BenchOptions(cache=cache, per_conversation=True))
    again = bench.run_benchmark(TINY, bench.BenchOptions(cache=cache, per_conversation=True))
    return {"whole": whole, "per_conv": per_conv, "again": again}


@pytest.mark.parametrize("mode", ["whole", "per_conv"])
def test_every_lane_has_metrics_in_unit_range(results: dict[str, bench.BenchResult], mode: str) -> None:
    report = results[mode].report
    assert report["queries"]["evaluated"] == 9
    for lane in LANES:
        for name in METRICS:
            assert 0.0 <= report["metrics"][lane][name] <= 1.0, (lane, name)
    # not degenerate: the fixture is easy, every lane finds most answers
    for lane in ("lexical", "semantic", "fused"):
        assert report["metrics"][lane]["hit@10"] >= 0.5, lane
    for lane in ("lexical", "semantic", "fused"):
        lat = report["latency"][lane]
        assert lat["p50_ms"] is not None and 0 <= lat["p50_ms"] <= lat["p95_ms"]
    exchanges = 9 if mode == "per_conv" else 0  # 3 conversations of 4 turns: each turn after the first
    assert report["corpus"]["exchange_rows"] == exchanges
    assert report["build"]["embed_vectors"] == 12 + exchanges
    assert report["rank_bm25"]["identical"] == report["rank_bm25"]["queries"] == 9


def test_rerun_embeds_nothing(results: dict[str, bench.BenchResult]) -> None:
    assert (
        results["whole"].report["build"]["embed_computed"]
        + results["whole"].report["build"]["embed_from_cache"]
        == 12
    )
    assert results["per_conv"].report["build"]["embed_from_cache"] == 12  # the docs; exchanges are new
    assert results["per_conv"].report["build"]["embed_computed"] == 9
    assert results["again"].report["build"]["embed_from_cache"] == 21
    assert results["again"].report["build"]["embed_computed"] == 0
    assert results["again"].runs == results["per_conv"].runs


def test_exchange_rows_carry_the_previous_turn_and_rank_as_their_doc(
    results: dict[str, bench.BenchResult],
) -> None:
    beir = load_beir(TINY)
    rows = beir_mod.index_rows(beir.docs, exchanges=True)
    by_id = {d.id: d for d in beir.docs}
    exchange = [r for r in rows if r[0].endswith(beir_mod.EXCHANGE_SUFFIX)]
    assert len(rows) == 21 and len(exchange) == 9 and len({r[0] for r in rows}) == 21
    for row_id, pos, text in exchange:
        doc = beir.docs[pos]
        assert row_id == doc.id + beir_mod.EXCHANGE_SUFFIX and text.endswith(passage_text(doc))
        before = [d for d in beir.docs[:pos] if d.extra["conv"] == doc.extra["conv"]][-1]
        assert passage_text(before)[-20:] in text
    assert beir_mod.index_rows(beir.docs, exchanges=False) == [
        (d.id, i, passage_text(d)) for i, d in enumerate(beir.docs)
    ]
    # every ranked list names corpus docs, each at most once
    for lane, runs in results["per_conv"].runs.items():
        for ids in runs.values():
            assert len(ids) == len(set(ids)) and all(d in by_id for d in ids), lane


def test_per_conversation_never_crosses_conversations(results: dict[str, bench.BenchResult]) -> None:
    beir = load_beir(TINY)
    doc_conv = {d.id: d.extra["conv"] for d in beir.docs}
    query_conv = {q.id: q.extra["conv"] for q in beir.queries}
    runs = results["per_conv"].runs
    returned = 0
    for lane in LANES:
        for qid, ids in runs[lane].items():
            assert all(doc_conv[d] == query_conv[qid] for d in ids), (lane, qid, ids)
            returned += len(ids)
    assert returned > 0
    # without the filter the semantic lane (pool 60 > 12 docs) returns every conversation
    whole = results["whole"].runs["semantic"]
    assert any(doc_conv[d] != query_conv[qid] for qid, ids in whole.items() for d in ids)


def test_fused_respects_the_semantic_floor(results: dict[str, bench.BenchResult]) -> None:
    report = results["whole"].report
    # fused ⊆ floor-off fused, and the floor can only remove candidates
    for qid, ids in results["whole"].runs["fused"].items():
        assert len(ids) <= len(results["whole"].runs[bench.NO_FLOOR][qid])
    assert 0 <= report["zero_results"]["fused"] <= report["queries"]["evaluated"]
    assert set(report["groups"]) == {"cross-lingual", "multi-hop", "single-hop"}
    # on 12 docs Chroma's HNSW search is exact
    assert report["fusion"]["hnsw_top10_overlap_mean"] == 1.0


def test_variants_reuse_the_same_lanes(results: dict[str, bench.BenchResult]) -> None:
    runs = results["whole"].runs
    assert runs["variant:same"] == runs["fused"]  # same params, same lane results → same fused list
    assert set(runs["variant:rrf60"]) == set(runs["fused"])  # same candidates, another order
    assert results["whole"].report["variants"] == {"same": {}, "rrf60": {"fusion": "rrf", "rrf_k": 60}}


def test_parse_variant() -> None:
    name, params = bench.parse_variant("k60:rrf_k=60,lexical_weight=1,semantic_floor=-1", RankingParams())
    assert name == "k60"
    assert (params.rrf_k, params.lexical_weight, params.semantic_floor) == (60, 1.0, -1.0)
    for bad in ("k60", "k60:", "x:nope=1", "x:rrf_k=0"):
        with pytest.raises(ValueError, match="--variant"):
            bench.parse_variant(bad, RankingParams())


def test_cli_prints_markdown_and_writes_json(
    cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], results: dict[str, bench.BenchResult]
) -> None:
    out = tmp_path / "out" / "bench.json"
    args = [str(TINY), "--cache", str(cache), "--json", str(out), "--max-queries", "5", "--quiet"]
    assert bench.main(args) == 0
    stdout = capsys.readouterr().out
    assert "| lane | Hit@1 | Hit@10 | MRR@10 | nDCG@10 |" in stdout
    assert "fused (convex + floor)" in stdout
    payload = json.loads(out.read_text(encoding="utf-8"))
    (report,) = payload["results"]
    assert report["queries"]["evaluated"] == 5 and report["queries"]["sampled"]
    assert report["build"]["embed_from_cache"] == 12


def test_sample_is_deterministic() -> None:
    beir = load_beir(TINY)
    first = [q.id for q in beir_mod.select_queries(beir, 4, seed=7)]
    assert first == [q.id for q in beir_mod.select_queries(beir, 4, seed=7)]
    assert len(first) == 4 and "qx" not in first


# --- bad input → exit 2 with a message ------------------------------------------------------------
def test_missing_qrels_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], cache: Path) -> None:
    folder = _copy_tiny(tmp_path)
    (folder / "qrels.tsv").unlink()
    assert bench.main([str(folder), "--cache", str(cache), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "qrels.tsv" in err and "not found" in err


def test_bad_json_line_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], cache: Path) -> None:
    folder = _copy_tiny(tmp_path)
    with open(folder / "queries.jsonl", "a", encoding="utf-8") as fh:
        fh.write("this is not json\n")
    assert bench.main([str(folder), "--cache", str(cache), "--quiet"]) == 2
    assert "queries.jsonl:11: not valid JSON" in capsys.readouterr().err


def test_per_conversation_without_conv_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cache: Path
) -> None:
    folder = _copy_tiny(tmp_path)
    rows = [json.loads(line) for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    del rows[1]["conv"]
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    assert bench.main([str(folder), "--per-conversation", "--cache", str(cache), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "'qa2'" in err and "`conv`" in err
    # every folder is loaded and checked before anything is built: a bad last folder fails fast
    assert bench.main([str(TINY), str(tmp_path / "nope"), "--cache", str(cache), "--quiet"]) == 2
    assert "nope" in capsys.readouterr().err
