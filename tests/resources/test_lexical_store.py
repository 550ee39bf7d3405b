"""BM25 generations on disk: atomic switch through CURRENT.json, readers keep their view, pruning."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from hippo_core.bm25 import BM25Index
from hippo_core.tokenize import Tokenizer
from hippo_resources import LexicalStore
from hippo_resources.lexical_store import CHUNK_TABLE, MANIFEST

OLD = ["커피를 마시고 낮잠을 잔다.", "Dagster assets carry lineage.", "형태소 분석기 Kiwi"]
NEW = ["벡터 검색은 코사인 유사도를 쓴다.", "BM25 scores terms by frequency.", "커피 대신 차를 마신다."]


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer()


def build(tokenizer: Tokenizer, texts: list[str]) -> tuple[BM25Index, pl.DataFrame]:
    index = BM25Index.build(tokenizer.tokenize_many(texts), analyzer=tokenizer.fingerprint())
    table = pl.DataFrame({"chunk_id": [f"c{i}" for i in range(len(texts))], "text": texts})
    return index, table


def generations(root: Path) -> list[str]:
    return sorted(p.name for p in root.glob("gen-*") if p.is_dir())


def leftovers(root: Path) -> list[str]:
    return sorted(
        p.name for p in root.iterdir() if p.name.startswith(".") or p.name.endswith((".tmp", ".partial"))
    )


def test_no_manifest_before_the_first_build(tmp_path: Path) -> None:
    assert LexicalStore(root=str(tmp_path / "lexical")).manifest() is None


def test_write_makes_the_generation_live_through_the_manifest(tmp_path: Path, tokenizer: Tokenizer) -> None:
    store = LexicalStore(root=str(tmp_path / "lexical"))
    index, table = build(tokenizer, OLD)
    name = store.write_generation(index, table, {"chunks": 3, "analyzer": tokenizer.fingerprint()})
    manifest = json.loads((store.path / MANIFEST).read_text(encoding="utf-8"))
    assert manifest == store.manifest()
    assert manifest["generation"] == name and name.startswith("gen-")
    assert (manifest["chunks"], manifest["analyzer"]) == (3, tokenizer.fingerprint())
    assert manifest["created"]
    assert (store.path / name / CHUNK_TABLE).is_file()
    loaded, loaded_table = store.load(name)
    assert loaded_table.equals(table)
    assert loaded.analyzer == tokenizer.fingerprint()
    query = tokenizer.query_tokens("커피 낮잠")
    assert loaded.top_k(query, 1) == index.top_k(query, 1) and loaded.top_k(query, 1)[0][0] == 0
    assert leftovers(store.path) == []


def test_a_reader_keeps_its_generation_after_a_new_one_goes_live(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    store = LexicalStore(root=str(tmp_path / "lexical"))
    old_name = store.write_generation(*build(tokenizer, OLD), {})
    old_index, old_table = store.load(store.manifest()["generation"])  # a reader loads the live one
    query = tokenizer.query_tokens("커피")
    before = old_index.scores(query).tolist()

    new_name = store.write_generation(*build(tokenizer, NEW), {})
    assert store.manifest()["generation"] == new_name != old_name
    assert old_index.scores(query).tolist() == before  # the reader's view did not change
    assert old_table["text"].to_list() == OLD
    assert old_index.top_k(query, 1)[0][0] == 0  # still answers from the old texts
    reloaded, table = store.load(store.manifest()["generation"])
    assert table["text"].to_list() == NEW
    assert reloaded.top_k(query, 1)[0][0] == 2
    # a reader that read the manifest just before the switch can still open the old generation
    assert store.load(old_name)[1]["text"].to_list() == OLD


def test_old_generations_are_pruned_to_keep_generations(tmp_path: Path, tokenizer: Tokenizer) -> None:
    store = LexicalStore(root=str(tmp_path / "lexical"), keep_generations=2)
    parts = build(tokenizer, OLD)
    # four generations from the past (names sort before today's), each a complete generation
    for day in range(1, 5):
        written = store.write_generation(*parts, {"day": day})
        (store.path / written).rename(store.path / f"gen-2000010{day}T000000-000000")
    newest = store.write_generation(*parts, {"day": 5})
    assert generations(store.path) == ["gen-20000104T000000-000000", newest]
    assert store.manifest()["generation"] == newest and store.manifest()["day"] == 5
    assert store.load(newest)[1].height == 3
    assert leftovers(store.path) == []


def test_a_crashed_write_leaves_the_live_generation_alone_and_is_cleaned_up(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    store = LexicalStore(root=str(tmp_path / "lexical"))
    live = store.write_generation(*build(tokenizer, OLD), {})
    crashed = store.path / ".gen-20000101T000000-000001.partial"  # what a killed writer leaves
    crashed.mkdir()
    (crashed / "bm25.json").write_text("{half", encoding="utf-8")
    (store.path / f".{MANIFEST}.tmp").write_text("{half", encoding="utf-8")
    assert store.manifest()["generation"] == live  # readers never see the half-written files
    assert store.load(live)[1]["text"].to_list() == OLD
    store.write_generation(*build(tokenizer, NEW), {})
    assert not crashed.exists()
    assert leftovers(store.path) == []


def test_generation_names_sort_in_the_order_they_were_written(tmp_path: Path, tokenizer: Tokenizer) -> None:
    store = LexicalStore(root=str(tmp_path / "lexical"), keep_generations=100)
    parts = build(tokenizer, OLD)
    names = [store.write_generation(*parts, {}) for _ in range(30)]  # a few ms each: same second
    assert sorted(names) == names
