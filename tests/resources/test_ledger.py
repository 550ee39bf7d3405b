"""The ledger creates its tables once per process and file, and again for a file that was removed."""

from __future__ import annotations

from pathlib import Path

from hippo_resources.ledger import Ledger


def test_the_schema_is_created_once_and_again_after_the_file_is_removed(tmp_path: Path) -> None:
    ledger = Ledger(path=str(tmp_path / "ledger" / "ledger.db"))
    ledger.record_query("first", {}, "ok", 1, 0.5, "g1")
    ledger.record_query("second", {}, "ok", 0, None, "g1")
    assert [r["query"] for r in ledger.recent_queries()] == ["second", "first"]
    Path(ledger.path).unlink()  # e.g. a person clearing HIPPO_HOME under a running librarian
    ledger.record_gap("third", "third", "weak", [])
    assert [g["query"] for g in ledger.gaps()] == ["third"] and ledger.recent_queries() == []
