"""Conversations in search: lane `conversations`, tool output excludable, every message has a vector,
and planted credentials never reach the parquet tables, Chroma, the BM25 generation or a search result."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from dagster import DagsterInstance, build_asset_check_context, materialize

from hippo_assets.definitions import ASSET_CHECKS, ASSETS
from hippo_assets.index.assets import messages_have_vectors
from hippo_resources import LexicalStore, build_resources
from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import open_engine
from hippo_settings import HippoSettings
from tests.memory.conftest import load, metadata
from tests.memory.test_scrub import PLANTED, SECRET_VALUES

SECRET_SESSION = "5ec2e700-0000-4000-8000-00000000beef"


def plant_secrets(claude_dir: Path) -> None:
    """A Claude Code session where the user pastes credentials, as people do when debugging."""
    folder = claude_dir / "-home-dev-deploy-tool"
    folder.mkdir(parents=True)
    lines = []
    for n, (kind, secret) in enumerate(sorted(PLANTED.items())):
        lines.append(
            {
                "type": "user" if n % 2 == 0 else "assistant",
                "uuid": f"s{n}",
                "sessionId": SECRET_SESSION,
                "cwd": "/home/dev/deploy-tool",
                "timestamp": f"2026-11-21T08:{n:02d}:00.000Z",
                "message": {
                    "role": "user" if n % 2 == 0 else "assistant",
                    "content": [
                        {
                            "type": "text",
                            "text": f"The deploy credentials ({kind}) are {secret} — rotate later.",
                        }
                    ],
                },
            }
        )
    (folder / f"{SECRET_SESSION}.jsonl").write_text(
        "\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8"
    )


@pytest.fixture
def memory_indexed(settings: HippoSettings, mem_resources, logs) -> HippoSettings:
    plant_secrets(logs["claude"])
    loaded = load(mem_resources)
    assert loaded.success
    assert metadata(loaded, "claude_code_log")["secrets_redacted"] == {k: 1 for k in PLANTED}
    result = index_with_check(settings)
    assert result.success
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks["messages_have_vectors"] is True
    return settings


def index_with_check(settings: HippoSettings, instance: DagsterInstance | None = None):  # noqa: ANN201
    """The index group plus the memory verify check, as `hippo ingest` and `memory_job` run them."""
    return materialize(
        [*ASSETS, *ASSET_CHECKS],
        resources=build_resources(settings),
        instance=instance or DagsterInstance.ephemeral(),
    )


def values(secret_kind: str) -> str:
    return SECRET_VALUES.get(secret_kind, PLANTED[secret_kind])


def frame_text(frame: pl.DataFrame) -> str:
    return json.dumps(frame.to_dicts(), ensure_ascii=False, default=str)


def test_planted_secrets_reach_no_store_and_no_result(memory_indexed: HippoSettings) -> None:
    home = memory_indexed.home
    stores: dict[str, str] = {}
    stores["dlt parquet"] = "".join(
        frame_text(pl.read_parquet(f)) for f in (home / "conversations" / "dlt").glob("**/*.parquet")
    )
    stores["chunk tables"] = "".join(
        frame_text(pl.read_parquet(f)) for f in (home / "chunks").glob("*.parquet")
    )
    stores["bm25 generation"] = frame_text(LexicalStore(root=str(home / "lexical")).view().live_table())
    stores["bm25 files"] = "".join(  # every segment: vocabularies, postings, chunk tables
        p.read_bytes().decode("latin-1") for p in (home / "lexical").glob("**/*") if p.is_file()
    )
    collection = build_resources(memory_indexed)["vector_store"].collection()  # type: ignore[attr-defined]
    got = collection.get(include=["metadatas", "documents"])
    stores["chroma records"] = json.dumps([got["metadatas"], got["documents"]], ensure_ascii=False)
    stores["chroma files"] = "".join(
        p.read_bytes().decode("latin-1") for p in (home / "chroma").glob("**/*") if p.is_file()
    )
    engine = open_engine(memory_indexed)
    response = engine.search(
        SearchRequest(query="deploy credentials rotate later", lanes=["conversations"], limit=20)
    )
    stores["search result"] = response.model_dump_json()
    assert "[REDACTED:" in stores["search result"] and "[REDACTED:" in stores["bm25 generation"]
    assert any(h.conversation_id == SECRET_SESSION for h in response.results)
    for kind in PLANTED:
        for where, text in stores.items():
            assert values(kind) not in text, f"{kind} leaked into {where}"
    # A query that *is* a secret finds nothing that contains it.
    leaked = engine.search(SearchRequest(query=PLANTED["github_token"], lanes=["conversations"]))
    assert PLANTED["github_token"] not in leaked.model_dump_json().replace(leaked.query, "")


def test_conversation_lane_search_carries_conversation_fields(memory_indexed: HippoSettings) -> None:
    engine = open_engine(memory_indexed)
    ko = engine.search(SearchRequest(query="커넥션 풀 누수 teardown", lanes=["conversations"], limit=5))
    top = ko.results[0]
    assert top.lane == "conversations" and top.conversation_id == "3f1c2a9e-7b4d-4e2a-9c1f-0a1b2c3d4e5f"
    assert top.project == "payments-api" and top.role in ("user", "assistant", "segment")
    assert top.anchor.startswith("conversations/3f1c2a9e-7b4d-4e2a-9c1f-0a1b2c3d4e5f#")
    assert top.updated and top.updated.startswith("2026-11-20")
    en = engine.search(
        SearchRequest(query="reindex job heap memory batch size", lanes=["conversations"], limit=5)
    )
    assert en.results[0].conversation_id == "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    # Inside one conversation, several turns come back (a conversation is not collapsed like a document).
    inside = engine.search(
        SearchRequest(
            query="connection pool",
            lanes=["conversations"],
            path_prefix="conversations/3f1c2a9e-7b4d-4e2a-9c1f-0a1b2c3d4e5f",
            limit=10,
        )
    )
    assert len({h.anchor for h in inside.results}) >= 3
    assert all(h.conversation_id == "3f1c2a9e-7b4d-4e2a-9c1f-0a1b2c3d4e5f" for h in inside.results)
    wiki_only = engine.search(
        SearchRequest(query="reindex job heap memory batch size", lanes=["wiki"], limit=10)
    )
    assert all(h.lane == "wiki" for h in wiki_only.results)


def test_tool_output_is_marked_and_can_be_excluded(memory_indexed: HippoSettings) -> None:
    engine = open_engine(memory_indexed)
    query = "POOL_SIZE POOL_TIMEOUT get_pool"
    with_tools = engine.search(SearchRequest(query=query, lanes=["conversations"], limit=10))
    assert with_tools.results[0].role == "tool"
    for mode in ("hybrid", "semantic", "lexical"):
        without = engine.search(
            SearchRequest(
                query=query, lanes=["conversations"], limit=50, include_tool_output=False, mode=mode
            )
        )
        assert without.results and all(h.role != "tool" for h in without.results), mode


def test_the_verify_check_fails_when_a_message_lacks_a_vector(memory_indexed: HippoSettings) -> None:
    res = build_resources(memory_indexed)
    chunks = res["chunk_store"].chunks()  # type: ignore[attr-defined]
    victim = chunks.filter(pl.col("anchor").str.ends_with("#m4") & (pl.col("granularity") == "message"))[
        "chunk_id"
    ][0]
    res["vector_store"].delete([victim])  # type: ignore[attr-defined]
    ctx = build_asset_check_context(
        resources={"chunk_store": res["chunk_store"], "vector_store": res["vector_store"]}
    )
    outcome = messages_have_vectors(ctx)
    assert outcome.passed is False
    assert outcome.metadata["without_vector"].value == 1
    # The graph's own blocking check catches it on the next run and re-embeds nothing silently.
    again = index_with_check(memory_indexed)
    assert again.success  # embeddings restores the missing vector (its embed_hash is absent)
    assert messages_have_vectors(ctx).passed is True
