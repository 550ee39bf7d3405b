"""BM25 generations on disk: a base and a delta, switched in atomically through CURRENT.json; readers keep
their view; a delta writes no base; pruning keeps the bases that kept generations extend."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from hippo_core.index.bm25 import BM25Params
from hippo_core.index.bm25_update import Generation, Update
from hippo_core.index.tokenize import Tokenizer
from hippo_resources import LexicalStore, lexical_store
from hippo_resources.lexical_store import MANIFEST, GenerationUnreadable
from hippo_resources.tables import row_hashes

OLD = ["커피를 마시고 낮잠을 잔다.", "Dagster assets carry lineage.", "형태소 분석기 Kiwi"]
NEW = ["벡터 검색은 코사인 유사도를 쓴다.", "BM25 scores terms by frequency.", "커피 대신 차를 마신다."]


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer()


def table_of(texts: list[str], status: str = "active") -> pl.DataFrame:
    return pl.DataFrame(
        {"chunk_id": [f"c{i}" for i in range(len(texts))], "text": texts, "status": [status] * len(texts)}
    )


def ids_keys(table: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    keys = [hashlib.blake2b(t.encode(), digest_size=16).digest() for t in table["text"].to_list()]
    return row_hashes(table), np.array(keys, dtype="S16").reshape(table.height)


def build(tokenizer: Tokenizer, table: pl.DataFrame) -> Update:
    texts = table["text"].to_list()
    return Generation.build(
        *ids_keys(table), lambda rows: tokenizer.tokenize_many([texts[i] for i in rows]), BM25Params(), "an"
    )


def edit(tokenizer: Tokenizer, before: Generation, table: pl.DataFrame, max_changed: int = 100) -> Update:
    texts = table["text"].to_list()
    return before.next(
        *ids_keys(table), lambda rows: tokenizer.tokenize_many([texts[i] for i in rows]), max_changed
    )


def folders(root: Path, prefix: str) -> list[str]:
    return sorted(p.name for p in root.glob(f"{prefix}-*") if p.is_dir())


def leftovers(root: Path) -> list[str]:
    return sorted(
        p.name for p in root.iterdir() if p.name.startswith(".") or p.name.endswith((".tmp", ".partial"))
    )


def test_no_manifest_before_the_first_build(tmp_path: Path) -> None:
    store = LexicalStore(root=str(tmp_path / "lexical"))
    assert store.manifest() is None and store.previous() is None
    with pytest.raises(GenerationUnreadable):
        store.view()


def test_write_makes_the_generation_live_through_the_manifest(tmp_path: Path, tokenizer: Tokenizer) -> None:
    store = LexicalStore(root=str(tmp_path / "lexical"))
    table = table_of(OLD)
    name = store.write(build(tokenizer, table), table, {"chunks": 3, "analyzer": tokenizer.fingerprint()})
    manifest = json.loads((store.path / MANIFEST).read_text(encoding="utf-8"))
    assert manifest == store.manifest()
    assert manifest["generation"] == name and name.startswith("gen-")
    assert (manifest["chunks"], manifest["segment"], manifest["delta_rows"]) == (3, "base", 0)
    assert folders(store.path, "base") == [manifest["base"]]
    view = store.view()
    assert view.generation == name and view.live_table().equals(table) and view.table().equals(table)
    assert view.index.analyzer == "an" and view.index.n_docs == 3
    query = tokenizer.query_tokens("커피 낮잠")
    assert view.index.top_k(query, 1)[0][0] == 0
    assert leftovers(store.path) == []


def test_an_edit_writes_a_delta_and_no_base(tmp_path: Path, tokenizer: Tokenizer) -> None:
    store = LexicalStore(root=str(tmp_path / "lexical"))
    table = table_of(OLD)
    store.write(build(tokenizer, table), table, {})
    base = store.manifest()["base"]
    edited = table.with_columns(pl.Series("text", [OLD[0], "Dagster assets carry durable lineage.", OLD[2]]))
    edited = edited.with_columns(
        pl.when(pl.col("chunk_id") == "c2").then(pl.lit("archived")).otherwise("status").alias("status")
    )
    previous = store.previous()
    assert previous is not None
    update = edit(tokenizer, previous, edited)
    assert not update.compacted and update.rows.tolist() == [1, 2]
    name = store.write(update, edited, {})
    manifest = store.manifest()
    assert (manifest["segment"], manifest["base"], manifest["delta_rows"], manifest["tombstones"]) == (
        "delta",
        base,
        2,
        2,
    )
    assert folders(store.path, "base") == [base]  # no new base
    view = store.view()
    assert view.generation == name and view.live_table().equals(edited)
    assert view.table().height == 5 and view.index.n_docs == 3
    assert view.index.top_k(tokenizer.query_tokens("durable"), 3)[0][0] == 3  # the delta's first row
    # the next build in this process starts from what it wrote; a new one reads the same from disk
    assert store.previous() is update.generation
    lexical_store._LAST.clear()  # as in a new process
    again = store.previous()
    assert again is not None and again is not update.generation
    assert (again.table_ids() == update.generation.table_ids()).all()
    assert "terms" not in vars(again.base_rows.base)  # a no-op check reads no vocabulary
    assert again.base_rows.name == base and again.delta.dead.tolist() == [1, 2]
    q = tokenizer.query_tokens("lineage 형태소")
    assert (again.index.scores(q) == update.generation.index.scores(q)).all()


def test_a_reader_keeps_its_generation_and_reuses_the_base(tmp_path: Path, tokenizer: Tokenizer) -> None:
    store = LexicalStore(root=str(tmp_path / "lexical"))
    table = table_of(OLD)
    old_name = store.write(build(tokenizer, table), table, {})
    old = store.view()  # a reader loads the live one
    query = tokenizer.query_tokens("커피")
    before = old.index.scores(query).tolist()

    changed = table.with_columns(pl.Series("text", [NEW[2], OLD[1], OLD[2]]))
    new_name = store.write(edit(tokenizer, store.previous(), changed), changed, {})
    assert store.manifest()["generation"] == new_name != old_name
    assert old.index.scores(query).tolist() == before  # the reader's view did not change
    assert old.live_table()["text"].to_list() == OLD
    new = store.view(new_name, base=old.base)
    assert new.base is old.base  # the base is reused, only the delta was read
    assert new.live_table()["text"].to_list() == [NEW[2], OLD[1], OLD[2]]
    assert new.index.top_k(query, 1)[0][0] == 3
    # a reader that read the manifest just before the switch can still open the old generation
    assert store.view(old_name).live_table()["text"].to_list() == OLD


def test_pruning_keeps_the_bases_kept_generations_extend(tmp_path: Path, tokenizer: Tokenizer) -> None:
    store = LexicalStore(root=str(tmp_path / "lexical"), keep_generations=2)
    table = table_of(OLD)
    store.write(build(tokenizer, table), table, {})
    first_base = store.manifest()["base"]
    for i in range(3):  # three deltas over the first base
        t = table.with_columns(pl.Series("text", [OLD[0], OLD[1], f"edit {i}"]))
        store.write(edit(tokenizer, store.previous(), t), t, {})
    assert len(folders(store.path, "gen")) == 2 and folders(store.path, "base") == [first_base]
    t = table_of(NEW)
    store.write(edit(tokenizer, store.previous(), t, max_changed=0), t, {})  # compacts
    second_base = store.manifest()["base"]
    assert second_base != first_base
    assert folders(store.path, "base") == [first_base, second_base]  # a kept delta still extends the first
    store.write(edit(tokenizer, store.previous(), t.with_columns(pl.lit("done").alias("status"))), t, {})
    assert folders(store.path, "base") == [second_base]
    assert store.view().live_table().height == 3 and leftovers(store.path) == []


def test_a_crashed_write_leaves_the_live_generation_alone_and_is_cleaned_up(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    store = LexicalStore(root=str(tmp_path / "lexical"))
    table = table_of(OLD)
    live = store.write(build(tokenizer, table), table, {})
    for name in (".gen-20000101T000000-000000001.partial", ".base-20000101T000000-000000002.partial"):
        crashed = store.path / name  # what a killed writer leaves
        crashed.mkdir()
        (crashed / "delta.json").write_text("{half", encoding="utf-8")
    (store.path / f".{MANIFEST}.tmp").write_text("{half", encoding="utf-8")
    assert store.manifest()["generation"] == live  # readers never see the half-written files
    assert store.view(live).live_table()["text"].to_list() == OLD
    t = table_of(NEW)
    store.write(edit(tokenizer, store.previous(), t), t, {})
    assert leftovers(store.path) == []


def test_a_damaged_or_older_generation_is_rebuilt_not_misread(tmp_path: Path, tokenizer: Tokenizer) -> None:
    store = LexicalStore(root=str(tmp_path / "lexical"))
    table = table_of(OLD)
    store.write(build(tokenizer, table), table, {})
    manifest = store.manifest()
    (store.path / manifest["base"] / "chunks.arrow").write_bytes(b"\x00garbage" * 100)
    assert store.previous() is None  # the next build starts afresh
    with pytest.raises(GenerationUnreadable):
        store.view()
    # a generation of the format before (weights, no base): never read as this one
    old = store.path / "gen-20000101T000000-000000000"
    old.mkdir()
    (old / "bm25.json").write_text('{"format_version": 2}', encoding="utf-8")
    (store.path / MANIFEST).write_text(json.dumps({"generation": old.name}), encoding="utf-8")
    assert store.previous() is None
    with pytest.raises(GenerationUnreadable, match="older version"):
        store.view()
    t = table_of(NEW)
    store.write(build(tokenizer, t), t, {})  # the first run after the upgrade: a base from scratch
    assert not old.exists()  # the older version's folder is gone at once (never read again)
    assert store.view().live_table().equals(t)


def test_generation_names_sort_in_the_order_they_were_written(tmp_path: Path, tokenizer: Tokenizer) -> None:
    store = LexicalStore(root=str(tmp_path / "lexical"), keep_generations=100)
    table = table_of(OLD)
    names = [store.write(build(tokenizer, table), table, {})]
    for i in range(20):  # a few ms each: same second
        t = table.with_columns(pl.Series("text", [OLD[0], OLD[1], f"edit {i}"]))
        names.append(store.write(edit(tokenizer, store.previous(), t), t, {}))
    assert sorted(names) == names


def test_many_threads_load_generations_at_once_without_numpys_header_parser(
    tmp_path: Path, tokenizer: Tokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22 item 10: `np.load` parses `.npy` headers with `ast`, which is not thread-safe on Python
    3.11 (`SystemError: AST constructor recursion depth mismatch` under concurrent loads). The store
    reads its arrays without `ast`: with `ast.parse` made to fail, 16 threads opening three generations
    (bases, deltas, the next build's counts and identities) all get the views a single thread gets."""
    import ast
    import threading
    from concurrent.futures import ThreadPoolExecutor

    store = LexicalStore(root=str(tmp_path / "lexical"), keep_generations=5)
    table = table_of(OLD)
    names = [store.write(build(tokenizer, table), table, {})]
    for texts in ([NEW[0], OLD[1], OLD[2]], [NEW[0], NEW[1], OLD[2], NEW[2]]):
        changed = table_of(texts)
        names.append(store.write(edit(tokenizer, store.previous(), changed), changed, {}))
    query = tokenizer.query_tokens("커피 BM25 Dagster")
    expected = {name: store.view(name).index.top_k(query, 5) for name in names}

    def no_ast(*args: object, **kwargs: object) -> None:
        raise AssertionError("ast.parse called while loading a generation")

    monkeypatch.setattr(ast, "parse", no_ast)
    start = threading.Barrier(16)

    def load(i: int) -> list[tuple[str, list]]:
        start.wait()  # every thread starts loading at the same moment
        out = []
        for round_ in range(6):
            name = names[(i + round_) % len(names)]
            out.append((name, store.view(name).index.top_k(query, 5)))
            if round_ % 3 == 0:
                lexical_store._LAST.clear()  # the writer's reader: counts, identities, delta extras
                assert store.previous() is not None
        return out

    with ThreadPoolExecutor(16) as pool:
        results = [r for rs in pool.map(load, range(16)) for r in rs]
    assert len(results) == 96
    assert all(top == expected[name] for name, top in results)
