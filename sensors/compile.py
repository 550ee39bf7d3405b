"""The compile sensor: one dynamic partition per source copy, and a compile run for each source not yet compiled.

The partition is the source copy in 10-sources/ (it exists only after ingest), so this sensor watches
that folder rather than the inbox. Run keys carry the content hash: a source is compiled once per content.
"""

from __future__ import annotations

from dagster import DefaultSensorStatus, RunRequest, SensorEvaluationContext, SensorResult, SkipReason, sensor

from hippo_core.compile_queue import (
    COMPILE_LOG,
    PARTITIONS,
    compiled,
    is_source_copy,
    order_by_gaps,
    partition_key_for,
    source_digest,
)
from hippo_core.text_input import decode_utf8
from hippo_core.tokenize import Tokenizer
from hippo_resources import Ledger, Vault


def pending_sources(vault: Vault) -> list[tuple[str, str, str]]:
    """(source path, digest, text) of every source copy not compiled at its current content."""
    done = compiled(vault.read_bytes(COMPILE_LOG).decode("utf-8")) if vault.exists(COMPILE_LOG) else set()
    out = []
    for rel in vault.markdown_files():
        if not is_source_copy(rel):
            continue
        try:
            text = decode_utf8(vault.read_bytes(rel), rel)
            digest = source_digest(text)
        except Exception:  # noqa: BLE001 - an unreadable source is reported by ingest's check
            continue
        if (rel, digest) not in done:
            out.append((rel, digest, text))
    return out


def compile_requests(
    vault: Vault, known_keys: set[str], ledger: Ledger | None = None
) -> tuple[list[str], list[RunRequest]]:
    """New partition keys to add, and one run request per pending source — sources that could fill an
    open knowledge gap (the gap radar's misses) first."""
    pending = pending_sources(vault)
    gap_queries = [g["query"] for g in ledger.gaps("open")] if ledger is not None else []
    ordered = (
        order_by_gaps(pending, gap_queries, Tokenizer().tokenize)
        if gap_queries
        else [(rel, digest, 0.0) for rel, digest, _ in pending]
    )
    new_keys = sorted({partition_key_for(rel) for rel, _, _ in pending} - known_keys)
    requests = [
        RunRequest(
            run_key=f"compile-{partition_key_for(rel)}-{digest[:16]}",
            partition_key=partition_key_for(rel),
            tags={"hippo/trigger": "compile", "hippo/gap_relevance": str(relevance)},
        )
        for rel, digest, relevance in ordered
    ]
    return new_keys, requests


def build_compile_sensor(job_name: str, minimum_interval_seconds: int = 60):
    @sensor(
        name="compile_sensor",
        job_name=job_name,
        minimum_interval_seconds=minimum_interval_seconds,
        default_status=DefaultSensorStatus.STOPPED,
        description=f"Adds a `{PARTITIONS}` partition for each new source copy and starts `{job_name}` for "
        "sources not compiled at their current content (off by default: the 01:45 schedule compiles nightly).",
    )
    def compile_sensor(
        context: SensorEvaluationContext, vault: Vault, ledger: Ledger
    ) -> SensorResult | SkipReason:
        if not vault.path.is_dir():
            return SkipReason(f"vault not found at {vault.path}")
        known = set(context.instance.get_dynamic_partitions(PARTITIONS))
        new_keys, requests = compile_requests(vault, known, ledger)
        if not new_keys and not requests:
            return SkipReason("every source is compiled")
        from dagster import DynamicPartitionsDefinition

        add = [DynamicPartitionsDefinition(name=PARTITIONS).build_add_request(new_keys)] if new_keys else []
        return SensorResult(run_requests=requests, dynamic_partitions_requests=add)

    return compile_sensor
