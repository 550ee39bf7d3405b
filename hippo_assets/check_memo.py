"""A blocking check whose inputs have not changed since it last passed passes again without re-reading them.

A no-op run then costs a stat or two per check instead of reading every row and importing Great
Expectations. When a table did change, `check_new_rows` runs the suite on the rows no passing run has
validated (an edit's few chunks) and only uniqueness over the whole table. The memo (`check_memo.json` under HIPPO_HOME/chunks) keeps, per check, the stamp of the inputs
it passed on: file sizes and mtimes, a ledger's state, the code of the check and its suites. Any difference,
a failure or a warning, and the check runs in full.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from dagster import AssetCheckResult, AssetCheckSeverity, MetadataValue

from hippo_resources import ChunkStore
from hippo_resources.files import write_text_atomic
from hippo_resources.npy import read_npy, write_npy
from hippo_resources.tables import row_hashes

MEMO = "check_memo.json"


@cache
def _code() -> str:
    """The checks' own code: a changed check or suite is never answered from the memo."""
    import expectations.suites
    import hippo_assets.index.assets
    import hippo_assets.ingest.assets

    h = hashlib.sha256()
    for module in (expectations.suites, hippo_assets.index.assets, hippo_assets.ingest.assets):
        h.update(Path(module.__file__ or "").read_bytes())
    return h.hexdigest()[:16]


def file_stamp(path: Path) -> list[int] | None:
    """(size, mtime_ns) of a file, None when it is missing: our tables are replaced by rename, so a new
    table has a new stamp."""
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def _key(stamp: Any) -> str:
    return hashlib.sha256(json.dumps([_code(), stamp], sort_keys=True, default=str).encode()).hexdigest()


def _read(chunk_store: ChunkStore) -> dict[str, str]:
    try:
        memo = json.loads((chunk_store.path / MEMO).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return memo if isinstance(memo, dict) else {}


def passed_on(chunk_store: ChunkStore, check: str, stamp: Any) -> bool:
    """Whether `check` last passed on inputs with this very stamp."""
    return _read(chunk_store).get(check) == _key(stamp)


def remember(chunk_store: ChunkStore, check: str, stamp: Any, result: AssetCheckResult) -> AssetCheckResult:
    """Record the stamp when the check passed (forget it otherwise); returns `result`."""
    memo = _read(chunk_store)
    key = _key(stamp) if result.passed else None
    if memo.get(check) != key:
        if key is None:
            memo.pop(check, None)
        else:
            memo[check] = key
        chunk_store.path.mkdir(parents=True, exist_ok=True)
        write_text_atomic(chunk_store.path / MEMO, json.dumps(memo, indent=1))
    return result


def unchanged_pass(what: str) -> AssetCheckResult:
    return AssetCheckResult(
        passed=True,
        metadata={"unchanged_since_passed": True, "note": f"{what} as when this check last passed"},
    )


# --- row by row: a changed table's check validates the rows it has not validated before -----------------
# GX expectations that judge each row by itself: a row that passed once passes again, whatever else the
# table holds. Any other expectation (or one with `mostly` below 1) makes the check validate every row.
_ROW_WISE = frozenset(
    {
        "expect_column_values_to_not_be_null",
        "expect_column_value_lengths_to_be_between",
        "expect_column_values_to_be_in_set",
        "expect_column_values_to_be_between",
        "expect_column_pair_values_to_be_equal",
    }
)
# Judged over the whole column, with polars, on every row of every run (a copied row can collide with a
# new one); GX runs it on the new rows too.
_UNIQUE = "expect_column_values_to_be_unique"
ROWS_PREFIX = "check-rows."


def check_new_rows(
    chunk_store: ChunkStore,
    check: str,
    suite_name: str,
    frame: pl.DataFrame,
    expectations: Sequence[Any],
    extra_metadata: dict[str, Any] | None = None,
) -> AssetCheckResult:
    """Run the GX suite on the rows of `frame` that no passing run of `check` validated (the changed
    rows), and its uniqueness expectations on the whole table with polars.

    After a pass, a 128-bit hash of every row (every column's value) is kept
    (`check-rows.<check>.<key>.npy` under HIPPO_HOME/chunks; the key covers the suite, the checks' code,
    the frame's schema and the polars version, whose row hash it is). A row whose hash is there passed
    every row-wise expectation before, with the same values, so it passes again: a one-note edit of a
    100k-chunk table validates a handful of rows instead of all of them. A failure keeps the old hashes,
    so what failed is validated again next time. Without hashes (first run, another suite) every row is
    validated, as `check_result` does.
    """
    from expectations import check_result

    configs = [e.configuration.to_json_dict() for e in expectations]
    if any(
        c["type"] not in _ROW_WISE | {_UNIQUE} or (getattr(e, "mostly", 1) or 1) < 1
        for c, e in zip(configs, expectations, strict=True)
    ):
        return check_result(suite_name, frame, expectations, extra_metadata)
    key = _key([suite_name, configs, [f"{n}:{t}" for n, t in frame.schema.items()], pl.__version__])[:16]
    hashes = row_hashes(frame)
    known = _read_rows(chunk_store, check, key)
    new = np.ones(frame.height, dtype=bool) if known is None else ~np.isin(hashes, known)
    fresh = frame.filter(pl.Series(new))
    whole = _uniqueness(frame, [c["kwargs"]["column"] for c in configs if c["type"] == _UNIQUE])
    extra = {
        **(extra_metadata or {}),
        "rows_in_table": frame.height,
        "rows_validated": fresh.height,
        "rows_passed_before": frame.height - fresh.height,
    }
    result = check_result(suite_name, fresh, expectations, extra)
    if whole:
        failures = [*((result.metadata or {}).get("failures", MetadataValue.json([])).value or []), *whole]
        result = AssetCheckResult(
            passed=False,
            severity=AssetCheckSeverity.ERROR,
            metadata={
                **(result.metadata or {}),
                "failed": len(failures),
                "failures": MetadataValue.json(failures),
            },
        )
    if result.passed:
        _write_rows(chunk_store, check, key, hashes)
    return result


def _uniqueness(frame: pl.DataFrame, columns: list[str]) -> list[dict[str, Any]]:
    """Whole-table uniqueness failures, described as `check_result` describes GX's (nulls ignored, as GX)."""
    failures = []
    for column in columns:
        values = frame.get_column(column).drop_nulls()
        dupes = values.filter(values.is_duplicated())
        if dupes.len():
            failures.append(
                {
                    "expectation": _UNIQUE,
                    "kwargs": {"column": column},
                    "success": False,
                    "unexpected_count": dupes.len(),
                    "examples": [str(v) for v in dupes.unique(maintain_order=True).head(5).to_list()],
                    "over": "the whole table",
                }
            )
    return failures


def _rows_file(chunk_store: ChunkStore, check: str, key: str) -> Path:
    return chunk_store.path / f"{ROWS_PREFIX}{check}.{key}.npy"


def _read_rows(chunk_store: ChunkStore, check: str, key: str) -> np.ndarray | None:
    try:
        rows = read_npy(_rows_file(chunk_store, check, key))
    except (OSError, ValueError):
        return None
    return rows if rows.dtype == np.dtype("S16") else None


def _write_rows(chunk_store: ChunkStore, check: str, key: str, hashes: np.ndarray) -> None:
    """Replace the check's row hashes (atomically; those of another key are removed after)."""
    target = _rows_file(chunk_store, check, key)
    write_npy(target, hashes)
    for other in chunk_store.path.glob(f"{ROWS_PREFIX}{check}.*.npy"):
        if other != target:
            other.unlink(missing_ok=True)
