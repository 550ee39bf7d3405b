"""The compile sensor: one dynamic partition per source copy, and a compile run for each source not yet compiled.

The partition is the source copy in 10-sources/ (it exists only after ingest), so this sensor watches
that folder rather than the inbox. Run keys carry the content hash: a source is compiled once per content.
"""

from __future__ import annotations

from dagster import DefaultSensorStatus, RunRequest, SensorEvaluationContext, SensorResult, SkipReason, sensor

from hippo_core.index.tokenize import Tokenizer
from hippo_core.vault.vault_layout import COMPILE_LOG
from hippo_core.wiki.compile_queue import PARTITIONS, order_by_gaps, partition_key_for, pending
from hippo_resources import Ledger, Vault


def pending_sources(vault: Vault) -> list[tuple[str, str, str]]:
    """(source path, content hash, text) of every source copy not compiled at its current content (an
    unreadable source is reported by ingest's check, not here)."""
    copies, _ = vault.source_copies()
    return [(s.path, s.content_hash, s.text) for s in pending(copies, vault.read_ledger(COMPILE_LOG))]


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
