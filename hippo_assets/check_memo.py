"""A blocking check whose inputs have not changed since it last passed passes again without re-reading them.

A no-op run then costs a stat or two per check instead of reading every row and importing Great
Expectations. The memo (`check_memo.json` under HIPPO_HOME/chunks) keeps, per check, the stamp of the inputs
it passed on: file sizes and mtimes, a ledger's state, the code of the check and its suites. Any difference,
a failure or a warning, and the check runs in full.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

from dagster import AssetCheckResult

from hippo_resources import ChunkStore
from hippo_resources.files import write_text_atomic

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
