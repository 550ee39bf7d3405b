"""`python -m eval.crosslingual`: the cross-lingual folders are made from the two sides, and the weak
hits are what brings back a semantic-only answer under the floor."""

from __future__ import annotations

import shutil
from pathlib import Path

from eval import crosslingual, loso
from eval.beir import load_beir
from hippo_core.ranking.adaptive_fusion import FusionModel

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "beir-tiny"


def test_make_sets_pairs_one_sides_questions_with_the_other_sides_passages(tmp_path: Path) -> None:
    data = tmp_path / "data"
    for side in ("msmarco-ko", "msmarco-en"):
        shutil.copytree(TINY, data / side)
    (data / "msmarco-en" / "corpus.jsonl").write_text(
        (TINY / "corpus.jsonl").read_text(encoding="utf-8").replace("민수", "Minsu"), encoding="utf-8"
    )
    made = crosslingual.make_sets(data, tmp_path / "out", ["xling-ko2en"])
    assert [f.name for f in made] == ["xling-ko2en"]
    ko2en = load_beir(made[0])
    assert all("민수" not in d.text for d in ko2en.docs)  # the English side's passages
    assert ko2en.queries == load_beir(data / "msmarco-ko").queries  # the Korean side's questions
    assert (made[0] / "corpus.jsonl").is_symlink()


def test_weak_hits_bring_back_a_semantic_only_answer() -> None:
    # no lexical match across languages; the right passage is the best semantic hit but under the floor
    q = loso.QueryLanes("q1", "고양이 이름", ["d1"], [], [("d1", 0.79), ("d2", 0.78), ("d3", 0.70)])
    table = crosslingual.score(loso.SetLanes("x", [q]), FusionModel())
    assert table["fused before (floor drops)"]["hit@10"] == 0.0
    assert table["fused + weak hits"]["hit@10"] == 1.0
    assert table["fused + weak hits"]["hit@1"] == 1.0  # weak hits keep their similarity order
