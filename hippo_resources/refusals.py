"""Verdicts on inbox documents that ingest refused, remembered by content hash.

Extracting a refused document again costs what it cost the first time (an XML bomb under the size caps
took gigabytes on every run, attack run 2 N3), and the answer cannot change while the bytes, the limits
and the extraction code stay the same. So ingest keeps each refusal under the sha256 of the file's bytes
and a fingerprint of the limits and the extraction code; a later run (a watcher pass, the nightly run)
reports the same reason without reading the document again. A new version of the file (other bytes),
other limits or another extractor reads it afresh.

One small JSON file beside the other derived stores (rebuildable: losing it costs one extraction).
"""

from __future__ import annotations

import json
from pathlib import Path

from hippo_resources.files import write_text_atomic

FILE = "refused-documents.json"
MOST = 1_000  # verdicts kept; the oldest go first


class RefusalMemory:
    """`kind` and `reason` of each refused document, by (content sha256, fingerprint)."""

    def __init__(self, directory: Path, fingerprint: str) -> None:
        self.file = Path(directory) / FILE
        self.fingerprint = fingerprint
        self._verdicts: dict[str, dict[str, str]] = self._load()
        self._changed = False

    def _load(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            k: v
            for k, v in data.items()
            if isinstance(v, dict) and isinstance(v.get("kind"), str) and isinstance(v.get("reason"), str)
        }

    def _key(self, sha256: str) -> str:
        return f"{sha256}:{self.fingerprint}"

    def verdict(self, sha256: str) -> dict[str, str] | None:
        """{"kind", "reason"} when these bytes were refused under the same limits and code."""
        return self._verdicts.get(self._key(sha256))

    def remember(self, sha256: str, kind: str, reason: str) -> None:
        self._verdicts.pop(self._key(sha256), None)
        self._verdicts[self._key(sha256)] = {"kind": kind, "reason": reason}
        while len(self._verdicts) > MOST:
            self._verdicts.pop(next(iter(self._verdicts)))
        self._changed = True

    def save(self) -> None:
        """Write the verdicts (atomically) when a run added one."""
        if self._changed:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(self.file, json.dumps(self._verdicts, ensure_ascii=False, sort_keys=False))
            self._changed = False
