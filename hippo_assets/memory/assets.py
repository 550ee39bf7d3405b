"""Group `memory`: agent conversations loaded by dlt, then shaped into conversation chunks for search.

Each format is its own dagster-dlt asset. The sources bound at definition time only describe the
assets; each run builds the real source and pipeline from the `conversation_store` resource, so
tests and the CLI point the same code at their own folders and destination.
"""

# No `from __future__ import annotations`: Dagster reads the Config/resource annotations at definition time.

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dlt
import polars as pl
from dagster import (
    AssetExecutionContext,
    AssetKey,
    AssetsDefinition,
    AssetSpec,
    Config,
    MaterializeResult,
    MetadataValue,
    asset,
)
from dagster_dlt import DagsterDltResource, DagsterDltTranslator, dlt_assets
from dagster_dlt.translator import DltResourceTranslatorData
from pydantic import Field

from hippo_assets.index.tables import CHUNK_SCHEMA
from hippo_assets.memory import GROUP
from hippo_assets.memory.dlt_sources import RunReport, format_source
from hippo_core.conversations import Conversation, Message
from hippo_core.conversations.formats import FORMATS, Format
from hippo_core.index.segments import conversation_chunk_rows, segment_messages
from hippo_resources import ChunkStore, Embedder
from hippo_resources.chunk_store import CONVERSATION_CHUNKS, CONVERSATIONS, MESSAGES, SEGMENTS
from hippo_resources.conversation_store import ConversationStore


class MemoryTranslator(DagsterDltTranslator):
    """One asset per format, named after the dlt resource, in group `memory`, with no upstream."""

    def get_asset_spec(self, data: DltResourceTranslatorData) -> AssetSpec:
        spec = super().get_asset_spec(data)
        return spec.replace_attributes(key=AssetKey(data.resource.name), deps=[], group_name=GROUP)


def _describe_pipeline(fmt: Format) -> dlt.Pipeline:
    # Only describes the asset (kinds, keys); runs use ConversationStore.pipeline().
    return dlt.pipeline(
        pipeline_name=fmt.pipeline_name, destination="filesystem", dataset_name=fmt.dataset_name
    )


class ExportConfig(Config):
    paths: list[str] = Field(
        default_factory=list,
        description="Export ZIPs (or conversations.json files) to load; default: every ZIP in HIPPO_EXPORTS.",
    )


def _run(
    context: AssetExecutionContext,
    dlt_resource: DagsterDltResource,
    store: ConversationStore,
    fmt: Format,
    source: Any,
    report: RunReport,
) -> Iterator[MaterializeResult]:
    pipeline = store.pipeline(fmt.name)
    for event in dlt_resource.run(
        context=context, dlt_source=source, dlt_pipeline=pipeline, loader_file_format="parquet"
    ):
        meta = {k: v for k, v in (event.metadata or {}).items() if k != "jobs"}
        extra = report.metadata()
        for problem in report.problems[:50]:
            context.log.warning(f"skipped {problem.where}: {problem.reason}")
        yield MaterializeResult(
            asset_key=event.asset_key,
            metadata={
                **meta,
                **{k: MetadataValue.json(v) if isinstance(v, dict | list) else v for k, v in extra.items()},
                "destination": "postgres" if store.pg_dsn else "filesystem (parquet)",
            },
        )


def _exports(config: ExportConfig, store: ConversationStore, fmt: Format) -> list[str]:
    if config.paths:
        return config.paths
    folder = Path(store.location(fmt))
    if not folder.is_dir():
        return []
    return [str(p) for pattern in fmt.files for p in sorted(folder.glob(pattern))]


def _loader(fmt: Format) -> AssetsDefinition:
    """The dagster-dlt asset of one format: its log folder (jsonl) or its export ZIPs (export)."""
    describe = {
        "dlt_source": format_source(fmt),
        "dlt_pipeline": _describe_pipeline(fmt),
        "name": fmt.op_name,
        "dagster_dlt_translator": MemoryTranslator(),
    }
    if fmt.reader == "jsonl":

        @dlt_assets(**describe)
        def load_logs(
            context: AssetExecutionContext, dlt: DagsterDltResource, conversation_store: ConversationStore
        ):
            report = RunReport(progress=context.log.info)
            source = format_source(fmt, root=conversation_store.location(fmt), report=report)
            yield from _run(context, dlt, conversation_store, fmt, source, report)

        return load_logs

    @dlt_assets(**describe)
    def load_exports(
        context: AssetExecutionContext,
        config: ExportConfig,
        dlt: DagsterDltResource,
        conversation_store: ConversationStore,
    ):
        report = RunReport(progress=context.log.info)
        source = format_source(fmt, paths=_exports(config, conversation_store, fmt), report=report)
        yield from _run(context, dlt, conversation_store, fmt, source, report)

    return load_exports


