"""The code location: each domain contributes its own Definitions; this root merges them and adds the
resources (built once from the settings) and the executor."""

from __future__ import annotations

from dagster import Definitions, in_process_executor, multiprocess_executor

from hippo_assets.backups import definitions as backups_defs
from hippo_assets.compile import definitions as compile_defs
from hippo_assets.dream import definitions as dream_defs
from hippo_assets.facts import definitions as facts_defs
from hippo_assets.ghost import definitions as work_defs
from hippo_assets.index import definitions as index_defs
from hippo_assets.ingest import definitions as ingest_defs
from hippo_assets.memory import definitions as memory_defs
from hippo_assets.publish import definitions as publish_defs
from hippo_assets.quality import definitions as quality_defs
from hippo_resources import build_resources
from hippo_settings import HippoSettings

DOMAINS = (
    ingest_defs,
    index_defs,
    memory_defs,
    compile_defs,
    publish_defs,
    quality_defs,
    backups_defs,
    work_defs,
    facts_defs,
    dream_defs,
)

# The graph `refresh_job` runs (ingest and index, with their checks), for `materialize` in tests and benches.
ASSETS = [*ingest_defs.ASSETS, *index_defs.ASSETS]
ASSET_CHECKS = [*ingest_defs.CHECKS, *index_defs.CHECKS]


def build_definitions(settings: HippoSettings) -> Definitions:
    """Definitions for one settings object; tests build their own with temporary folders. The executor is
    a setting: in-process by default (SQLite instance storage locks under the multiprocess one, and a
    run's vault writes make one git commit when its resources are torn down), multiprocess on Postgres
    (`HIPPO_EXECUTOR=multiprocess`: a process per step, each step's vault writes its own commit)."""
    executor = multiprocess_executor if settings.executor == "multiprocess" else in_process_executor
    return Definitions.merge(
        *(domain.definitions(settings) for domain in DOMAINS),
        Definitions(resources=dict(build_resources(settings, env_secrets=True)), executor=executor),
    )


defs = build_definitions(HippoSettings.from_env())
