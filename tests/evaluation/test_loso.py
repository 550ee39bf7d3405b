"""`python -m eval.loso`: lanes dumped once, every choice made without the set it is measured on."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval import loso
from hippo_core.ranking.ranking import RankingParams, fuse_with_weak

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "beir-tiny"


def _query(i: int, lexical_right: bool) -> loso.QueryLanes:
    """Two candidates; `r` is relevant. One lane puts it far ahead, the other puts `w` far ahead."""
    good, bad = [(f"r{i}", 10.0), (f"w{i}", 1.0)], [(f"w{i}", 10.0), (f"r{i}", 1.0)]
    sims_good, sims_bad = [(f"r{i}", 0.95), (f"w{i}", 0.85)], [(f"w{i}", 0.95), (f"r{i}", 0.85)]
    return loso.QueryLanes(
        id=f"q{i}",
        text=f"query {i}",
        relevant=[f"r{i}"],
        lexical=good if lexical_right else bad,
        semantic=sims_bad if lexical_right else sims_good,
    )


def _set(name: str, lexical_right: bool, n: int = 6) -> loso.SetLanes:
    return loso.SetLanes(name, [_query(i, lexical_right) for i in range(n)], {"set": name})


def test_a_set_left_out_never_chooses_its_own_share(tmp_path: Path) -> None:
    # "lexset" is the only set where BM25 is right; the other two want the semantic lane.
    for s in (_set("lexset", True), _set("sem1", False), _set("sem2", False)):
        loso.write_dump(tmp_path / f"{s.name}.json.gz", s)
    sets = loso.load_dumps(tmp_path)
    assert [s.name for s in sets] == ["lexset", "sem1", "sem2"]
    results = loso.loso(sets)
    lex = results["lexset"]
    assert lex["trained_on"] == ["sem1", "sem2"]
    # chosen on the semantic sets: a low share, although the set alone would pick a high one
    assert lex["fixed_share"] <= 0.5 < lex["in_sample_best_share"]
    assert lex["rows"]["fixed share (LOSO)"]["hit@1"] == 0.0
    assert lex["rows"]["lexical"]["hit@1"] == 1.0
    # with lexset among the training sets the semantic sets still get a semantic-leaning share
    assert results["sem1"]["trained_on"] == ["lexset", "sem2"]
    assert results["sem1"]["fixed_share"] <= 0.5
    assert results["sem1"]["rows"]["fixed share (LOSO)"]["hit@1"] == 1.0
    assert "| lexset | 6 | fixed share (LOSO) | 0.000 |" in loso.render(results)


def test_grid_fusion_matches_the_product_fusion(tmp_path: Path, embed_cache: Path) -> None:
    path = loso.dump_set(TINY, tmp_path, cache=embed_cache, embed_passages=True)
    lanes = loso.load_dump(path)
    assert lanes.meta["mode"] == "per-conversation" and lanes.queries
    params = RankingParams()
    for q in lanes.queries:
        assert q.lexical or q.semantic
        for share, ranked in zip(loso.GRID, loso.grid_ranked(q, params), strict=True):
            kept, weak = fuse_with_weak(
                q.lexical, q.semantic, params.model_copy(update={"lexical_share": share})
            )
            assert ranked == loso.to_docs([c.chunk_id for c in kept + weak])[:10]


def test_dump_refuses_passages_not_in_the_cache(tmp_path: Path) -> None:
    with pytest.raises(loso.LosoError, match="not in"):
        loso.dump_set(TINY, tmp_path / "d", cache=tmp_path / "empty.sqlite")


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for s in (_set("lexset", True), _set("sem1", False), _set("sem2", False)):
        loso.write_dump(tmp_path / f"{s.name}.json.gz", s)
    assert loso.main(["--dumps", str(tmp_path), "--json", str(tmp_path / "r.json")]) == 0
    assert "adaptive (LOSO)" in capsys.readouterr().out
    out = tmp_path / "model.json"
    assert loso.main(["train", "--dumps", str(tmp_path), "--out", str(out)]) == 0
    assert '"command": "python -m eval.loso train"' in out.read_text()
    assert loso.main(["run", "--dumps", str(tmp_path), "--sets", "nope"]) == 2
    assert loso.main(["run", "--dumps", str(tmp_path / "none")]) == 2


def test_rerank_row_through_a_real_server(
    tmp_path: Path, embed_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.fake_rerank import RerankServer

    dumps = tmp_path / "dumps"
    loso.dump_set(TINY, dumps, cache=embed_cache, embed_passages=True)
    # a second set: the same lanes under another name (LOSO needs two)
    other = loso.load_dump(dumps / "beir-tiny.json.gz")
    other.name = "beir-tiny-copy"
    loso.write_dump(dumps / "beir-tiny-copy.json.gz", other)
    server = RerankServer()
    try:
        server.mode = "vllm"
        assert loso.main(["run", "--dumps", str(dumps), "--rerank-url", server.url]) == 0
        assert server.bodies and "documents" in server.bodies[-1]
        assert "| beir-tiny | 9 | adaptive + rerank |" in capsys.readouterr().out
        server.mode = "500"
        results = loso.loso(loso.load_dumps(dumps), reranker=loso.Reranker(url=server.url))
        rows = results["beir-tiny"]["rows"]
        assert rows["adaptive + rerank"]["degraded"] == 9  # every query fell back to the fused order
        assert rows["adaptive + rerank"]["hit@1"] == rows["adaptive (LOSO)"]["hit@1"]
    finally:
        server.close()


def test_cached_subset_keeps_only_embedded_docs_and_the_queries_they_answer(
    tmp_path: Path, embed_cache: Path
) -> None:
    import shutil

    from eval.beir import index_rows, load_beir
    from hippo_resources.embedder import Embedder

    beir = load_beir(TINY)
    rows = index_rows(beir.docs, exchanges=True)
    cache = tmp_path / "part.sqlite"
    if embed_cache.exists():
        shutil.copy(embed_cache, cache)
    Embedder(cache_path=str(cache)).embed([r[2] for r in rows], role="passage")  # all, from the shared cache
    # drop the rows of one doc from the copy: that doc and the queries it answers leave the subset
    gone = beir.docs[0].id
    embedder = Embedder(cache_path=str(cache))
    import sqlite3

    with sqlite3.connect(cache) as conn:
        for r in rows:
            if beir.docs[r[1]].id == gone:
                conn.execute("DELETE FROM vectors WHERE embed_hash = ?", (embedder.hash_for(r[2]),))
    with pytest.raises(loso.LosoError, match="not in"):
        loso.dump_set(TINY, tmp_path / "d", cache=cache)
    path = loso.dump_set(TINY, tmp_path / "d", cache=cache, cached_subset=True)
    lanes = loso.load_dump(path)
    assert lanes.name == "beir-tiny-subset" and lanes.meta["subset"]["docs"] == len(beir.docs) - 1
    answered_by_gone = {q for q, rel in beir.qrels.items() if gone in rel}
    assert answered_by_gone and not answered_by_gone & {q.id for q in lanes.queries}
    assert all(loso.row_doc(c) != gone for q in lanes.queries for c, _ in q.lexical + q.semantic)


def test_cuts_keep_whole_conversations_or_answers_plus_distractors(tmp_path: Path, embed_cache: Path) -> None:
    import json

    from eval.beir import conv_of, load_beir

    beir = load_beir(TINY)
    conv_docs = {d.id for d in beir.docs if conv_of(d.extra) == "conv-a"}
    lanes = loso.load_dump(
        loso.dump_set(TINY, tmp_path / "c", cache=embed_cache, embed_passages=True, conversations="conv-a")
    )
    assert lanes.name == "beir-tiny-conv-a" and lanes.meta["subset"]["conversations"] == ["conv-a"]
    assert lanes.queries and all(set(q.relevant) <= conv_docs for q in lanes.queries)
    assert all(loso.row_doc(c) in conv_docs for q in lanes.queries for c, _ in q.lexical + q.semantic)
    with pytest.raises(loso.LosoError, match="no conversation"):
        loso.dump_set(TINY, tmp_path / "c", cache=embed_cache, conversations="conv-zz")
    # the same set without conversations: a whole corpus, cut to one query's answers plus two other docs
    flat = tmp_path / "flat"
    flat.mkdir()
    for name in ("queries.jsonl", "qrels.tsv"):
        (flat / name).write_text((TINY / name).read_text(encoding="utf-8"), encoding="utf-8")
    rows = [json.loads(x) for x in (TINY / "corpus.jsonl").read_text(encoding="utf-8").splitlines() if x]
    (flat / "corpus.jsonl").write_text(
        "".join(json.dumps({k: v for k, v in r.items() if k != "conv"}) + "\n" for r in rows),
        encoding="utf-8",
    )
    cut = loso.load_dump(
        loso.dump_set(
            flat, tmp_path / "f", cache=embed_cache, embed_passages=True, doc_sample=1, distractors=2
        )
    )
    kept = {loso.row_doc(c) for q in cut.queries for c, _ in q.lexical + q.semantic}
    assert cut.name == "flat-sample1-d2" and cut.meta["subset"]["docs"] >= 3
    assert len(kept) <= cut.meta["subset"]["docs"] and all(set(q.relevant) <= kept for q in cut.queries)


def _floor_set(name: str, needs_no_floor: bool, n: int = 4) -> loso.SetLanes:
    """`z` is relevant. needs_no_floor: BM25 finds only the wrong `a`, and `z` is a semantic-only hit under
    the product's floor (0.78 < 0.80): weak, listed after `a`. Otherwise BM25 finds `z` and the
    semantic-only `a` under the floor is the wrong one."""
    queries = []
    for i in range(n):
        right, wrong = f"z{i}", f"a{i}"
        if needs_no_floor:
            lexical, semantic = [(wrong, 10.0)], [(right, 0.78), (wrong, 0.70)]
        else:
            lexical, semantic = [(right, 10.0)], [(wrong, 0.78), (right, 0.70)]
        queries.append(loso.QueryLanes(f"q{i}", f"query {i}", [right], lexical, semantic))
    return loso.SetLanes(name, queries, {"set": name})


def test_the_floor_is_chosen_with_the_share_without_the_set_left_out() -> None:
    sets = [_floor_set("low1", True), _floor_set("low2", True), _floor_set("high", False)]
    results = loso.loso(sets)
    high = results["high"]
    # chosen on low1 and low2, which need the floor lowered to the pool's median (pool < 5: -1) and a
    # share under 0.5; on "high" that lists the wrong semantic-only hit first
    assert high["floor"] == {"semantic_floor": -1.0, "semantic_margin": 0.0, "share": 0.45}
    assert high["rows"]["share + floor (LOSO)"]["hit@1"] == 0.0
    assert high["rows"]["fixed share (LOSO)"]["hit@1"] == 1.0  # the product's floor keeps `a` weak
    # low1 left out: on low2 and high the two floors tie (one set each): the product's floor is kept
    assert results["low1"]["floor"]["semantic_floor"] == loso.FLOORS[0][0]
    assert results["low1"]["rows"]["share + floor (LOSO)"]["hit@1"] == 0.0
    assert "share + floor (LOSO): ≥ better lane" in loso.render(results)