# One loader per format, generated from the registry: format name → asset.
LOADERS: dict[str, AssetsDefinition] = {fmt.name: _loader(fmt) for fmt in FORMATS}
DLT_KEYS = [AssetKey(fmt.asset_name) for fmt in FORMATS]


def merged_tables(store: ConversationStore) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Conversations and messages as loaded, one row per id (a re-read never duplicates)."""
    msgs = store.read("messages")
    convs = store.read("conversations")
    if msgs.height:
        msgs = msgs.sort("_dlt_load_id").unique("message_id", keep="last", maintain_order=True)
        msgs = msgs.sort("conversation_id", "position")
    if convs.height:
        cols = [c for c in ("title", "project", "model", "source", "origin") if c in convs.columns]
        convs = (
            convs.sort("_dlt_load_id")
            .group_by("conversation_id", maintain_order=True)
            .agg(
                *[pl.col(c).drop_nulls().last().alias(c) for c in cols],
                pl.col("started").drop_nulls().min().alias("started")
                if "started" in convs.columns
                else pl.lit(None),
                pl.col("ended").drop_nulls().max().alias("ended")
                if "ended" in convs.columns
                else pl.lit(None),
            )
        )
    return convs, msgs


class ConversationChunksConfig(Config):
    segments: bool = Field(default=True, description="Also index segments (runs of messages on one topic).")


@asset(
    group_name=GROUP,
    kinds={"polars", "parquet"},
    deps=DLT_KEYS,
    description="Conversations (title, project, started/ended, model, message count), messages and topic "
    "segments, written as tables and as chunk rows of lane `conversations` for the index group.",
)
def conversation_chunks(
    context: AssetExecutionContext,
    config: ConversationChunksConfig,
    conversation_store: ConversationStore,
    chunk_store: ChunkStore,
    embedder: Embedder,
) -> MaterializeResult:
    convs, msgs = merged_tables(conversation_store)
    rows: list[dict[str, Any]] = []
    seg_rows: list[dict[str, Any]] = []
    conv_rows: list[dict[str, Any]] = []
    by_conv = msgs.partition_by("conversation_id", as_dict=True) if msgs.height else {}
    records = {r["conversation_id"]: r for r in (convs.iter_rows(named=True) if convs.height else [])}
    for (cid,), frame in by_conv.items():  # messages whose conversation row never arrived still count
        if cid not in records:
            source = frame["source"][0] if "source" in frame.columns else "claude_code"
            records[cid] = {"conversation_id": cid, "source": source}
    for record in records.values():
        frame = by_conv.get((record["conversation_id"],))
        messages = (
            [Message.model_validate(m) for m in frame.iter_rows(named=True)] if frame is not None else []
        )
        conv = Conversation.model_validate(
            {k: v for k, v in record.items() if k in Conversation.model_fields}
        )
        conv_rows.append({**conv.model_dump(), "message_count": len(messages)})
        rows.extend(conversation_chunk_rows(conv, messages, embedder.model_id, with_segments=config.segments))
        seg_rows.extend(s.model_dump() for s in segment_messages(messages))
    frame = pl.DataFrame(rows, schema=CHUNK_SCHEMA)
    chunk_store.write(CONVERSATION_CHUNKS, frame)
    chunk_store.write(CONVERSATIONS, pl.DataFrame(conv_rows, infer_schema_length=None))
    chunk_store.write(
        MESSAGES, msgs.drop([c for c in msgs.columns if c.startswith("_")]) if msgs.height else msgs
    )
    chunk_store.write(SEGMENTS, pl.DataFrame(seg_rows, infer_schema_length=None))
    by_gran = dict(frame.group_by("granularity").len().iter_rows()) if frame.height else {}
    return MaterializeResult(
        metadata={
            "conversations": len(conv_rows),
            "messages": msgs.height,
            "tool_messages": int(msgs["is_tool"].sum()) if msgs.height else 0,
            "segments": len(seg_rows),
            "chunks": frame.height,
            "by_granularity": MetadataValue.json(by_gran),
        }
    )
