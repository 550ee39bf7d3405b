"""Run a Great Expectations 1.x suite on a table and turn the result into a Dagster check result.

`dagster-ge` only supports GX < 1.0, so we call GX ourselves with an ephemeral context: no
`great_expectations/` folder in the repo, nothing written to disk.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from typing import Any

import polars as pl
from dagster import AssetCheckResult, AssetCheckSeverity, MetadataValue

os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")

_LOCK = threading.Lock()
_CONTEXT: Any = None


def _context() -> Any:
    global _CONTEXT
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    if _CONTEXT is None:
        _CONTEXT = gx.get_context(mode="ephemeral")
        _CONTEXT.variables.progress_bars = ProgressBarsConfig(globally=False)
    return _CONTEXT


def warm_up() -> None:
    """Import GX and build its context now: a long-lived process (`hippo watch`) does it while idle."""
    import great_expectations.expectations  # noqa: F401 - the suites' import, the heavy part

    with _LOCK:
        _context()


def validate(suite_name: str, frame: pl.DataFrame, expectations: Sequence[Any]) -> Any:
    """Validate `frame` against the expectations; returns GX's ExpectationSuiteValidationResult."""
    import great_expectations as gx

    with _LOCK:
        ctx = _context()
        source_name = f"hippo-{suite_name}"
        with contextlib.suppress(Exception):  # absent the first time; GX raises several types
            ctx.data_sources.delete(source_name)
        source = ctx.data_sources.add_pandas(source_name)
        batch_def = source.add_dataframe_asset(suite_name).add_batch_definition_whole_dataframe("all")
        batch = batch_def.get_batch(batch_parameters={"dataframe": frame.to_pandas()})
        suite = gx.ExpectationSuite(name=suite_name)
        for expectation in expectations:
            suite.add_expectation(expectation)
        return batch.validate(suite)


def _describe(result: Any) -> dict[str, Any]:
    cfg = result.expectation_config
    info = {k: v for k, v in (result.result or {}).items() if k in ("unexpected_count", "observed_value")}
    sample = (result.result or {}).get("partial_unexpected_list") or []
    if sample:
        info["examples"] = [str(x) for x in sample[:5]]
    kwargs = {k: v for k, v in cfg.kwargs.items() if k not in ("batch_id",)}
    return {
        "expectation": cfg.type,
        "kwargs": {k: str(v) for k, v in kwargs.items()},
        "success": result.success,
        **info,
    }


def check_result(
    suite_name: str,
    frame: pl.DataFrame,
    expectations: Sequence[Any],
    extra_metadata: dict[str, Any] | None = None,
) -> AssetCheckResult:
    """Run the suite and report every expectation (which failed, how many rows, examples)."""
    if frame.height == 0:
        return AssetCheckResult(
            passed=True,
            metadata={"suite": suite_name, "rows": 0, "note": "nothing to check", **(extra_metadata or {})},
        )
    outcome = validate(suite_name, frame, expectations)
    details = [_describe(r) for r in outcome.results]
    failed = [d for d in details if not d["success"]]
    return AssetCheckResult(
        passed=bool(outcome.success),
        severity=AssetCheckSeverity.ERROR,
        metadata={
            "suite": suite_name,
            "rows": frame.height,
            "expectations": len(details),
            "failed": len(failed),
            "failures": MetadataValue.json(failed),
            **(extra_metadata or {}),
        },
    )
